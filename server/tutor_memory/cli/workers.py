"""`tutor-memory serve --workers N`: N server processes on one port, under one supervisor.

One Python process serves on about one core (the GIL holds its Python work to one thread at a
time), so a machine with more cores serves more turns with more processes. The supervisor
prepares the data directory once (the store's migrations, the signing key, the master key), then
starts N workers: the same `serve` command with `--worker-index I`. Every worker binds the same
port with SO_REUSEPORT, and the kernel spreads incoming connections over them (a connection stays
with its worker, so a client needs several connections to use several workers).

Each worker keeps its own caches and checks a chain's head in the store before reading its caches
(`--sync`, app/sync.py), so a write acknowledged by one worker is in the next block any other
builds (read-your-writes per chain). Worker I serves metrics on the `--metrics-listen` port + I;
only worker 0 serves the console.

The supervisor forwards SIGTERM, SIGINT and SIGHUP (token reload) to every worker. If a worker
exits on its own, the supervisor stops the others and exits with status 1, so that whatever
supervises it (systemd, Kubernetes) restarts the whole set; a worker whose supervisor is killed
stops by itself (api/server.py).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import replace
from types import FrameType

from tutor_memory.app.config import ServerConfig, split_host_port
from tutor_memory.app.root import ConfigError, open_store
from tutor_memory.store.keyfile import load_or_create_server_key

log = logging.getLogger("tutor_memory.workers")

# The signals a supervisor passes on to its workers.
FORWARDED_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
# Exit status of a supervisor whose worker exited on its own.
WORKER_FAILED = 1


def check_worker_config(config: ServerConfig, workers: int) -> None:
    """Raises ConfigError when `workers` processes cannot share this configuration."""
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    if workers == 1:
        return
    try:
        _, port = split_host_port(config.listen)
    except ValueError as exc:
        raise ConfigError(f"--listen: {exc}") from exc
    if port == 0:
        raise ConfigError(
            "--workers needs a fixed port in --listen: with port 0 each worker would get a "
            "port of its own"
        )
    if config.sync is False:
        raise ConfigError(
            "--workers needs --sync: every worker must see the others' writes before it reads"
        )


def prepare(config: ServerConfig) -> None:
    """What a data directory needs before its first server, done once rather than raced by
    several workers: the store's schema (migrations), the server's signing key and the master
    key (created when missing)."""
    store = open_store(config)
    try:
        load_or_create_server_key(config.data_dir)
    finally:
        store.close()


def supervise(argv: Sequence[str], workers: int) -> int:
    """Runs `workers` workers of the `serve` command line `argv` (without the program name)
    until they stop; returns the supervisor's exit status."""
    children: list[subprocess.Popen[bytes]] = []
    stopping = False

    def forward(signum: int, _frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = stopping or signum != signal.SIGHUP
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED_SIGNALS}
    status = 0
    try:
        for index in range(workers):
            command = [sys.executable, "-m", "tutor_memory", *argv, "--worker-index", str(index)]
            children.append(subprocess.Popen(command))
        log.info("workers started", extra={"workers": workers, "pids": [c.pid for c in children]})
        running = {child.pid: index for index, child in enumerate(children)}
        while running:
            pid, wait_status = os.wait()
            if pid not in running:
                continue
            index = running.pop(pid)
            code = os.waitstatus_to_exitcode(wait_status)
            children[index].returncode = code
            if code != 0 or not stopping:
                log.error(
                    "a worker exited: stopping the others",
                    extra={"worker": index, "exit_code": code},
                )
                status = WORKER_FAILED
                if not stopping:
                    forward(signal.SIGTERM, None)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    log.info("workers stopped", extra={"exit_status": status})
    return status


def worker_config(config: ServerConfig, index: int) -> ServerConfig:
    """Worker `index`'s configuration: the shared port, the head check before reads, and its
    own metrics port (the given one + index)."""
    metrics = config.metrics_listen
    if metrics is not None:
        host, port = split_host_port(metrics)
        if port != 0:  # port 0: each worker's own free port already
            metrics = f"[{host}]:{port + index}" if ":" in host else f"{host}:{port + index}"
    return replace(config, worker=index, sync=True, metrics_listen=metrics)
