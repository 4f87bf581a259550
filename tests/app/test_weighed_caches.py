"""Caches whose entries vary in size by orders of magnitude are bounded in bytes as well as in
entries (store/lru.py, app/caches.py): a chain's passages may be a few kilobytes or, for one
course file of five million characters, about 12 MiB; a chain's map a few kilobytes or, for a
course of fifty files, several MiB. The caches of passages, maps and beliefs weigh what they hold
and report it (tutor_memory_cache_bytes{cache=...})."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import cast

import numpy as np
import numpy.typing as npt
import pytest

from tutor_memory.app.beliefs import (
    BELIEF_CACHE_BYTES,
    CHECK_GROUPS_BYTES,
    current_beliefs_cache,
)
from tutor_memory.app.caches import CHAIN_CACHE_SIZE, ChainCache
from tutor_memory.app.files import PASSAGE_CACHE_BYTES, passage_cache
from tutor_memory.app.maps import MAP_CACHE_BYTES, MapCache
from tutor_memory.app.views import CachedSources
from tutor_memory.domain.beliefs.history import CheckGroups
from tutor_memory.domain.beliefs.rules import CheckEvidence
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.conceptmap.chain_map import ChainMap
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.extract import MAX_CONCEPTS_PER_FILE
from tutor_memory.domain.conceptmap.graph import banded, shape_map
from tutor_memory.domain.conceptmap.inputs import FileConcepts
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.episodes import ChainKey, Kind, StoredEpisode
from tutor_memory.domain.files.search import Passages, passages_bytes
from tutor_memory.domain.records import BeliefRow, FileVersion, StoredPassage, belief_rows_bytes
from tutor_memory.models.embedder import Embedder
from tutor_memory.models.tokenizers import load_counter
from tutor_memory.store.lru import LruCache
from tutor_memory.store.protocols import Store

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
    held, allocated = _allocated_by(lambda: _passages(500, chars=1_200))
    assert isinstance(held, tuple)
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


# -- maps and beliefs ---------------------------------------------------------------------------


def _course(files: int, seed: int = 1, name: str = "file") -> list[FileConcepts]:
    """`files` files of MAX_CONCEPTS_PER_FILE concepts each, every name distinct, each concept
    building on the two before it, with random unit name embeddings (so that none merge)."""
    rng = np.random.default_rng(seed)
    words = [f"word{i}" for i in range(3_000)]
    course = []
    for f in range(files):
        concepts: list[ExtractedConcept] = []
        for c in range(MAX_CONCEPTS_PER_FILE):
            n = f * MAX_CONCEPTS_PER_FILE + c
            concept = f"{words[(7 * n) % 3_000]} {words[(13 * n + 5) % 3_000]} topic{n}"
            concepts.append(
                ExtractedConcept(
                    concept,
                    f"What topic {n} is and why the course needs it, in one sentence.",
                    f"Topic {n} is defined here.",
                    builds_on=tuple(x.name for x in concepts[-2:]),
                    pages=(1 + c // 10,),
                )
            )
        vectors = rng.standard_normal((len(concepts), 512)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        course.append(FileConcepts(f"{name}-{f}.md", 1, concepts, vectors))
    return course


def _chain_map(course: list[FileConcepts]) -> ChainMap:
    shape = shape_map(course, [], canonical_key)
    concept_map = banded(shape, set())
    vectors = np.stack([course[0].vectors[0]] * len(concept_map))
    return ChainMap(
        concept_map, NameMatcher(shape.names), vectors, {f.file_id: "f" * 64 for f in course}
    )


def _allocated_by(make: Callable[[], object]) -> tuple[object, int]:
    """What `make` returns and the bytes Python allocated for it and still holds."""
    make()  # once before: the first call fills look-up caches (canonical words, stop words)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        made = make()
        gc.collect()
        allocated = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return made, allocated


@pytest.mark.parametrize("files", [1, 10, 50])
def test_a_map_weighs_within_a_fifth_of_what_python_allocates_for_it(files: int) -> None:
    course = _course(files)
    chain_map, allocated = _allocated_by(lambda: _chain_map(course))
    assert isinstance(chain_map, ChainMap)
    assert len(chain_map.map) == files * MAX_CONCEPTS_PER_FILE
    assert abs(chain_map.nbytes() - allocated) <= allocated / 5


def _belief_rows(count: int) -> list[BeliefRow]:
    """Rows as a store hands them out: every text and number its own object."""
    return [
        BeliefRow(
            10_000 + i,
            f"Concept number {i}",
            f"concept number {i}",
            f"the student explains concept {i} with an example",
            0.5 + i / (4 * count),
            tuple(range(5_000 + 8 * i, 5_008 + 8 * i)),
            f"a check on concept {i} passed (right, predicted 0.7)",
            "".join(["beliefs", "-v3"]),
            False,
            1_700_000_000_000_000 + i,
            1_700_000_000_500_000 + i,
            None,
            None,
        )
        for i in range(count)
    ]


def test_belief_rows_weigh_within_a_fifth_of_what_python_allocates_for_them() -> None:
    rows, allocated = _allocated_by(lambda: _belief_rows(400))
    assert isinstance(rows, list)
    assert abs(belief_rows_bytes(rows) - allocated) <= allocated / 5


def test_the_map_bound_holds_many_ordinary_courses_and_some_of_the_largest() -> None:
    # A ten-file course (400 concepts) and a fifty-file one (2,000 concepts, 5 times the first).
    ordinary, large = _chain_map(_course(10)).nbytes(), _chain_map(_course(50)).nbytes()
    assert 100 * ordinary <= MAP_CACHE_BYTES
    assert 30 * large <= MAP_CACHE_BYTES
    assert 1_024 * ordinary > MAP_CACHE_BYTES  # so the bound in chains alone would not do


def _check_groups(names: list[str], checked: int, checks_per_concept: int) -> CheckGroups:
    """Groups as RecordCheck keeps them, routed by a matcher of `names`, with checks on the first
    `checked` of them: every check's evidence its own objects."""
    groups = {
        canonical_key(name): (
            name,
            tuple(
                CheckEvidence(
                    1_000_000 + 100 * i + j,
                    j % 2 == 0,
                    datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=100 * i + j),
                    0.25 + j / (4 * checks_per_concept),
                )
                for j in range(checks_per_concept)
            ),
        )
        for i, name in enumerate(names[:checked])
    }
    return CheckGroups(NameMatcher(names), 10_000, groups)


