"""Each chain's concept map as the server holds it: rebuilt from the store when something it is
made of changes (a file version, a taught note, a passed check), and read by every block.

The map is derived data: the file versions' extractions, the `taught` episodes and the right
checks are the record, and `graph.build_map` turns them into the same map every time. A rebuild
costs milliseconds for a course of a few hundred concepts, so nothing incremental is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np
import numpy.typing as npt

from tutor_memory.app.caches import CHAIN_CACHE_SIZE, ChainCache
from tutor_memory.domain.beliefs.routing import confirmed_keys
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.conceptmap.chain_map import ChainMap, taught_notes
from tutor_memory.domain.conceptmap.graph import ConceptMap, FileConcepts, banded, shape_map
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.episodes import ChainKey, Kind
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.protocols import EpisodeReads, FileReads

# Bytes of built maps kept in memory over all chains (`ChainMap.nbytes`). A course of ten files
# may make a map of 400 concepts, 1.4 MiB with its name embeddings, and fifty files one of 2,000
# concepts, 6.8 MiB (synthetic courses, tests/app/test_weighed_caches.py), so CHAIN_CACHE_SIZE
# chains alone could hold gigabytes; beyond this, the least recently read maps are rebuilt on
# their next read.
MAP_CACHE_BYTES = 256 * 1024 * 1024


class MapReads(FileReads, EpisodeReads, Protocol):
    """What a map is rebuilt from: the file versions and the taught and check episodes."""


class MapCache:
    """Each chain's map, rebuilt from the store when something it is made of changed; bounded
    in chains and in bytes."""

    def __init__(
        self,
        store: MapReads,
        embedder: Embedder,
        size: int = CHAIN_CACHE_SIZE,
        fresh: Callable[[ChainKey], None] | None = None,
        max_bytes: int = MAP_CACHE_BYTES,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._cache: ChainCache[ChainMap] = ChainCache(
            self._build, size, fresh, weigh=ChainMap.nbytes, max_bytes=max_bytes
        )

    @property
    def cache(self) -> ChainCache[ChainMap]:
        """The cache of built maps (for its size and evictions)."""
        return self._cache

    def invalidate(self, chain: ChainKey) -> None:
        self._cache.invalidate(chain)

    def get(self, chain: ChainKey) -> ChainMap:
        return self._cache.get(chain)

    def _build(self, chain: ChainKey) -> ChainMap:
        dim = self._embedder.dim
        versions = self._store.file_versions(chain, dim, current_only=False)
        latest: dict[str, int] = {}
        for v in versions:
            latest[v.file_id] = max(latest.get(v.file_id, 0), v.version)
        current = [v for v in versions if v.version == latest[v.file_id] and not v.removed]
        files = [FileConcepts(v.file_id, v.version, v.concepts, v.name_vectors) for v in current]
        # A removed file has no current fingerprint (None): the one meaning R7.4's verdict and
        # the block's citation note both read.
        fingerprints = {
            v.file_id: None if v.removed else v.fingerprint
            for v in versions
            if v.version == latest[v.file_id]
        }
        episodes = self._store.episodes_of_kind(chain, (Kind.TAUGHT, Kind.CHECK))
        taught = taught_notes([e for e in episodes if e.kind is Kind.TAUGHT])
        # Checks route by name only, and confirmations change only the bands: the shape made
        # once routes the checks and takes their confirmations.
        shape = shape_map(files, taught, canonical_key)
        matcher = NameMatcher(shape.names)
        confirmed = confirmed_keys([e for e in episodes if e.kind is Kind.CHECK], matcher)
        concept_map = banded(shape, confirmed)
        vectors = self._node_vectors(concept_map, files)
        return ChainMap(concept_map, matcher, vectors, fingerprints)

    def _node_vectors(
        self, concept_map: ConceptMap, files: Sequence[FileConcepts]
    ) -> npt.NDArray[np.float32]:
        """Each node's name embedding: the stored one of the first extraction that named it,
        else (taught and assumed nodes) embedded now."""
        stored: dict[str, npt.NDArray[np.float32]] = {}
        for f in files:
            for concept, vector in zip(f.concepts, f.vectors, strict=True):
                stored.setdefault(canonical_key(concept.name), vector)
        rows: list[npt.NDArray[np.float32] | None] = [
            stored.get(node.key) for node in concept_map.nodes
        ]
        missing = [i for i, row in enumerate(rows) if row is None]
        if missing:
            fresh = self._embedder.embed([concept_map.nodes[i].name for i in missing])
            for i, vector in zip(missing, fresh, strict=True):
                rows[i] = vector
        if not rows:
            return np.empty((0, self._embedder.dim), np.float32)
        return np.stack([r for r in rows if r is not None]).astype(np.float32)
