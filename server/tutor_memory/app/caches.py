"""The one bounded-cache policy of the server: least recently used entries leave first.

`LruCache` is the policy; `ChainCache` is a per-chain cache of derived data (a chain's map, its
current beliefs, its passages) built on it, loaded on use and dropped by the change hook
(`app.changes`) when a write makes it stale. Memory stays bounded however many chains a server
holds: what the most recently used chains need on every block stays, the rest loads again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

from tutor_memory.domain.episodes import ChainKey

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T")

# Chains whose derived data stays in memory, per cache.
CHAIN_CACHE_SIZE = 1_024


class LruCache(Generic[K, V]):
    """At most `size` entries; reading an entry makes it the most recently used. Thread-safe."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("an LRU cache holds at least one entry")
        self._size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()
        # Entries dropped to stay within `size` (reported as a metric).
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def get_many(self, keys: Sequence[K]) -> list[V | None]:
        """`get` of each key, under one acquisition of the lock."""
        with self._lock:
            found = [self._items.get(key) for key in keys]
            for key, value in zip(keys, found, strict=True):
                if value is not None:
                    self._items.move_to_end(key)
            return found

    def put(self, key: K, value: V) -> None:
        self.put_many([(key, value)])

    def put_many(self, items: Sequence[tuple[K, V]]) -> None:
        """`put` of each (key, value), in order, under one acquisition of the lock."""
        with self._lock:
            for key, value in items:
                self._items[key] = value
                self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)
                self.evictions += 1

    def pop(self, key: K) -> None:
        with self._lock:
            self._items.pop(key, None)

    def clear(self) -> None:
        """Drops every entry (not counted as evictions)."""
        with self._lock:
            self._items.clear()


class ChainCache(Generic[T]):
    """Each chain's derived data, loaded by `load` on first use and kept until `invalidate`.
    `fresh`, when given, runs before every read: it may invalidate the chain first (app/sync.py,
    when other processes write the store)."""

    def __init__(
        self,
        load: Callable[[ChainKey], T],
        size: int = CHAIN_CACHE_SIZE,
        fresh: Callable[[ChainKey], None] | None = None,
    ) -> None:
        self._load = load
        self._fresh = fresh
        self._items: LruCache[ChainKey, T] = LruCache(size)
        # Bumped by every invalidation, so a load that raced one is not kept as current.
        self._generation: dict[ChainKey, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Chains held now."""
        return len(self._items)

    @property
    def evictions(self) -> int:
        """Chains dropped to stay within the bound (invalidations are not evictions)."""
        return self._items.evictions

    def invalidate(self, chain: ChainKey) -> None:
        with self._lock:
            self._items.pop(chain)
            self._generation[chain] = self._generation.get(chain, 0) + 1

    def get(self, chain: ChainKey) -> T:
        if self._fresh is not None:
            self._fresh(chain)
        cached = self._items.get(chain)
        if cached is not None:
            return cached
        with self._lock:
            generation = self._generation.get(chain, 0)
        loaded = self._load(chain)
        with self._lock:
            if self._generation.get(chain, 0) == generation:
                self._items.put(chain, loaded)
        return loaded
