"""Per-chain FAISS indexes of episode embeddings: a cache, rebuilt from the store at start.

One exact inner-product index (`IndexIDMap2` over `IndexFlatIP`) per (tenant, student, subject):
vectors are unit length, so inner product is cosine similarity, and a chain is searched without
ever touching another's vectors. Flat search stays in single milliseconds up to ~50k vectors per
chain on this class of machine (PERFORMANCE.md); a chain far beyond that wants HNSW or IVF.
"""

from __future__ import annotations

import threading

import faiss
import numpy as np
import numpy.typing as npt

from tutor_memory.episodes import ChainKey
from tutor_memory.store.base import LedgerStore

# FAISS with more than one thread is never faster for one query and slower for a flat scan on a
# 2-core machine, and its OpenMP pool would fight the gRPC and embedding threads.
FAISS_THREADS = 1


class VectorIndex:
    """Thread-safe: one lock per chain guards that chain's index."""

    def __init__(self, dim: int) -> None:
        faiss.omp_set_num_threads(FAISS_THREADS)
        self.dim = dim
        self._indexes: dict[ChainKey, tuple[threading.Lock, faiss.IndexIDMap2]] = {}
        self._create_lock = threading.Lock()

    def _entry(self, chain: ChainKey) -> tuple[threading.Lock, faiss.IndexIDMap2]:
        entry = self._indexes.get(chain)
        if entry is None:
            with self._create_lock:
                entry = self._indexes.get(chain)
                if entry is None:
                    entry = (threading.Lock(), faiss.IndexIDMap2(faiss.IndexFlatIP(self.dim)))
                    self._indexes[chain] = entry
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
        lock, index = self._entry(chain)
        with lock:
            index.add_with_ids(vectors, np.ascontiguousarray(ids, dtype=np.int64))

    def search(
        self, chain: ChainKey, query: npt.NDArray[np.float32], k: int
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """The k nearest episode ids of the chain and their cosine similarities, best first."""
        entry = self._indexes.get(chain)
        if entry is None or k <= 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        lock, index = entry
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        with lock:
            scores, ids = index.search(q, min(k, index.ntotal))
        keep = ids[0] >= 0
        return ids[0][keep].astype(np.int64), scores[0][keep]

    def count(self, chain: ChainKey) -> int:
        entry = self._indexes.get(chain)
        return 0 if entry is None else int(entry[1].ntotal)

    def chains(self) -> int:
        return len(self._indexes)

    def rebuild(self, store: LedgerStore, model_id: str) -> int:
        """Loads every stored vector of `model_id`; returns how many were loaded."""
        total = 0
        for chunk in store.iter_vectors(model_id):
            self.add(chunk.chain, chunk.ids, chunk.vectors)
            total += len(chunk.ids)
        return total
