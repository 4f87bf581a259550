"""The two stores the integration suite runs against, and raw access to either database for the
tests that play an operator editing it behind the server's back."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

from tutor_memory.app.config import ServerConfig

# The parameter of the `store_kind` fixture: every test that takes a server runs once per store.
STORE_KINDS = ("sqlite", "postgres")


class RawDatabase:
    """A connection to the store's database with SQLite's `?` placeholders on both engines."""

    def __init__(self, sqlite: sqlite3.Connection | None, pg: psycopg.Connection[Any] | None):
        self._sqlite = sqlite
        self._pg = pg

    @property
    def is_postgres(self) -> bool:
        return self._pg is not None

    def execute(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        if self._sqlite is not None:
            return self._sqlite.execute(sql, args).fetchall()
        assert self._pg is not None
        cur = self._pg.execute(re.sub(r"\?", "%s", sql).encode(), args)
        return cur.fetchall() if cur.description else []

    def without_guards(self) -> None:
        """What an operator with full rights can do: switch the append-only triggers off."""
        if self._sqlite is not None:
            for name in ("episodes_never_updated", "episodes_never_deleted"):
                self._sqlite.execute(f"DROP TRIGGER IF EXISTS {name}")
        else:
            assert self._pg is not None
            self._pg.execute("SET session_replication_role = replica")

    @property
    def append_only_error(self) -> type[Exception]:
        if self._sqlite is not None:
            return sqlite3.IntegrityError
        return psycopg.errors.RestrictViolation


@contextmanager
def raw_database(config: ServerConfig) -> Iterator[RawDatabase]:
    """Autocommit access to the database `config` names."""
    if config.store is None:
        with sqlite3.connect(config.database_path, isolation_level=None) as conn:
            yield RawDatabase(conn, None)
    else:
        with psycopg.connect(config.store, autocommit=True) as pg:
            yield RawDatabase(None, pg)
