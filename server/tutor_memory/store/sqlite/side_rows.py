"""SQLite statements for the rows beside the ledger: file versions, passages, beliefs and the
nightly cycle's bookkeeping. Each function takes a connection and a chain id; transactions are the
caller's (sqlite.py)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from tutor_memory.domain.conceptmap.concept import ExtractedConcept
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

# -- files and passages ---------------------------------------------------------------------------


def _concepts_json(concepts: Sequence[ExtractedConcept]) -> str:
    return json.dumps(
        [[c.name, c.summary, c.definition, list(c.builds_on), list(c.pages)] for c in concepts],
        ensure_ascii=False,
    )


def _concepts_from_json(raw: str) -> tuple[ExtractedConcept, ...]:
    return tuple(
        ExtractedConcept(name, summary, definition, tuple(builds_on), tuple(pages))
        for name, summary, definition, builds_on, pages in json.loads(raw)
    )


def insert_file_version(
    conn: sqlite3.Connection,
    chain_id: int,
    row: NewFileVersion,
    *,
    episode_id: int,
    model_id: str,
    ingested_at_us: int,
) -> int:
    cur = conn.execute(
        "INSERT INTO file_versions (chain_id, file_id, version, fingerprint, filename, kind, "
        "title, pages, size_bytes, extractor, concepts, name_vectors, rejected, episode_id, "
        "ingested_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chain_id,
            row.file_id,
            row.version,
            row.fingerprint,
            row.filename,
            row.kind,
            row.title,
            row.pages,
            row.size_bytes,
            row.extractor,
            _concepts_json(row.concepts),
            np.ascontiguousarray(row.name_vectors, dtype=np.float32).tobytes(),
            json.dumps([list(r) for r in row.rejected], ensure_ascii=False),
            episode_id,
            ingested_at_us,
        ),
    )
    file_row = cur.lastrowid
    assert file_row is not None
    conn.executemany(
        "INSERT INTO passages (file_row, chain_id, page, text, model, vector) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (
                file_row,
                chain_id,
                p.page,
                p.text,
                model_id,
                np.ascontiguousarray(p.vector, dtype=np.float32).tobytes(),
            )
            for p in row.passages
        ],
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
    parsed = _concepts_from_json(concepts)
    matrix = np.frombuffer(vectors, dtype=np.float32).reshape(len(parsed), dim).copy()
    return FileVersion(
        file_row, file_id, version, fingerprint, filename, kind, title, pages, extractor, parsed,
        matrix, episode_id, ingested_at,
    )  # fmt: skip


def file_versions(
    conn: sqlite3.Connection, chain_id: int, dim: int, *, current_only: bool
) -> list[FileVersion]:
    """Versions in ingest order; with current_only, each file's newest version unless it is a
    removal."""
    if current_only:
        sql = (
            f"SELECT {_FILE_COLUMNS} FROM file_versions f WHERE chain_id = ? AND fingerprint <> '' "
            "AND version = (SELECT max(version) FROM file_versions g "
            "WHERE g.chain_id = f.chain_id AND g.file_id = f.file_id) ORDER BY file_row"
        )
    else:
        sql = f"SELECT {_FILE_COLUMNS} FROM file_versions WHERE chain_id = ? ORDER BY file_row"
    return [_file_version(r, dim) for r in conn.execute(sql, (chain_id,))]


def latest_version(conn: sqlite3.Connection, chain_id: int, file_id: str) -> tuple[int, str] | None:
    """(version, fingerprint) of the file's newest version row, a removal included."""
    row = conn.execute(
        "SELECT version, fingerprint FROM file_versions WHERE chain_id = ? AND file_id = ? "
        "ORDER BY version DESC LIMIT 1",
        (chain_id, file_id),
    ).fetchone()
    return None if row is None else (int(row[0]), str(row[1]))


def current_passages(
    conn: sqlite3.Connection, chain_id: int, model_id: str
) -> tuple[list[StoredPassage], np.ndarray[Any, np.dtype[np.float32]]]:
    """Passages of the chain's current file versions, with their embeddings as one matrix."""
    rows = conn.execute(
        "SELECT p.passage_id, f.file_id, f.version, f.fingerprint, p.page, p.text, p.vector "
        "FROM passages p JOIN file_versions f ON f.file_row = p.file_row "
        "WHERE p.chain_id = ? AND p.model = ? AND f.fingerprint <> '' "
        "AND f.version = (SELECT max(version) FROM file_versions g "
        "WHERE g.chain_id = f.chain_id AND g.file_id = f.file_id) ORDER BY p.passage_id",
        (chain_id, model_id),
    ).fetchall()
    passages = [StoredPassage(*r[:6]) for r in rows]
    if not rows:
        return passages, np.empty((0, 0), np.float32)
    matrix = np.frombuffer(b"".join(r[6] for r in rows), dtype=np.float32)
    return passages, matrix.reshape(len(rows), -1).copy()


