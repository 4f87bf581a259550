"""Recall's levers as named switches, and the rank-based relevance the calibration lever falls
back to."""

from __future__ import annotations

import numpy as np
import pytest

from tutor_memory.domain.recall.candidates import (
    RRF_K,
    SEMANTIC_MATCH_MIN,
    CandidateSets,
    reciprocal_rank_relevance,
)
from tutor_memory.domain.recall.explain import Source
from tutor_memory.domain.recall.levers import ALL_ON, Lever, RecallLevers, parse_levers


def test_the_default_has_every_lever_on() -> None:
    assert all(ALL_ON.on(lever) for lever in Lever)


def test_levers_are_parsed_by_their_names() -> None:
    levers = parse_levers("bm25, dense")
    assert levers == RecallLevers.without([Lever.LEXICAL, Lever.DENSE])
    assert not levers.on(Lever.LEXICAL)
    assert levers.on(Lever.NEIGHBOURS)
    assert parse_levers("") == ALL_ON


def test_an_unknown_lever_is_refused_naming_it_and_the_known_ones() -> None:
    with pytest.raises(ValueError, match="unknown recall lever 'bm52'; known: bm25, dense"):
        parse_levers("bm25,bm52")


def test_reciprocal_rank_relevance_gives_the_best_one_and_depends_on_rank_only() -> None:
    scores = np.array([2.0, 9.0, 2.0, 0.5], dtype=np.float32)
    relevance = reciprocal_rank_relevance(scores)
    # Ranks 2, 1, 3 (ties in index order), 4.
    expected = [(RRF_K + 1) / (RRF_K + r) for r in (2, 1, 3, 4)]
    assert relevance.tolist() == pytest.approx(expected)
    assert reciprocal_rank_relevance(scores * 100).tolist() == relevance.tolist()
    assert len(reciprocal_rank_relevance(np.empty(0, np.float32))) == 0


def test_uncalibrated_dense_neighbours_get_rank_relevance_and_the_same_match_threshold() -> None:
    ids = np.array([10, 11, 12], dtype=np.int64)
    similarities = np.array([0.9, 0.6, SEMANTIC_MATCH_MIN - 0.1], dtype=np.float32)
    calibrated = CandidateSets().add_neighbours(ids, similarities)
    sets = CandidateSets(explain=True)
    plain = sets.add_neighbours(ids, similarities, calibrated=False)
    assert calibrated.tolist() == pytest.approx([1.0, (0.6 - SEMANTIC_MATCH_MIN) / 0.45, 0.0])
    assert plain.tolist() == pytest.approx([1.0, (RRF_K + 1) / (RRF_K + 2), 0.0])
    _, _, matched = sets.arrays()
    assert matched.tolist() == [1, 1, 0]
    assert sets.found is not None
    assert sets.found.sets[0][0] is Source.DENSE
