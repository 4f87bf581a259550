"""A bounded per-chain cache of derived data (a chain's map, its current beliefs): what the most
recently used chains need on every block is kept in memory, the rest is loaded again on use, so
memory stays bounded however many chains a server holds."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

from tutor_memory.domain.episodes import ChainKey

T = TypeVar("T")

# Chains whose derived data stays in memory, per cache.
CHAIN_CACHE_SIZE = 1_024


class ChainCache(Generic[T]):
    def __init__(self, load: Callable[[ChainKey], T], size: int = CHAIN_CACHE_SIZE) -> None:
        self._load = load
        self._size = size
        self._items: OrderedDict[ChainKey, T] = OrderedDict()
        # Bumped by every invalidation, so a load that raced one is not kept as current.
        self._generation: dict[ChainKey, int] = {}
        self._lock = threading.Lock()

    def invalidate(self, chain: ChainKey) -> None:
        with self._lock:
            self._items.pop(chain, None)
            self._generation[chain] = self._generation.get(chain, 0) + 1

    def get(self, chain: ChainKey) -> T:
        with self._lock:
            if chain in self._items:
                self._items.move_to_end(chain)
                return self._items[chain]
            generation = self._generation.get(chain, 0)
        loaded = self._load(chain)
        with self._lock:
            if self._generation.get(chain, 0) == generation:
                self._items[chain] = loaded
                while len(self._items) > self._size:
                    self._items.popitem(last=False)
        return loaded
