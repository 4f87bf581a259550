"""PostgreSQL statements for the rows beside the ledger: file versions, passages, beliefs and the
nightly cycle's bookkeeping (the twin of store/sqlite/side_rows.py). Each function takes a
connection and a chain's (student_key, chain_id); transactions are the caller's (store.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.records import (
    BeliefRow,
    DayDigest,
    FileVersion,
    NewBelief,
    NewFileVersion,
    NightlyState,
    StoredPassage,
    WrittenDigest,
)
from tutor_memory.store.codec import (
    BELIEF_FIELDS,
    belief_from_row,
    file_concepts_from_json,
    file_concepts_json,
    ids_json,
    rejected_json,
    vector_bytes,
    working_set_json,
)
from tutor_memory.store.postgres.database import Connection

Key = tuple[int, int]  # (student_key, chain_id)


def _one(conn: Connection, sql: str, args: Sequence[Any]) -> tuple[Any, ...] | None:
    return conn.execute(sql, args).fetchone()


# -- files and passages ---------------------------------------------------------------------------


def insert_file_version(
    conn: Connection,
    key: Key,
    row: NewFileVersion,
    *,
    episode_id: int,
    model_id: str,
    ingested_at_us: int,
) -> int:
    sk, chain_id = key
    found = _one(
        conn,
        "INSERT INTO file_versions (student_key, chain_id, file_id, version, fingerprint, "
        "filename, kind, title, pages, size_bytes, extractor, concepts, name_vectors, rejected, "
        "episode_id, ingested_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, "
        "%s, %s, %s) RETURNING file_row",
        (
            sk, chain_id, row.file_id, row.version, row.fingerprint, row.filename, row.kind,
            row.title, row.pages, row.size_bytes, row.extractor,
            file_concepts_json(row.concepts), vector_bytes(row.name_vectors),
            rejected_json(row.rejected), episode_id, ingested_at_us,
        ),
    )  # fmt: skip
    assert found is not None
    file_row = int(found[0])
    if row.passages:
        with conn.cursor().copy(
            "COPY passages (student_key, file_row, chain_id, page, text, model, vector) FROM STDIN"
        ) as copy:
            for p in row.passages:
                copy.write_row(
                    (sk, file_row, chain_id, p.page, p.text, model_id, vector_bytes(p.vector))
                )
    return file_row


_FILE_COLUMNS = (
    "file_row, file_id, version, fingerprint, filename, kind, title, pages, extractor, concepts, "
    "name_vectors, episode_id, ingested_at"
)


def _file_version(row: Sequence[Any], dim: int) -> FileVersion:
    (
        file_row, file_id, version, fingerprint, filename, kind, title, pages, extractor,
        concepts, vectors, episode_id, ingested_at,
    ) = row  # fmt: skip
    parsed = file_concepts_from_json(concepts)
    matrix = np.frombuffer(bytes(vectors), dtype="<f4").reshape(len(parsed), dim).copy()
    return FileVersion(
        int(file_row), file_id, int(version), fingerprint, filename, kind, title, int(pages),
        extractor, parsed, matrix.astype(np.float32), int(episode_id), int(ingested_at),
    )  # fmt: skip


def file_versions(conn: Connection, key: Key, dim: int, *, current_only: bool) -> list[FileVersion]:
    if current_only:
        sql = (
            f"SELECT {_FILE_COLUMNS} FROM file_versions f WHERE student_key = %s AND chain_id = %s "
            "AND fingerprint <> '' AND version = (SELECT max(version) FROM file_versions g "
            "WHERE g.student_key = f.student_key AND g.chain_id = f.chain_id "
            "AND g.file_id = f.file_id) ORDER BY file_row"
        )
    else:
        sql = (
            f"SELECT {_FILE_COLUMNS} FROM file_versions WHERE student_key = %s AND chain_id = %s "
            "ORDER BY file_row"
        )
    return [_file_version(r, dim) for r in conn.execute(sql, key).fetchall()]


def latest_version(conn: Connection, key: Key, file_id: str) -> tuple[int, str] | None:
    row = _one(
        conn,
        "SELECT version, fingerprint FROM file_versions WHERE student_key = %s AND chain_id = %s "
        "AND file_id = %s ORDER BY version DESC LIMIT 1",
        (*key, file_id),
    )
    return None if row is None else (int(row[0]), str(row[1]))


def current_passages(
    conn: Connection, key: Key, model_id: str
) -> tuple[list[StoredPassage], npt.NDArray[np.float32]]:
    rows = conn.execute(
        "SELECT p.passage_id, f.file_id, f.version, f.fingerprint, p.page, p.text, p.vector "
        "FROM passages p JOIN file_versions f ON f.student_key = p.student_key "
        "AND f.file_row = p.file_row WHERE p.student_key = %s AND p.chain_id = %s "
        "AND p.model = %s AND f.fingerprint <> '' AND f.version = (SELECT max(version) "
        "FROM file_versions g WHERE g.student_key = f.student_key AND g.chain_id = f.chain_id "
        "AND g.file_id = f.file_id) ORDER BY p.passage_id",
        (*key, model_id),
    ).fetchall()
    passages = [StoredPassage(int(r[0]), r[1], int(r[2]), r[3], int(r[4]), r[5]) for r in rows]
    if not rows:
        return passages, np.empty((0, 0), np.float32)
    matrix = np.frombuffer(b"".join(bytes(r[6]) for r in rows), dtype="<f4")
    return passages, matrix.reshape(len(rows), -1).astype(np.float32)


# -- beliefs ---------------------------------------------------------------------------------------

_BELIEF_COLUMNS = ", ".join(BELIEF_FIELDS)


def insert_belief(conn: Connection, key: Key, belief: NewBelief, *, created_at_us: int) -> int:
    row = _one(
        conn,
        "INSERT INTO beliefs (student_key, chain_id, concept, concept_key, claim, confidence, "
        "supporting, reason, rules_version, needs_reconfirmation, evidence_at, created_at, "
        "decayed_as_of) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "RETURNING belief_id",
        (
            *key, belief.concept, belief.concept_key, belief.claim, belief.confidence,
            ids_json(belief.supporting), belief.reason, belief.rules_version,
            int(belief.needs_reconfirmation), belief.evidence_at_us, created_at_us,
            belief.decayed_as_of_us,
        ),
    )  # fmt: skip
    assert row is not None
    return int(row[0])


def supersede_belief(conn: Connection, key: Key, old_id: int, new_id: int) -> None:
    cur = conn.execute(
        "UPDATE beliefs SET superseded_by = %s WHERE student_key = %s AND belief_id = %s "
        "AND chain_id = %s AND superseded_by IS NULL AND retired_at IS NULL",
        (new_id, key[0], old_id, key[1]),
    )
    if cur.rowcount != 1:
        raise RuntimeError(f"belief {old_id} is not a current belief of this chain")


def retire_current_beliefs(conn: Connection, key: Key, at_us: int) -> int:
    cur = conn.execute(
        "UPDATE beliefs SET retired_at = %s WHERE student_key = %s AND chain_id = %s "
        "AND superseded_by IS NULL AND retired_at IS NULL",
        (at_us, *key),
    )
    return cur.rowcount


def current_beliefs(conn: Connection, key: Key) -> list[BeliefRow]:
    rows = conn.execute(
        f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE student_key = %s AND chain_id = %s "
        "AND superseded_by IS NULL AND retired_at IS NULL ORDER BY belief_id",
        key,
    ).fetchall()
    return [belief_from_row(r) for r in rows]


def belief_rows(conn: Connection, key: Key, concept_key: str | None) -> list[BeliefRow]:
    if concept_key is None:
        rows = conn.execute(
            f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE student_key = %s AND chain_id = %s "
            "ORDER BY belief_id",
            key,
        ).fetchall()
    else:
        rows = conn.execute(
            f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE student_key = %s AND chain_id = %s "
            "AND concept_key = %s ORDER BY belief_id",
            (*key, concept_key),
        ).fetchall()
    return [belief_from_row(r) for r in rows]


# -- the nightly cycle -----------------------------------------------------------------------------


def nightly_state(conn: Connection, key: Key) -> NightlyState | None:
    row = _one(
        conn,
        "SELECT zone, scanned_seq, generation FROM nightly_state WHERE student_key = %s "
        "AND chain_id = %s",
        key,
    )
    return None if row is None else NightlyState(row[0], int(row[1]), int(row[2]))


def save_nightly_state(conn: Connection, key: Key, state: NightlyState, *, at_us: int) -> None:
    conn.execute(
        "INSERT INTO nightly_state (student_key, chain_id, zone, scanned_seq, generation, "
        "updated_at) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (student_key, chain_id) "
        "DO UPDATE SET zone = excluded.zone, scanned_seq = excluded.scanned_seq, "
        "generation = excluded.generation, updated_at = excluded.updated_at",
        (*key, state.zone, state.scanned_seq, state.generation, at_us),
    )


def insert_day_digest(conn: Connection, key: Key, digest: DayDigest, *, done_at_us: int) -> None:
    conn.execute(
        "INSERT INTO day_digests (student_key, chain_id, day_start, day_end, first_seq, "
        "last_seq, episodes, covered_seq, episode_id, done_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
        (
            *key, digest.day_start_us, digest.day_end_us, digest.first_seq, digest.last_seq,
            digest.episodes, digest.covered_seq, digest.episode_id, done_at_us,
        ),
    )  # fmt: skip


def day_coverage(conn: Connection, key: Key) -> dict[int, int]:
    rows = conn.execute(
        "SELECT day_start, max(covered_seq) FROM day_digests WHERE student_key = %s "
        "AND chain_id = %s GROUP BY day_start",
        key,
    ).fetchall()
    return {int(start): int(seq) for start, seq in rows}


def recent_digests(conn: Connection, key: Key, limit: int) -> list[WrittenDigest]:
    """The chain's `limit` latest day digests: newest run first, latest day first within it."""
    rows = conn.execute(
        "SELECT day_start, day_end, first_seq, last_seq, episodes, covered_seq, episode_id, "
        "done_at FROM day_digests WHERE student_key = %s AND chain_id = %s "
        "ORDER BY done_at DESC, day_start DESC, first_seq DESC LIMIT %s",
        (*key, limit),
    ).fetchall()
    return [WrittenDigest(DayDigest(*map(int, r[:7])), int(r[7])) for r in rows]


