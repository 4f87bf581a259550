"""What a block reads besides the episode log: each chain's current beliefs and map, from their
caches, turned into a view (rendered, counted) once per change of the rows or the map, not per
block. A view is kept while its cache hands out the very same rows or map object."""

from __future__ import annotations

from tutor_memory.app.caches import CHAIN_CACHE_SIZE, ChainCache, LruCache
from tutor_memory.app.maps import MapCache
from tutor_memory.domain.conceptmap.chain_map import ChainMap
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.sections import BeliefView, MapView, belief_view
from tutor_memory.domain.records import BeliefRow
from tutor_memory.domain.tokens import TokenCounter


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

    def belief_view(self, chain: ChainKey) -> BeliefView:
        rows = self._beliefs.get(chain)
        cached = self._belief_views.get(chain)
        if cached is not None and cached[0] is rows:
            return cached[1]
        view = belief_view(rows, self._counter)
        self._belief_views.put(chain, (rows, view))
        return view

    def map_view(self, chain: ChainKey) -> MapView:
        chain_map = self._maps.get(chain)
        cached = self._map_views.get(chain)
        if cached is not None and cached[0] is chain_map:
            return cached[1]
        view = MapView(chain_map, self._counter)
        self._map_views.put(chain, (chain_map, view))
        return view
