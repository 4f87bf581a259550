"""A chain's recall table (index/recall_tables.py): finding the copies of a collapsed memory."""

from __future__ import annotations

import numpy as np
import pytest

from tutor_memory.domain.episodes import Kind
from tutor_memory.domain.recall.facts import RecallRow
from tutor_memory.index import recall_tables
from tutor_memory.index.recall_tables import ChainTable


def _rows(keys: list[int], first_id: int) -> list[RecallRow]:
    return [
        RecallRow(
            episode_id=first_id + i,
            occurred_at_us=(first_id + i) * 1_000_000,
            salience=0.5,
            kind=Kind.QUESTION,
            dup_key=key,
            tokens=10,
            flagged=False,
            concepts=(),
            stems=(("cell", 1),),
        )
        for i, key in enumerate(keys)
    ]


def _copies(table: ChainTable, key: int, within: int) -> list[int]:
    found: list[int] = table.copies_of([key], within).get(key, np.empty(0, np.int64)).tolist()
    return found


def _filled(keys: list[int]) -> ChainTable:
    table = ChainTable()
    table.append(_rows(keys, 1))
    return table


def _scanned(keys: list[int], key: int, within: int) -> list[int]:
    return [i for i, k in enumerate(keys[:within]) if k == key]


@pytest.mark.parametrize("rows", [50, 300, 6_000])
def test_copies_are_every_row_with_the_key_within_the_rows_asked_for(
    rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_tables, "DUP_INDEX_SLACK", 100)
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 40, rows).tolist()
    table = _filled(keys)
    for key in (0, 7, 39, 1_000):
        for within in (rows, rows // 2, 1):
            assert _copies(table, key, within) == _scanned(keys, key, within)


def test_copies_include_rows_appended_after_the_index_was_built_and_after_it_is_rebuilt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(recall_tables, "DUP_INDEX_MIN_ROWS", 100)
    monkeypatch.setattr(recall_tables, "DUP_INDEX_SLACK", 50)
    rng = np.random.default_rng(4)
    keys = rng.integers(0, 10, 200).tolist()
    table = _filled(keys)
    assert _copies(table, 3, 200) == _scanned(keys, 3, 200)  # builds the index
    for step in range(6):  # past the slack, then past it again
        more = rng.integers(0, 10, 30).tolist()
        table.append(_rows(more, len(keys) + 1))
        keys += more
        for key in range(10):
            assert _copies(table, key, len(keys)) == _scanned(keys, key, len(keys)), step
            # A block's snapshot taken before the appends still sees only its own rows.
            assert _copies(table, key, 200) == _scanned(keys, key, 200)


@pytest.mark.parametrize("rows", [100, 300, 6_000])
def test_the_copies_of_several_keys_at_once_are_each_keys_copies(
    rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recall_tables, "DUP_INDEX_SLACK", 100)
    rng = np.random.default_rng(5)
    keys = rng.integers(0, 25, rows).tolist()
    table = _filled(keys)
    more = rng.integers(0, 25, 150).tolist()  # past the index of the large chain
    table.append(_rows(more, rows + 1))
    keys += more
    asked = [3, 3, 24, 7, 999]
    got = table.copies_of(asked, len(keys))
    assert set(got) == {3, 24, 7}
    for key in (3, 24, 7):
        assert got[key].tolist() == _scanned(keys, key, len(keys))
    assert table.copies_of([], len(keys)) == {}
