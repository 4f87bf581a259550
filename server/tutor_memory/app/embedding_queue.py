"""The embedding queue: vectors of episodes that were acknowledged before they were embedded.

A batch import commits each episode with its recall facts and acknowledges it without waiting for
its embedding (the embedder, at about a thousand short texts a second on two cores, would
otherwise set the pace of the whole import). The committed episode is durable and at once visible
to ListEpisodes, to lexical recall and to recency; only search by meaning waits for its vector,
which this queue computes on its own threads, stores, and adds to the chain's vector index.

Nothing is lost to a crash between the commit and the embedding: the queue remembers nothing the
store does not. At start it reads which stored episodes have no embedding (`Store.unembedded`) and
embeds them in the background, beside the episodes committed while it runs. With other writers
(several nodes over one database), a node may die before its queue caught up, and the others do
not restart: there, a queue that has been idle for `BACKLOG_RESCAN_SECONDS` reads the store's
backlog again and embeds what it finds (an episode another node's queue is embedding at that
moment is embedded twice; the store keeps the first vector).

The lag (episodes committed but not yet searchable by meaning) is read with `pending()` and
`pending_of(chain)`: BuildBlock reports its chain's lag in the reply, and a metrics module can read
`pending()`, `embedded()` and `oldest_pending_seconds()`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tutor_memory.app.executors import Executors
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.protocols import Store

log = logging.getLogger("tutor_memory.embedding_queue")

# Texts embedded together by one worker. Measured on LoCoMo turns on the 2-core machine
# (bench/bench_ingest.py): the embedder alone ran 2,623 texts/s in batches of 16 against 1,968 in
# batches of 64 (a batch is padded to its longest text), and the queue's whole-run rate went from
# 859 to 957 embeddings/s when its batch went from 64 to 16; a small batch also keeps what a
# shutdown or a competing AppendEpisode waits behind short.
EMBED_QUEUE_BATCH = 16
# Workers embedding at once: each onnxruntime call uses one core, and the machine has two.
EMBED_QUEUE_WORKERS = 2
# Scheduling niceness of the workers' threads (Linux: per thread): the queue works with what CPU the
# acknowledgements, appends and blocks leave, instead of taking its share of two cores from them;
# it catches up once an import ends. 10 of 19 still runs it at a tenth of a busy core's time.
EMBED_QUEUE_NICENESS = 10
# Episodes read at a time from the store's backlog of episodes without an embedding.
BACKLOG_PAGE = 1_024
# The most episodes an import may leave waiting for their embedding: past it, imports wait for the
# queue (back-pressure), so the lag of the vector index is bounded under sustained load: at the
# measured catch-up rate (bench/results/ingest.md) it is about a minute of embedding, and the texts
# held in memory stay in the tens of megabytes.
MAX_VECTOR_LAG = 50_000
# Pause before reading the backlog again after a read failed (a store briefly unreachable).
BACKLOG_RETRY_SECONDS = 1.0
# With other writers, how long a queue stays idle before it reads the store's backlog again (see
# the module's docstring): each rescan reads every episode without a vector once, so it is kept
# rare, and a dead node's episodes are searchable by meaning within about this long.
BACKLOG_RESCAN_SECONDS = 15.0

# What the queue calls with each batch it stored: (chain, episode ids, vectors), to add them to the
# chain's vector index.
Indexer = Callable[[ChainKey, np.ndarray, np.ndarray], None]


@dataclass(frozen=True, slots=True)
class _Item:
    chain: ChainKey
    episode_id: int
    text: str
    queued_at: float


class EmbeddingQueue:
    """Thread-safe. `start()` once the caches are loaded; `stop()` before the store closes."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        executors: Executors,
        index: Indexer,
        *,
        batch: int = EMBED_QUEUE_BATCH,
        workers: int = EMBED_QUEUE_WORKERS,
        rescan_seconds: float | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._executors = executors
        self._index = index
        self._batch = batch
        self._workers = workers
        self._items: deque[_Item] = deque()
        self._pending: dict[ChainKey, int] = {}
        self._total = 0
        self._embedded = 0
        # The store's backlog: episodes with ids in (backlog_after, backlog_up_to] may lack an
        # embedding (committed by an earlier run); read page by page when the queue runs dry.
        self._backlog_after = 0
        self._backlog_up_to = 0
        self._backlog_started = time.monotonic()
        # The backlog is read only once counted, so that no episode leaves the lag before it
        # was counted in it.
        self._backlog_counted = False
        # Of the episodes counted in the backlog, those per chain not read in a page yet: the
        # ones still left when the last page is read were embedded meanwhile by another node,
        # and leave the lag then.
        self._backlog_left: dict[ChainKey, int] = {}
        self._busy = 0
        # Whether (and how often, idle) the store's backlog is read again; when the queue last
        # had work, and whether a worker is reading the backlog again now.
        self._rescan_seconds = rescan_seconds
        self._active_at = time.monotonic()
        self._rescanning = False
        self._stopping = False
        self._threads: list[threading.Thread] = []
        self._cond = threading.Condition()

    # -- what writers call ---------------------------------------------------------------------

    def enqueue(self, items: Sequence[tuple[ChainKey, int, str]]) -> None:
        """Queues (chain, episode id, text to embed) of episodes just committed without one."""
        if not items:
            return
        now = time.monotonic()
        with self._cond:
            for chain, episode_id, text in items:
                self._items.append(_Item(chain, episode_id, text, now))
                self._pending[chain] = self._pending.get(chain, 0) + 1
            self._total += len(items)
            self._cond.notify_all()

    # -- lag, for BuildBlock and metrics -------------------------------------------------------

    def pending(self) -> int:
        """Episodes committed whose vector is not yet in the index (the whole server)."""
        with self._cond:
            return self._total

    def pending_of(self, chain: ChainKey) -> int:
        """Episodes of `chain` committed whose vector is not yet in the index."""
        with self._cond:
            return self._pending.get(chain, 0)

    def embedded(self) -> int:
        """Episodes this queue embedded since the server started."""
        with self._cond:
            return self._embedded

    def oldest_pending_seconds(self) -> float:
        """How long the oldest waiting episode has waited (0 when none waits); the store's
        backlog counts from the start of the server."""
        with self._cond:
            if self._backlog_after < self._backlog_up_to:
                return time.monotonic() - self._backlog_started
            if self._items:
                return time.monotonic() - self._items[0].queued_at
            return 0.0

    def wait_below(self, limit: int, timeout: float | None = None) -> bool:
        """Blocks until fewer than `limit` episodes are pending; False if `timeout` passed."""
        with self._cond:
            return self._cond.wait_for(lambda: self._total < limit, timeout)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Blocks until nothing is pending (tests, benchmarks); False if `timeout` passed first.
        A started queue is idle only once it has counted the store's backlog: before, its lag
        reads 0 while earlier runs' episodes still wait."""
        with self._cond:
            return self._cond.wait_for(
                lambda: (
                    (self._backlog_counted or not self._threads)
                    and self._total == 0
                    and self._busy == 0
                ),
                timeout,
            )

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Takes up what earlier runs committed without embedding, then starts the workers.
        Reads only the store's highest episode id here; the count per chain is read by a
        worker, so a server with a large backlog is serving at once."""
        up_to = self._store.last_episode_id()
        with self._cond:
            self._backlog_up_to = up_to
            self._backlog_started = time.monotonic()
        for i in range(self._workers):
            thread = threading.Thread(
                target=self._run, args=(i == 0,), name=f"embed-queue-{i}", daemon=True
            )
            self._threads.append(thread)
            thread.start()

    def stop(self) -> None:
        """Stops after the batches being embedded; what is still queued is embedded at the
        next start (it is in the store without a vector)."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        for thread in self._threads:
            thread.join()
        self._threads.clear()

    # -- the workers ---------------------------------------------------------------------------

    def _count_backlog(self) -> None:
        counts = self._store.unembedded_counts(self._backlog_up_to) if self._backlog_up_to else {}
        with self._cond:
            for chain, n in counts.items():
                self._pending[chain] = self._pending.get(chain, 0) + n
            self._total += sum(counts.values())
            self._backlog_left = dict(counts)
            if not counts:
                self._backlog_after = self._backlog_up_to
            self._backlog_counted = True
            self._cond.notify_all()
        if counts:
            log.info(
                "embedding episodes stored without a vector",
                extra={"episodes": sum(counts.values()), "chains": len(counts)},
            )

    def _next_batch(self) -> list[_Item] | None:
        """The next batch to embed, waiting for one; None when stopping, [] after reading the
        store's backlog instead (a page of it, or all of it again)."""
        with self._cond:
            while True:
                if self._stopping:
                    return None
                if self._items:
                    n = min(self._batch, len(self._items))
                    batch = [self._items.popleft() for _ in range(n)]
                    self._busy += 1
                    self._active_at = time.monotonic()
                    return batch
                if self._backlog_counted and self._backlog_after < self._backlog_up_to:
                    after = self._backlog_after
                    # Claimed before reading, so the other worker reads the next page.
                    self._backlog_after = self._backlog_up_to
                    break
                wait = self._rescan_wait()
                if wait is not None and wait <= 0:
                    self._rescanning = True
                    self._backlog_counted = False
                    after = -1
                    break
                self._cond.wait(wait)
        if after < 0:
            self._rescan()
        else:
            self._read_page(after)
        return []

    def _rescan_wait(self) -> float | None:
        """Seconds until an idle queue reads the store's backlog again (0 or less: now); None
        when it does not (a lone process, a backlog not counted yet, a rescan or a batch under
        way). The condition's lock is held."""
        if self._rescan_seconds is None or not self._backlog_counted:
            return None
        if self._rescanning or self._busy:
            return None
        return self._rescan_seconds - (time.monotonic() - self._active_at)

    def _rescan(self) -> None:
        """Reads the store's whole backlog again (other writers: a dead node's episodes)."""
        try:
            up_to = self._store.last_episode_id()
            with self._cond:
                self._backlog_after = 0
                self._backlog_up_to = up_to
                self._backlog_started = time.monotonic()
            self._count_backlog()
        except Exception:
            log.exception("reading the store's backlog again failed; the next rescan retries")
            with self._cond:
                self._backlog_after = self._backlog_up_to
        finally:
            with self._cond:
                self._rescanning = False
                self._backlog_counted = True
                self._active_at = time.monotonic()
                self._cond.notify_all()

    def _settle_backlog(self) -> None:
        """After the backlog's last page: what was counted and not read was embedded elsewhere
        meanwhile, and leaves the lag (the condition's lock is held)."""
        for chain, n in self._backlog_left.items():
            left = self._pending.get(chain, 0) - n
            if left > 0:
                self._pending[chain] = left
            else:
                self._pending.pop(chain, None)
            self._total -= n
        self._backlog_left.clear()
        self._cond.notify_all()

    def _read_page(self, after: int) -> None:
        """Queues the next page of the store's backlog after id `after`."""
        try:
            page = self._store.unembedded(
                after_id=after, up_to_id=self._backlog_up_to, limit=BACKLOG_PAGE
            )
        except Exception:
            log.exception("reading episodes stored without a vector failed; retrying")
            time.sleep(BACKLOG_RETRY_SECONDS)
            with self._cond:
                self._backlog_after = min(self._backlog_after, after)
            return
        now = time.monotonic()
        with self._cond:
            for u in page:
                left = self._backlog_left.get(u.chain, 0)
                if left > 0:
                    self._backlog_left[u.chain] = left - 1
                else:
                    # Committed before the count's read but seen only now: counted here.
                    self._pending[u.chain] = self._pending.get(u.chain, 0) + 1
                    self._total += 1
            if len(page) == BACKLOG_PAGE:
                self._backlog_after = page[-1].episode_id
            else:
                self._settle_backlog()
            # The page joins the front of the queue: the backlog is older than new commits.
            self._items.extendleft(
                _Item(u.chain, u.episode_id, u.text, now) for u in reversed(page)
            )
            self._cond.notify_all()

    def _run(self, counts_backlog: bool) -> None:
        _lower_priority(EMBED_QUEUE_NICENESS)
        if counts_backlog:
            self._count_backlog()
        while True:
            batch = self._next_batch()
            if batch is None:
                return
            if not batch:
                continue
            try:
                self._embed_and_store(batch)
            except Exception:
                # Left in the store without a vector: the next start embeds them again.
                log.exception("embedding a queued batch failed", extra={"episodes": len(batch)})
            finally:
                with self._cond:
                    for item in batch:
                        left = self._pending.get(item.chain, 0) - 1
                        if left > 0:
                            self._pending[item.chain] = left
                        else:
                            self._pending.pop(item.chain, None)
                    self._total -= len(batch)
                    self._busy -= 1
                    self._cond.notify_all()

    def _embed_and_store(self, batch: list[_Item]) -> None:
        vectors = self._embedder.embed([item.text for item in batch])
        rows = [(item.chain, item.episode_id, vectors[i]) for i, item in enumerate(batch)]
        model_id = self._embedder.model_id

        def save() -> None:
            with self._store.writing() as w:
                w.save_vectors(model_id, rows)

        # On the writer thread, like every write, in the bulk lane: a write a caller waits on
        # goes first.
        self._executors.bulk_writer.submit(save).result()
        by_chain: dict[ChainKey, list[int]] = {}
        for i, item in enumerate(batch):
            by_chain.setdefault(item.chain, []).append(i)
        for chain, rows_of_chain in by_chain.items():
            ids = np.asarray([batch[i].episode_id for i in rows_of_chain], dtype=np.int64)
            self._index(chain, ids, vectors[rows_of_chain])
        with self._cond:
            self._embedded += len(batch)


def _lower_priority(niceness: int) -> None:
    """Lowers the calling thread's scheduling priority where the system allows it per thread
    (Linux); elsewhere the queue runs at normal priority."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
    except (AttributeError, OSError):
        log.debug("cannot lower the embedding queue's priority here")
