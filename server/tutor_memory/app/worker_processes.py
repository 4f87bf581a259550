"""What the server's worker processes share: how they are started and how they end.

Two kinds of work run in processes of their own because they are Python that holds a GIL for long
stretches: the recall facts of batch imports (app/import_facts.py) and the reading of course files
(app/file_reading.py). Each kind has a pool of its own; this module makes the pools alike.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

# How often a worker checks that the server that started it still runs.
PARENT_POLL_SECONDS = 1.0
# Failures of a kind's process in a row (it died, or never started) after which that kind of work
# stays in the server: a process that cannot live here would otherwise cost a start each time.
MAX_PROCESS_FAILURES = 3


def spawn_pool(
    workers: int, initializer: Callable[..., None], initargs: tuple[Any, ...] = ()
) -> ProcessPoolExecutor:
    """A pool of `workers` processes, each running `initializer(*initargs)` first (which should
    call `become_worker`). Spawned, not forked: the server has threads, and a forked child could
    inherit a lock another thread held."""
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=initializer,
        initargs=initargs,
    )


def become_worker() -> None:
    """The start of every worker: Ctrl-C in a terminal reaches the whole process group, but the
    server stops its workers itself (a worker interrupted first would print a traceback and count
    as a failure); and a server killed outright (SIGKILL, out of memory) never tells its pools to
    stop, so each worker ends itself once its parent is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_exit_with_parent, args=(os.getppid(),), name="parent-watch", daemon=True
    ).start()


def _exit_with_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(0)


def warn_failed(
    log: logging.Logger, process: str, instead: str, exc: BaseException, failures: int
) -> None:
    """Logs the `failures`-th failure in a row of `process` ("the import process"), whose work
    `instead` ("chunks are derived on the ingest thread") until a new one starts, or for good once
    MAX_PROCESS_FAILURES is reached."""
    log.warning(
        "%s failed (%s: %s; %d of %d in a row): %s %s",
        process,
        type(exc).__name__,
        exc,
        failures,
        MAX_PROCESS_FAILURES,
        instead,
        "from now on" if failures >= MAX_PROCESS_FAILURES else "until a new process starts",
    )
