"""Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009), for the hybrid baseline.

Each ranking gives a turn 1 / (k + rank), rank counted from 1; a turn's fused score is the sum over
the rankings that hold it (a ranking that leaves a turn out gives it nothing). Only ranks are used,
so BM25's unbounded scores and cosine similarities need no calibration against each other, which is
why the standard hybrid of lexical and dense retrieval uses it.
"""

from __future__ import annotations

from collections.abc import Sequence

# The constant of the paper that introduced the method, and the usual default since: it damps the
# weight of the very first ranks so that one ranking's top hit does not outvote agreement between
# rankings. Not tuned on LoCoMo.
RRF_K = 60


def reciprocal_rank_fusion(rankings: Sequence[Sequence[int]], k: int = RRF_K) -> list[int]:
    """Every position found in any ranking, by fused score, best first; equal scores go to the
    larger position (the newer turn, as the BM25 baseline breaks its ties)."""
    if k < 0:
        raise ValueError(f"k must not be negative, got {k}")
    scores: dict[int, float] = {}
    for ranking in rankings:
        if len(set(ranking)) != len(ranking):
            raise ValueError("a ranking lists a position twice")
        for rank, position in enumerate(ranking, start=1):
            scores[position] = scores.get(position, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda p: (scores[p], p), reverse=True)
