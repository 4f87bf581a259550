"""The embedded store refuses a write the machine cannot take with the status that says why
(store/sqlite/store.py `_write_refused`), and nothing of it stays: a full disk is
RESOURCE_EXHAUSTED (tests/api/test_disk_full.py goes through the server; test_store.py holds the
write lock another process keeps past the wait, UNAVAILABLE), for appends and for erasures."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.keys import TEST_MASTER_KEY
from tests.store.test_bounded_memory import _prepared, chain
from tutor_memory.domain.errors import ResourceExhausted
from tutor_memory.store.sqlite.store import SqliteStore


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


def test_an_erasure_that_sqlite_ends_on_a_full_disk_is_resource_exhausted_and_erases_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As SQLite does on a full disk: the statement fails with SQLITE_FULL and the transaction
    is already over when the error reaches the store (a real full disk cannot be had on demand
    for a delete, which mostly frees pages)."""
    store = SqliteStore(tmp_path / "db.sqlite3", TEST_MASTER_KEY)
    try:
        target = chain(1)
        store.append([_prepared(target, "osmosis")], model_id="m", recorded_at_us=1)
        real = SqliteStore._erase_in_transaction

        def fills_the_disk(self: SqliteStore, conn: sqlite3.Connection, *args: Any) -> Any:
            real(self, conn, *args)
            conn.execute("ROLLBACK")  # what SQLite does itself on SQLITE_FULL
            full = sqlite3.OperationalError("database or disk is full")
            full.sqlite_errorcode = sqlite3.SQLITE_FULL
            raise full

        monkeypatch.setattr(SqliteStore, "_erase_in_transaction", fills_the_disk)
        with pytest.raises(ResourceExhausted, match="disk is full; nothing was written"):
            store.erase_student(
                target.tenant, target.student, by="test", at_us=2, allow_plaintext_history=True
            )
        assert store.erasure_of(target.tenant, target.student) is None
        assert [e.summary for e in store.iter_chain(target)] == ["osmosis"]
    finally:
        store.close()
