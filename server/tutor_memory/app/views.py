"""What a block reads besides the episode log: each chain's current beliefs and map, from their
caches, turned into a view (rendered, counted) once per change of the rows or the map, not per
block. A view is kept while its cache hands out the very same rows or map object, and dropped
when they leave their cache (evicted or made stale): a view holds its source, and must not keep
alive what the source's cache let go of to stay within its bytes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from tutor_memory.app.caches import CHAIN_CACHE_SIZE, ChainCache
from tutor_memory.app.maps import MapCache
from tutor_memory.domain.conceptmap.chain_map import ChainMap
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.sections import BeliefView, MapView, belief_view
from tutor_memory.domain.records import BeliefRow
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.store.lru import LruCache

S = TypeVar("S")
W = TypeVar("W")


class CachedSources:
    def __init__(
        self, beliefs: ChainCache[list[BeliefRow]], maps: MapCache, counter: TokenCounter
    ) -> None:
        self._beliefs = beliefs
        self._maps = maps
        self._counter = counter
        # Views live as long as their cached sources: at most CHAIN_CACHE_SIZE chains' worth.
        self._belief_views: LruCache[ChainKey, tuple[list[BeliefRow], BeliefView]] = LruCache(
            CHAIN_CACHE_SIZE
        )
        self._map_views: LruCache[ChainKey, tuple[ChainMap, MapView]] = LruCache(CHAIN_CACHE_SIZE)
        beliefs.on_leave(self._belief_views.pop)
        maps.cache.on_leave(self._map_views.pop)

    def belief_view(self, chain: ChainKey) -> BeliefView:
        rows = self._beliefs.get(chain)
        return _view_of(self._belief_views, chain, rows, lambda: belief_view(rows, self._counter))

    def map_view(self, chain: ChainKey) -> MapView:
        chain_map = self._maps.get(chain)
        return _view_of(
            self._map_views, chain, chain_map, lambda: MapView(chain_map, self._counter)
        )


def _view_of(
    views: LruCache[ChainKey, tuple[S, W]], chain: ChainKey, source: S, make: Callable[[], W]
) -> W:
    """The view cached for `chain` if it was made from this very `source` object, else a new one."""
    cached = views.get(chain)
    if cached is not None and cached[0] is source:
        return cached[1]
    view = make()
    views.put(chain, (source, view))
    return view
