"""A consistent copy of a live SQLite ledger, taken with SQLite's online backup API.

The copy is made in one backup step, which reads the whole database inside one read
transaction: the copy is the database as of one moment, however many writes the server commits
meanwhile (in WAL mode a reader never blocks the writer, so the server keeps serving; the WAL
grows until the copy is done). The copy is then turned into a self-contained file (no WAL) and
checked with `PRAGMA quick_check`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tutor_memory.store.sqlite.store import BUSY_TIMEOUT_MS


class SnapshotError(RuntimeError):
    """The copy could not be made or does not check out; the message says why."""


@dataclass(frozen=True, slots=True)
class ChainHead:
    tenant: str
    student: str
    subject: str
    length: int
    head_hash: str  # hex


def copy_database(source: Path, target: Path) -> None:
    """Copies the database at `source` (which a server may be writing) to the new file
    `target`."""
    if not source.is_file():
        raise SnapshotError(f"no database at {source}")
    # mode=rw: never create an empty database where the source was expected.
    src = sqlite3.connect(f"{source.resolve().as_uri()}?mode=rw", uri=True)
    try:
        src.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        dst = sqlite3.connect(target)
        try:
            # pages=-1: the whole database in one step, one read transaction, one moment.
            src.backup(dst, pages=-1)
            dst.execute("PRAGMA journal_mode = DELETE")
            found = dst.execute("PRAGMA quick_check").fetchone()[0]
            if found != "ok":
                raise SnapshotError(f"the copy of {source} does not check out: {found}")
        finally:
            dst.close()
    finally:
        src.close()


def chain_heads(database: Path) -> list[ChainHead]:
    """Every chain's length and stored head hash, to record beside a copy and compare after a
    restore."""
    conn = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT c.tenant, c.student, c.subject, e.seq, e.hash FROM chains c "
            "JOIN episodes e ON e.chain_id = c.chain_id "
            "WHERE e.seq = (SELECT max(seq) FROM episodes WHERE chain_id = c.chain_id) "
            "ORDER BY c.tenant, c.student, c.subject"
        ).fetchall()
    finally:
        conn.close()
    return [ChainHead(t, st, su, int(n), bytes(h).hex()) for t, st, su, n, h in rows]
