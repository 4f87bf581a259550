"""Which chains are held in memory: each chain's recall table and vector index are loaded on its
first read, kept while it is used, and evicted least recently used first when what all chains
hold passes the memory budget (`ServerConfig.cache_budget_bytes`).

A server therefore starts without loading anything (it serves as soon as the store is open and
the model loaded), and holds what the chains in use need, however many the store has.

Loading a chain reads its snapshot file (index/snapshots.py) when it has one, then from the store
whatever was committed after it; without a snapshot, everything from the store. An evicted or
stopped chain that holds at least `SNAPSHOT_MIN_EPISODES` and changed since its snapshot is
written to a new one (in the background for an eviction), so that the next load is a file read.

Writes reach a held chain through `add_committed` (the ledger, after each commit) and
`add_vectors` (the embedding queue); a chain not held ignores them, since its next load reads
them from the store. A chain being loaded keeps what arrives meanwhile and applies it once loaded,
each episode once: rows after the table's last id, vectors of episodes the index lacks.

Accessors for metrics: `resident_chains()`, `resident_bytes()`, `budget_bytes`, `loads()`,
`evictions()`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.facts import RecallRow, recall_facts
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.index.recall_tables import ChainTable, RecallTables
from tutor_memory.index.snapshots import ChainSnapshot, SnapshotFiles
from tutor_memory.index.vectors import VectorIndex
from tutor_memory.store.protocols import Store, StoredRecall

log = logging.getLogger("tutor_memory.resident")

# Chains with fewer episodes are not written to snapshot files: the store loads them in
# milliseconds, and ten thousand small files would cost more than they save.
SNAPSHOT_MIN_EPISODES = 2_000
# At start, chains with a snapshot are loaded in the background until the held chains take this
# share of the budget (the rest is left to the chains the calls ask for).
WARM_UP_SHARE = 0.5


@dataclass
class _Held:
    """What is known of one chain in memory."""

    loading: bool = True
    ready: threading.Event = field(default_factory=threading.Event)
    # Episode ids of the table whose vector the index does not hold yet.
    missing: set[int] = field(default_factory=set)
    # Writes that arrived while the chain was loading: (rows, vector ids, vectors).
    waiting: list[tuple[list[RecallRow], npt.NDArray[np.int64], npt.NDArray[np.float32]]] = field(
        default_factory=list
    )
    nbytes: int = 0
    # Changed since it was loaded or last written to a snapshot.
    dirty: bool = False


class ResidentChains:
    """Thread-safe. `ensure(chain)` before reading a chain's table or index (RecallTables calls
    it on every read)."""

    def __init__(
        self,
        store: Store,
        tables: RecallTables,
        vectors: VectorIndex,
        counter: TokenCounter,
        model_id: str,
        bulk_writer: Executor,
        *,
        budget_bytes: int,
        snapshots: SnapshotFiles | None,
    ) -> None:
        self._store = store
        self._tables = tables
        self._vectors = vectors
        self._counter = counter
        self._model_id = model_id
        self._bulk_writer = bulk_writer
        self.budget_bytes = budget_bytes
        self._snapshots = snapshots
        # Held chains, least recently used first.
        self._held: OrderedDict[ChainKey, _Held] = OrderedDict()
        self._bytes = 0
        self._loads = 0
        self._evictions = 0
        self._lock = threading.Lock()
        self._writers: list[threading.Thread] = []
        # Chains forgotten (their student erased): a snapshot write under way when that happened
        # deletes what it wrote (see `_write_later`).
        self._forgotten: set[ChainKey] = set()
        self._warm_up: threading.Thread | None = None
        self._stop_warm_up = threading.Event()
        # Called with a chain before it is read from the store (app/sync.py: with other writers,
        # what they commit during the load is caught up after it).
        self.before_load: Callable[[ChainKey], None] | None = None
        tables.on_read = self.ensure

    # -- accessors for metrics -----------------------------------------------------------------

    def resident_chains(self) -> int:
        """Chains whose table and index are in memory."""
        with self._lock:
            return sum(1 for held in self._held.values() if not held.loading)

    def resident_episodes(self) -> int:
        """Episodes in the tables of the chains held in memory."""
        with self._lock:
            loaded = [chain for chain, held in self._held.items() if not held.loading]
        return sum(len(t) for t in map(self._tables.held, loaded) if t is not None)

    def resident_bytes(self) -> int:
        """About how much memory the held chains' tables and indexes take."""
        with self._lock:
            return self._bytes

    def loads(self) -> int:
        """Chains loaded since the server started (a reload after an eviction counts again)."""
        with self._lock:
            return self._loads

    def evictions(self) -> int:
        """Chains evicted to stay within the budget since the server started."""
        with self._lock:
            return self._evictions

    def is_resident(self, chain: ChainKey) -> bool:
        with self._lock:
            held = self._held.get(chain)
            return held is not None and not held.loading

    def holds(self, chain: ChainKey) -> bool:
        """Whether the chain is held or being loaded (writes to it are then kept)."""
        with self._lock:
            return chain in self._held

    def missing_of(self, chain: ChainKey, limit: int) -> list[int]:
        """Up to `limit` ids, lowest first, of the held chain's episodes whose vector its index
        lacks (none for a chain not held or still loading)."""
        with self._lock:
            held = self._held.get(chain)
            if held is None or held.loading or not held.missing:
                return []
            return sorted(held.missing)[:limit]

    # -- reads ---------------------------------------------------------------------------------

    def ensure(self, chain: ChainKey) -> None:
        """Loads the chain if it is not held (or waits for the thread loading it), and marks it
        the most recently used."""
        with self._lock:
            held = self._held.get(chain)
            if held is not None and not held.loading:
                self._held.move_to_end(chain)
                return
            mine = held is None
            if held is None:
                held = self._held[chain] = _Held()
        if not mine:
            held.ready.wait()
            return
        try:
            table, missing, from_store = self._load(chain)
        except BaseException:
            with self._lock:
                self._held.pop(chain, None)
            self._tables.remove(chain)
            self._vectors.remove(chain)
            held.ready.set()
            raise
        with self._lock:
            if self._held.get(chain) is not held:
                # Forgotten while it loaded (its student was erased): keep nothing of the load.
                self._tables.remove(chain)
                self._vectors.remove(chain)
                held.ready.set()
                return
            self._tables.put(chain, table)
            held.missing = missing
            for rows, ids, vectors in held.waiting:
                self._apply(chain, held, rows, ids, vectors)
            held.waiting.clear()
            held.loading = False
            # Read from the store rather than a snapshot: worth writing one when evicted.
            held.dirty = from_store > 0
            self._loads += 1
            self._measure(chain, held)
            self._held.move_to_end(chain)
        held.ready.set()
        if from_store >= SNAPSHOT_MIN_EPISODES:
            self._write_soon(chain, held)
        self._evict_over_budget(keep=chain)

    def _load(self, chain: ChainKey) -> tuple[ChainTable, set[int], int]:
        """The chain's table (and its index, put in place) from its snapshot and the store, the
        ids of its episodes without a vector, and how many episodes were read from the store."""
        started = time.perf_counter()
        if self.before_load is not None:
            self.before_load(chain)
        snapshot = self._snapshots.read(chain) if self._snapshots is not None else None
        after, missing_before = 0, np.empty(0, np.int64)
        if snapshot is not None:
            after, missing_before = snapshot.last_id, snapshot.missing
        recall = self._store.chain_recall(
            chain, self._model_id, after_id=after, vectors_of=missing_before.tolist()
        )
        if snapshot is not None and recall.before != snapshot.rows:
            # The store is not the one the snapshot was made from (a restored backup): reload.
            log.warning("snapshot does not match the store; loading from the store")
            snapshot, after, missing_before = None, 0, np.empty(0, np.int64)
            recall = self._store.chain_recall(chain, self._model_id, after_id=0)
        self._vectors.remove(chain)
        if snapshot is not None:
            table = ChainTable.from_arrays(snapshot.table)
            if snapshot.index is not None:
                self._vectors.put(chain, snapshot.index, snapshot.graph)
        else:
            table = ChainTable()
        rows = self._rows(chain, recall.rows)
        table.append(rows)
        table.compact()
        missing = set(missing_before.tolist()) | {r.episode_id for r in rows}
        if len(recall.vector_ids):
            self._vectors.add(chain, recall.vector_ids, recall.vectors)
            missing -= set(recall.vector_ids.tolist())
        log.info(
            "chain loaded",
            extra={
                "episodes": len(table),
                "from_snapshot": snapshot is not None,
                "read_from_store": len(rows),
                "ms": round((time.perf_counter() - started) * 1000, 1),
            },
        )
        return table, missing, len(rows)

    def _rows(self, chain: ChainKey, stored: list[StoredRecall]) -> list[RecallRow]:
        """Recall rows of stored episodes; facts missing or made by older rules are derived
        again from the episodes and saved (the reindex an upgrade of the rules needs)."""
        stale = [s.episode_id for s in stored if s.facts is None]
        made = {}
        if stale:
            episodes = self._store.episodes_by_id(chain, stale)
            ordered = [episodes[i] for i in stale if i in episodes]
            fresh = recall_facts(ordered, self._counter)
            made = {ep.episode_id: f for ep, f in zip(ordered, fresh, strict=True)}

            def save() -> None:
                with self._store.writing() as w:
                    w.save_recall_facts(chain, list(made.items()))

            self._bulk_writer.submit(save).result()
        out = []
        for s in stored:
            facts = s.facts if s.facts is not None else made.get(s.episode_id)
            if facts is None:
                continue
            out.append(
                RecallRow(
                    episode_id=s.episode_id,
                    occurred_at_us=s.occurred_at_us,
                    salience=s.salience,
                    kind=s.kind,
                    dup_key=facts.dup_key,
                    tokens=facts.tokens,
                    flagged=facts.flagged,
                    concepts=s.concepts,
                    stems=facts.stems,
                )
            )
        return out

    # -- writes --------------------------------------------------------------------------------

    def add_committed(
        self,
        chain: ChainKey,
        rows: list[RecallRow],
        vector_ids: npt.NDArray[np.int64],
        vectors: npt.NDArray[np.float32],
    ) -> None:
        """Adds episodes just committed to one chain (rows in id order, and the vectors of those
        that have one) if the chain is held."""
        with self._lock:
            held = self._held.get(chain)
            if held is None:
                return
            if held.loading:
                held.waiting.append((rows, vector_ids, vectors))
                return
            self._apply(chain, held, rows, vector_ids, vectors)
            self._measure(chain, held)
        self._evict_over_budget(keep=chain)

    def add_vectors(
        self, chain: ChainKey, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]
    ) -> None:
        """Adds vectors the embedding queue computed, if the chain is held."""
        self.add_committed(chain, [], ids, vectors)

    def _apply(
        self,
        chain: ChainKey,
        held: _Held,
        rows: Sequence[RecallRow],
        vector_ids: npt.NDArray[np.int64],
        vectors: npt.NDArray[np.float32],
    ) -> None:
        """Adds what the chain does not hold yet (the lock is held)."""
        table = self._tables.held(chain)
        assert table is not None
        last = table.last_id
        new_rows = [r for r in rows if r.episode_id > last]
        if new_rows:
            table.append(new_rows)
            held.missing.update(r.episode_id for r in new_rows)
            held.dirty = True
        if len(vector_ids):
            keep = np.fromiter(
                (int(i) in held.missing for i in vector_ids), dtype=bool, count=len(vector_ids)
            )
            if keep.any():
                self._vectors.add(chain, vector_ids[keep], vectors[keep])
                held.missing.difference_update(vector_ids[keep].tolist())
                held.dirty = True

    def _measure(self, chain: ChainKey, held: _Held) -> None:
        table = self._tables.held(chain)
        size = (table.nbytes() if table is not None else 0) + self._vectors.nbytes(chain)
        self._bytes += size - held.nbytes
        held.nbytes = size

    def forget(self, chain: ChainKey) -> None:
        """Drops everything held of the chain, and its snapshot files (its student was erased).
        A load under way keeps nothing (see `ensure`)."""
        with self._lock:
            self._forgotten.add(chain)
            held = self._held.pop(chain, None)
            if held is not None:
                self._bytes -= held.nbytes
            self._tables.remove(chain)
            self._vectors.remove(chain)
        if self._snapshots is not None:
            self._snapshots.delete(chain)

    # -- eviction and snapshots ----------------------------------------------------------------

    def _evict_over_budget(self, keep: ChainKey) -> None:
        evicted: list[tuple[ChainKey, _Held]] = []
        with self._lock:
            for chain in list(self._held):
                if self._bytes <= self.budget_bytes:
                    break
                held = self._held[chain]
                if chain == keep or held.loading:
                    continue
                del self._held[chain]
                self._bytes -= held.nbytes
                self._evictions += 1
                evicted.append((chain, held))
        for chain, held in evicted:
            snapshot = self._snapshot_of(chain, held)
            self._tables.remove(chain)
            self._vectors.remove(chain)
            if snapshot is not None:
                self._write_later(chain, _given(snapshot))

    def _snapshot_of(self, chain: ChainKey, held: _Held) -> ChainSnapshot | None:
        """The chain's caches as a snapshot, if it is worth writing one."""
        table = self._tables.held(chain)
        if self._snapshots is None or not self._snapshots.writes:
            return None
        if table is None or not held.dirty:
            return None
        if len(table) < SNAPSHOT_MIN_EPISODES:
            return None
        copy = self._vectors.copy_of(chain)
        return ChainSnapshot(
            last_id=table.last_id,
            rows=len(table),
            table=table.to_arrays(),
            index=copy[0] if copy is not None else None,
            graph=copy[1] if copy is not None else False,
            missing=np.asarray(sorted(held.missing), dtype=np.int64),
        )

    def _write_later(self, chain: ChainKey, take: Callable[[], ChainSnapshot | None]) -> None:
        """Writes the snapshot `take` returns (None: nothing to write) from a thread of its own."""
        assert self._snapshots is not None
        files = self._snapshots

        def write() -> None:
            snapshot = take()
            if snapshot is None:
                return
            try:
                files.write(chain, snapshot)
                with self._lock:
                    forgotten = chain in self._forgotten
                if forgotten:
                    # Its student was erased while the snapshot was taken or written: the
                    # erasure's delete may have come first, so it is done again.
                    files.delete(chain)
            except OSError:
                log.exception("writing a snapshot failed; the chain loads from the store")

        thread = threading.Thread(target=write, name="snapshot", daemon=True)
        self._writers = [t for t in self._writers if t.is_alive()]
        self._writers.append(thread)
        thread.start()

    def _write_soon(self, chain: ChainKey, held: _Held) -> None:
        """Writes a snapshot of a chain just read from the store, taken on the writing thread: a
        restart after a crash, which writes no snapshot at stop, then reads this one and the
        little committed after it instead of the whole chain again. The chain stays marked
        changed, so eviction or the graceful stop still write the latest one (with its graph
        once built)."""
        if self._snapshots is None:
            return

        def take() -> ChainSnapshot | None:
            # Under the lock that writes to held chains take: the table, the index and the ids
            # without a vector then agree (about 0.1 s for a 100k chain, once per such load).
            with self._lock:
                if self._held.get(chain) is not held:
                    return None  # evicted or forgotten meanwhile
                return self._snapshot_of(chain, held)

        self._write_later(chain, take)

    def warm_up(self) -> None:
        """Loads, in the background, the chains that have a snapshot, most recently written
        first, while the held chains take less than `WARM_UP_SHARE` of the budget: after a
        restart the chains in use answer their first call from memory. Started while the server
        loads its model (reading a snapshot is mostly file reads that do not hold the GIL, so it
        runs beside that load), and goes on after SERVING; `stop_warm_up` ends it. A call on a
        chain being loaded waits for that load rather than starting another."""
        if self._snapshots is None:
            return
        files = self._snapshots

        def run() -> None:
            for chain in files.chains_by_recency():
                if self._stop_warm_up.is_set():
                    return
                if self.resident_bytes() >= self.budget_bytes * WARM_UP_SHARE:
                    return
                try:
                    self.ensure(chain)
                except Exception:
                    log.exception("warming a chain up failed; it loads on its first call")

        self._warm_up = threading.Thread(target=run, name="warm-up", daemon=True)
        self._warm_up.start()

    def stop_warm_up(self) -> None:
        self._stop_warm_up.set()
        if self._warm_up is not None:
            self._warm_up.join()

    def write_snapshots(self) -> int:
        """Writes a snapshot of every held chain that is worth one and changed (at shutdown);
        returns how many were written."""
        # Snapshots written in the background (after a load from the store) finish first, so
        # that the one written here, the newest, is the one left.
        for thread in self._writers:
            thread.join()
        with self._lock:
            held = [(c, h) for c, h in self._held.items() if not h.loading and h.dirty]
        written = 0
        for chain, h in held:
            snapshot = self._snapshot_of(chain, h)
            if snapshot is not None and self._snapshots is not None:
                try:
                    self._snapshots.write(chain, snapshot)
                    written += 1
                    h.dirty = False
                except OSError:
                    log.exception("writing a snapshot failed; the chain loads from the store")
        for thread in self._writers:
            thread.join()
        return written


def _given(snapshot: ChainSnapshot) -> Callable[[], ChainSnapshot | None]:
    return lambda: snapshot
