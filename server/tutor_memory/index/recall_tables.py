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
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.candidates import latest
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
# Chains from this many rows find a memory's copies through a sorted index of their duplicate
# keys instead of a scan of the column (a scan of 100k keys costs about 30 µs, and a block can
# show dozens of collapsed memories).
DUP_INDEX_MIN_ROWS = 256
# Rows appended past the index that are scanned rather than indexed, before it is rebuilt: at
# least this many, or an eighth of the rows indexed (a rebuild sorts the whole column: about
# 30 µs for 2,000 rows, 8 ms for 100,000).
DUP_INDEX_SLACK = 256
# Chains from this many rows find their most recent episodes through the rows' order by time
# (the time index) and the rows appended past it, instead of a partition of the whole time
# column on every turn: that costs about 90 µs at 10,000 rows and 0.9 ms at 100,000.
TIME_INDEX_MIN_ROWS = 2_048
# Rows appended past the time index before it is rebuilt. Sorting a column already in time order
# (a history imported in order, then the live turns) costs 0.07 ms at 100,000 rows, and one in
# no order 6.5 ms; choosing among the index's newest and this many more costs about 10 µs.
TIME_INDEX_SLACK = 1_024


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


# Rough bytes a Python dict entry with its key and a small object costs: the budget of the chain
# caches (app/resident.py) counts them beside the arrays.
ENTRY_OVERHEAD_BYTES = 200


