"""What the ingest path asks of a store, the same on SQLite and PostgreSQL: episodes committed
without an embedding are counted and listed as the embedding backlog until their vectors are
saved (once: a second save keeps the first), and a chain reads back for loading into memory from
one consistent read, after any id, with the vectors asked for."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from tests.helpers.keys import TEST_MASTER_KEY
from tutor_memory.domain.episodes import ChainKey, Kind, embedding_text, validate_new_episode
from tutor_memory.domain.recall.facts import FACTS_VERSION, recall_facts
from tutor_memory.models.tokenizers import load_counter
from tutor_memory.store.postgres.store import PostgresStore
from tutor_memory.store.protocols import AppendStatus, PreparedEpisode, Store
from tutor_memory.store.sqlite.store import SqliteStore

NOW = 1_800_000_000_000_000
DIM = 4
MODEL = "m"
COUNTER = load_counter(None)
A = ChainKey("t", "s1", "bio")
B = ChainKey("t", "s2", "bio")


def _prepared(chain: ChainKey, summary: str, *, embedded: bool) -> PreparedEpisode:
    ep = validate_new_episode(
        chain=chain, kind=Kind.QUESTION, summary=summary, text=f"{summary} in detail",
        concepts=["osmosis"], occurred_at_us=NOW - 1, evidence=[], check=None, quiz=None,
        client_key="", now_us=NOW, client_key_required=False,
    )  # fmt: skip
    (facts,) = recall_facts([ep], COUNTER)
    vector = np.full(DIM, 0.5, dtype=np.float32) if embedded else None
    return PreparedEpisode(ep, vector, facts)


# Runs one statement on the store's database behind its back (SQLite's `?` placeholders).
Raw = Callable[[str, int], None]


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Store, Raw]]:
    s: Store
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_url")
        s = PostgresStore(url, TEST_MASTER_KEY)

        def raw(sql: str, arg: int) -> None:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(sql.replace("?", "%s").encode(), (arg,))

    else:
        path = tmp_path / "store.sqlite3"
        s = SqliteStore(path, TEST_MASTER_KEY)

        def raw(sql: str, arg: int) -> None:
            with sqlite3.connect(path, isolation_level=None) as conn:
                conn.execute(sql, (arg,))

    yield s, raw
    s.close()


@pytest.fixture
def store(engine: tuple[Store, Raw]) -> Store:
    return engine[0]


def test_episodes_committed_without_a_vector_are_the_backlog_until_saved(store: Store) -> None:
    assert store.last_episode_id() == 0
    items = [
        _prepared(A, "a1", embedded=True),
        _prepared(A, "a2", embedded=False),
        _prepared(B, "b1", embedded=False),
        _prepared(A, "a3", embedded=False),
    ]
    outcomes = store.append(items, model_id=MODEL, recorded_at_us=NOW)
    assert all(o.status is AppendStatus.INSERTED for o in outcomes)
    ids = [o.episode.episode_id for o in outcomes]
    last = store.last_episode_id()
    assert last == max(ids)

    assert store.unembedded_counts(last) == {A: 2, B: 1}
    assert store.unembedded_counts(ids[1]) == {A: 1}
    backlog = store.unembedded(after_id=0, up_to_id=last, limit=10)
    assert [(u.chain, u.episode_id) for u in backlog] == [(A, ids[1]), (B, ids[2]), (A, ids[3])]
    assert backlog[0].text == embedding_text("a2", "a2 in detail")
    # Paged by id, bounded above.
    assert [u.episode_id for u in store.unembedded(after_id=ids[1], up_to_id=last, limit=1)] == [
        ids[2]
    ]
    assert store.unembedded(after_id=0, up_to_id=ids[0], limit=10) == []

    first = np.full(DIM, 0.25, dtype=np.float32)
    with store.writing() as w:
        w.save_vectors(MODEL, [(A, ids[1], first), (B, ids[2], first)])
    with store.writing() as w:
        # Already embedded (by another worker or node): kept as first saved. An id of another
        # chain is ignored.
        w.save_vectors(MODEL, [(A, ids[1], np.ones(DIM, np.float32)), (B, ids[3], first)])
    assert store.unembedded_counts(last) == {A: 1}
    got_ids, got = store.vectors_of(A, MODEL, [ids[1], ids[3]])
    assert got_ids.tolist() == [ids[1]]
    np.testing.assert_array_equal(got[0], first)


def test_a_chain_reads_back_after_an_id_with_its_facts_and_the_vectors_asked_for(
    engine: tuple[Store, Raw],
) -> None:
    store, raw = engine
    items = [_prepared(A, f"a{i}", embedded=i % 2 == 0) for i in range(5)]
    items.insert(2, _prepared(B, "b", embedded=True))
    outcomes = store.append(items, model_id=MODEL, recorded_at_us=NOW)
    a_ids = [o.episode.episode_id for o in outcomes if o.episode.chain == A]

    whole = store.chain_recall(A, MODEL, after_id=0)
    assert [r.episode_id for r in whole.rows] == a_ids
    assert whole.before == 0
    assert whole.vector_ids.tolist() == [a_ids[0], a_ids[2], a_ids[4]]
    assert whole.vectors.shape == (3, DIM)
    first = whole.rows[0]
    assert first.kind is Kind.QUESTION
    assert first.concepts == ("osmosis",)
    assert first.occurred_at_us == NOW - 1
    assert first.facts == items[0].facts

    # After the second episode, with the vector of an earlier one asked for.
    tail = store.chain_recall(A, MODEL, after_id=a_ids[1], vectors_of=[a_ids[0], a_ids[1]])
    assert [r.episode_id for r in tail.rows] == a_ids[2:]
    assert tail.before == 2
    assert tail.vector_ids.tolist() == [a_ids[0], a_ids[2], a_ids[4]]

    # Facts made by other rules read back as missing, for the loader to derive again.
    raw(
        "UPDATE recall_facts SET version = ? WHERE episode_id = " + str(a_ids[0]), FACTS_VERSION - 1
    )
    assert store.chain_recall(A, MODEL, after_id=0).rows[0].facts is None
    with store.writing() as w:
        w.save_recall_facts(A, [(a_ids[0], items[0].facts)])
    assert store.chain_recall(A, MODEL, after_id=0).rows[0].facts == items[0].facts

    empty = store.chain_recall(ChainKey("t", "nobody", "bio"), MODEL, after_id=0)
    assert (empty.rows, len(empty.vector_ids), empty.before) == ([], 0, 0)
