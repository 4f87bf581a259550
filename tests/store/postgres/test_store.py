"""The PostgreSQL store on its own: migrations, the append-only triggers, appends from several
processes at once, and the schema's fitness for Citus, read from the catalog."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np
import psycopg
import pytest

from tests.helpers.keys import TEST_MASTER_KEY
from tutor_memory.domain.chain import verify_chain
from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.episodes import ChainKey, Kind, validate_new_episode
from tutor_memory.domain.errors import FailedPrecondition
from tutor_memory.domain.recall.facts import recall_facts
from tutor_memory.domain.records import NewBelief, NewFileVersion, NewPassage
from tutor_memory.models.tokenizers import load_counter
from tutor_memory.store.postgres.database import DatabaseUnreachable
from tutor_memory.store.postgres.migrate import MIGRATIONS_TABLE, migrations
from tutor_memory.store.postgres.store import PostgresStore
from tutor_memory.store.protocols import AppendStatus, PreparedEpisode

NOW = 1_800_000_000_000_000
DIM = 4
COUNTER = load_counter(None)
A = ChainKey("t", "s1", "bio")
B = ChainKey("t", "s2", "bio")


def _prepared(chain: ChainKey, summary: str, key: str = "") -> PreparedEpisode:
    ep = validate_new_episode(
        chain=chain, kind=Kind.QUESTION, summary=summary, text="", concepts=[],
        occurred_at_us=NOW - 1, evidence=[], check=None, quiz=None, client_key=key, now_us=NOW,
        client_key_required=False,
    )  # fmt: skip
    (facts,) = recall_facts([ep], COUNTER)
    return PreparedEpisode(ep, np.full(DIM, 0.5, dtype=np.float32), facts)


@pytest.fixture
def store(postgres_url: str) -> Iterator[PostgresStore]:
    s = PostgresStore(postgres_url, TEST_MASTER_KEY)
    yield s
    s.close()


def test_reopening_applies_no_migration_twice(postgres_url: str) -> None:
    PostgresStore(postgres_url, TEST_MASTER_KEY).close()
    PostgresStore(postgres_url, TEST_MASTER_KEY).close()
    with psycopg.connect(postgres_url) as conn:
        rows = conn.execute(f"SELECT version FROM {MIGRATIONS_TABLE} ORDER BY 1").fetchall()
    assert [r[0] for r in rows] == list(range(1, len(migrations()) + 1))


def test_database_from_a_newer_server_is_refused(postgres_url: str) -> None:
    PostgresStore(postgres_url, TEST_MASTER_KEY).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"INSERT INTO {MIGRATIONS_TABLE} VALUES (999, 'future', 0)")
    with pytest.raises(DatabaseUnreachable, match="newer than this server"):
        PostgresStore(postgres_url, TEST_MASTER_KEY)


def test_episodes_annotations_and_file_versions_refuse_update_and_delete(
    store: PostgresStore, postgres_url: str
) -> None:
    (out,) = store.append([_prepared(A, "osmosis")], model_id="m", recorded_at_us=NOW)
    store.annotate(A, out.episode.episode_id, "note", "{}", created_at_us=NOW)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for sql in (
            "UPDATE episodes SET text = 'x'",
            "DELETE FROM episodes",
            "TRUNCATE episodes CASCADE",
            "UPDATE annotations SET body = 'x'",
            "DELETE FROM annotations",
        ):
            with pytest.raises(psycopg.errors.RestrictViolation, match="append-only"):
                conn.execute(sql.encode())
    assert verify_chain(store.iter_links(A)).ok


def _file_version() -> NewFileVersion:
    return NewFileVersion(
        file_id="cells.md", version=1, fingerprint="f" * 64, filename="cells.md",
        kind="markdown", title="Cells", pages=1, size_bytes=10, extractor="caller",
        concepts=(ExtractedConcept("Osmosis", "Osmosis moves water.", "", (), (1,)),),
        name_vectors=np.eye(1, DIM, dtype=np.float32), rejected=(),
        passages=(NewPassage(1, "Osmosis moves water.", np.full(DIM, 0.5, np.float32)),),
    )  # fmt: skip


def test_file_versions_refuse_update_delete_and_truncate(
    store: PostgresStore, postgres_url: str
) -> None:
    with store.writing() as w:
        (out,) = w.append([_prepared(A, "cells.md added")], model_id="m", recorded_at_us=NOW)
        w.add_file_version(
            A, _file_version(), episode_id=out.episode.episode_id, model_id="m",
            ingested_at_us=NOW,
        )  # fmt: skip
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for sql in (
            "UPDATE file_versions SET fingerprint = ''",
            "DELETE FROM file_versions",
            "TRUNCATE file_versions CASCADE",
        ):
            with pytest.raises(psycopg.errors.RestrictViolation, match="append-only"):
                conn.execute(sql.encode())
    assert store.latest_file_version(A, "cells.md") == (1, "f" * 64)
    assert len(store.current_passages(A, "m")[0]) == 1


@pytest.mark.parametrize(
    "table", ["episodes", "annotations", "file_versions", "beliefs", "erasures"]
)
def test_no_append_only_table_can_be_truncated(
    table: str, store: PostgresStore, postgres_url: str
) -> None:
    refused = pytest.raises(psycopg.errors.RestrictViolation, match="append-only: never truncate")
    with psycopg.connect(postgres_url, autocommit=True) as conn, refused:
        conn.execute(f"TRUNCATE {table} CASCADE".encode())


def _belief(claim: str) -> NewBelief:
    return NewBelief("Osmosis", "osmosis", claim, 0.7, (1,), "two checks", "r1", False, NOW)


def test_a_belief_only_gets_its_successor_or_retirement_once(
    store: PostgresStore, postgres_url: str
) -> None:
    store.append([_prepared(A, "osmosis")], model_id="m", recorded_at_us=NOW)
    with store.writing() as w:
        old = w.add_belief(A, _belief("struggles with"), created_at_us=NOW)
        new = w.add_belief(A, _belief("understands"), created_at_us=NOW + 1)
        w.supersede_belief(A, old, new)
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        for sql in (
            f"UPDATE beliefs SET claim = 'understands' WHERE belief_id = {old}",
            f"UPDATE beliefs SET superseded_by = NULL WHERE belief_id = {old}",
            f"UPDATE beliefs SET superseded_by = {old} WHERE belief_id = {old}",
        ):
            with pytest.raises(psycopg.errors.RestrictViolation, match="never rewritten"):
                conn.execute(sql.encode())
        with pytest.raises(psycopg.errors.RestrictViolation, match="append-only"):
            conn.execute(f"DELETE FROM beliefs WHERE belief_id = {new}".encode())
        # The one change allowed: set once, from NULL.
        conn.execute(f"UPDATE beliefs SET retired_at = {NOW} WHERE belief_id = {new}".encode())
        with pytest.raises(psycopg.errors.RestrictViolation):
            conn.execute(f"UPDATE beliefs SET retired_at = 1 WHERE belief_id = {new}".encode())
    assert [b.current for b in store.belief_rows(A)] == [False, False]


def test_two_processes_appending_to_one_chain_never_fork_it(postgres_url: str) -> None:
    """Two stores (as two server nodes would hold) append to the same chains at once, in batches
    that span both chains in opposite orders: no seq is taken twice, no deadlock, both verify."""
    stores = [PostgresStore(postgres_url, TEST_MASTER_KEY) for _ in range(2)]
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        chains = (A, B) if n % 2 else (B, A)
        try:
            for i in range(30):
                batch = [_prepared(c, f"writer {n} item {i} {c.student}") for c in chains]
                stores[n % 2].append(batch, model_id="m", recorded_at_us=NOW)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for chain in (A, B):
        walked = list(stores[0].iter_links(chain))
        assert [e.seq for e in walked] == list(range(1, 121))
        ids = [e.episode_id for e in walked]
        assert ids == sorted(ids), "a chain's ids grow with its seq"
        assert verify_chain(walked).ok
    for s in stores:
        s.close()


def test_a_batch_repeating_a_client_key_is_judged_against_its_first_item(
    store: PostgresStore,
) -> None:
    out = store.append(
        [_prepared(A, "one", "k"), _prepared(A, "one", "k"), _prepared(A, "other", "k")],
        model_id="m",
        recorded_at_us=NOW,
    )
    assert [o.status for o in out] == [
        AppendStatus.INSERTED,
        AppendStatus.DUPLICATE,
        AppendStatus.CONFLICT,
    ]
    assert {o.episode.episode_id for o in out} == {out[0].episode.episode_id}


def test_the_schema_satisfies_citus_rules_for_co_located_distributed_tables(
    store: PostgresStore, postgres_url: str
) -> None:
    """Every table but the migrations' bookkeeping is distributable by student_key as it is:
    the column in every table, in every primary and unique key, and every foreign key joins
    student_key to student_key (no reference crosses students)."""
    with psycopg.connect(postgres_url) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')"
            ).fetchall()
        } - {MIGRATIONS_TABLE}
        assert {"chains", "episodes", "recall_facts", "beliefs", "day_digests"} <= tables
        with_key = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' "
                "AND column_name = 'student_key' AND data_type = 'bigint' AND is_nullable = 'NO'"
            ).fetchall()
        }
        assert tables <= with_key
        keys = conn.execute(
            "SELECT t.relname, i.relname, x.indisprimary, "
            "array(SELECT a.attname FROM unnest(x.indkey) k JOIN pg_attribute a "
            "ON a.attrelid = t.oid AND a.attnum = k) "
            "FROM pg_index x JOIN pg_class t ON t.oid = x.indrelid "
            "JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = t.relnamespace "
            "WHERE n.nspname = 'public' AND x.indisunique"
        ).fetchall()
        with_primary = {table for table, _, primary, _ in keys if primary}
        assert tables <= with_primary
        for table, index, _, columns in keys:
            if table in tables:
                assert "student_key" in columns, f"{table}.{index} lacks the distribution column"
        foreign = conn.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text, conname, "
            "array(SELECT a.attname FROM unnest(conkey) WITH ORDINALITY k(n, i) "
            "JOIN pg_attribute a ON a.attrelid = conrelid AND a.attnum = k.n ORDER BY k.i), "
            "array(SELECT a.attname FROM unnest(confkey) WITH ORDINALITY k(n, i) "
            "JOIN pg_attribute a ON a.attrelid = confrelid AND a.attnum = k.n ORDER BY k.i) "
            "FROM pg_constraint WHERE contype = 'f'"
        ).fetchall()
        assert foreign, "the schema has foreign keys to check"
        for table, target, name, columns, target_columns in foreign:
            assert target in tables, f"{table}.{name} points outside the distributed tables"
            pairs = list(zip(columns, target_columns, strict=True))
            assert ("student_key", "student_key") in pairs, (
                f"{table}.{name} does not join on the distribution column"
            )


def test_an_erasure_racing_appends_through_another_node_lets_none_in_after_it(
    postgres_url: str,
) -> None:
    """One store (a node) keeps appending to two chains of s1, one of them new, while another
    erases s1: no deadlock, every append either committed before the erasure (and is counted by
    it) or is refused as erased, the key is gone and both chains verify."""
    writer_node, eraser_node = (PostgresStore(postgres_url, TEST_MASTER_KEY) for _ in range(2))
    writer_node.append([_prepared(A, "first")], model_id="m", recorded_at_us=NOW)
    math = ChainKey("t", "s1", "math")
    refused: list[FailedPrecondition] = []
    errors: list[BaseException] = []
    started = threading.Event()

    def appender() -> None:
        try:
            for i in range(200):
                batch = [_prepared(A, f"bio {i}"), _prepared(math, f"math {i}")]
                writer_node.append(batch, model_id="m", recorded_at_us=NOW)
                started.set()
        except FailedPrecondition as exc:
            refused.append(exc)
        except BaseException as exc:
            errors.append(exc)
        finally:
            started.set()

    thread = threading.Thread(target=appender)
    thread.start()
    started.wait()
    outcome = eraser_node.erase_student(
        "t", "s1", by="test", at_us=NOW, allow_plaintext_history=False
    )
    thread.join()
    assert errors == []
    assert len(refused) == 1
    assert "erased" in str(refused[0])
    stored = [e for chain in (A, math) for e in eraser_node.iter_links(chain)]
    assert outcome.erasure.episodes == len(stored)
    assert outcome.erasure.chains == 2
    for chain in (A, math):
        assert verify_chain(eraser_node.iter_links(chain)).ok
        assert list(eraser_node.iter_chain(chain)) == []
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT count(*) FROM student_keys").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM recall_facts").fetchone() == (0,)
    for s in (writer_node, eraser_node):
        s.close()
