"""Snapshot files of a chain's in-memory caches: its recall table and its vector index, as they
were up to one episode id, in one file per chain under the data directory.

Rebuilding a large chain from the store costs seconds (parsing every episode's stems, rebuilding
the postings, and for an HNSW graph minutes of building); reading a snapshot back costs the read
of its arrays. A snapshot is a cache like the caches it holds: a missing, unreadable or mismatched
file is ignored and the chain is loaded from the store, and a chain loaded from a snapshot reads
from the store only what was committed after it (app/resident.py).

Each snapshot's files carry a generation, and a small JSON file written last names the current one
(see `SnapshotFiles`), so a crash leaves either the old snapshot or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import secrets
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import ChainKey

log = logging.getLogger("tutor_memory.snapshots")

# The layout of a snapshot; a snapshot of another layout is ignored.
SNAPSHOT_FORMAT = 2


@dataclass(frozen=True, slots=True)
class ChainSnapshot:
    """A chain's caches up to `last_id`: the table's arrays (`ChainTable.to_arrays`), the vector
    index (None when the chain has none), and the ids of the table's episodes the index does not
    hold yet."""

    last_id: int
    rows: int
    table: dict[str, npt.NDArray[Any]]
    index: faiss.Index | None
    graph: bool
    missing: npt.NDArray[np.int64]


class SnapshotFiles:
    """The snapshot files of one data directory, for one embedding model and one version of the
    recall facts (a snapshot made under other rules is ignored).

    A chain's snapshot is three files of one generation: `<key>.<generation>.npz` (the table),
    `<key>.<generation>.faiss` (the index, in faiss's own format, which it reads back faster than
    any copy through numpy), and `<key>.json`, written last, which names the generation. A crash
    while writing leaves the previous generation named, and its files in place."""

    def __init__(
        self, directory: Path, model_id: str, facts_version: int, *, writes: bool = True
    ) -> None:
        self.directory = directory
        self._model_id = model_id
        self._facts_version = facts_version
        # False: this process reads the snapshots but leaves writing them to another (one of the
        # workers of `serve --workers`: two writers of one chain's snapshot would delete each
        # other's generations). Deleting one (an erasure) is always done.
        self.writes = writes
        # One write or delete at a time: two writes of one chain at once (the one after a load
        # from the store and the one at shutdown or eviction) would each delete the other's
        # files, leaving a name file that points at none, and share the temporary name file.
        self._lock = threading.Lock()

    def _key(self, chain: ChainKey) -> str:
        key = f"{chain.tenant}\x00{chain.student}\x00{chain.subject}".encode()
        return hashlib.sha256(key).hexdigest()[:32]

    def meta_path(self, chain: ChainKey) -> Path:
        return self.directory / f"{self._key(chain)}.json"

    def _paths(self, chain: ChainKey, generation: str) -> tuple[Path, Path]:
        """The table's and the index's file of one generation of the chain's snapshot. (Named
        by string: `Path.with_suffix` would take the generation for a suffix and replace it.)"""
        stem = f"{self._key(chain)}.{generation}"
        return self.directory / f"{stem}.npz", self.directory / f"{stem}.faiss"

    def write(self, chain: ChainKey, snapshot: ChainSnapshot) -> None:
        if not self.writes:
            return
        with self._lock:
            self._write(chain, snapshot)

    def _write(self, chain: ChainKey, snapshot: ChainSnapshot) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        key = self._key(chain)
        generation = secrets.token_hex(8)
        table, index = self._paths(chain, generation)
        with table.open("wb") as out:
            arrays: dict[str, Any] = {"missing": snapshot.missing, **snapshot.table}
            np.savez(out, **arrays)
            out.flush()
            os.fsync(out.fileno())
        if snapshot.index is not None:
            faiss.write_index(snapshot.index, str(index))
        meta = {
            "format": SNAPSHOT_FORMAT,
            "generation": generation,
            "model": self._model_id,
            "facts_version": self._facts_version,
            "chain": [chain.tenant, chain.student, chain.subject],
            "last_id": snapshot.last_id,
            "rows": snapshot.rows,
            "graph": snapshot.graph,
            "index": snapshot.index is not None,
        }
        tmp = self.directory / f"{key}.json.{os.getpid()}.tmp"
        with tmp.open("w", encoding="utf-8") as out:
            json.dump(meta, out)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(self.meta_path(chain))
        for old in self.directory.glob(f"{key}.*"):
            if old.suffix in (".npz", ".faiss") and generation not in old.name:
                old.unlink(missing_ok=True)

    def delete(self, chain: ChainKey) -> None:
        """Removes every file of the chain's snapshot (its student was erased: the table holds
        the stems of their words)."""
        key = self._key(chain)
        with self._lock:
            self.meta_path(chain).unlink(missing_ok=True)
            for path in self.directory.glob(f"{key}.*"):
                path.unlink(missing_ok=True)

    def read(self, chain: ChainKey) -> ChainSnapshot | None:
        path = self.meta_path(chain)
        if not path.exists():
            return None
        try:
            meta = json.loads(path.read_text(encoding="utf-8"))
            if (
                meta["format"] != SNAPSHOT_FORMAT
                or meta["facts_version"] != self._facts_version
                or meta["model"] != self._model_id
                or meta["chain"] != [chain.tenant, chain.student, chain.subject]
            ):
                return None
            table_path, index_path = self._paths(chain, str(meta["generation"]))
            with np.load(table_path, allow_pickle=False) as data:
                table = {k: data[k] for k in data.files if k != "missing"}
                missing = data["missing"]
            index = faiss.read_index(str(index_path)) if meta["index"] else None
            return ChainSnapshot(
                last_id=int(meta["last_id"]),
                rows=int(meta["rows"]),
                table=table,
                index=index,
                graph=bool(meta["graph"]),
                missing=missing,
            )
        except (OSError, ValueError, KeyError, RuntimeError, zipfile.BadZipFile):
            log.warning("unreadable snapshot ignored", extra={"path": str(path)})
            return None

    def chains_by_recency(self) -> list[ChainKey]:
        """The chains that have a snapshot, most recently written first."""
        found = []
        for path in self.directory.glob("*.json"):
            try:
                meta = json.loads(path.read_text(encoding="utf-8"))
                found.append((path.stat().st_mtime, ChainKey(*meta["chain"])))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return [chain for _, chain in sorted(found, key=lambda f: f[0], reverse=True)]
