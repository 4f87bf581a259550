"""The lexical candidate set (R2.1): Okapi BM25 of every episode of the chain that holds a stem
of the query, over the whole history, with no cap per word and no recency cut.

Postings come from the chain's recall table (index/recall_tables.py): for each stem, the positions
of the episodes holding it and how often. Scoring is arrays in, arrays out: its cost grows with
the postings the query's stems have, not with the chain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

# BM25's term-frequency saturation and length normalisation: the customary defaults (Robertson
# and Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009; Lucene's too),
# not tuned on evaluation data.
BM25_K1 = 1.2
BM25_B = 0.75

# Hits are summed per episode of the whole chain once they number at least 1/DENSE_SHARE of it
# (cheaper than sorting them from there), else after sorting them.
DENSE_SHARE = 8

Postings = tuple[npt.NDArray[np.int32], npt.NDArray[np.uint16]]


def bm25(
    postings: Sequence[Postings], lengths: npt.NDArray[np.uint32]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """(positions, scores) of every episode among the first len(lengths) holding at least one
    query stem, by position. `postings` holds one entry per query stem (positions ascending)."""
    n = len(lengths)
    if n == 0:
        return np.empty(0, np.int64), np.empty(0, np.float32)
    avg_length = max(float(lengths.mean()), 1.0)
    hit_positions: list[npt.NDArray[np.int32]] = []
    hit_scores: list[npt.NDArray[np.float64]] = []
    for positions, tfs in postings:
        # Postings are appended in position order: those of the snapshot are a prefix.
        k = int(np.searchsorted(positions, n))
        if k == 0:
            continue
        positions, tf = positions[:k], tfs[:k].astype(np.float64)
        idf = _idf(n, k)
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths[positions] / avg_length)
        hit_positions.append(positions)
        hit_scores.append(idf * tf * (BM25_K1 + 1.0) / (tf + norm))
    if not hit_positions:
        return np.empty(0, np.int64), np.empty(0, np.float32)
    positions = np.concatenate(hit_positions)
    weights = np.concatenate(hit_scores)
    if len(positions) * DENSE_SHARE >= n:
        # Many hits (a common word): adding into one slot per episode beats sorting the hits.
        # Either way each episode's terms are added in the same order, so the sums are equal.
        sums = np.bincount(positions, weights=weights, minlength=n)
        hit = np.zeros(n, dtype=bool)
        hit[positions] = True
        unique = np.flatnonzero(hit)
        return unique.astype(np.int64), sums[unique].astype(np.float32)
    unique, inverse = np.unique(positions, return_inverse=True)
    scores = np.bincount(inverse, weights=weights)
    return unique.astype(np.int64), scores.astype(np.float32)


def _idf(n: int, k: int) -> float:
    """BM25's inverse document frequency of a stem held by k of n episodes."""
    return math.log(1.0 + (n - k + 0.5) / (k + 0.5))


def coverage(
    terms: Sequence[str],
    postings: Sequence[Postings],
    words: Sequence[tuple[str, ...]],
    n: int,
    best: float,
) -> float:
    """How much of the query the best BM25 score covers, in [0, 1]: `best` over the score of an
    episode of average length holding every query word once, that is the sum over the query's
    `words` (each the stems of one word, `text.stems.grouped_query_terms`; `postings` line up
    with `terms`) of the idf of the word's stem that most episodes hold. A word no episode among
    the first n holds counts with the idf of a stem held by none: the query's topic word missing
    from the history lowers the coverage of whatever the other words match."""
    held = {
        term: int(np.searchsorted(positions, n))
        for term, (positions, _) in zip(terms, postings, strict=True)
    }
    ideal = sum(_idf(n, max(held.get(stem, 0) for stem in word)) for word in words)
    return min(1.0, best / ideal) if ideal > 0 else 0.0
