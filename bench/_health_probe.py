"""A health prober in a process of its own: grpc.health.v1 Health/Check at a fixed interval, each
check sent whether or not the earlier ones have answered, every latency written to a file.

Its own process and channel, so that what it measures is the server: the benchmark's process
(its GIL, its threads waiting on large calls) never delays a check or its reply. Checks are sent
on a clock, not one after another, so a server that stops answering shows as checks piling up,
each with the time it waited, rather than as one slow check hiding the ones never sent.

Each line of the output file is `<sent> <answered> <code>`: seconds of the system-wide monotonic
clock (time.monotonic, the same in every process), and the status code's name. On SIGTERM it
stops sending, waits up to `--drain` seconds for checks still in flight, and writes those that are
left as PENDING, answered at the moment it gave up: their latency is a lower bound.

`HealthProber` starts it (`python -m bench._health_probe ...`) and reads its file back.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench._meta import REPO_ROOT

# What a still-unanswered check is written as when the prober stops.
PENDING = "PENDING"
# Seconds the parent waits for the prober's first answer before it gives up on the server.
FIRST_ANSWER_TIMEOUT_S = 30.0


@dataclass(frozen=True, slots=True)
class Probe:
    sent: float
    answered: float
    code: str

    @property
    def seconds(self) -> float:
        return self.answered - self.sent

    @property
    def ok(self) -> bool:
        return self.code == "OK"

    @property
    def pending(self) -> bool:
        return self.code == PENDING


class HealthProber:
    """The prober process for one server, and what it recorded."""

    def __init__(
        self, target: str, out: Path, *, interval_s: float, timeout_s: float, drain_s: float
    ) -> None:
        self._out = out
        self._drain_s = drain_s
        args = [sys.executable, "-m", "bench._health_probe", "--target", target, "--out", str(out)]
        args += ["--interval", str(interval_s), "--timeout", str(timeout_s)]
        args += ["--drain", str(drain_s)]
        self._proc = subprocess.Popen(args, cwd=REPO_ROOT)

    def wait_first_answer(self) -> None:
        deadline = time.monotonic() + FIRST_ANSWER_TIMEOUT_S
        while time.monotonic() < deadline:
            if any(p.ok for p in self.read()):
                return
            if self._proc.poll() is not None:
                raise RuntimeError(f"the health prober exited with {self._proc.returncode}")
            time.sleep(0.05)
        raise RuntimeError("the health prober got no answer from the server")

    def read(self) -> list[Probe]:
        """Every check answered so far (and, once stopped, those left pending)."""
        if not self._out.exists():
            return []
        probes = []
        for line in self._out.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) == 3:  # a line being written is skipped until it is whole
                probes.append(Probe(float(parts[0]), float(parts[1]), parts[2]))
        return probes

    def stop(self) -> list[Probe]:
        if self._proc.poll() is None:
            self._proc.send_signal(signal.SIGTERM)
        try:
            self._proc.wait(timeout=self._drain_s + 30)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        return sorted(self.read(), key=lambda p: p.sent)


def _probe(target: str, out: Path, interval_s: float, timeout_s: float, drain_s: float) -> None:
    stop = threading.Event()

    def on_term(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_term)
    lock = threading.Lock()
    in_flight: dict[int, float] = {}
    closed = False
    request = health_pb2.HealthCheckRequest(service="")
    with out.open("w", encoding="utf-8", buffering=1) as log, grpc.insecure_channel(target) as ch:
        stub = health_pb2_grpc.HealthStub(ch)

        def answered(number: int, sent: float, future: Any) -> None:
            at = time.monotonic()
            error = future.exception()
            code = "OK" if error is None else error.code().name
            with lock:
                if closed:
                    return
                in_flight.pop(number, None)
                log.write(f"{sent:.6f} {at:.6f} {code}\n")

        number = 0
        next_at = time.monotonic()
        while not stop.is_set():
            sent = time.monotonic()
            with lock:
                in_flight[number] = sent
            future = stub.Check.future(request, timeout=timeout_s)
            future.add_done_callback(partial(answered, number, sent))
            number += 1
            # On a clock; after a hiccup of this process, resume from now rather than burst.
            next_at = max(next_at + interval_s, time.monotonic())
            stop.wait(next_at - time.monotonic())
        give_up = time.monotonic() + drain_s
        while time.monotonic() < give_up:
            with lock:
                if not in_flight:
                    break
            time.sleep(0.02)
        with lock:
            closed = True
            at = time.monotonic()
            for sent in in_flight.values():
                log.write(f"{sent:.6f} {at:.6f} {PENDING}\n")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--interval", type=float, required=True, help="seconds between checks")
    parser.add_argument("--timeout", type=float, required=True, help="each check's deadline")
    parser.add_argument("--drain", type=float, required=True, help="seconds to wait at the end")
    args = parser.parse_args(argv)
    _probe(args.target, args.out, args.interval, args.timeout, args.drain)
    return 0


if __name__ == "__main__":
    sys.exit(main())
