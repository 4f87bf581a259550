"""Runs `tutor-memory serve` as a real child process, for crash, signal and start-up tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

# Seconds a child server may take to start (model load, index rebuild) before the test fails.
START_TIMEOUT = 60.0


class ServerProcess:
    def __init__(
        self,
        data_dir: Path,
        tokens_file: Path | None,
        *extra: str,
        entry: Sequence[str] = ("-m", "tutor_memory"),
    ) -> None:
        """`entry`: how Python is told to run `serve` (a wrapper module for a probe)."""
        args = [sys.executable, *entry, "serve", "--listen", "127.0.0.1:0"]
        args += ["--data", str(data_dir), *extra]
        if tokens_file is not None:
            args += ["--tokens", str(tokens_file)]
        # faulthandler on: a server that does not stop in time is sent SIGABRT, and every thread's
        # stack reaches its log (`terminate`).
        env = {**os.environ, "PYTHONFAULTHANDLER": "1"}
        self.proc = subprocess.Popen(
            args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=env
        )
        self.lines: list[str] = []
        self.port: int | None = None
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "serving":
                self.port = int(entry["port"])
                self._ready.set()
        self.proc.stderr.close()
        self._ready.set()

    def wait_ready(self) -> int:
        if not self._ready.wait(START_TIMEOUT) or self.port is None:
            self.kill()
            raise RuntimeError("server did not start:\n" + "".join(self.lines))
        return self.port

    def serving_workers(self) -> set[int]:
        """The workers of `serve --workers` that said they serve."""
        found = set()
        for line in list(self.lines):
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "serving" and entry.get("worker") is not None:
                found.add(int(entry["worker"]))
        return found

    def wait_workers(self, workers: int) -> None:
        """Waits until every one of `workers` workers serves."""
        deadline = time.monotonic() + START_TIMEOUT
        while self.serving_workers() != set(range(workers)):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("the workers did not start:\n" + "".join(self.lines))
            time.sleep(0.05)
        self.wait_ready()

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs, exactly like a crash."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._reader.join(timeout=5)

    def terminate(self, timeout: float = 30.0) -> int:
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            # Where it is stuck: faulthandler writes every thread's stack on SIGABRT.
            self.proc.send_signal(signal.SIGABRT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self._reader.join(timeout=5)
            raise AssertionError(
                f"the server did not stop within {timeout:g} s of SIGTERM; its last lines:\n"
                + "".join(self.lines[-200:])
            ) from None
        self._reader.join(timeout=5)
        return code

    def wait_exit(self, timeout: float = START_TIMEOUT) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        code = self.proc.wait(timeout=1)
        self._reader.join(timeout=5)
        return code
