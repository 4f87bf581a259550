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

    def drop_where(self, doomed: Callable[[K], bool]) -> None:
        """Drops the entries whose key `doomed` accepts (not counted as evictions): a pass over
        every entry, for rare events such as an erasure."""
        with self._lock:
            for key in [k for k in self._items if doomed(k)]:
                del self._items[key]
