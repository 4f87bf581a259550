"""Schema migrations of the PostgreSQL store: numbered SQL files in migrations/, applied in order,
each in its own transaction, recorded in `schema_migrations`.

Several nodes may start at once against one database: a session advisory lock makes one of them
migrate while the others wait, then find nothing to do. A migration may add tables, columns or
indexes; it may never edit an episode (the triggers stop it, and the hash chain would show it).
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

import psycopg

from tutor_memory.domain.clock import now_us

_NAME = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")

# The advisory lock key that serialises migrations (any constant shared by every node; this one
# spells "tutormem" in ASCII).
MIGRATION_LOCK = 0x7475746F726D656D

# The table of applied migrations: the one table without a student key. Under Citus it stays a
# local table of the coordinator (docs/DEPLOYMENT.md).
MIGRATIONS_TABLE = "schema_migrations"


def migrations() -> list[tuple[int, str, str]]:
    """(number, file name, SQL) of every migration shipped with the package, in order."""
    found = []
    for entry in resources.files("tutor_memory.store.postgres").joinpath("migrations").iterdir():
        match = _NAME.fullmatch(entry.name)
        if match:
            found.append((int(match.group(1)), entry.name, entry.read_text(encoding="utf-8")))
    found.sort()
    numbers = [n for n, _, _ in found]
    if numbers != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1, 2, 3 ... without gaps: {numbers}")
    return found


def migrate(conn: psycopg.Connection[tuple[Any, ...]]) -> int:
    """Brings the schema up to date on an autocommit connection; returns the resulting version.
    Refuses a database that a newer server migrated."""
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (version integer PRIMARY KEY, "
            "name text NOT NULL, applied_at bigint NOT NULL)"
        )
        row = conn.execute(f"SELECT coalesce(max(version), 0) FROM {MIGRATIONS_TABLE}").fetchone()
        current = int(row[0]) if row is not None else 0
        available = migrations()
        if current > len(available):
            raise RuntimeError(
                f"the database is at schema version {current}, newer than this server knows "
                f"({len(available)}): upgrade the server instead"
            )
        for number, name, sql in available[current:]:
            with conn.transaction():
                conn.execute(sql.encode())
                conn.execute(
                    f"INSERT INTO {MIGRATIONS_TABLE} (version, name, applied_at) "
                    "VALUES (%s, %s, %s)",
                    (number, name, now_us()),
                )
        return len(available)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