def nightly_candidates(conn: Connection) -> list[tuple[int, int, int | None]]:
    """(chain id, highest seq of a non-digest episode, scanned_seq or None) of every chain with
    an episode other than a digest."""
    rows = conn.execute(
        "SELECT e.chain_id, max(e.seq), s.scanned_seq FROM episodes e "
        "LEFT JOIN nightly_state s ON s.student_key = e.student_key AND s.chain_id = e.chain_id "
        "WHERE e.kind <> 'consolidation' GROUP BY e.chain_id, s.scanned_seq ORDER BY e.chain_id"
    ).fetchall()
    return [(int(c), int(m), None if s is None else int(s)) for c, m, s in rows]


def save_self_model(
    conn: Connection, key: Key, working_set: Sequence[str], calibration: str, *, at_us: int
) -> None:
    conn.execute(
        "INSERT INTO self_models (student_key, chain_id, working_set, calibration, composed_at) "
        "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (student_key, chain_id) DO UPDATE SET "
        "working_set = excluded.working_set, calibration = excluded.calibration, "
        "composed_at = excluded.composed_at",
        (*key, working_set_json(working_set), calibration, at_us),
    )


def self_model_composed_at(conn: Connection, key: Key) -> int | None:
    row = _one(
        conn,
        "SELECT composed_at FROM self_models WHERE student_key = %s AND chain_id = %s",
        key,
    )
    return None if row is None else int(row[0])


def never_checked_citations(conn: Connection, key: Key, kind: str, limit: int) -> list[int]:
    rows = conn.execute(
        "SELECT e.episode_id FROM episodes e WHERE e.student_key = %s AND e.chain_id = %s "
        "AND e.kind <> 'consolidation' AND NOT EXISTS (SELECT 1 FROM annotations a "
        "WHERE a.student_key = e.student_key AND a.episode_id = e.episode_id AND a.kind = %s) "
        "ORDER BY e.episode_id LIMIT %s",
        (*key, kind, limit),
    ).fetchall()
    return [int(r[0]) for r in rows]


def oldest_checked_citations(conn: Connection, key: Key, kind: str, limit: int) -> list[int]:
    rows = conn.execute(
        "SELECT a.episode_id, max(a.created_at) AS last FROM annotations a "
        "JOIN episodes e ON e.student_key = a.student_key AND e.episode_id = a.episode_id "
        "WHERE e.student_key = %s AND e.chain_id = %s AND a.kind = %s AND e.evidence <> '[]' "
        "GROUP BY a.episode_id ORDER BY last, a.episode_id LIMIT %s",
        (*key, kind, limit),
    ).fetchall()
    return [int(r[0]) for r in rows]
