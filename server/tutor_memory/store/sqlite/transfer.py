"""Export and import of a SQLite store (store/transfer.py): rows out verbatim, rows in with their
own ids and the recall facts the importer derived, in one transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from itertools import groupby, islice

from tutor_memory.domain.recall.facts import RecallFacts
from tutor_memory.store.transfer import ORDER_BY, TABLES, Row, superseded_pointers

# Rows inserted per executemany call.
LOAD_BATCH = 1_000


def dump_table(conn: sqlite3.Connection, table: str) -> Iterator[Row]:
    columns = ", ".join(TABLES[table])
    yield from conn.execute(f"SELECT {columns} FROM {table} ORDER BY {ORDER_BY[table]}")


def is_empty(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM chains LIMIT 1").fetchone() is None


def load_tables(
    conn: sqlite3.Connection,
    rows: Iterable[tuple[str, Row]],
    derived: Iterable[tuple[int, int, RecallFacts]],
    insert_facts: Callable[[sqlite3.Connection, int, int, RecallFacts], None],
) -> None:
    """Inside the caller's transaction; `insert_facts` stores an episode's recall facts."""
    pointers: list[tuple[int, int]] = []
    for table, group in groupby(rows, key=lambda pair: pair[0]):
        columns = TABLES[table]
        insert = (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
        )
        pending = (row for _, row in group)
        while chunk := list(islice(pending, LOAD_BATCH)):
            batch = []
            for row in chunk:
                kept, pointer = superseded_pointers(table, columns, row)
                if pointer is not None:
                    pointers.append((pointer, int(str(kept[0]))))
                batch.append(kept)
            conn.executemany(insert, batch)
    conn.executemany("UPDATE beliefs SET superseded_by = ? WHERE belief_id = ?", pointers)
    for chain_id, episode_id, made in derived:
        insert_facts(conn, episode_id, chain_id, made)