def test_check_groups_weigh_within_a_fifth_of_what_python_allocates_for_them() -> None:
    names = [c.name for f in _course(10) for c in f.concepts]
    groups, allocated = _allocated_by(lambda: _check_groups(names, 100, 5))
    assert isinstance(groups, CheckGroups)
    assert abs(groups.nbytes() - allocated) <= allocated / 5


def test_the_check_groups_bound_holds_every_chain_of_ordinary_courses() -> None:
    # 1,024 chains of a ten-file course (400 concepts) with 200 checks each.
    names = [c.name for f in _course(10) for c in f.concepts]
    assert CHAIN_CACHE_SIZE * _check_groups(names, 40, 5).nbytes() <= CHECK_GROUPS_BYTES


class _Maps:
    """A store whose chains each hold one course of `files[chain]` files."""

    def __init__(self, files: dict[ChainKey, int]) -> None:
        self.courses = {
            chain: _course(n, seed=i, name=chain.student)
            for i, (chain, n) in enumerate(files.items())
        }

    def file_versions(
        self, chain: ChainKey, dim: int, *, current_only: bool = True
    ) -> list[FileVersion]:
        return [
            FileVersion(
                1,
                f.file_id,
                1,
                "a" * 64,
                f.file_id,
                "markdown",
                "",
                1,
                "caller",
                tuple(f.concepts),
                f.vectors,
                1,
                0,
            )
            for f in self.courses[chain]
        ]

    def episodes_of_kind(self, chain: ChainKey, kinds: Sequence[Kind]) -> list[StoredEpisode]:
        return []

    def current_beliefs(self, chain: ChainKey) -> list[BeliefRow]:
        return _belief_rows(3)


class _Embedder:
    dim = 512
    model_id = "none"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.zeros((len(texts), 512), np.float32)


def _live_maps_of(file_id: str) -> int:
    """Built maps alive anywhere in the process that cite `file_id`."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, ChainMap) and file_id in o.fingerprints)


def test_maps_are_bounded_in_bytes_and_a_view_does_not_keep_an_evicted_map_alive() -> None:
    store = _Maps({_chain(1): 10, _chain(2): 10, _chain(3): 1})
    one = _chain_map(store.courses[_chain(1)]).nbytes()
    maps = MapCache(cast(Store, store), cast(Embedder, _Embedder()), max_bytes=one + one // 2)
    sources = CachedSources(current_beliefs_cache(cast(Store, store)), maps, load_counter(None))
    sources.map_view(_chain(1))
    assert maps.cache.bytes == maps.get(_chain(1)).nbytes()
    assert _live_maps_of("student-1-0.md") == 1
    sources.map_view(_chain(2))  # chain 1's map leaves to make room, and its view with it
    assert (len(maps.cache), maps.cache.evictions) == (1, 1)
    assert _live_maps_of("student-1-0.md") == 0
    sources.map_view(_chain(3))  # a one-file map fits beside chain 2's
    assert len(maps.cache) == 2
    # Chain 1 is rebuilt when read again, the same map as before.
    assert len(sources.map_view(_chain(1)).chain_map.map) == 10 * MAX_CONCEPTS_PER_FILE


def test_the_beliefs_cache_reports_its_bytes_and_is_bounded_in_them() -> None:
    store = _Maps({})
    cache = current_beliefs_cache(cast(Store, store))
    cache.get(_chain(1))
    cache.get(_chain(2))
    assert cache.bytes == 2 * belief_rows_bytes(_belief_rows(3))
    assert 1_024 * belief_rows_bytes(_belief_rows(40)) <= BELIEF_CACHE_BYTES
