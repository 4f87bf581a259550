"""Every thread pool of the server, created and sized in this one place.

The event loop never does blocking work: each kind of work has its own pool, so that one kind
cannot starve another (a long file read never holds up an episode write).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

# The one writer: SQLite allows one writer at a time, and one thread also keeps each chain's
# links in the order the writes were acknowledged.
WRITER_THREADS = 1
# Threads that read the store at once (ListEpisodes, VerifyChain, reports); SQLite in WAL mode
# lets readers run beside the writer.
READER_THREADS = 4
# Threads that embed at once; each onnxruntime call uses one core, and the machine has two.
EMBED_THREADS = 2
# Threads that build blocks at once; an abandoned build finishes on its thread, so more than one
# keeps the next turn from queueing behind it.
BLOCK_THREADS = 2
# Threads for a request's text work (detectors, grounding): off the event loop, and apart from
# the pools writes and blocks need.
TEXT_THREADS = 2
# Threads that read course files and build their concepts: a file can take seconds, and must
# not hold up the embedding every episode write needs.
FILE_THREADS = 1
# The thread that derives the recall facts of batch imports (stemming, token counts, narration):
# Python work that holds the GIL, so one thread is all it can use, and apart from the embed pool
# so that single writes never queue behind an import's chunk.
INGEST_THREADS = 1
# The thread that embeds a block's query while the block's own thread searches the text
# (onnxruntime releases the GIL, so the two overlap instead of adding up).
QUERY_EMBED_THREADS = 1


class Executors:
    """The server's pools. `run` hands a blocking call to one of them from the event loop."""

    def __init__(self) -> None:
        self.writer = ThreadPoolExecutor(WRITER_THREADS, thread_name_prefix="writer")
        self.readers = ThreadPoolExecutor(READER_THREADS, thread_name_prefix="reader")
        self.embed = ThreadPoolExecutor(EMBED_THREADS, thread_name_prefix="embed")
        self.blocks = ThreadPoolExecutor(BLOCK_THREADS, thread_name_prefix="block")
        self.query_embed = ThreadPoolExecutor(QUERY_EMBED_THREADS, thread_name_prefix="query")
        self.text = ThreadPoolExecutor(TEXT_THREADS, thread_name_prefix="text")
        self.files = ThreadPoolExecutor(FILE_THREADS, thread_name_prefix="files")
        self.ingest = ThreadPoolExecutor(INGEST_THREADS, thread_name_prefix="ingest")

    async def run(
        self, pool: ThreadPoolExecutor, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs
    ) -> T:
        call = functools.partial(fn, *args, **kwargs) if args or kwargs else fn
        return await asyncio.get_running_loop().run_in_executor(pool, call)

    def shutdown(self) -> None:
        """Waits for the work already handed out, then stops every pool (writes last)."""
        pools = (
            self.files,
            self.text,
            self.blocks,
            self.query_embed,
            self.embed,
            self.ingest,
            self.readers,
        )
        for pool in (*pools, self.writer):
            pool.shutdown(wait=True)
