"""Candidate sets: relevance scaled to each set's best and weighed by how well each set's best
matches, and neighbouring turns as a second hop."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.recall.candidates import (
    CENTRED_MATCH_MIN,
    DENSE_FULL_SPAN,
    NEIGHBOUR_SHARE,
    SEMANTIC_MATCH_MIN,
    SESSION_GAP_US,
    CandidateSets,
    neighbours,
    scaled_to_best,
    set_weights,
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


def test_a_lexical_match_of_the_whole_query_outweighs_a_neighbour_just_past_the_threshold() -> None:
    lexical, dense = set_weights(
        1.0, np.asarray([CENTRED_MATCH_MIN + 0.02, 0.1], np.float32), centred=True
    )
    assert lexical == 1.0
    assert 0 < dense < 0.2


def test_a_close_neighbour_outweighs_a_lexical_match_of_the_querys_form_words_only() -> None:
    """The paraphrase class of issue 13: the question shares only 'what did we say about' with
    other questions, and its memory no word at all."""
    lexical, dense = set_weights(
        0.15, np.asarray([CENTRED_MATCH_MIN + DENSE_FULL_SPAN, 0.2], np.float32), centred=True
    )
    assert dense == 1.0
    assert lexical < 0.5


def test_the_better_graded_set_counts_fully_and_the_uncentred_threshold_applies_uncentred() -> None:
    similarities = np.asarray([SEMANTIC_MATCH_MIN + DENSE_FULL_SPAN / 2], np.float32)
    lexical, dense = set_weights(0.25, similarities, centred=False)
    assert dense == 1.0
    assert np.isclose(lexical, 0.5)
    assert set_weights(0.5, np.empty(0, np.float32), centred=True) == (1.0, 1.0)
    # Neither set matches at all: nothing to weigh.
    assert set_weights(0.0, np.asarray([0.1], np.float32), centred=True) == (1.0, 1.0)


def test_a_neighbours_weight_scales_its_relevance() -> None:
    ids = np.asarray([7, 8], np.int64)
    similarities = np.asarray([0.62, 0.5], np.float32)
    whole = CandidateSets().add_neighbours(ids, similarities)
    half = CandidateSets().add_neighbours(ids, similarities, weight=0.5)
    assert np.allclose(half, whole * 0.5)