class ChainTable:
    def __init__(self) -> None:
        self._n = 0
        self._cols: dict[str, npt.NDArray[np.generic]] = {
            name: np.empty(INITIAL_CAPACITY, dtype=dtype) for name, dtype in _COLUMNS
        }
        self._concepts: dict[str, list[int]] = {}
        # Stem -> the episodes holding it: the chain's whole history, for the lexical set. A table
        # loaded from a snapshot keeps the snapshot's postings as one frozen block of arrays (a
        # stem's row in `_base`), and what was appended since in `_postings`.
        self._base_rows: dict[str, int] = {}
        self._base_offsets = np.zeros(1, dtype=np.int64)
        self._base_positions = np.empty(0, dtype=np.int32)
        self._base_tfs = np.empty(0, dtype=np.uint16)
        self._postings: dict[str, _Postings] = {}
        self._appended_occurrences = 0
        self._total_length = 0
        # The duplicate-key index (`copies`): the first `_dup_rows` rows' positions in the order
        # of their keys (stable, so a key's positions ascend), and those keys in that order.
        self._dup_rows = 0
        self._dup_order = np.empty(0, dtype=np.int64)
        self._dup_sorted = np.empty(0, dtype=np.uint64)
        # The time index (`most_recent`): the positions of the rows it covers (the first
        # len(_time_order)) ordered by when they occurred (stable, so equal times keep the order
        # of the rows).
        self._time_order = np.empty(0, dtype=np.int32)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._n

    @property
    def last_id(self) -> int:
        """The highest episode id the table holds (0 when empty)."""
        with self._lock:
            return int(self._cols["ids"][self._n - 1]) if self._n else 0

    def nbytes(self) -> int:
        """About how much memory the table holds (arrays exactly, dict entries estimated)."""
        with self._lock:
            columns = sum(c.nbytes for c in self._cols.values())
            base = (
                self._base_offsets.nbytes + self._base_positions.nbytes + self._base_tfs.nbytes
            ) + len(self._base_rows) * ENTRY_OVERHEAD_BYTES
            # Appended postings: 6 bytes an occurrence, doubled for the growth slack.
            appended = 12 * self._appended_occurrences + len(self._postings) * (
                ENTRY_OVERHEAD_BYTES + 2 * INITIAL_POSTINGS * 6
            )
            concepts = (
                sum(len(ids) for ids in self._concepts.values()) * 8
                + len(self._concepts) * ENTRY_OVERHEAD_BYTES
            )
            indexes = self._dup_order.nbytes + self._dup_sorted.nbytes + self._time_order.nbytes
            return columns + base + appended + concepts + indexes

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
                for concept in r.concepts:
                    self._concepts.setdefault(normalise(concept), []).append(r.episode_id)
                for stem, tf in r.stems:
                    found = postings.get(stem)
                    if found is None:
                        found = postings[stem] = _Postings()
                    found.add(position, tf)
                    self._total_length += tf
                self._appended_occurrences += len(r.stems)
            self._n = end

    def array_bytes(self) -> int:
        """Bytes of the chain's arrays: columns and posting lists, at their capacity."""
        with self._lock:
            columns = sum(c.nbytes for c in self._cols.values())
            base = self._base_offsets.nbytes + self._base_positions.nbytes + self._base_tfs.nbytes
            appended = sum(p.positions.nbytes + p.tfs.nbytes for p in self._postings.values())
            return columns + base + appended

    def postings(
        self, stems: Sequence[str]
    ) -> list[tuple[npt.NDArray[np.int32], npt.NDArray[np.uint16]]]:
        """For each stem, the positions of the episodes holding it and how often they do (views
        that later appends leave as they are, or copies), in `stems`' order."""
        with self._lock:
            return [self._postings_of(stem) for stem in stems]

    def _postings_of(self, stem: str) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint16]]:
        """One stem's postings; the caller holds the lock."""
        row = self._base_rows.get(stem)
        found = self._postings.get(stem)
        if row is not None:
            start, end = self._base_offsets[row], self._base_offsets[row + 1]
            positions, tfs = self._base_positions[start:end], self._base_tfs[start:end]
            if found is not None:
                positions = np.concatenate([positions, found.positions[: found.count]])
                tfs = np.concatenate([tfs, found.tfs[: found.count]])
            return positions, tfs
        if found is not None:
            return found.positions[: found.count], found.tfs[: found.count]
        return np.empty(0, np.int32), np.empty(0, np.uint16)

    @property
    def total_length(self) -> int:
        """How many stems (with repeats) the chain's episodes hold in all."""
        return self._total_length

    def copies_of(self, dup_keys: Iterable[int], within: int) -> dict[int, npt.NDArray[np.int64]]:
        """For each duplicate key, the positions (ascending) of the episodes with it among the
        first `within` rows (a key with none is left out): one search of the duplicate-key index
        per key for a large chain, and one pass over the rows past the index (all of a small
        chain's) for every key at once."""
        keys = np.unique(np.fromiter(dup_keys, dtype=np.uint64))
        with self._lock:
            n = min(within, self._n)
            if self._n >= DUP_INDEX_MIN_ROWS and self._n - self._dup_rows > max(
                DUP_INDEX_SLACK, self._dup_rows // 8
            ):
                column = self._cols["dup_key"][: self._n]
                self._dup_order = np.argsort(column, kind="stable").astype(np.int64)
                self._dup_sorted = column[self._dup_order].astype(np.uint64, copy=False)
                self._dup_rows = self._n
            order, ordered, indexed = self._dup_order, self._dup_sorted, self._dup_rows
            tail = self._cols["dup_key"][indexed:n]
        found: dict[int, npt.NDArray[np.int64]] = {}
        if len(keys) == 0:
            return found
        if indexed:
            starts = np.searchsorted(ordered, keys, side="left").tolist()
            ends = np.searchsorted(ordered, keys, side="right").tolist()
            for key, start, end in zip(keys.tolist(), starts, ends, strict=True):
                if end > start:
                    positions = order[start:end]
                    found[key] = positions[positions < n]
        if len(tail):
            hits = np.flatnonzero(np.isin(tail, keys))
            hit_keys = tail[hits]
            for key in np.unique(hit_keys).tolist():
                more = indexed + hits[hit_keys == key]
                before = found.get(key)
                found[key] = more if before is None else np.concatenate([before, more])
        return {key: positions for key, positions in found.items() if len(positions)}

    def most_recent(self, k: int, within: int) -> npt.NDArray[np.int64]:
        """Positions of the `k` most recent of the first `within` rows (a snapshot's), in no
        particular order: by the time index and the rows appended past it for a large chain, by
        the whole time column for a small one."""
        with self._lock:
            n = min(within, self._n)
            occurred: npt.NDArray[np.int64] = self._cols["occurred_at_us"][:n]  # type: ignore[assignment]
            unindexed = self._n - len(self._time_order)
            if self._n >= TIME_INDEX_MIN_ROWS and unindexed > TIME_INDEX_SLACK:
                column = self._cols["occurred_at_us"][: self._n]
                self._time_order = np.argsort(column, kind="stable").astype(np.int32)
            order = self._time_order
        indexed = len(order)
        if indexed == 0:
            return latest(np.arange(n, dtype=np.int64), occurred, k)
        # Rows the index holds past this snapshot (appended after it was taken) are left out:
        # taking that many more from the index's end keeps k of the snapshot's own.
        top = order[-(k + max(0, indexed - n)) :].astype(np.int64)
        top = top[top < n]
        tail = np.arange(indexed, n, dtype=np.int64)
        return latest(np.concatenate([top, tail]) if len(tail) else top, occurred, k)

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

    def compact(self) -> None:
        """Folds the postings appended so far into the frozen block of arrays: one dict entry
        and a slice per stem instead of a growable object with two arrays of its own, which for
        a small chain (a few hundred stems of a hundred episodes) is most of its memory."""
        with self._lock:
            if not self._postings:
                # Nothing appended since the last fold (a chain read back from its snapshot
                # with nothing after it): refolding would copy every array for nothing.
                return
        arrays = self.to_arrays()
        with self._lock:
            stems = arrays["stems"].tolist()
            self._base_rows = dict(zip(stems, range(len(stems)), strict=True))
            self._base_offsets = arrays["stem_offsets"]
            self._base_positions = arrays["stem_positions"]
            self._base_tfs = arrays["stem_tfs"]
            self._postings = {}
            self._appended_occurrences = 0

    # -- snapshots -----------------------------------------------------------------------------

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """Everything the table holds as plain arrays (`from_arrays` reads them back): a
        snapshot file loads in milliseconds where rebuilding the postings takes seconds."""
        with self._lock:
            arrays: dict[str, npt.NDArray[Any]] = {
                f"col_{name}": column[: self._n].copy() for name, column in self._cols.items()
            }
            stems = sorted(set(self._base_rows) | set(self._postings))
            offsets = np.zeros(len(stems) + 1, dtype=np.int64)
            positions: list[npt.NDArray[np.int32]] = []
            tfs: list[npt.NDArray[np.uint16]] = []
            for i, stem in enumerate(stems):
                p, t = self._postings_of(stem)
                positions.append(p)
                tfs.append(t)
                offsets[i + 1] = offsets[i] + len(p)
            names = sorted(self._concepts)
            concept_offsets = np.zeros(len(names) + 1, dtype=np.int64)
            for i, name in enumerate(names):
                concept_offsets[i + 1] = concept_offsets[i] + len(self._concepts[name])
            arrays.update(
                stems=np.asarray(stems, dtype=np.str_),
                stem_offsets=offsets,
                stem_positions=np.concatenate(positions) if positions else np.empty(0, np.int32),
                stem_tfs=np.concatenate(tfs) if tfs else np.empty(0, np.uint16),
                concept_names=np.asarray(names, dtype=np.str_),
                concept_offsets=concept_offsets,
                concept_ids=np.asarray(
                    [i for name in names for i in self._concepts[name]], dtype=np.int64
                ),
                total_length=np.asarray([self._total_length], dtype=np.int64),
            )
            return arrays

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, npt.NDArray[Any]]) -> ChainTable:
        table = cls()
        n = len(arrays["col_ids"])
        for name, dtype in _COLUMNS:
            column = np.empty(max(n, INITIAL_CAPACITY), dtype=dtype)
            column[:n] = arrays[f"col_{name}"]
            table._cols[name] = column
        table._n = n
        stems = arrays["stems"].tolist()
        table._base_rows = dict(zip(stems, range(len(stems)), strict=True))
        table._base_offsets = np.asarray(arrays["stem_offsets"], dtype=np.int64)
        table._base_positions = np.asarray(arrays["stem_positions"], dtype=np.int32)
        table._base_tfs = np.asarray(arrays["stem_tfs"], dtype=np.uint16)
        offsets = arrays["concept_offsets"]
        ids = arrays["concept_ids"].tolist()
        table._concepts = {
            name: ids[offsets[i] : offsets[i + 1]]
            for i, name in enumerate(arrays["concept_names"].tolist())
        }
        table._total_length = int(arrays["total_length"][0])
        return table


