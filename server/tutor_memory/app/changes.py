"""The one change hook: "chain X changed: episodes / checks / teaching / beliefs / files".

Use cases report what a committed write changed; every cache of derived data subscribes with the
changes that make it stale. No use case invalidates a cache by hand, so a new cache cannot be
forgotten by one of the writers, and a new writer cannot forget one of the caches.
"""

from __future__ import annotations

import enum
import threading
from collections.abc import Callable

from tutor_memory.domain.episodes import ChainKey


class Change(enum.Flag):
    """What a committed write changed in a chain's record."""

    NOTHING = 0  # a write no cache derives anything from (an annotation)
    EPISODES = enum.auto()  # any new episode
    CHECKS = enum.auto()  # new check episodes
    CONFIRMATIONS = enum.auto()  # passed checks that confirm a concept the map shows unconfirmed
    TEACHING = enum.auto()  # new taught notes
    BELIEFS = enum.auto()  # belief rows inserted, superseded or retired
    FILES = enum.auto()  # a file version added or removed
    # The chain's student was erased: every cache drops whatever it holds of the chain.
    ERASED = enum.auto()


Listener = Callable[[ChainKey], None]


class ChangeHub:
    """Thread-safe: writes commit on the writer thread, and listeners run on the thread that
    reports the change, right after the commit (they only drop cached entries)."""

    def __init__(self) -> None:
        self._listeners: list[tuple[Change, Listener]] = []
        self._lock = threading.Lock()

    def subscribe(self, changes: Change, listener: Listener) -> None:
        """Calls `listener(chain)` whenever a change that overlaps `changes` is reported."""
        with self._lock:
            self._listeners.append((changes, listener))

    def changed(self, chain: ChainKey, what: Change) -> None:
        with self._lock:
            listeners = [fn for wanted, fn in self._listeners if wanted & what]
        for listener in listeners:
            listener(chain)
