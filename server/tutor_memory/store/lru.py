"""The one bounded-cache policy of the server: least recently used entries leave first.

Here, below the use cases, so that the stores bound what they keep per student and per chain
(data keys, chain ids) with the same policy as the use cases' caches (app/caches.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

# Chain ids a store keeps in memory, by chain (SQLite: the row id; PostgreSQL: the student key
# and row id): about 340 bytes each (65,536 took 21 MiB, measured in-process), 5.3 MiB at this
# bound. A chain that left costs one indexed read on its next use.
CHAIN_IDS_KEPT = 16_384


class LruCache(Generic[K, V]):
    """At most `size` entries; reading an entry makes it the most recently used. Thread-safe.

    With `weigh` (an entry's bytes, asked once when it is put) and `max_weight`, the entries also
    weigh at most `max_weight` together, except that the entry put last always stays: one entry
    heavier than the bound is still kept until the next put, so the call that loaded it and the
    calls right after it do not load it again.
    """

    def __init__(
        self,
        size: int,
        *,
        weigh: Callable[[V], int] | None = None,
        max_weight: int | None = None,
    ) -> None:
        if size < 1:
            raise ValueError("an LRU cache holds at least one entry")
        if (weigh is None) != (max_weight is None):
            raise ValueError("a weighed LRU cache needs both `weigh` and `max_weight`")
        self._size = size
        self._weigh = weigh
        self._max_weight = max_weight
        self._items: OrderedDict[K, V] = OrderedDict()
        # Each entry's weight, when the cache is weighed, and their sum.
        self._weights: dict[K, int] = {}
        self._weight = 0
        self._lock = threading.Lock()
        # Entries dropped to stay within `size` or `max_weight` (reported as a metric).
        self.evictions = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def weight(self) -> int | None:
        """What the entries weigh together; None for a cache that is not weighed."""
        return None if self._weigh is None else self._weight

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

    def put(self, key: K, value: V, *, weight: int | None = None) -> list[K]:
        """`weight`: the entry's, when the caller weighed it already (else `weigh` does).
        Returns the keys of the entries evicted to make room."""
        return self.put_many([(key, value)], None if weight is None else [weight])

    def put_many(
        self, items: Sequence[tuple[K, V]], weights: Sequence[int] | None = None
    ) -> list[K]:
        """`put` of each (key, value), in order, under one acquisition of the lock (entries are
        weighed before it is taken: weighing may read a whole entry). `weights`: the entries'
        own, when the caller weighed them already. Returns the keys of the entries evicted."""
        weigh = self._weigh
        if weights is None and weigh is not None:
            weights = [weigh(value) for _, value in items]
        if weigh is None:
            weights = None
        evicted: list[K] = []
        with self._lock:
            for i, (key, value) in enumerate(items):
                self._items[key] = value
                self._items.move_to_end(key)
                if weights is not None:
                    self._weight += weights[i] - self._weights.get(key, 0)
                    self._weights[key] = weights[i]
            while len(self._items) > self._size or self._overweight():
                oldest = next(iter(self._items))
                self._forget(oldest)
                evicted.append(oldest)
            self.evictions += len(evicted)
        return evicted

    def _overweight(self) -> bool:
        """Whether the entries weigh more than the bound (the lock is held); the newest entry
        alone never is."""
        return (
            self._max_weight is not None
            and self._weight > self._max_weight
            and len(self._items) > 1
        )

    def _forget(self, key: K) -> None:
        """Drops `key`'s entry and its weight, if present (the lock is held)."""
        self._items.pop(key, None)
        self._weight -= self._weights.pop(key, 0)

    def pop(self, key: K) -> None:
        with self._lock:
            self._forget(key)

    def clear(self) -> None:
        """Drops every entry (not counted as evictions)."""
        with self._lock:
            self._items.clear()
            self._weights.clear()
            self._weight = 0

    def drop_where(self, doomed: Callable[[K], bool]) -> None:
        """Drops the entries whose key `doomed` accepts (not counted as evictions): a pass over
        every entry, for rare events such as an erasure."""
        with self._lock:
            for key in [k for k in self._items if doomed(k)]:
                self._forget(key)
