"""Reading course files (IngestFile) in a process of their own.

Reading a file into pages (pypdf for a PDF), extracting its concepts and cutting its passages is
Python that holds the GIL: 2.3 s of it for a course of 1,500 PDF pages on the 2-core machine. On a
thread of the server that time is taken in 5 ms slices from the event loop and from the threads
that build blocks: while such a file was read, BuildBlock's p95 on another chain went from 3.5 to
32 ms and a health check waited 58 ms (bench/bench_file_ingest.py, the README's "Files"). A
process has a GIL of its own, and unlike a thread it can be stopped from outside: a read whose call
went away (cancelled, or past its deadline without noticing) is ended by ending the process.
The file's embedding stays on the server's file thread: onnxruntime releases the GIL.

The process starts with the first file of at least `PROCESS_MIN_BYTES`. Until it runs, smaller
files are read on the file thread (a few milliseconds of Python each), so a server that is only
ever sent small files never starts it; once it runs, every file is read there. When the process
dies during a read (killed, out of memory) the read is tried again in a new one; after
`MAX_PROCESS_FAILURES` deaths in a row the file thread reads every file and the log says so.
`serve --file-processes 0` keeps every read on the thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

from tutor_memory.app.worker_processes import (
    MAX_PROCESS_FAILURES,
    become_worker,
    spawn_pool,
    warn_failed,
)
from tutor_memory.domain.budget import BudgetTerms, WorkBudget
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.extract import OfflineExtractor
from tutor_memory.domain.conceptmap.screening import screen, validate_caller_concepts
from tutor_memory.domain.errors import DeadlineExceeded, InvalidArgument
from tutor_memory.domain.files.document import Document
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.files.passages import PassageText, passages
from tutor_memory.domain.files.read import read_document

log = logging.getLogger("tutor_memory.file_reading")

# Files this large or larger start the reading process when none runs. A PDF page of course text
# is about 700 bytes and takes about 1.5 ms to read and extract, so a file below this is read on
# the file thread in about 25 ms at most, in slices the event loop gets between.
PROCESS_MIN_BYTES = 16 * 1024
# How often the file thread, waiting on the process, looks whether the call went away.
CANCEL_POLL_SECONDS = 0.05
# How long ending a read waits for a process that is still starting to say who it is.
START_WAIT_SECONDS = 10.0
# Past the budget's deadline or cap, how long the process gets to notice on its own (it checks
# the budget at every page) before it is ended.
OVERDUE_GRACE_SECONDS = 1.0

# Which extractor found the file's concepts (IngestFileReply.extractor).
EXTRACTOR_BUILTIN = "builtin"
EXTRACTOR_CALLER = "caller"


@dataclass(frozen=True, slots=True)
class FileRead:
    """A file read: its pages, its accepted and rejected concepts, and its passages."""

    document: Document
    extractor: str
    accepted: tuple[ExtractedConcept, ...]
    rejected: tuple[tuple[str, str], ...]
    passages: tuple[PassageText, ...]


def read_file(
    content: bytes,
    filename: str,
    media_type: str,
    caller_concepts: tuple[ExtractedConcept, ...],
    budget: WorkBudget,
) -> FileRead:
    """Reads a file and finds its concepts: the caller's, checked, or the built-in extractor's
    (`caller_concepts` empty). Raises INVALID_ARGUMENT naming `content` when it cannot be read."""
    try:
        document = read_document(content, filename, media_type, budget)
    except FileRejected as exc:
        raise InvalidArgument("content", exc.reason) from exc
    budget.check()
    if caller_concepts:
        accepted, rejected = validate_caller_concepts(caller_concepts, len(document.pages))
        extractor = EXTRACTOR_CALLER
    else:
        accepted, rejected = screen(OfflineExtractor().extract(document, budget))
        extractor = EXTRACTOR_BUILTIN
    budget.check()
    return FileRead(
        document, extractor, tuple(accepted), tuple(rejected), tuple(passages(document))
    )


def _start_worker() -> None:
    become_worker()


def _read_in_worker(
    content: bytes,
    filename: str,
    media_type: str,
    caller_concepts: tuple[ExtractedConcept, ...],
    terms: BudgetTerms,
) -> FileRead:
    return read_file(content, filename, media_type, caller_concepts, WorkBudget.from_terms(terms))


class FileReader:
    """Reads files for IngestFile, in the reading process or on the calling thread (see the
    module's docstring). `read` is called on the file thread, one file at a time."""

    def __init__(self, *, processes: int) -> None:
        if processes not in (0, 1):
            raise ValueError(f"processes must be 0 or 1, got {processes}")
        self._processes = processes
        self._pool: ProcessPoolExecutor | None = None
        # The first call of the pool: its worker's process id, to end it.
        self._pid: Future[int] | None = None
        self._failures = 0
        self._closed = False

    def running_processes(self) -> int:
        """The reading processes that run now (read at any time): 0 before the first large
        file, after the process was ended or died, or with none configured."""
        pid = self._pid
        if self._pool is None or pid is None or not pid.done() or pid.exception() is not None:
            return 0
        return 1

    def read(
        self,
        content: bytes,
        filename: str,
        media_type: str,
        caller_concepts: tuple[ExtractedConcept, ...],
        budget: WorkBudget,
    ) -> FileRead:
        while (pool := self._usable(start=len(content) >= PROCESS_MIN_BYTES)) is not None:
            try:
                future = pool.submit(
                    _read_in_worker, content, filename, media_type, caller_concepts, budget.terms()
                )
                result = self._wait(pool, future, budget)
            except BrokenProcessPool as exc:
                self._failed(pool, exc)  # and the file is read again, by a new process
                continue
            self._failures = 0
            return result
        return read_file(content, filename, media_type, caller_concepts, budget)

    def _wait(
        self, pool: ProcessPoolExecutor, future: Future[FileRead], budget: WorkBudget
    ) -> FileRead:
        """The read's result; when the call goes away, or the read runs past its budget without
        stopping, the process is ended and the budget's error raised."""
        terms = budget.terms()
        limits = [t for t in (terms.deadline, terms.cap_at) if t is not None]
        overdue_at = min(limits) + OVERDUE_GRACE_SECONDS if limits else None
        while True:
            try:
                return future.result(timeout=CANCEL_POLL_SECONDS)
            except FutureTimeout:
                pass
            if budget.cancelled or (overdue_at is not None and time.monotonic() > overdue_at):
                self._end(pool)
                budget.check()
                raise DeadlineExceeded(f"{terms.what}: the work was stopped")

    def _usable(self, *, start: bool) -> ProcessPoolExecutor | None:
        """The pool if its process runs; with `start`, starts one if none runs (and the failures
        so far allow) and returns it: the read waits for the process to start."""
        if self._closed or self._processes == 0 or self._failures >= MAX_PROCESS_FAILURES:
            return None
        if self._pool is None:
            if not start:
                return None
            self._start()
        pid = self._pid
        if not start and (pid is None or not pid.done()):
            return None
        return self._pool

    def _start(self) -> None:
        pool = None
        try:
            pool = spawn_pool(1, _start_worker)
            self._pool = pool
            self._pid = pool.submit(os.getpid)
        except Exception as exc:  # no process could be started (out of processes or memory)
            self._failed(pool, exc)

    def _failed(self, pool: ProcessPoolExecutor | None, exc: BaseException) -> None:
        self._failures += 1
        warn_failed(
            log,
            "the file-reading process",
            "files are read on the file thread",
            exc,
            self._failures,
        )
        if pool is not None:
            self._drop(pool)

    def _end(self, pool: ProcessPoolExecutor) -> None:
        """Ends the process in the middle of a read nobody waits for; the next large file starts
        a new one. Not a failure: the process was well."""
        pid = self._pid
        if pid is not None:
            # A process still starting has the read queued already: it is ended once it says who
            # it is. One that never does has failed to start, and has nothing to end.
            with contextlib.suppress(Exception):
                os.kill(pid.result(timeout=START_WAIT_SECONDS), signal.SIGKILL)
        self._drop(pool)

    def _drop(self, pool: ProcessPoolExecutor) -> None:
        if pool is self._pool:
            self._pool, self._pid = None, None
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stops the reading process (after the read under way)."""
        self._closed = True
        pool, self._pool, self._pid = self._pool, None, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
