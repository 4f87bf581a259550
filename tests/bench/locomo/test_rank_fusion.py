"""Reciprocal rank fusion of the LoCoMo hybrid baseline, on examples worked out by hand."""

from __future__ import annotations

import pytest
from bench.locomo.fusion import RRF_K, reciprocal_rank_fusion


def test_fused_order_matches_the_hand_computed_scores() -> None:
    bm25 = [2, 0, 1]
    vector = [1, 2, 3]
    # With k = 60:  2: 1/61 + 1/62 = 0.032523   1: 1/63 + 1/61 = 0.032266
    #               0: 1/62        = 0.016129   3: 1/63        = 0.015873
    assert RRF_K == 60
    assert reciprocal_rank_fusion([bm25, vector]) == [2, 1, 0, 3]


def test_agreement_beats_a_single_first_place_only_when_k_damps_the_top_ranks() -> None:
    # 5 is first in one ranking only; 7 is second in both.
    rankings = [[5, 7, 8], [9, 7, 8]]
    # k = 60: 7 scores 2/62 = 0.0323 > 5's (and 9's) 1/61 = 0.0164.
    assert reciprocal_rank_fusion(rankings)[0] == 7
    # k = 0: 7 scores 1/2 + 1/2 = 1.0, 5 and 9 score 1/1 = 1.0: a tie, broken for the larger
    # position; 8 scores 1/3 + 1/3.
    assert reciprocal_rank_fusion(rankings, k=0) == [9, 7, 5, 8]


def test_equal_scores_go_to_the_newer_turn_and_missing_turns_get_nothing() -> None:
    # 0 and 4 are each first in one ranking (1/61 each); 3 appears in no ranking.
    assert reciprocal_rank_fusion([[0], [4]]) == [4, 0]
    assert reciprocal_rank_fusion([[], [1, 0]]) == [1, 0]
    assert reciprocal_rank_fusion([]) == []


def test_a_ranking_that_repeats_a_position_or_a_negative_k_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        reciprocal_rank_fusion([[1, 1]])
    with pytest.raises(ValueError, match="negative"):
        reciprocal_rank_fusion([[1]], k=-1)
