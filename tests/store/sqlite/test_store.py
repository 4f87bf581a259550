"""The SQLite store: migrations, the append-only rule for annotations, full-text scoping."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.keys import TEST_MASTER_KEY
from tutor_memory.domain.chain import verify_chain
from tutor_memory.domain.episodes import ChainKey, Kind, StoredEpisode, validate_new_episode
from tutor_memory.domain.errors import NotFound, Unavailable
from tutor_memory.domain.recall.facts import FACTS_VERSION, RecallFacts, recall_facts
from tutor_memory.models.tokenizers import load_counter
from tutor_memory.store.protocols import AppendStatus, PreparedEpisode
from tutor_memory.store.sqlite import store as sqlite_store
from tutor_memory.store.sqlite.migrate import migrations
from tutor_memory.store.sqlite.store import SqliteStore

NOW = 1_800_000_000_000_000
DIM = 4


def _prepared(chain: ChainKey, summary: str, key: str = "") -> PreparedEpisode:
    ep = validate_new_episode(
        chain=chain,
        kind=Kind.QUESTION,
        summary=summary,
        text="",
        concepts=[],
        occurred_at_us=NOW - 1,
        evidence=[],
        check=None,
        quiz=None,
        client_key=key,
        now_us=NOW,
        client_key_required=False,
    )
    (facts,) = recall_facts([ep], load_counter(None))
    return PreparedEpisode(ep, np.full(DIM, 0.5, dtype=np.float32), facts)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "db.sqlite3", TEST_MASTER_KEY)
    yield s
    s.close()


A = ChainKey("t", "s1", "bio")
B = ChainKey("t", "s2", "bio")


def test_reopening_applies_no_migration_twice(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    SqliteStore(path).close()
    SqliteStore(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == len(migrations())


def test_database_from_a_newer_server_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 999")
    with pytest.raises(RuntimeError, match="newer than this server"):
        SqliteStore(path)


def test_one_append_call_is_one_transaction_across_chains(store: SqliteStore) -> None:
    outcomes = store.append(
        [_prepared(A, "a1"), _prepared(B, "b1"), _prepared(A, "a2")],
        model_id="m",
        recorded_at_us=NOW,
    )
    assert [o.status for o in outcomes] == [AppendStatus.INSERTED] * 3
    assert [o.episode.seq for o in outcomes] == [1, 1, 2]
    assert verify_chain(store.iter_links(A)).ok
    assert verify_chain(store.iter_links(B)).length == 1
    assert store.chains() == [A, B]


def test_failed_transaction_leaves_nothing(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.append([_prepared(A, "a1")], model_id="m", recorded_at_us=NOW)

    class Boom(Exception):
        pass

    original = sqlite_store._episode_row

    def failing_on_a3(ep: StoredEpisode, chain_id: int) -> tuple[object, ...]:
        if ep.summary == "a3":
            raise Boom
        return original(ep, chain_id)

    monkeypatch.setattr(sqlite_store, "_episode_row", failing_on_a3)
    with pytest.raises(Boom):
        store.append([_prepared(A, "a2"), _prepared(A, "a3")], model_id="m", recorded_at_us=NOW)
    monkeypatch.undo()
    assert [e.summary for e in store.iter_chain(A)] == ["a1"]
    # The chain continues from its real head, not from the rolled-back rows.
    (outcome,) = store.append([_prepared(A, "a2")], model_id="m", recorded_at_us=NOW)
    assert outcome.episode.seq == 2
    assert verify_chain(store.iter_links(A)).ok


def test_recall_facts_are_stored_with_their_episode_and_scoped_to_its_chain(
    store: SqliteStore,
) -> None:
    a = store.append(
        [_prepared(A, "La mitosi è una divisione"), _prepared(A, "Ancora la mitosi")],
        model_id="m",
        recorded_at_us=NOW,
    )
    store.append([_prepared(B, "mitosi anche qui")], model_id="m", recorded_at_us=NOW)
    kept = store.recall_facts(A)
    assert set(kept) == {o.episode.episode_id for o in a}
    version, facts = kept[a[0].episode.episode_id]
    assert version == FACTS_VERSION
    assert facts.language == "it"
    assert dict(facts.stems) == {"mitos": 1, "division": 1}
    # A duplicate key over 2**63 survives SQLite's signed integers.
    big = RecallFacts(2**64 - 5, 3, False, "en", (("osmosi", 2),))
    with store.writing() as w:
        w.save_recall_facts(A, [(a[1].episode.episode_id, big)])
    assert store.recall_facts(A)[a[1].episode.episode_id] == (FACTS_VERSION, big)


def test_annotations_are_chain_scoped_and_append_only(store: SqliteStore) -> None:
    (a,) = store.append([_prepared(A, "an answer")], model_id="m", recorded_at_us=NOW)
    eid = a.episode.episode_id
    store.annotate(A, eid, "grounding", '{"status": "answered"}', created_at_us=NOW)
    store.annotate(A, eid, "grounding", '{"status": "partial"}', created_at_us=NOW + 1)
    assert [n.body for n in store.annotations(A, eid, "grounding")] == [
        '{"status": "answered"}',
        '{"status": "partial"}',
    ]
    assert store.annotations(B, eid) == []
    with pytest.raises(NotFound):
        store.annotate(B, eid, "grounding", "{}", created_at_us=NOW)
    with (
        sqlite3.connect(store.path) as conn,
        pytest.raises(sqlite3.IntegrityError, match="append-only"),
    ):
        conn.execute("UPDATE annotations SET body = 'x'")


def test_vectors_come_back_per_chain(store: SqliteStore) -> None:
    store.append(
        [_prepared(A, "a1"), _prepared(B, "b1"), _prepared(A, "a2")],
        model_id="m",
        recorded_at_us=NOW,
    )
    loaded = {c.chain: c for c in store.iter_vectors("m")}
    assert loaded[A].vectors.shape == (2, DIM)
    assert loaded[B].ids.shape == (1,)
    assert list(store.iter_vectors("another-model")) == []
    assert store.count_vectors_of_other_models("another-model") == 3


def test_a_write_waits_for_another_processs_write_lock_and_goes_ahead_soon_after_it_is_released(
    store: SqliteStore, tmp_path: Path
) -> None:
    other = sqlite3.connect(tmp_path / "db.sqlite3", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    released = threading.Timer(0.2, lambda: other.execute("COMMIT"))
    released.start()
    started = time.monotonic()
    with store.writing() as w:
        w.append([_prepared(A, "after the lock")], model_id="m", recorded_at_us=NOW)
    waited = time.monotonic() - started
    released.join()
    other.close()
    assert waited >= 0.2
    # SQLite's own busy handler would sleep in steps growing to 100 ms.
    assert waited < 0.2 + 10 * sqlite_store.WRITE_RETRY_MAX_S
    assert store.episode_counts()


def test_a_write_gives_up_as_unavailable_when_the_lock_is_never_released(
    store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "BUSY_TIMEOUT_MS", 100)
    other = sqlite3.connect(tmp_path / "db.sqlite3", isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process of the same data directory
    refused = pytest.raises(Unavailable, match="held the database's write lock for over")
    try:
        with refused, store.writing() as w:
            w.append([_prepared(A, "never")], model_id="m", recorded_at_us=NOW)
    finally:
        other.execute("ROLLBACK")
        other.close()
    # The store writes again once the lock is free.
    with store.writing() as w:
        w.append([_prepared(A, "now")], model_id="m", recorded_at_us=NOW)
