"""What `tutor-memory export` and `import` carry between stores of any engine: every row of every
table of the record, column by column, with the values exactly as stored (ids, texts, the JSON
texts, floats, hashes, vectors), so a chain verifies byte for byte after the move.

Derived data is not carried; the importing side derives it again (each episode's recall facts,
with the server's own rules, stored through `TableTransfer.load_tables`). The tables are listed
in an order in which every reference points to a row already loaded (a belief's `superseded_by`
is set afterwards, the one change the append-only rules allow).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from tutor_memory.domain.recall.facts import RecallFacts

# Table -> its columns, in load order. The names are the SQLite store's; the PostgreSQL store
# has the same columns plus its derived student_key.
TABLES: dict[str, tuple[str, ...]] = {
    "chains": ("chain_id", "tenant", "student", "subject"),
    "episodes": (
        "episode_id", "chain_id", "seq", "kind", "summary", "text", "concepts", "salience",
        "occurred_at", "recorded_at", "evidence", "check_outcome", "check_topic",
        "predicted_mastery", "quiz_correct", "quiz_total", "client_key", "prev_hash", "hash",
    ),
    "episode_vectors": ("episode_id", "chain_id", "model", "vector"),
    "annotations": ("annotation_id", "episode_id", "kind", "body", "created_at"),
    "file_versions": (
        "file_row", "chain_id", "file_id", "version", "fingerprint", "filename", "kind", "title",
        "pages", "size_bytes", "extractor", "concepts", "name_vectors", "rejected", "episode_id",
        "ingested_at",
    ),
    "passages": ("passage_id", "file_row", "chain_id", "page", "text", "model", "vector"),
    "beliefs": (
        "belief_id", "chain_id", "concept", "concept_key", "claim", "confidence", "supporting",
        "reason", "rules_version", "needs_reconfirmation", "evidence_at", "created_at",
        "superseded_by", "retired_at", "decayed_as_of",
    ),
    "consolidations": (
        "chain_id", "window_start", "window_end", "episode_id", "decayed", "done_at",
    ),
    "self_models": ("chain_id", "working_set", "calibration", "composed_at"),
    "nightly_state": ("chain_id", "zone", "scanned_seq", "generation", "updated_at"),
    "day_digests": (
        "chain_id", "day_start", "day_end", "first_seq", "last_seq", "episodes", "covered_seq",
        "episode_id", "done_at",
    ),
}  # fmt: skip

# The order rows of each table are dumped in: its primary key.
ORDER_BY: dict[str, str] = {
    "chains": "chain_id",
    "episodes": "episode_id",
    "episode_vectors": "episode_id",
    "annotations": "annotation_id",
    "file_versions": "file_row",
    "passages": "passage_id",
    "beliefs": "belief_id",
    "consolidations": "chain_id, window_start, window_end",
    "self_models": "chain_id",
    "nightly_state": "chain_id",
    "day_digests": "chain_id, day_start, first_seq",
}

Row = tuple[object, ...]


class TableTransfer(Protocol):
    """What an engine does for export and import."""

    def dump_table(self, table: str) -> Iterator[Row]:
        """Every row of `table`, columns as in TABLES, in ORDER_BY order."""
        ...

    def is_empty(self) -> bool:
        """Whether the store holds no chain (an import goes only into an empty store)."""
        ...

    def load_tables(
        self,
        rows: Iterable[tuple[str, Row]],
        derived: Iterable[tuple[int, int, RecallFacts]],
    ) -> None:
        """Loads (table, row) pairs in TABLES order, then the recall facts of the episodes
        ((chain_id, episode_id, facts) each), in one transaction."""
        ...


def superseded_pointers(table: str, columns: Sequence[str], row: Row) -> tuple[Row, int | None]:
    """A belief row to insert with `superseded_by` empty, and the pointer to set afterwards."""
    if table != "beliefs":
        return row, None
    at = columns.index("superseded_by")
    pointer = row[at]
    return (*row[:at], None, *row[at + 1 :]), None if pointer is None else int(str(pointer))
