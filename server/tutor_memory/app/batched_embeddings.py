"""Embeddings of texts that arrive one at a time from concurrent calls, batched while the model
is busy: the query of each block (one per turn) and the episodes of single writes (AppendEpisode,
RecordCheck), each through its own instance and pool.

One onnxruntime call has a fixed cost that dominates a single short text: on this project's
2-core machine a query alone costs 0.80 ms of CPU, and 0.22 ms in a batch of 8 (measured with
`UseOnnxEmbedder`, one thread). So the texts of concurrent calls go through the model together:
a text waits only for the call already running, never for a timer, so a lone call pays nothing
and a busy server pays the fixed cost once per batch (appends alone, 38 callers: 2.53 ms of
server CPU per append against 3.44 when each embedded its own text). A text's vector varies
slightly with the other texts of its batch (cosine 0.995 or more: docs/DESIGN.md P7), as an
import's batches' vectors already did.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

from tutor_memory.models.embedder import Embedder

Vector = npt.NDArray[np.float32]

# Most texts embedded in one call: past about 16 the cost per query stops falling (0.17 ms at 16
# and 32), and a larger batch only makes its first text wait longer.
MAX_BATCH = 16
# Weight of the latest call in `typical_seconds`: about the last ten calls count.
TYPICAL_WEIGHT = 0.1


class BatchedEmbeddings:
    """Thread-safe: `submit` may be called from any thread; the model runs on `pool`."""

    def __init__(
        self, embedder: Embedder, pool: ThreadPoolExecutor, max_batch: int = MAX_BATCH
    ) -> None:
        self._embedder = embedder
        self._pool = pool
        self._max_batch = max_batch
        self._waiting: list[tuple[str, Future[Vector]]] = []
        self._running = False
        self._lock = threading.Lock()
        # How long one call of the model takes, smoothed over the recent calls (0 before the
        # first): what a caller may expect to wait for a text it just submitted.
        self.typical_seconds = 0.0

    def submit(self, text: str) -> Future[Vector]:
        """The text's embedding, to come: one 1-d unit vector."""
        future: Future[Vector] = Future()
        with self._lock:
            self._waiting.append((text, future))
            start = not self._running
            self._running = True
        if start:
            self._pool.submit(self._drain)
        return future

    def _drain(self) -> None:
        """Embeds what is waiting, a batch at a time, until nothing is."""
        while True:
            with self._lock:
                batch = self._waiting[: self._max_batch]
                del self._waiting[: self._max_batch]
                if not batch:
                    self._running = False
                    return
            # A text whose caller went away (its future cancelled) is not embedded; the others
            # can no longer be cancelled, so setting their results below cannot fail.
            batch = [
                (text, future) for text, future in batch if future.set_running_or_notify_cancel()
            ]
            if not batch:
                continue
            started = time.perf_counter()
            try:
                vectors = self._embedder.embed([text for text, _ in batch])
            except Exception as exc:
                # Every caller of the batch hears of it; the next batch still runs.
                for _, future in batch:
                    future.set_exception(exc)
                continue
            took = time.perf_counter() - started
            # One writer (the pool runs one drain at a time); a reader sees the old or new value.
            self.typical_seconds += TYPICAL_WEIGHT * (took - self.typical_seconds)
            for (_, future), vector in zip(batch, vectors, strict=True):
                future.set_result(vector)
