"""What recall needs of every episode of a chain, held in memory as parallel arrays.

Scoring a turn touches every candidate, so per-candidate data must already be arrays when the
turn starts (docs/DESIGN.md P1: turning 100k Python rows into arrays alone costs 35-40 ms). Each
chain keeps growable numpy columns, appended to after each committed write and rebuilt from the
store at start; the full text stays in the store and is fetched only for the few episodes a block
shows.

Concurrency: the writer thread appends after each commit; a turn takes a `Snapshot` (views of the
first n rows) and reads it on its block thread. Growing a column allocates a new
array, so a snapshot's views never change under it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.facts import KIND_CODES, RecallRow, Snapshot
from tutor_memory.domain.text.normalise import normalise

# First capacity of a chain's columns; they double when full, so an append copies rarely.
INITIAL_CAPACITY = 256

_COLUMNS: tuple[tuple[str, type[np.generic]], ...] = (
    ("ids", np.int64),
    ("occurred_at_us", np.int64),
    ("salience", np.float32),
    ("kind", np.uint8),
    ("dup_key", np.uint64),
    ("tokens", np.uint32),
    ("flagged", np.uint8),
    # How many stems (with repeats) the episode holds: its length for BM25.
    ("length", np.uint32),
)
# A stem's posting list starts this small and doubles when full.
INITIAL_POSTINGS = 4
# The highest count a posting holds (its uint16 column); higher counts are held as this.
MAX_TERM_COUNT = int(np.iinfo(np.uint16).max)


class _Postings:
    """The positions (in the chain's columns) of the episodes holding one stem, and how often
    each holds it. Grown by doubling: a reader's view of the first n entries never changes."""

    __slots__ = ("count", "positions", "tfs")

    def __init__(self) -> None:
        self.positions = np.empty(INITIAL_POSTINGS, dtype=np.int32)
        self.tfs = np.empty(INITIAL_POSTINGS, dtype=np.uint16)
        self.count = 0

    def add(self, position: int, tf: int) -> None:
        if self.count == len(self.positions):
            positions = np.empty(2 * self.count, dtype=np.int32)
            positions[: self.count] = self.positions
            tfs = np.empty(2 * self.count, dtype=np.uint16)
            tfs[: self.count] = self.tfs
            self.positions, self.tfs = positions, tfs
        self.positions[self.count] = position
        self.tfs[self.count] = tf if tf < MAX_TERM_COUNT else MAX_TERM_COUNT
        self.count += 1


class ChainTable:
    def __init__(self) -> None:
        self._n = 0
        self._cols: dict[str, npt.NDArray[np.generic]] = {
            name: np.empty(INITIAL_CAPACITY, dtype=dtype) for name, dtype in _COLUMNS
        }
        self._concepts: dict[str, list[int]] = {}
        # Stem -> the episodes holding it: the chain's whole history, for the lexical set.
        self._postings: dict[str, _Postings] = {}
        self._total_length = 0
        # Duplicate key -> positions of the episodes that share it (R2.4's "N more times").
        self._copies: dict[int, list[int]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._n

    def append(self, rows: Iterable[RecallRow]) -> None:
        rows = list(rows)
        with self._lock:
            need = self._n + len(rows)
            if need > len(self._cols["ids"]):
                capacity = max(need, 2 * len(self._cols["ids"]))
                for name, column in self._cols.items():
                    grown = np.empty(capacity, dtype=column.dtype)
                    grown[: self._n] = column[: self._n]
                    self._cols[name] = grown
            # Episode ids grow with every commit, so appending keeps `ids` ascending, which the
            # ranking core relies on to find a candidate's row by binary search.
            if rows and self._n and rows[0].episode_id <= int(self._cols["ids"][self._n - 1]):
                raise ValueError("episode ids must be appended in ascending order")
            end = self._n + len(rows)
            c = self._cols
            c["ids"][self._n : end] = [r.episode_id for r in rows]
            c["occurred_at_us"][self._n : end] = [r.occurred_at_us for r in rows]
            c["salience"][self._n : end] = [r.salience for r in rows]
            c["kind"][self._n : end] = [KIND_CODES[r.kind] for r in rows]
            c["dup_key"][self._n : end] = [r.dup_key for r in rows]
            c["tokens"][self._n : end] = [r.tokens for r in rows]
            c["flagged"][self._n : end] = [r.flagged for r in rows]
            c["length"][self._n : end] = [sum(tf for _, tf in r.stems) for r in rows]
            postings = self._postings
            for offset, r in enumerate(rows):
                position = self._n + offset
                self._copies.setdefault(r.dup_key, []).append(position)
                for concept in r.concepts:
                    self._concepts.setdefault(normalise(concept), []).append(r.episode_id)
                for stem, tf in r.stems:
                    found = postings.get(stem)
                    if found is None:
                        found = postings[stem] = _Postings()
                    found.add(position, tf)
                    self._total_length += tf
            self._n = end

    def postings(
        self, stems: Sequence[str]
    ) -> list[tuple[npt.NDArray[np.int32], npt.NDArray[np.uint16]]]:
        """For each stem, the positions of the episodes holding it and how often they do (views
        that later appends leave as they are), in `stems`' order."""
        with self._lock:
            out = []
            for stem in stems:
                found = self._postings.get(stem)
                if found is None:
                    out.append((np.empty(0, np.int32), np.empty(0, np.uint16)))
                else:
                    out.append((found.positions[: found.count], found.tfs[: found.count]))
            return out

    @property
    def total_length(self) -> int:
        """How many stems (with repeats) the chain's episodes hold in all."""
        return self._total_length

    def copies(self, dup_key: int, within: int) -> npt.NDArray[np.int64]:
        """Positions of the episodes with this duplicate key, among the first `within` rows."""
        with self._lock:
            positions = np.asarray(self._copies.get(dup_key, ()), dtype=np.int64)
        return positions[positions < within]

    def snapshot(self) -> Snapshot:
        with self._lock:
            n = self._n
            c = self._cols
            return Snapshot(
                ids=c["ids"][:n],  # type: ignore[arg-type]
                occurred_at_us=c["occurred_at_us"][:n],  # type: ignore[arg-type]
                salience=c["salience"][:n],  # type: ignore[arg-type]
                kind=c["kind"][:n],  # type: ignore[arg-type]
                dup_key=c["dup_key"][:n],  # type: ignore[arg-type]
                tokens=c["tokens"][:n],  # type: ignore[arg-type]
                flagged=c["flagged"][:n],  # type: ignore[arg-type]
                length=c["length"][:n],  # type: ignore[arg-type]
            )

    def tagged(self, normalised_query: str) -> npt.NDArray[np.int64]:
        """Ids of the episodes tagged with a concept the query names (exact, whole-word match of
        normalised names)."""
        padded = f" {normalised_query} "
        with self._lock:
            ids = [
                i
                for name, tagged in self._concepts.items()
                if f" {name} " in padded
                for i in tagged
            ]
        return np.unique(np.asarray(ids, dtype=np.int64))

    def tagged_with(self, names: Sequence[str]) -> npt.NDArray[np.int64]:
        """Ids of the episodes tagged with any of these concept names (normalised, exact)."""
        with self._lock:
            ids = [i for name in names for i in self._concepts.get(normalise(name), ())]
        return np.unique(np.asarray(ids, dtype=np.int64))


class RecallTables:
    """Every chain's table; a chain with no episode has none."""

    def __init__(self) -> None:
        self._tables: dict[ChainKey, ChainTable] = {}
        self._lock = threading.Lock()

    def add(self, chain: ChainKey, rows: Iterable[RecallRow]) -> None:
        table = self._tables.get(chain)
        if table is None:
            with self._lock:
                table = self._tables.setdefault(chain, ChainTable())
        table.append(rows)

    def get(self, chain: ChainKey) -> ChainTable | None:
        return self._tables.get(chain)
