"""Candidate sets: relevance scaled to each set's best, and neighbouring turns as a second hop."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.recall.candidates import (
    CENTRED_MATCH_MIN,
    NEIGHBOUR_SHARE,
    SEMANTIC_MATCH_MIN,
    SESSION_GAP_US,
    CandidateSets,
    neighbours,
    scaled_to_best,
    top_indices,
)
from tutor_memory.domain.recall.facts import Snapshot

HOUR = 3_600 * 1_000_000


def _snapshot(times: list[int]) -> Snapshot:
    n = len(times)
    return Snapshot(
        ids=np.arange(1, n + 1, dtype=np.int64),
        occurred_at_us=np.asarray(times, np.int64),
        salience=np.full(n, 0.4, np.float32),
        kind=np.zeros(n, np.uint8),
        dup_key=np.arange(n, dtype=np.uint64),
        tokens=np.full(n, 5, np.uint32),
        flagged=np.zeros(n, np.uint8),
        length=np.full(n, 5, np.uint32),
    )


def test_each_sets_best_counts_one() -> None:
    assert scaled_to_best(np.asarray([2.0, 8.0, 4.0], np.float32)).tolist() == [0.25, 1.0, 0.5]
    assert scaled_to_best(np.empty(0, np.float32)).tolist() == []


def test_the_nearest_dense_neighbour_counts_as_much_as_the_best_lexical_match() -> None:
    sets = CandidateSets()
    relevance = sets.add_neighbours(
        np.asarray([7, 8, 9], np.int64), np.asarray([0.62, 0.5, 0.3], np.float32)
    )
    assert relevance[0] == 1.0
    assert 0 < relevance[1] < 1
    _ids, rel, matched = sets.arrays()
    assert matched.tolist() == [1, 1, 0]  # below SEMANTIC_MATCH_MIN: no match
    assert rel[2] == 0


def test_cosines_about_the_chains_mean_match_from_their_own_threshold() -> None:
    between = (CENTRED_MATCH_MIN + SEMANTIC_MATCH_MIN) / 2
    similarities = np.asarray([0.6, between, CENTRED_MATCH_MIN - 0.01], np.float32)
    ids = np.asarray([7, 8, 9], np.int64)
    plain, centred = CandidateSets(), CandidateSets()
    plain.add_neighbours(ids, similarities)
    relevance = centred.add_neighbours(ids, similarities, centred=True)
    assert plain.arrays()[2].tolist() == [1, 0, 0]
    assert centred.arrays()[2].tolist() == [1, 1, 0]
    assert relevance[0] == 1.0
    assert np.isclose(relevance[1], (between - CENTRED_MATCH_MIN) / (0.6 - CENTRED_MATCH_MIN))


def test_neighbours_are_the_turns_around_a_match_in_its_session() -> None:
    # Turns 0-4 in one session; turn 5 two hours later.
    snap = _snapshot([0, 60, 120, 180, 240, 240 + 2 * HOUR])
    near, share = neighbours(snap, np.asarray([4], np.int64), np.asarray([1.0], np.float32))
    got = dict(zip(near.tolist(), share.tolist(), strict=True))
    assert sorted(got) == [2, 3]
    assert np.isclose(got[3], NEIGHBOUR_SHARE)
    assert np.isclose(got[2], NEIGHBOUR_SHARE**2)
    assert 5 not in got  # another session
    assert SESSION_GAP_US < 2 * HOUR


def test_a_candidate_that_matches_nothing_brings_no_neighbours() -> None:
    snap = _snapshot([0, 60, 120])
    near, _ = neighbours(snap, np.asarray([1], np.int64), np.asarray([0.0], np.float32))
    assert near.tolist() == []


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 0.7, 1.0]), max_size=80), st.integers(1, 30))
def test_top_indices_are_the_stable_descending_sorts_first_k(values: list[float], k: int) -> None:
    array = np.asarray(values, np.float32)
    assert np.array_equal(top_indices(array, k), np.argsort(-array, kind="stable")[:k])
