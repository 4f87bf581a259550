"""Per-chain caches of derived data (a chain's map, its current beliefs, its passages), on the
one bounded-cache policy (`LruCache`, store/lru.py: least recently used entries leave first).

`ChainCache` loads a chain's data on use, and the change hook (`app.changes`) drops it when a write
makes it stale. Memory stays bounded however many chains a server holds: what the most recently
used chains need on every block stays, the rest loads again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.store.lru import LruCache

T = TypeVar("T")

# Chains whose derived data stays in memory, per cache.
CHAIN_CACHE_SIZE = 1_024


class ChainCache(Generic[T]):
    """Each chain's derived data, loaded by `load` on first use and kept until `invalidate`.
    `fresh`, when given, runs before every read: it may invalidate the chain first (app/sync.py,
    when other processes write the store)."""

    def __init__(
        self,
        load: Callable[[ChainKey], T],
        size: int = CHAIN_CACHE_SIZE,
        fresh: Callable[[ChainKey], None] | None = None,
        *,
        weigh: Callable[[T], int] | None = None,
        max_bytes: int | None = None,
    ) -> None:
        """`weigh` (a chain's data in bytes) and `max_bytes` bound the bytes held as well as the
        chains, for data whose size per chain varies by orders of magnitude."""
        self._load = load
        self._fresh = fresh
        self._weigh = weigh
        self._items: LruCache[ChainKey, T] = LruCache(size, weigh=weigh, max_weight=max_bytes)
        # Loads under way, per chain, and the invalidations each chain had since its loads
        # began: a load that raced an invalidation is not kept as current. Only chains being
        # loaded have entries, so these stay as small as the loads in flight.
        self._loading: dict[ChainKey, int] = {}
        self._generation: dict[ChainKey, int] = {}
        self._lock = threading.Lock()
        self._leave_listeners: list[Callable[[ChainKey], None]] = []

    def on_leave(self, listener: Callable[[ChainKey], None]) -> None:
        """`listener(chain)` after the chain's entry left, evicted or invalidated: for what is
        kept beside an entry (a view made of it), which must not keep it alive once it left."""
        self._leave_listeners.append(listener)

    def __len__(self) -> int:
        """Chains held now."""
        return len(self._items)

    @property
    def bytes(self) -> int | None:
        """Bytes held, as `weigh` counts them; None when the cache is not weighed."""
        return self._items.weight

    @property
    def evictions(self) -> int:
        """Chains dropped to stay within the bound (invalidations are not evictions)."""
        return self._items.evictions

    def invalidate(self, chain: ChainKey) -> None:
        with self._lock:
            self._items.pop(chain)
            if chain in self._loading:
                self._generation[chain] = self._generation.get(chain, 0) + 1
        self._left([chain])

    def get(self, chain: ChainKey) -> T:
        if self._fresh is not None:
            self._fresh(chain)
        cached = self._items.get(chain)
        if cached is not None:
            return cached
        with self._lock:
            self._loading[chain] = self._loading.get(chain, 0) + 1
            generation = self._generation.get(chain, 0)
        try:
            loaded = self._load(chain)
            # Weighed before the lock: weighing reads the whole entry.
            weight = None if self._weigh is None else self._weigh(loaded)
        except BaseException:
            with self._lock:
                self._done_loading(chain)
            raise
        evicted: list[ChainKey] = []
        with self._lock:
            if self._generation.get(chain, 0) == generation:
                evicted = self._items.put(chain, loaded, weight=weight)
            self._done_loading(chain)
        self._left(evicted)
        return loaded

    def _left(self, chains: list[ChainKey]) -> None:
        """Tells the listeners that `chains` left (outside the lock: a listener takes its own)."""
        for chain in chains:
            for listener in self._leave_listeners:
                listener(chain)

    def _done_loading(self, chain: ChainKey) -> None:
        """One load of `chain` ended (the caller holds the lock)."""
        left = self._loading[chain] - 1
        if left:
            self._loading[chain] = left
        else:
            del self._loading[chain]
            self._generation.pop(chain, None)
