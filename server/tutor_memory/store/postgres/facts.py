"""What recall derives from each episode, stored beside it (the twin of SQLite's `recall_facts`,
domain/recall/facts.py): its duplicate key, the tokens of its line, whether it recounts the record,
its language and its stems with their counts. Lexical recall scores BM25 in the server over these
stems (domain/recall/lexical.py), the same over both engines; only this module reads or writes
the table, so a change of what is stored stays here and in a migration."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tutor_memory.domain.recall.facts import FACTS_VERSION, RecallFacts, stems_from_text
from tutor_memory.store.postgres.database import Connection

_COLUMNS = "student_key, episode_id, chain_id, version, dup_key, tokens, flagged, language, stems"


def to_i64(value: int) -> int:
    """A 64-bit unsigned key as a signed bigint holds it."""
    return value - (1 << 64) if value >= 1 << 63 else value


def from_i64(value: int) -> int:
    return value + (1 << 64) if value < 0 else value


def _row(sk: int, chain_id: int, episode_id: int, facts: RecallFacts) -> tuple[object, ...]:
    return (
        sk, episode_id, chain_id, FACTS_VERSION, to_i64(facts.dup_key), facts.tokens,
        int(facts.flagged), facts.language, facts.stems_text(),
    )  # fmt: skip


def add(conn: Connection, rows: Iterable[tuple[int, int, int, RecallFacts]]) -> None:
    """Stores the facts of new episodes: (student_key, chain_id, episode_id, facts) each."""
    with conn.cursor().copy(f"COPY recall_facts ({_COLUMNS}) FROM STDIN") as copy:
        for sk, chain_id, episode_id, facts in rows:
            copy.write_row(_row(sk, chain_id, episode_id, facts))


def save(conn: Connection, key: tuple[int, int], facts: Sequence[tuple[int, RecallFacts]]) -> None:
    """Stores or remakes the facts of episodes of one chain."""
    sk, chain_id = key
    conn.cursor().executemany(
        f"INSERT INTO recall_facts ({_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (student_key, episode_id) DO UPDATE SET version = excluded.version, "
        "dup_key = excluded.dup_key, tokens = excluded.tokens, flagged = excluded.flagged, "
        "language = excluded.language, stems = excluded.stems",
        [_row(sk, chain_id, episode_id, made) for episode_id, made in facts],
    )


def read(conn: Connection, key: tuple[int, int]) -> dict[int, tuple[int, RecallFacts]]:
    rows = conn.execute(
        "SELECT episode_id, version, dup_key, tokens, flagged, language, stems FROM recall_facts "
        "WHERE student_key = %s AND chain_id = %s",
        key,
    ).fetchall()
    return {
        int(r[0]): (
            int(r[1]),
            RecallFacts(from_i64(int(r[2])), int(r[3]), bool(r[4]), r[5], stems_from_text(r[6])),
        )
        for r in rows
    }
