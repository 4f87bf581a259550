"""SearchPassages' ranking (domain/files/search.py): the `limit` best passages, best first, ties
in stored order, exactly as a stable sort of every score would give, though only the passages
at or above the limit-th score are sorted."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.files.search import nearest
from tutor_memory.domain.records import StoredPassage


def _passages(n: int) -> list[StoredPassage]:
    return [StoredPassage(i, "notes.md", 1, "f" * 64, 1, f"passage {i}") for i in range(n)]


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.integers(min_value=-3, max_value=3), min_size=0, max_size=60),
    limit=st.integers(min_value=0, max_value=70),
)
def test_the_best_passages_come_first_and_ties_keep_their_stored_order(
    scores: list[int], limit: int
) -> None:
    # Few distinct scores, so that ties are common, at the cut too. A one-column matrix and the
    # query [1] make each passage's score its own value.
    matrix = np.array(scores, np.float32).reshape(-1, 1)
    found = nearest(_passages(len(scores)), matrix, np.ones(1, np.float32), limit)
    expected = sorted(range(len(scores)), key=lambda i: -scores[i])[:limit]
    assert [f.passage.passage_id for f in found] == expected
    assert [f.score for f in found] == [float(scores[i]) for i in expected]


def test_no_passage_or_no_room_finds_nothing() -> None:
    assert nearest([], np.empty((0, 0), np.float32), np.ones(4, np.float32), 5) == []
    one = np.ones((1, 4), np.float32)
    assert nearest(_passages(1), one, np.ones(4, np.float32), 0) == []
