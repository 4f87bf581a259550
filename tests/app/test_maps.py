"""The per-chain map cache: bounded, least recently used chains leave first, and an invalidated
chain is rebuilt from the store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from tutor_memory.app.maps import MapCache
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.episodes import ChainKey, Kind, StoredEpisode
from tutor_memory.domain.records import FileVersion
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.protocols import Store

DIM = 4


class CountingStore:
    """Answers as a store holding one file with one concept per chain; counts the reads."""

    def __init__(self) -> None:
        self.builds: list[ChainKey] = []

    def file_versions(self, chain: ChainKey, dim: int, *, current_only: bool = True) -> list[Any]:
        self.builds.append(chain)
        concept = ExtractedConcept(f"Concept of {chain.student}", "A summary.", "")
        vectors = np.eye(1, DIM, dtype=np.float32)
        return [FileVersion(1, "f", 1, "a" * 64, "f.md", "markdown", "", 1, "caller",
                            (concept,), vectors, 1, 0)]  # fmt: skip

    def episodes_of_kind(self, chain: ChainKey, kinds: Sequence[Kind]) -> list[StoredEpisode]:
        return []


class NoEmbedder:
    dim = DIM
    model_id = "none"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.zeros((len(texts), DIM), np.float32)


def chain(n: int) -> ChainKey:
    return ChainKey("t", f"s{n}", "biology")


def make(size: int) -> tuple[MapCache, CountingStore]:
    store = CountingStore()
    cache = MapCache(cast(Store, store), cast(Embedder, NoEmbedder()), size=size)
    return cache, store


def test_a_cached_map_is_not_rebuilt() -> None:
    cache, store = make(size=2)
    first = cache.get(chain(1))
    assert cache.get(chain(1)) is first
    assert store.builds == [chain(1)]
    assert [n.name for n in first.map.nodes] == ["Concept of s1"]


def test_the_least_recently_used_chain_leaves_first() -> None:
    cache, store = make(size=2)
    cache.get(chain(1))
    cache.get(chain(2))
    cache.get(chain(1))  # s1 is now the most recent
    cache.get(chain(3))  # evicts s2
    store.builds.clear()
    cache.get(chain(1))
    cache.get(chain(2))
    assert store.builds == [chain(2)]


def test_an_invalidated_chain_is_rebuilt() -> None:
    cache, store = make(size=2)
    cache.get(chain(1))
    cache.invalidate(chain(1))
    cache.get(chain(1))
    assert store.builds == [chain(1), chain(1)]
