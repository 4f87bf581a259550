"""Per-chain FAISS indexes of episode embeddings: a cache, rebuilt from the store at start.

Each (tenant, student, subject) has its own index, so a chain is searched without touching
another's vectors. Vectors are unit length, so inner product is cosine similarity.

Small chains use an exact flat index. A flat scan grows with the chain (docs/DESIGN.md P2: ~8 ms
at 100k vectors on a faster machine, about twice that here), so a chain that reaches
HNSW_MIN_VECTORS moves to an HNSW graph (measured there: 0.1 ms at 100k, recall@50 0.96-0.97). The
graph is built on a background thread from a copy of the flat index's vectors; searches use the
flat index until the graph is ready and has caught up with the vectors added meanwhile.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

import faiss
import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.records import ChainVectors

log = logging.getLogger("tutor_memory.index")

# FAISS with more than one thread is never faster for one query and slower for a flat scan on a
# 2-core machine, and its OpenMP pool would fight the gRPC and embedding threads. OpenMP's thread
# count is a per-thread setting, so it is set on every thread that calls FAISS, before the call.
FAISS_THREADS = 1
# Vectors from which a chain's flat index is replaced by an HNSW graph: a flat scan costs about
# 0.23 ms per thousand vectors on this project's 2-core machine (bench/bench_block.py), so the
# graph takes over before one search would pass ~2 ms.
HNSW_MIN_VECTORS = 8_000
# HNSW graph degree and search breadth: the values docs/DESIGN.md P2 gives (M32, ef64).
HNSW_M = 32
HNSW_EF_SEARCH = 64
# Recall's neighbours are found about the chain's mean (`VectorIndex.neighbours`) once the chain
# holds this many vectors; a smaller chain's mean is mostly its few episodes themselves, and
# centring on it would cancel what they say.
CENTRE_MIN_VECTORS = 200
# Vectors added to a graph being built between two checks for a server stopping.
CONVERT_STEP = 4_096
# Memory an HNSW graph adds per vector: about 2 x M links of 4 bytes at its base level, plus the
# upper levels' few.
HNSW_LINK_BYTES = 2 * HNSW_M * 4 + 16


def _flat(dim: int) -> faiss.IndexIDMap2:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dim))


def _hnsw(dim: int) -> faiss.IndexIDMap2:
    graph = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    graph.hnsw.efSearch = HNSW_EF_SEARCH
    return faiss.IndexIDMap2(graph)


def _contents(
    index: faiss.IndexIDMap2, start: int, stop: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Ids and vectors of an IDMap2 index's rows `start` to `stop` (excluded)."""
    ids = np.array(faiss.rev_swig_ptr(index.id_map.data(), stop)[start:stop], dtype=np.int64)
    vectors = index.index.reconstruct_n(start, stop - start)
    return ids, np.ascontiguousarray(vectors, dtype=np.float32)


@dataclass
class _ChainIndex:
    index: faiss.IndexIDMap2
    lock: threading.Lock = field(default_factory=threading.Lock)
    graph: bool = False
    converting: bool = False
    # The sum of the chain's vectors (float64: a running sum over 100k additions), for its mean.
    total: npt.NDArray[np.float64] | None = None


@dataclass(frozen=True, slots=True)
class Neighbours:
    """A chain's nearest episodes to a query, best first, and how they were measured."""

    ids: npt.NDArray[np.int64]
    similarities: npt.NDArray[np.float32]
    # Whether `similarities` are cosines about the chain's mean (CENTRE_MIN_VECTORS), not raw.
    centred: bool


def _nearest(
    index: faiss.IndexIDMap2, query: npt.NDArray[np.float32], k: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """The ids of the k vectors with the largest inner product with `query`, best first, and
    those products; the caller holds the chain's lock."""
    k = min(k, index.ntotal)
    if k <= 0:
        # A chain's entry exists for a moment before its first vectors are in it, and faiss
        # refuses k = 0.
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
    q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, index.d)
    scores, ids = index.search(q, k)
    keep = ids[0] >= 0
    return ids[0][keep].astype(np.int64), scores[0][keep]


def _sum_of(index: faiss.IndexIDMap2) -> npt.NDArray[np.float64]:
    """The sum of an index's vectors, read in steps so that no copy of them all is made."""
    total = np.zeros(index.d, dtype=np.float64)
    for start in range(0, index.ntotal, CONVERT_STEP):
        stop = min(start + CONVERT_STEP, index.ntotal)
        total += index.index.reconstruct_n(start, stop - start).sum(axis=0, dtype=np.float64)
    return total