class RecallTables:
    """Every resident chain's table. `on_read`, when given, runs before each read of a chain
    (app/resident.py loads the chain there, and keeps the least recently used order)."""

    def __init__(self, on_read: Callable[[ChainKey], None] | None = None) -> None:
        self._tables: dict[ChainKey, ChainTable] = {}
        self._lock = threading.Lock()
        self.on_read = on_read
        # chain -> (rows, bytes) when last measured (array_bytes).
        self._measured: dict[ChainKey, tuple[int, int]] = {}

    def add(self, chain: ChainKey, rows: Iterable[RecallRow]) -> None:
        table = self._tables.get(chain)
        if table is None:
            with self._lock:
                table = self._tables.setdefault(chain, ChainTable())
        table.append(rows)

    def get(self, chain: ChainKey) -> ChainTable | None:
        if self.on_read is not None:
            self.on_read(chain)
        return self._tables.get(chain)

    def held(self, chain: ChainKey) -> ChainTable | None:
        """The chain's table if it is in memory, without loading it."""
        return self._tables.get(chain)

    def put(self, chain: ChainKey, table: ChainTable) -> None:
        with self._lock:
            self._tables[chain] = table

    def remove(self, chain: ChainKey) -> None:
        with self._lock:
            self._tables.pop(chain, None)
            self._measured.pop(chain, None)

    def __len__(self) -> int:
        """Chains held."""
        return len(self._tables)

    def array_bytes(self) -> int:
        """Bytes of every chain's arrays. A chain is measured again only when it grew since the
        last call, so a scrape costs what changed, not the whole index."""
        total = 0
        for chain, table in list(self._tables.items()):
            n = len(table)
            seen = self._measured.get(chain)
            if seen is None or seen[0] != n:
                seen = self._measured[chain] = (n, table.array_bytes())
            total += seen[1]
        return total