# -- beliefs ---------------------------------------------------------------------------------------

_BELIEF_COLUMNS = (
    "belief_id, concept, concept_key, claim, confidence, supporting, reason, rules_version, "
    "needs_reconfirmation, evidence_at, created_at, superseded_by, retired_at, decayed_as_of"
)


def _belief(row: Sequence[Any]) -> BeliefRow:
    (
        belief_id, concept, key, claim, confidence, supporting, reason, rules, reconfirm,
        evidence_at, created_at, superseded_by, retired_at, decayed_as_of,
    ) = row  # fmt: skip
    return BeliefRow(
        belief_id, concept, key, claim, confidence, tuple(json.loads(supporting)), reason, rules,
        bool(reconfirm), evidence_at, created_at, superseded_by, retired_at, decayed_as_of,
    )  # fmt: skip


def insert_belief(
    conn: sqlite3.Connection, chain_id: int, belief: NewBelief, *, created_at_us: int
) -> int:
    cur = conn.execute(
        "INSERT INTO beliefs (chain_id, concept, concept_key, claim, confidence, supporting, "
        "reason, rules_version, needs_reconfirmation, evidence_at, created_at, decayed_as_of) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chain_id,
            belief.concept,
            belief.concept_key,
            belief.claim,
            belief.confidence,
            json.dumps(list(belief.supporting)),
            belief.reason,
            belief.rules_version,
            int(belief.needs_reconfirmation),
            belief.evidence_at_us,
            created_at_us,
            belief.decayed_as_of_us,
        ),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def supersede_belief(conn: sqlite3.Connection, chain_id: int, old_id: int, new_id: int) -> None:
    cur = conn.execute(
        "UPDATE beliefs SET superseded_by = ? WHERE belief_id = ? AND chain_id = ? "
        "AND superseded_by IS NULL AND retired_at IS NULL",
        (new_id, old_id, chain_id),
    )
    if cur.rowcount != 1:
        raise RuntimeError(f"belief {old_id} is not a current belief of this chain")


def retire_current_beliefs(conn: sqlite3.Connection, chain_id: int, at_us: int) -> int:
    cur = conn.execute(
        "UPDATE beliefs SET retired_at = ? WHERE chain_id = ? AND superseded_by IS NULL "
        "AND retired_at IS NULL",
        (at_us, chain_id),
    )
    return cur.rowcount


def current_beliefs(conn: sqlite3.Connection, chain_id: int) -> list[BeliefRow]:
    rows = conn.execute(
        f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE chain_id = ? AND superseded_by IS NULL "
        "AND retired_at IS NULL ORDER BY belief_id",
        (chain_id,),
    )
    return [_belief(r) for r in rows]


def belief_rows(
    conn: sqlite3.Connection, chain_id: int, concept_key: str | None
) -> list[BeliefRow]:
    if concept_key is None:
        rows = conn.execute(
            f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE chain_id = ? ORDER BY belief_id",
            (chain_id,),
        )
    else:
        rows = conn.execute(
            f"SELECT {_BELIEF_COLUMNS} FROM beliefs WHERE chain_id = ? AND concept_key = ? "
            "ORDER BY belief_id",
            (chain_id, concept_key),
        )
    return [_belief(r) for r in rows]


# -- the nightly cycle -----------------------------------------------------------------------------


def nightly_state(conn: sqlite3.Connection, chain_id: int) -> NightlyState | None:
    row = conn.execute(
        "SELECT zone, scanned_seq, generation FROM nightly_state WHERE chain_id = ?", (chain_id,)
    ).fetchone()
    return None if row is None else NightlyState(row[0], int(row[1]), int(row[2]))


def save_nightly_state(
    conn: sqlite3.Connection, chain_id: int, state: NightlyState, *, at_us: int
) -> None:
    conn.execute(
        "INSERT INTO nightly_state (chain_id, zone, scanned_seq, generation, updated_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT (chain_id) DO UPDATE SET zone = excluded.zone, "
        "scanned_seq = excluded.scanned_seq, generation = excluded.generation, "
        "updated_at = excluded.updated_at",
        (chain_id, state.zone, state.scanned_seq, state.generation, at_us),
    )


