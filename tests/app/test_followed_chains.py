"""A node that shares its store with others follows a bounded number of chains (app/sync.py): past
the bound the least recently read leave, their derived caches are dropped as they leave, so a
chain read again after leaving shows what other nodes wrote meanwhile; the chains the node's
memory holds never leave, so their tables are still caught up from the seq they hold."""

from __future__ import annotations

import random
import threading
from types import SimpleNamespace
from typing import Any

from tutor_memory.app.caches import ChainCache
from tutor_memory.app.changes import Change, ChangeHub
from tutor_memory.app.sync import ChainSync
from tutor_memory.domain.episodes import ChainKey, Kind
from tutor_memory.store.protocols import ChainHead

BOUND = 3


def chain(i: int) -> ChainKey:
    return ChainKey("tenant-a", f"student-{i}", "biology")


class SharedStore:
    """The store as other nodes write it: each chain's head moves when `write` is called."""

    def __init__(self, *, hands_episodes: bool = True) -> None:
        self.heads: dict[ChainKey, int] = {}
        # Which chain was caught up from which seq; with `hands_episodes` off, the catching up
        # is only recorded (a held table would need real episodes and vectors).
        self.since: list[tuple[ChainKey, int]] = []
        self._hands_episodes = hands_episodes
        self._lock = threading.Lock()

    def write(self, key: ChainKey) -> None:
        with self._lock:
            self.heads[key] = self.heads.get(key, 0) + 1

    def head(self, key: ChainKey) -> int:
        with self._lock:
            return self.heads.get(key, 0)

    def chain_head(self, key: ChainKey) -> ChainHead:
        return ChainHead(seq=self.head(key), beliefs=(0, 0))

    def episodes_since(self, key: ChainKey, seq: int) -> list[Any]:
        self.since.append((key, seq))
        if not self._hands_episodes:
            return []
        return [
            SimpleNamespace(seq=s, kind=Kind.QUESTION) for s in range(seq + 1, self.head(key) + 1)
        ]


class Memory:
    """The held chains of app/resident.py, reduced to which chains are held."""

    def __init__(self, held: set[ChainKey] | None = None) -> None:
        self.held = held or set()
        self.before_load = None

    def holds(self, key: ChainKey) -> bool:
        return key in self.held

    def missing_of(self, key: ChainKey, limit: int) -> list[int]:
        return []


def node(store: SharedStore, memory: Memory) -> tuple[ChainSync, ChainCache[int]]:
    """A node's sync and one derived cache of it (the head each chain had when it was loaded),
    subscribed to new episodes as app/root.py subscribes the real ones."""
    changes = ChangeHub()
    sync = ChainSync(
        store,  # type: ignore[arg-type]
        memory,  # type: ignore[arg-type]
        None,  # type: ignore[arg-type]
        changes,
        "model",
        check_store=True,
        chains_followed=BOUND,
    )
    cache: ChainCache[int] = ChainCache(store.head, fresh=sync.refresh)
    changes.subscribe(Change.EPISODES, cache.invalidate)
    return sync, cache


def test_a_node_follows_at_most_its_bound_of_chains() -> None:
    store = SharedStore()
    sync, cache = node(store, Memory())
    for i in range(10):
        cache.get(chain(i))
    assert sync.followed() == BOUND
    assert sync.unfollowed == 10 - BOUND


def test_a_chain_read_again_after_leaving_shows_what_other_nodes_wrote_meanwhile() -> None:
    store = SharedStore()
    store.write(chain(0))
    sync, cache = node(store, Memory())
    assert cache.get(chain(0)) == 1
    # Other chains are read here while another node writes chain 0 twice: chain 0 leaves.
    store.write(chain(0))
    store.write(chain(0))
    for i in range(1, BOUND + 1):
        cache.get(chain(i))
    assert sync.unfollowed == 1
    # Its next read adopts the head anew, and its derived cache was dropped as it left.
    assert cache.get(chain(0)) == 3


def test_a_chain_the_memory_holds_stays_followed_and_is_caught_up_from_the_seq_it_holds() -> None:
    store = SharedStore(hands_episodes=False)
    for _ in range(5):
        store.write(chain(0))
    sync, cache = node(store, Memory(held={chain(0)}))
    assert cache.get(chain(0)) == 5
    store.write(chain(0))
    for i in range(1, 10):
        cache.get(chain(i))
    assert sync.followed() == BOUND
    assert sync.unfollowed == 10 - BOUND
    cache.get(chain(0))
    assert store.since == [(chain(0), 5)]


def test_reads_and_writes_racing_past_the_bound_leave_no_cache_behind_the_store() -> None:
    store = SharedStore()
    sync, cache = node(store, Memory())
    chains = [chain(i) for i in range(2 * BOUND)]
    failures: list[BaseException] = []

    def reader(seed: int) -> None:
        pick = random.Random(seed)
        try:
            for _ in range(3_000):
                key = pick.choice(chains)
                if pick.random() < 0.2:
                    store.write(key)
                cache.get(key)
        except BaseException as exc:  # reported by the assertion below
            failures.append(exc)

    threads = [threading.Thread(target=reader, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    assert sync.unfollowed > 0
    assert sync.followed() <= BOUND
    for key in chains:
        assert cache.get(key) == store.head(key)