class VectorIndex:
    """Thread-safe: one lock per chain guards that chain's index."""

    def __init__(self, dim: int, *, hnsw_min_vectors: int = HNSW_MIN_VECTORS) -> None:
        self.dim = dim
        self.hnsw_min_vectors = hnsw_min_vectors
        self._chains: dict[ChainKey, _ChainIndex] = {}
        self._create_lock = threading.Lock()
        self._converters: list[threading.Thread] = []
        self._closing = threading.Event()

    def _entry(self, chain: ChainKey) -> _ChainIndex:
        entry = self._chains.get(chain)
        if entry is None:
            with self._create_lock:
                entry = self._chains.setdefault(chain, _ChainIndex(_flat(self.dim)))
        return entry

    def add(
        self, chain: ChainKey, ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]
    ) -> None:
        if len(ids) == 0:
            return
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.shape != (len(ids), self.dim):
            raise ValueError(
                f"expected vectors of shape ({len(ids)}, {self.dim}), got {vectors.shape}"
            )
        entry = self._entry(chain)
        faiss.omp_set_num_threads(FAISS_THREADS)
        added = vectors.sum(axis=0, dtype=np.float64)
        with entry.lock:
            entry.index.add_with_ids(vectors, np.ascontiguousarray(ids, dtype=np.int64))
            entry.total = added if entry.total is None else entry.total + added
            start = not entry.graph and not entry.converting
            start = start and entry.index.ntotal >= self.hnsw_min_vectors
            if start:
                entry.converting = True
        if start:
            self._start_conversion(chain, entry)

    def _start_conversion(self, chain: ChainKey, entry: _ChainIndex) -> None:
        thread = threading.Thread(
            target=self._convert, args=(chain, entry), name="hnsw-build", daemon=True
        )
        self._converters = [t for t in self._converters if t.is_alive()]
        self._converters.append(thread)
        thread.start()

    def _convert(self, chain: ChainKey, entry: _ChainIndex) -> None:
        faiss.omp_set_num_threads(FAISS_THREADS)
        graph = _hnsw(self.dim)
        flat = entry.index
        # In steps, so that a server stopping meanwhile (`close`) does not wait for the whole
        # graph, which takes minutes for 100k vectors on a busy machine. Each step copies its
        # rows of the flat index under the chain's lock (rows are only ever appended, so rows
        # already copied never change): the caller that started the build, a load from a
        # snapshot among them, does not wait for a copy of every vector.
        done = 0
        while True:
            if self._closing.is_set():
                with entry.lock:
                    entry.converting = False
                return
            if self._chains.get(chain) is not entry:
                # Evicted or erased meanwhile: its vectors are not kept alive by the build.
                return
            with entry.lock:
                stop = min(done + CONVERT_STEP, flat.ntotal)
                if stop == done:
                    # Caught up: the rows added while the graph was built are in it too.
                    entry.index, entry.graph, entry.converting = graph, True, False
                    break
                ids, vectors = _contents(flat, done, stop)
            graph.add_with_ids(vectors, ids)
            done = stop
        log.info("chain index moved to HNSW", extra={"vectors": graph.ntotal})

    def close(self) -> None:
        """Stops the graph builds in progress (their chains keep their flat index)."""
        self._closing.set()
        self.wait_for_conversions()

    def wait_for_conversions(self) -> None:
        """Blocks until background graph builds finish (start-up, tests, shutdown)."""
        for thread in self._converters:
            thread.join()
        self._converters.clear()

    def neighbours(
        self, chain: ChainKey, query: npt.NDArray[np.float32], k: int, *, centre: bool = True
    ) -> Neighbours:
        """Recall's k nearest episodes of the chain: by cosine about the chain's mean once it
        holds CENTRE_MIN_VECTORS vectors (and `centre`, off only to measure it), else by plain
        cosine.

        Why centre: this embedder puts every question of a chain close to every other by their
        shared form ("what did we say about ...", a speaker's style), so the plain nearest
        neighbours of a question are often questions of the same form about something else.
        Subtracting the chain's mean takes out that shared part and leaves what an episode is
        about (the common-component removal of Arora et al., ICLR 2017, and Mu and Viswanath,
        ICLR 2018). Measured on LoCoMo's development split, dense retrieval alone
        (bench/bench_centring.py): recall@25 45.9 -> 49.0, recall@50 59.3 -> 64.4.

        The index holds the raw vectors, as the mean moves with every append. It is searched
        with (query - mean): the inner product of that with a vector d differs from the centred
        inner product (query - mean) . (d - mean) by the same amount for every d, so it ranks
        alike; the k found are then measured by the exact centred cosine (and re-ordered by it;
        taking twice as many from the index changed no LoCoMo development figure).
        """
        entry = self._chains.get(chain)
        if entry is None or k <= 0:
            return Neighbours(np.empty(0, np.int64), np.empty(0, np.float32), centred=False)
        faiss.omp_set_num_threads(FAISS_THREADS)
        with entry.lock:
            n = int(entry.index.ntotal)
            if not centre or n < CENTRE_MIN_VECTORS or entry.total is None:
                return Neighbours(*_nearest(entry.index, query, k), centred=False)
            mean = (entry.total / n).astype(np.float32)
            about = np.ascontiguousarray(query, dtype=np.float32).reshape(self.dim) - mean
            ids, _ = _nearest(entry.index, about, k)
            vectors = entry.index.reconstruct_batch(ids) - mean
        lengths = np.sqrt(np.einsum("ij,ij->i", vectors, vectors)) * float(np.linalg.norm(about))
        cosines = (vectors @ about) / np.maximum(lengths, 1e-12)
        best = np.argsort(-cosines, kind="stable")[:k]
        return Neighbours(ids[best], cosines[best].astype(np.float32), centred=True)

    def count(self, chain: ChainKey) -> int:
        entry = self._chains.get(chain)
        return 0 if entry is None else int(entry.index.ntotal)

    def uses_graph(self, chain: ChainKey) -> bool:
        entry = self._chains.get(chain)
        return entry is not None and entry.graph

    def chains(self) -> int:
        return len(self._chains)

    def held(self, chain: ChainKey) -> bool:
        return chain in self._chains

    def remove(self, chain: ChainKey) -> None:
        """Drops the chain's index (evicted; a later load builds it again)."""
        with self._create_lock:
            self._chains.pop(chain, None)

    def nbytes(self, chain: ChainKey) -> int:
        """About how much memory the chain's index holds: its vectors, ids and graph links."""
        entry = self._chains.get(chain)
        if entry is None:
            return 0
        per_vector = self.dim * 4 + 8 + (HNSW_LINK_BYTES if entry.graph else 0)
        return int(entry.index.ntotal) * per_vector

    def copy_of(self, chain: ChainKey) -> tuple[faiss.Index, bool] | None:
        """A copy of the chain's index and whether it is a graph, for a snapshot file; None if
        the chain has no index."""
        entry = self._chains.get(chain)
        if entry is None:
            return None
        with entry.lock:
            return faiss.clone_index(entry.index), entry.graph

    def put(self, chain: ChainKey, index: faiss.Index, graph: bool) -> None:
        """Puts an index read back from a snapshot in place of the chain's; a flat one that is
        large enough moves to a graph in the background, as one grown by `add` does."""
        if not isinstance(index, faiss.IndexIDMap2):
            raise ValueError("a chain's index must be an IndexIDMap2")
        if graph:
            inner = faiss.downcast_index(index.index)
            assert isinstance(inner, faiss.IndexHNSWFlat)
            inner.hnsw.efSearch = HNSW_EF_SEARCH
        entry = _ChainIndex(index, graph=graph, total=_sum_of(index))
        with self._create_lock:
            self._chains[chain] = entry
        if not graph and index.ntotal >= self.hnsw_min_vectors:
            with entry.lock:
                entry.converting = True
            self._start_conversion(chain, entry)

    def vector_bytes(self) -> int:
        """Bytes of the vectors held (4 per dimension; an HNSW graph's links come on top)."""
        return sum(int(e.index.ntotal) for e in list(self._chains.values())) * self.dim * 4

    def rebuild(self, stored: Iterable[ChainVectors]) -> int:
        """Loads stored vectors, one chain at a time; returns how many were loaded. Large chains
        get their graph built right away, before the server takes calls."""
        total = 0
        for chunk in stored:
            if len(chunk.ids) >= self.hnsw_min_vectors:
                graph = _hnsw(self.dim)
                # Nothing else runs before the server takes calls: build with every core.
                faiss.omp_set_num_threads(os.cpu_count() or 1)
                graph.add_with_ids(np.ascontiguousarray(chunk.vectors), chunk.ids)
                faiss.omp_set_num_threads(FAISS_THREADS)
                self._chains[chunk.chain] = _ChainIndex(
                    graph, graph=True, total=chunk.vectors.sum(axis=0, dtype=np.float64)
                )
            else:
                self.add(chunk.chain, chunk.ids, chunk.vectors)
            total += len(chunk.ids)
        return total