def insert_day_digest(
    conn: sqlite3.Connection, chain_id: int, digest: DayDigest, *, done_at_us: int
) -> None:
    conn.execute(
        "INSERT INTO day_digests (chain_id, day_start, day_end, first_seq, last_seq, episodes, "
        "covered_seq, episode_id, done_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            chain_id,
            digest.day_start_us,
            digest.day_end_us,
            digest.first_seq,
            digest.last_seq,
            digest.episodes,
            digest.covered_seq,
            digest.episode_id,
            done_at_us,
        ),
    )


def day_coverage(conn: sqlite3.Connection, chain_id: int) -> dict[int, int]:
    """Start of each digested day -> the highest seq up to which its episodes are digested."""
    rows = conn.execute(
        "SELECT day_start, max(covered_seq) FROM day_digests WHERE chain_id = ? GROUP BY day_start",
        (chain_id,),
    )
    return {int(start): int(seq) for start, seq in rows}


def recent_digests(conn: sqlite3.Connection, chain_id: int, limit: int) -> list[WrittenDigest]:
    """The chain's `limit` latest day digests: newest run first, latest day first within it."""
    rows = conn.execute(
        "SELECT day_start, day_end, first_seq, last_seq, episodes, covered_seq, episode_id, "
        "done_at FROM day_digests WHERE chain_id = ? "
        "ORDER BY done_at DESC, day_start DESC, first_seq DESC LIMIT ?",
        (chain_id, limit),
    )
    return [WrittenDigest(DayDigest(*map(int, r[:7])), int(r[7])) for r in rows]


def nightly_candidates(conn: sqlite3.Connection) -> list[tuple[int, int, int | None]]:
    """(chain id, highest seq of a non-digest episode, scanned_seq or None) of every chain with
    an episode other than a digest."""
    rows = conn.execute(
        "SELECT e.chain_id, max(e.seq), s.scanned_seq FROM episodes e "
        "LEFT JOIN nightly_state s ON s.chain_id = e.chain_id "
        "WHERE e.kind <> 'consolidation' GROUP BY e.chain_id ORDER BY e.chain_id"
    )
    return [(int(c), int(m), None if s is None else int(s)) for c, m, s in rows]


def save_self_model(
    conn: sqlite3.Connection,
    chain_id: int,
    working_set: Sequence[str],
    calibration: str,
    *,
    at_us: int,
) -> None:
    conn.execute(
        "INSERT INTO self_models (chain_id, working_set, calibration, composed_at) "
        "VALUES (?, ?, ?, ?) ON CONFLICT (chain_id) DO UPDATE SET "
        "working_set = excluded.working_set, calibration = excluded.calibration, "
        "composed_at = excluded.composed_at",
        (chain_id, json.dumps(list(working_set), ensure_ascii=False), calibration, at_us),
    )


def self_model_composed_at(conn: sqlite3.Connection, chain_id: int) -> int | None:
    row = conn.execute(
        "SELECT composed_at FROM self_models WHERE chain_id = ?", (chain_id,)
    ).fetchone()
    return None if row is None else int(row[0])


def never_checked_citations(
    conn: sqlite3.Connection, chain_id: int, kind: str, limit: int
) -> list[int]:
    """Ids of the chain's episodes with no `kind` annotation yet, oldest first; consolidation
    episodes are digests, not memories, and are not verified."""
    rows = conn.execute(
        "SELECT e.episode_id FROM episodes e WHERE e.chain_id = ? AND e.kind <> 'consolidation' "
        "AND NOT EXISTS (SELECT 1 FROM annotations a WHERE a.episode_id = e.episode_id "
        "AND a.kind = ?) ORDER BY e.episode_id LIMIT ?",
        (chain_id, kind, limit),
    )
    return [int(r[0]) for r in rows]


def oldest_checked_citations(
    conn: sqlite3.Connection, chain_id: int, kind: str, limit: int
) -> list[int]:
    """Ids of the chain's episodes that cite a file, least recently verified first."""
    rows = conn.execute(
        "SELECT a.episode_id, max(a.created_at) AS last FROM annotations a "
        "JOIN episodes e ON e.episode_id = a.episode_id "
        "WHERE e.chain_id = ? AND a.kind = ? AND e.evidence <> '[]' "
        "GROUP BY a.episode_id ORDER BY last, a.episode_id LIMIT ?",
        (chain_id, kind, limit),
    )
    return [int(r[0]) for r in rows]
