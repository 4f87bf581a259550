"""Caches whose entries vary in size by orders of magnitude are bounded in bytes as well as in
entries (store/lru.py, app/caches.py): a chain's passages may be a few kilobytes or, for one
course file of five million characters, about 12 MiB. The passages cache weighs what it holds and
reports it (tutor_memory_cache_bytes{cache="passages"})."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from tutor_memory.app.caches import ChainCache
from tutor_memory.app.files import PASSAGE_CACHE_BYTES, passage_cache
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.files.search import Passages, passages_bytes
from tutor_memory.domain.records import StoredPassage
from tutor_memory.store.lru import LruCache

DIM = 384


def _passages(count: int, chars: int = 1_000) -> Passages:
    stored = [
        StoredPassage(i, "notes.md", 1, "f" * 64, 1, "x" * chars + str(i)) for i in range(count)
    ]
    return stored, np.zeros((count, DIM), np.float32)


def _chain(n: int) -> ChainKey:
    return ChainKey("t", f"student-{n}", "biology")


def test_a_weighed_cache_drops_the_least_recently_used_entries_until_within_its_weight() -> None:
    cache: LruCache[str, int] = LruCache(100, weigh=lambda v: v, max_weight=10)
    cache.put_many([("a", 4), ("b", 4)])
    assert cache.get("a") == 4  # "a" is now the most recently used
    cache.put("c", 4)
    assert [cache.get(k) for k in ("a", "b", "c")] == [4, None, 4]
    assert cache.weight == 8
    assert cache.evictions == 1


def test_an_entry_heavier_than_the_bound_stays_alone_until_the_next_put() -> None:
    cache: LruCache[str, int] = LruCache(100, weigh=lambda v: v, max_weight=10)
    cache.put_many([("a", 3), ("b", 3)])
    cache.put("huge", 50)
    assert (len(cache), cache.weight, cache.get("huge")) == (1, 50, 50)
    cache.put("d", 1)
    assert (len(cache), cache.weight, cache.get("huge")) == (1, 1, None)
    assert cache.evictions == 3


def test_replacing_popping_and_dropping_entries_keep_the_weight_exact() -> None:
    cache: LruCache[str, int] = LruCache(100, weigh=lambda v: v, max_weight=1_000)
    cache.put_many([("a1", 10), ("a2", 20), ("b", 30)])
    cache.put("a1", 15)
    assert cache.weight == 65
    cache.pop("a2")
    cache.pop("missing")
    assert cache.weight == 45
    cache.drop_where(lambda k: k.startswith("a"))
    assert cache.weight == 30
    cache.clear()
    assert (len(cache), cache.weight, cache.evictions) == (0, 0, 0)


def test_a_cache_that_is_not_weighed_reports_no_weight_and_needs_both_settings() -> None:
    assert LruCache[str, int](3).weight is None
    with pytest.raises(ValueError, match="both"):
        LruCache[str, int](3, weigh=lambda v: v)
    with pytest.raises(ValueError, match="both"):
        LruCache[str, int](3, max_weight=10)


def test_a_chain_cache_bounded_in_bytes_keeps_the_most_recent_chains_that_fit() -> None:
    sizes = {_chain(n): n for n in range(1, 6)}
    cache: ChainCache[bytes] = ChainCache(
        lambda chain: b"\0" * (1_000 * sizes[chain]), weigh=len, max_bytes=7_000
    )
    for chain in sizes:
        cache.get(chain)
    # The newest chain (5 kB) leaves no room for the 4 kB one before it; 2 kB fits beside it.
    assert (len(cache), cache.bytes) == (1, 5_000)
    cache.get(_chain(2))
    assert (len(cache), cache.bytes) == (2, 7_000)
    assert cache.evictions == 4


class _Files:
    """The store's one read the passages cache makes, counting the loads."""

    def __init__(self, held: dict[ChainKey, Passages]) -> None:
        self.held = held
        self.loads = 0

    def current_passages(self, chain: ChainKey, model_id: str) -> Passages:
        self.loads += 1
        return self.held[chain]


def test_the_passages_cache_reports_the_bytes_of_what_it_holds() -> None:
    files = _Files({_chain(1): _passages(40), _chain(2): _passages(3, chars=50_000)})
    cache = passage_cache(files, "model")  # type: ignore[arg-type]
    assert cache.bytes == 0
    cache.get(_chain(1))
    cache.get(_chain(2))
    expected = passages_bytes(files.held[_chain(1)]) + passages_bytes(files.held[_chain(2)])
    assert cache.bytes == expected
    # The matrix and the texts both count: 40 rows of 384 float32, and 150 kB of text.
    assert cache.bytes > 40 * DIM * 4 + 150_000
    cache.invalidate(_chain(2))
    assert cache.bytes == passages_bytes(files.held[_chain(1)])


def test_passages_weigh_their_matrix_and_texts_within_a_tenth_of_what_python_allocates() -> None:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        held = _passages(500, chars=1_200)
        allocated = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert abs(passages_bytes(held) - allocated) <= allocated / 10


def test_the_passages_bound_holds_many_ordinary_courses_and_some_of_the_largest() -> None:
    # One of the largest allowed course files (5 million characters, about 4,200 passages of
    # 1,200) weighs some 12 MiB: the bound keeps at least a dozen such chains.
    largest = passages_bytes(_passages(4_200, chars=1_200))
    assert 10 * 2**20 < largest < 16 * 2**20
    assert 12 * largest <= PASSAGE_CACHE_BYTES


def test_an_entry_weighed_by_its_caller_is_not_weighed_again() -> None:
    weighed: list[int] = []

    def weigh(value: int) -> int:
        weighed.append(value)
        return value

    cache: LruCache[str, int] = LruCache(10, weigh=weigh, max_weight=100)
    cache.put("a", 3, weight=7)
    cache.put("b", 5)
    assert (cache.weight, weighed) == (12, [5])
