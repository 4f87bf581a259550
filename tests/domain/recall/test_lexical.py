"""The lexical set: Okapi BM25 over the postings of the whole history."""

from __future__ import annotations

import math
from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.recall.lexical import BM25_B, BM25_K1, bm25, coverage


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


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 300), st.lists(st.integers(1, 40), min_size=1, max_size=4), st.data())
def test_common_and_rare_stems_are_summed_alike(
    n: int, sizes: list[int], data: st.DataObject
) -> None:
    """Hits many enough to be summed per episode (DENSE_SHARE) give exactly what sorting them
    gives: same positions, same float sums."""
    lengths = np.asarray(data.draw(st.lists(st.integers(1, 30), min_size=n, max_size=n)), np.uint32)
    postings = []
    for size in sizes:
        positions = sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=size)))
        postings.append(_postings(positions, [1 + p % 3 for p in positions]))
    got = bm25(postings, lengths)
    with patch("tutor_memory.domain.recall.lexical.DENSE_SHARE", 0):
        sorted_path = bm25(postings, lengths)
    with patch("tutor_memory.domain.recall.lexical.DENSE_SHARE", 10**9):
        dense_path = bm25(postings, lengths)
    for other in (sorted_path, dense_path):
        assert np.array_equal(got[0], other[0])
        assert np.array_equal(got[1], other[1])


def test_an_average_episode_holding_every_query_word_once_covers_the_whole_query() -> None:
    lengths = np.full(6, 5, np.uint32)
    terms = ["osmosi", "diffus", "diffusion"]
    # "diffusion" is the word's stem in a second guessed language, which no episode holds: the
    # word counts once, by the stem the history holds.
    postings = [_postings([0, 3], [1, 1]), _postings([0, 4], [1, 1]), _postings([], [])]
    words = [("osmosi",), ("diffus", "diffusion")]
    positions, scores = bm25(postings, lengths)
    assert positions[int(np.argmax(scores))] == 0
    covered = coverage(terms, postings, words, len(lengths), float(scores.max()))
    assert math.isclose(covered, 1.0, rel_tol=1e-6)


def test_common_stems_cover_little_of_a_query_whose_rare_word_no_episode_holds() -> None:
    """'what did we say about polygons' where no episode says 'polygon': the episodes that
    match 'say' cover a small share of the query."""
    lengths = np.full(300, 6, np.uint32)
    terms = ["say", "polygon", "polygons"]
    postings = [_postings(list(range(0, 300, 3)), [1] * 100), _postings([], []), _postings([], [])]
    words = [("say",), ("polygon", "polygons")]
    _positions, scores = bm25(postings, lengths)
    covered = coverage(terms, postings, words, len(lengths), float(scores.max()))
    assert 0 < covered < 0.25
    assert coverage(terms[1:], postings[1:], words[1:], len(lengths), 0.0) == 0.0
