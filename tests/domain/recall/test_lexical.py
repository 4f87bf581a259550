"""The lexical set: Okapi BM25 over the postings of the whole history."""

from __future__ import annotations

import math

import numpy as np

from tutor_memory.domain.recall.lexical import BM25_B, BM25_K1, bm25


def _postings(positions: list[int], tfs: list[int]) -> tuple[np.ndarray, np.ndarray]:
    return np.asarray(positions, np.int32), np.asarray(tfs, np.uint16)


def test_scores_are_okapi_bm25() -> None:
    lengths = np.asarray([4, 8, 4, 4], np.uint32)
    positions, scores = bm25([_postings([0, 1], [1, 2])], lengths)
    avg = 5.0
    idf = math.log(1 + (4 - 2 + 0.5) / (2 + 0.5))

    def one(tf: float, dl: float) -> float:
        return idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * dl / avg))

    assert positions.tolist() == [0, 1]
    assert np.allclose(scores, [one(1, 4), one(2, 8)])


def test_an_episode_holding_more_query_stems_scores_higher_and_rare_stems_weigh_more() -> None:
    lengths = np.full(10, 5, np.uint32)
    common = _postings(list(range(8)), [1] * 8)
    rare = _postings([9], [1])
    positions, scores = bm25([common, rare], lengths)
    by_position = dict(zip(positions.tolist(), scores.tolist(), strict=True))
    assert by_position[9] > by_position[0]
    both = _postings([3], [1])
    positions, scores = bm25([common, both], lengths)
    by_position = dict(zip(positions.tolist(), scores.tolist(), strict=True))
    assert by_position[3] == max(by_position.values())


def test_every_episode_of_the_history_holding_a_stem_is_scored() -> None:
    """No cap of newest matches per word: the oldest of 2,000 holders is a candidate."""
    lengths = np.full(5_000, 6, np.uint32)
    positions, _ = bm25([_postings(list(range(0, 4_000, 2)), [1] * 2_000)], lengths)
    assert len(positions) == 2_000
    assert positions[0] == 0


def test_only_the_snapshot_prefix_is_scored() -> None:
    """Postings may hold episodes appended after the snapshot was taken: they are left out."""
    positions, _ = bm25([_postings([0, 2, 5], [1, 1, 1])], np.full(3, 4, np.uint32))
    assert positions.tolist() == [0, 2]
