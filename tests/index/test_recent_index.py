"""The most recent episodes of a chain, found through its time index: the same rows as a sort
of the whole time column, whatever order the episodes were written in."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tutor_memory.domain.episodes import Kind
from tutor_memory.domain.recall.facts import RecallRow
from tutor_memory.index.recall_tables import TIME_INDEX_MIN_ROWS, TIME_INDEX_SLACK, ChainTable

K = 500


def _rows(times_s: list[int], first_id: int) -> list[RecallRow]:
    return [
        RecallRow(
            episode_id=first_id + i,
            occurred_at_us=t * 1_000_000,
            salience=0.5,
            kind=Kind.QUESTION,
            dup_key=first_id + i,
            tokens=10,
            flagged=False,
            concepts=(),
            stems=(("cell", 1),),
        )
        for i, t in enumerate(times_s)
    ]


def _sorted_latest(times_s: list[int], n: int, k: int) -> set[int]:
    """The k latest of the first n rows by a full sort: time, then the later row."""
    order = sorted(range(n), key=lambda p: (times_s[p], p))
    return set(order[-k:])


def _appended_in_batches(times_s: list[int], batch: int) -> ChainTable:
    table = ChainTable()
    for start in range(0, len(times_s), batch):
        table.append(_rows(times_s[start : start + batch], start + 1))
    return table


@pytest.mark.parametrize("order", ["in time order", "shuffled", "many equal times"])
def test_the_most_recent_rows_are_those_a_full_sort_finds_as_the_chain_grows(order: str) -> None:
    rng = random.Random(7)
    total = TIME_INDEX_MIN_ROWS + 3 * TIME_INDEX_SLACK + 123
    times = list(range(total))
    if order == "shuffled":
        rng.shuffle(times)
    elif order == "many equal times":
        times = [t // 50 for t in times]
    table = ChainTable()
    written = 0
    while written < total:
        batch = min(rng.randint(1, 700), total - written)
        table.append(_rows(times[written : written + batch], written + 1))
        written += batch
        found = table.most_recent(K, len(table)).tolist()
        assert len(found) == len(set(found)) == min(K, written)
        assert set(found) == _sorted_latest(times, written, K)


def test_a_snapshot_taken_before_later_appends_gets_its_own_most_recent_rows() -> None:
    times = list(range(TIME_INDEX_MIN_ROWS + 2 * TIME_INDEX_SLACK))
    table = _appended_in_batches(times[:TIME_INDEX_MIN_ROWS], 256)
    snapshot_rows = len(table)
    # The rows written after the snapshot are the newest; the index rebuilt over them must not
    # offer them to the older snapshot.
    table.append(_rows(times[TIME_INDEX_MIN_ROWS:], TIME_INDEX_MIN_ROWS + 1))
    assert set(table.most_recent(K, len(table)).tolist()) == _sorted_latest(times, len(times), K)
    found = table.most_recent(K, snapshot_rows).tolist()
    assert len(found) == K
    assert set(found) == _sorted_latest(times, snapshot_rows, K)


def test_an_episode_written_late_about_the_past_is_not_among_the_most_recent() -> None:
    now = 10 * TIME_INDEX_MIN_ROWS
    table = _appended_in_batches(list(range(now - TIME_INDEX_MIN_ROWS, now)), 512)
    table.append(_rows([5], TIME_INDEX_MIN_ROWS + 1))  # imported later, long ago
    found = table.most_recent(K, len(table))
    assert TIME_INDEX_MIN_ROWS not in found.tolist()
    assert np.array_equal(np.sort(found), np.arange(TIME_INDEX_MIN_ROWS - K, TIME_INDEX_MIN_ROWS))


def test_a_chain_smaller_than_k_offers_every_row() -> None:
    table = _appended_in_batches([3, 1, 2], 2)
    assert sorted(table.most_recent(K, len(table)).tolist()) == [0, 1, 2]
