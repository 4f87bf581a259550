"""Snapshot files of a chain's in-memory caches: its recall table and its vector index, as they
were up to one episode id, in one file per chain under the data directory.

Rebuilding a large chain from the store costs seconds (parsing every episode's stems, rebuilding
the postings, and for an HNSW graph minutes of building); reading a snapshot back costs the read
of its arrays. A snapshot is a cache like the caches it holds: a missing, unreadable or mismatched
file is ignored and the chain is loaded from the store, and a chain loaded from a snapshot reads
from the store only what was committed after it (app/resident.py).

One `.npz` file per chain, written to a temporary name and renamed over the old one, so a crash
leaves either the old snapshot or the new one, never half of one.
"""

from __future__ import annotations

import hashlib
import logging
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import ChainKey

log = logging.getLogger("tutor_memory.snapshots")

# The layout of a snapshot file; a file of another layout is ignored.
SNAPSHOT_FORMAT = 1


@dataclass(frozen=True, slots=True)
class ChainSnapshot:
    """A chain's caches up to `last_id`: the table's arrays (`ChainTable.to_arrays`), the vector
    index as faiss bytes, and the ids of the table's episodes the index does not hold yet."""

    last_id: int
    rows: int
    table: dict[str, npt.NDArray[Any]]
    index: npt.NDArray[np.uint8] | None
    graph: bool
    missing: npt.NDArray[np.int64]


class SnapshotFiles:
    """The snapshot files of one data directory, for one embedding model and one version of the
    recall facts (a snapshot made under other rules is ignored)."""

    def __init__(self, directory: Path, model_id: str, facts_version: int) -> None:
        self.directory = directory
        self._model_id = model_id
        self._facts_version = facts_version

    def path(self, chain: ChainKey) -> Path:
        key = f"{chain.tenant}\x00{chain.student}\x00{chain.subject}".encode()
        return self.directory / f"{hashlib.sha256(key).hexdigest()[:32]}.npz"

    def write(self, chain: ChainKey, snapshot: ChainSnapshot) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path(chain)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        meta = np.asarray(
            [SNAPSHOT_FORMAT, snapshot.last_id, snapshot.rows, int(snapshot.graph),
             self._facts_version],
            dtype=np.int64,
        )  # fmt: skip
        arrays: dict[str, Any] = {f"table_{k}": v for k, v in snapshot.table.items()}
        if snapshot.index is not None:
            arrays["index"] = snapshot.index
        arrays.update(
            meta=meta,
            model=np.asarray([self._model_id], dtype=np.str_),
            chain=np.asarray([chain.tenant, chain.student, chain.subject], dtype=np.str_),
            missing=snapshot.missing,
        )
        with tmp.open("wb") as out:
            np.savez(out, **arrays)
            out.flush()
            os.fsync(out.fileno())
        tmp.replace(path)

    def read(self, chain: ChainKey) -> ChainSnapshot | None:
        path = self.path(chain)
        if not path.exists():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = data["meta"].tolist()
                if (
                    meta[0] != SNAPSHOT_FORMAT
                    or meta[4] != self._facts_version
                    or data["model"].tolist() != [self._model_id]
                    or data["chain"].tolist() != [chain.tenant, chain.student, chain.subject]
                ):
                    return None
                return ChainSnapshot(
                    last_id=int(meta[1]),
                    rows=int(meta[2]),
                    graph=bool(meta[3]),
                    table={
                        k.removeprefix("table_"): data[k]
                        for k in data.files
                        if k.startswith("table_")
                    },
                    index=data["index"] if "index" in data.files else None,
                    missing=data["missing"],
                )
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            log.warning("unreadable snapshot ignored", extra={"path": str(path)})
            return None

    def remove(self, chain: ChainKey) -> None:
        self.path(chain).unlink(missing_ok=True)
