"""Every thread pool of the server, created and sized in this one place.

The event loop never does blocking work: each kind of work has its own pool, so that one kind
cannot starve another (a long file read never holds up an episode write).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future, ThreadPoolExecutor, wait
from typing import Any, ParamSpec, TypeVar

from tutor_memory.app.writer_thread import WriterThread
from tutor_memory.domain.budget import WorkBudget

P = ParamSpec("P")
T = TypeVar("T")

# Threads that read the store at once (ListEpisodes, VerifyChain, reports); SQLite in WAL mode
# lets readers run beside the writer.
READER_THREADS = 4
# Threads that embed at once: the single writes' texts, batched (app/batched_embeddings.py, one
# call at a time), beside a search's query or a file's episode; each onnxruntime call uses one
# core, and the machine has two.
EMBED_THREADS = 2
# Threads that build blocks at once; an abandoned build finishes on its thread, so more than one
# keeps the next turn from queueing behind it.
BLOCK_THREADS = 2
# Threads for a request's text work (detectors, grounding, a single write's recall facts): off the
# event loop, and apart from the pools writes and blocks need.
TEXT_THREADS = 2
# Text work on more characters than this goes to the long-text thread (`Executors.text_pool`):
# past about this size one text's work holds the GIL for longer than a switch interval (5 ms;
# the teaching detector alone took 2.7 ms on 4,096 characters of LoCoMo turns and 10 ms on
# 16,384). Two threads doing such work take the GIL in turn, and each time the event loop needs it
# back it waits behind both: four 64 KiB appends at once kept the loop from running for up to
# 106 ms with two text threads, and up to 31 ms with one (in process, a probe: docs/DESIGN.md P11).
LONG_TEXT_CHARS = 8_192
# The thread for text work on long texts, one at a time: the texts of ordinary turns keep the
# text pool, so they never queue behind a long one.
LONG_TEXT_THREADS = 1
# Threads that read course files and build their concepts: a file can take seconds, and must
# not hold up the embedding every episode write needs.
FILE_THREADS = 1
# The readiness probe's thread: apart from the readers, so a busy server still answers whether
# its store can be reached.
PROBE_THREADS = 1
# The thread that derives the recall facts of batch imports (stemming, token counts, narration):
# Python work that holds the GIL, so one thread is all it can use, and apart from the embed pool
# so that single writes never queue behind an import's chunk.
INGEST_THREADS = 1
# The thread that embeds the blocks' queries while their own threads search the text
# (onnxruntime releases the GIL, so the two overlap instead of adding up), the queries of
# concurrent turns in one call (app/batched_embeddings.py).
QUERY_EMBED_THREADS = 1


class Executors:
    """The server's pools. `run` hands a blocking call to one of them from the event loop."""

    def __init__(self) -> None:
        # Writes a caller waits on, and bulk writes (import chunks, queued vectors) that give
        # way to them: both run on the one writer thread (app/writer_thread.py); a bulk job
        # that writes in parts gives way between them through `writer_thread.give_way()`.
        self.writer_thread = WriterThread()
        self.writer: Executor = self.writer_thread.urgent
        self.bulk_writer: Executor = self.writer_thread.bulk
        self.readers = ThreadPoolExecutor(READER_THREADS, thread_name_prefix="reader")
        self.embed = ThreadPoolExecutor(EMBED_THREADS, thread_name_prefix="embed")
        self.blocks = ThreadPoolExecutor(BLOCK_THREADS, thread_name_prefix="block")
        self.query_embed = ThreadPoolExecutor(QUERY_EMBED_THREADS, thread_name_prefix="query")
        self.text = ThreadPoolExecutor(TEXT_THREADS, thread_name_prefix="text")
        self.long_text = ThreadPoolExecutor(LONG_TEXT_THREADS, thread_name_prefix="long-text")
        self.files = ThreadPoolExecutor(FILE_THREADS, thread_name_prefix="files")
        self.probe = ThreadPoolExecutor(PROBE_THREADS, thread_name_prefix="probe")
        self.ingest = ThreadPoolExecutor(INGEST_THREADS, thread_name_prefix="ingest")

    def text_pool(self, chars: int) -> ThreadPoolExecutor:
        """The pool for text work that reads `chars` characters (LONG_TEXT_CHARS)."""
        return self.long_text if chars > LONG_TEXT_CHARS else self.text

    async def run(self, pool: Executor, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        call: Callable[[], T] = functools.partial(fn, *args, **kwargs)
        # The call's context travels with the work (its deadline: store.deadlines), which
        # run_in_executor alone would leave behind on the event loop's thread.
        in_context: Callable[[], T] = functools.partial(contextvars.copy_context().run, call)
        return await asyncio.get_running_loop().run_in_executor(pool, in_context)

    async def run_within(
        self,
        pool: ThreadPoolExecutor,
        budget: WorkBudget,
        fn: Callable[P, T],
        *args: P.args,
        **kwargs: P.kwargs,
    ) -> T:
        """`run`, for work that checks `budget`: when the awaiting call is cancelled (its caller
        went away or its deadline passed), the budget is cancelled too, so the thread stops at
        its next check instead of finishing work nobody will read."""
        try:
            return await self.run(pool, fn, *args, **kwargs)
        except asyncio.CancelledError:
            budget.cancel()
            raise

    def shutdown(self) -> None:
        """Waits for the work already handed out, then stops every pool (writes last)."""
        pools = (
            self.probe,
            self.files,
            self.text,
            self.long_text,
            self.blocks,
            self.query_embed,
            self.embed,
            self.ingest,
            self.readers,
        )
        for pool in pools:
            pool.shutdown(wait=True)
        self.writer_thread.shutdown()


def in_background(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> Future[T]:
    """Runs one call on a thread of its own (start-up work, before the pools exist)."""
    future: Future[T] = Future()

    def run() -> None:
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)

    threading.Thread(target=run, name="start-up", daemon=True).start()
    return future


def settle(future: Future[Any] | None) -> None:
    """Waits for a call started by `in_background` to end, whatever its outcome."""
    if future is not None:
        wait([future])
