"""The recall facts of batch imports, derived in a process of their own.

Deriving an episode's facts (stemming, the token count of its line, an answer's narration check)
is Python that holds the GIL. On the ingest thread it shares the GIL with the writer thread, the
embedding queue and the event loop, so the server's Python runs on one core whatever the machine
has. A separate process has a GIL of its own: the server's threads convert, commit and
acknowledge one chunk while the process derives the next (docs/DESIGN.md P14; the README's
"Ingest and embedding"). Facts are a pure function of the episodes and the tokenizer, so the process
needs no store and keeps no state.

The process starts when an import reaches `PROCESS_START_ITEMS` items and takes about half a
second of a core to load its modules; until it answers, chunks are derived on the ingest thread.
Smaller imports never start it: one of a few hundred items is over before the process could
answer, and the process's start would only take a core from it (docs/DESIGN.md P14). When it
dies, the chunk it was deriving is derived on the thread and the next chunk of a large import
starts a new process; after `MAX_PROCESS_FAILURES` failures in a row the thread does all the work
and the log says so.
`serve --import-processes 0` keeps every chunk on the thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from tutor_memory.app.worker_processes import (
    MAX_PROCESS_FAILURES,
    become_worker,
    spawn_pool,
    warn_failed,
)
from tutor_memory.domain.episodes import NewEpisode
from tutor_memory.domain.recall.facts import RecallFacts, recall_facts
from tutor_memory.domain.recall.timewords import warm_up as warm_up_time_words
from tutor_memory.domain.text.stems import document_terms
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.models.tokenizers import load_counter

log = logging.getLogger("tutor_memory.import_facts")

# Items of one import after which it starts the process (if none runs): about a quarter of a
# second of an import's work on the 2-core machine, where the process's start (half a second of a
# core) slowed imports of 369-419 items, which end before it answers, by a third (LoCoMo's
# conversations on fresh servers, bench/results/locomo.json).
PROCESS_START_ITEMS = 1_024

# The worker process's token counter, loaded once when it starts.
_worker_counter: TokenCounter | None = None


def _start_worker(tokenizer: Path | None) -> None:
    global _worker_counter
    become_worker()
    _worker_counter = load_counter(tokenizer)


def _worker_ready() -> str:
    """Loads what deriving facts reads on first use (the language files and stemmers, the date
    library's patterns) and names the worker's tokenizer, which must be the server's."""
    assert _worker_counter is not None
    document_terms("")
    warm_up_time_words()
    return _worker_counter.name


def _worker_facts(episodes: Sequence[NewEpisode]) -> list[RecallFacts]:
    assert _worker_counter is not None
    return recall_facts(episodes, _worker_counter)


class ImportFacts:
    """Derives the facts of an import's chunks: in the worker process once it is ready, else on
    `thread` (the ingest thread) with `counter`."""

    def __init__(
        self,
        counter: TokenCounter,
        thread: Executor,
        *,
        tokenizer: Path | None,
        processes: int,
    ) -> None:
        if processes < 0:
            raise ValueError(f"processes must be >= 0, got {processes}")
        self._counter = counter
        self._thread = thread
        self._tokenizer = tokenizer
        self._processes = processes
        self._pool: ProcessPoolExecutor | None = None
        # The pool's first call, which answers once its worker has loaded everything.
        self._ready: Future[str] | None = None
        self._failures = 0
        self._closed = False

    def ready_processes(self) -> int:
        """The processes deriving facts (read at any time, from any thread): those configured once
        the first has answered; 0 while it starts, after it failed, or with none configured. A
        process that died is counted until the chunk that finds it dead."""
        pool, ready = self._pool, self._ready
        if pool is None or ready is None or not ready.done() or ready.exception() is not None:
            return 0
        return self._processes if ready.result() == self._counter.name else 0

    async def derive(self, episodes: Sequence[NewEpisode], *, imported: int) -> list[RecallFacts]:
        """The facts of one chunk of an import that has received `imported` items so far (the
        chunk's included)."""
        pool = self._usable(start=imported >= PROCESS_START_ITEMS)
        loop = asyncio.get_running_loop()
        if pool is not None:
            try:
                facts = await asyncio.wrap_future(pool.submit(_worker_facts, list(episodes)))
            except BrokenProcessPool as exc:
                # The process died (killed, out of memory): the thread derives this chunk. An
                # error of the derivation itself is raised as it would be on the thread.
                self._failed(pool, exc)
            else:
                self._failures = 0
                return facts
        return await loop.run_in_executor(self._thread, recall_facts, episodes, self._counter)

    def _usable(self, *, start: bool = False) -> ProcessPoolExecutor | None:
        """The pool if its worker answered; with `start`, starts one if none runs (and the
        failures so far allow)."""
        if self._closed or self._processes == 0 or self._failures >= MAX_PROCESS_FAILURES:
            return None
        if self._pool is None:
            if start:
                self._start()
            return None
        ready = self._ready
        if ready is None or not ready.done():
            return None
        pool = self._pool
        try:
            name = ready.result()
        except Exception as exc:  # it could not start: counted, then a new one is tried
            self._failed(pool, exc)
            return None
        if name != self._counter.name:
            # Not a failure to retry: the same tokenizer file must count the same way.
            log.error(
                "the import process counts tokens with %s, the server with %s: imports derive "
                "their facts on the ingest thread",
                name,
                self._counter.name,
            )
            self._failures = MAX_PROCESS_FAILURES
            self._stop(pool)
            return None
        return pool

    def _start(self) -> None:
        pool = spawn_pool(self._processes, _start_worker, (self._tokenizer,))
        self._pool = pool
        try:
            self._ready = pool.submit(_worker_ready)
        except Exception as exc:  # no process could be started (out of processes or memory)
            self._failed(pool, exc)

    def _failed(self, pool: ProcessPoolExecutor, exc: BaseException) -> None:
        if pool is not self._pool:
            return  # counted already, by another chunk of the same pool
        self._failures += 1
        warn_failed(
            log,
            "the import process",
            "chunks are derived on the ingest thread",
            exc,
            self._failures,
        )
        self._stop(pool)

    def _stop(self, pool: ProcessPoolExecutor) -> None:
        if pool is self._pool:
            self._pool, self._ready = None, None
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stops the worker process (after the chunk it is deriving)."""
        self._closed = True
        pool, self._pool, self._ready = self._pool, None, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
