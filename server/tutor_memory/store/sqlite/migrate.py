"""Schema migrations: numbered SQL files in migrations/, applied in order, each in one transaction.

The database's `PRAGMA user_version` records the last migration applied. A migration may add
tables, columns or indexes; it may never edit an episode (the append-only triggers would stop it,
and the hash chain would show it).
"""

from __future__ import annotations

import re
import sqlite3
from importlib import resources

_NAME = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")


def migrations() -> list[tuple[int, str, str]]:
    """(number, file name, SQL) of every migration shipped with the package, in order."""
    found = []
    for entry in resources.files("tutor_memory.store.sqlite").joinpath("migrations").iterdir():
        match = _NAME.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    found.sort()
    numbers = [n for n, _, _ in found]
    if numbers != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1, 2, 3 ... without gaps: {numbers}")
    return found


def migrate(conn: sqlite3.Connection) -> int:
    """Brings the schema up to date; returns the resulting version. Refuses a newer database."""
    current = int(conn.execute("PRAGMA user_version").fetchone()[0])
    available = migrations()
    if current > len(available):
        raise RuntimeError(
            f"the database is at schema version {current}, newer than this server knows "
            f"({len(available)}): upgrade the server instead"
        )
    for number, _name, sql in available[current:]:
        try:
            conn.executescript(f"BEGIN IMMEDIATE;\n{sql}\nPRAGMA user_version = {number};\nCOMMIT;")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
    return len(available)
