"""Export and import of a PostgreSQL store (store/transfer.py): rows out verbatim, rows in with
their own ids and their derived student_key, in one transaction, with the recall facts the
importer derived, then every id sequence moved past the highest id loaded."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import groupby

from tutor_memory.domain.recall.facts import RecallFacts
from tutor_memory.store.postgres import facts as fact_rows
from tutor_memory.store.postgres.database import Connection
from tutor_memory.store.postgres.keys import student_key
from tutor_memory.store.transfer import ORDER_BY, TABLES, Row, superseded_pointers

# The id sequence of each table whose ids a load brings.
SEQUENCES = {
    "chains": ("chain_ids", "chain_id"),
    "episodes": ("episode_ids", "episode_id"),
    "annotations": ("annotation_ids", "annotation_id"),
    "file_versions": ("file_rows", "file_row"),
    "passages": ("passage_ids", "passage_id"),
    "beliefs": ("belief_ids", "belief_id"),
}
# Rows fetched per round trip while dumping.
DUMP_BATCH = 2_000


def dump_table(conn: Connection, table: str) -> Iterator[Row]:
    columns = ", ".join(TABLES[table])
    with conn.transaction(), conn.cursor(name=f"dump_{table}") as cur:
        cur.itersize = DUMP_BATCH
        cur.execute(f"SELECT {columns} FROM {table} ORDER BY {ORDER_BY[table]}")
        for row in cur:
            yield tuple(bytes(v) if isinstance(v, memoryview) else v for v in row)


def is_empty(conn: Connection) -> bool:
    return conn.execute("SELECT 1 FROM chains LIMIT 1").fetchone() is None


def load_tables(
    conn: Connection,
    rows: Iterable[tuple[str, Row]],
    derived: Iterable[tuple[int, int, RecallFacts]],
) -> None:
    """Inside the caller's transaction."""
    # The student key of every chain and episode loaded so far: rows that name only an episode
    # (annotations) or a file (passages name their chain too) take it from there.
    chain_keys: dict[int, int] = {}
    episode_keys: dict[int, int] = {}
    pointers: list[tuple[int, int, int]] = []
    cursor = conn.cursor()
    for table, group in groupby(rows, key=lambda pair: pair[0]):
        columns = TABLES[table]
        with cursor.copy(f"COPY {table} (student_key, {', '.join(columns)}) FROM STDIN") as copy:
            for _, row in group:
                values = dict(zip(columns, row, strict=True))
                if table == "chains":
                    sk = student_key(str(values["tenant"]), str(values["student"]))
                    chain_keys[int(str(values["chain_id"]))] = sk
                elif "chain_id" in values:
                    sk = chain_keys[int(str(values["chain_id"]))]
                else:
                    sk = episode_keys[int(str(values["episode_id"]))]
                if table == "episodes":
                    episode_keys[int(str(values["episode_id"]))] = sk
                row, pointer = superseded_pointers(table, columns, row)
                if pointer is not None:
                    pointers.append((pointer, sk, int(str(row[0]))))
                copy.write_row((sk, *row))
    cursor.executemany(
        "UPDATE beliefs SET superseded_by = %s WHERE student_key = %s AND belief_id = %s",
        pointers,
    )
    fact_rows.add(
        conn,
        (
            (chain_keys[chain_id], chain_id, episode_id, made)
            for chain_id, episode_id, made in derived
        ),
    )
    # Statistics for the planner now, rather than when autovacuum gets to the new rows.
    conn.execute("ANALYZE")
    for table, (sequence, column) in SEQUENCES.items():
        conn.execute(
            f"SELECT setval('{sequence}', greatest((SELECT max({column}) FROM {table}), 1))"
        )
