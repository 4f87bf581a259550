"""The embedded store refuses a write the machine cannot take with the status that says why
(store/sqlite/store.py `_write_refused`), and nothing of it stays: a full disk is
RESOURCE_EXHAUSTED (tests/api/test_disk_full.py goes through the server), a write lock held by
another process past the wait is UNAVAILABLE."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.helpers.keys import TEST_MASTER_KEY
from tests.store.test_bounded_memory import _prepared, chain
from tutor_memory.domain.errors import ResourceExhausted, Unavailable
from tutor_memory.store.sqlite import store as sqlite_store
from tutor_memory.store.sqlite.store import SqliteStore


def test_a_write_lock_held_elsewhere_past_the_wait_is_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT_MS", 200)
    path = tmp_path / "db.sqlite3"
    store = SqliteStore(path, TEST_MASTER_KEY)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # another process of the same data directory
        with pytest.raises(Unavailable, match="held the database's write lock for over"):
            store.append([_prepared(chain(1), "osmosis")], model_id="m", recorded_at_us=1)
        other.execute("ROLLBACK")
        store.append([_prepared(chain(1), "osmosis")], model_id="m", recorded_at_us=1)
        assert [e.summary for e in store.iter_chain(chain(1))] == ["osmosis"]
    finally:
        other.close()
        store.close()


def test_a_full_database_is_resource_exhausted_and_keeps_nothing(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db.sqlite3", TEST_MASTER_KEY)
    try:
        store.append([_prepared(chain(1), "first")], model_id="m", recorded_at_us=1)
        pages = store._writer.execute("PRAGMA page_count").fetchone()[0]
        store._writer.execute(f"PRAGMA max_page_count = {pages}")
        # Forty episodes of 400-character summaries: more pages than the database may take.
        long = [_prepared(chain(2), f"long {i} " + "y" * 400) for i in range(40)]
        with pytest.raises(ResourceExhausted, match="disk is full; nothing was written"):
            store.append(long, model_id="m", recorded_at_us=2)
        assert list(store.iter_chain(chain(2))) == []
        store._writer.execute("PRAGMA max_page_count = 1073741823")
        store.append(long, model_id="m", recorded_at_us=3)
        assert len(list(store.iter_chain(chain(2)))) == 40
    finally:
        store.close()
