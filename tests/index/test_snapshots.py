"""Snapshot files (index/snapshots.py): what is written is what is read back, and a snapshot that
does not belong is ignored."""

from __future__ import annotations

import threading
from pathlib import Path

import faiss
import numpy as np

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.index.snapshots import ChainSnapshot, SnapshotFiles

DIM = 8
CHAIN = ChainKey("tenant-a", "ada", "biology")


def _snapshot(rows: int) -> ChainSnapshot:
    rng = np.random.default_rng(7)
    index = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
    index.add_with_ids(rng.random((rows, DIM), dtype=np.float32), np.arange(1, rows + 1))
    return ChainSnapshot(
        last_id=rows,
        rows=rows,
        table={"ids": np.arange(1, rows + 1, dtype=np.int64), "salience": rng.random(rows)},
        index=index,
        graph=False,
        missing=np.asarray([3, 5], dtype=np.int64),
    )


def test_a_written_snapshot_reads_back_with_its_table_index_and_missing_ids(
    tmp_path: Path,
) -> None:
    files = SnapshotFiles(tmp_path, "model-a", facts_version=1)
    written = _snapshot(50)
    files.write(CHAIN, written)

    read = files.read(CHAIN)

    assert read is not None
    assert (read.last_id, read.rows, read.graph) == (50, 50, False)
    assert read.table.keys() == written.table.keys()
    for name, values in written.table.items():
        assert np.array_equal(read.table[name], values), name
    assert np.array_equal(read.missing, written.missing)
    assert read.index is not None
    assert written.index is not None
    assert read.index.ntotal == 50
    query = np.ones((1, DIM), dtype=np.float32)
    assert np.array_equal(read.index.search(query, 50)[1], written.index.search(query, 50)[1])


def test_a_rewritten_snapshot_reads_back_the_newest_generation_and_drops_the_old_files(
    tmp_path: Path,
) -> None:
    files = SnapshotFiles(tmp_path, "model-a", facts_version=1)
    files.write(CHAIN, _snapshot(20))
    files.write(CHAIN, _snapshot(30))

    read = files.read(CHAIN)

    assert read is not None
    assert read.rows == 30
    assert len(list(tmp_path.glob("*.npz"))) == 1
    assert len(list(tmp_path.glob("*.faiss"))) == 1


def test_a_snapshot_made_for_another_model_or_other_facts_is_ignored(tmp_path: Path) -> None:
    SnapshotFiles(tmp_path, "model-a", facts_version=1).write(CHAIN, _snapshot(20))

    assert SnapshotFiles(tmp_path, "model-b", facts_version=1).read(CHAIN) is None
    assert SnapshotFiles(tmp_path, "model-a", facts_version=2).read(CHAIN) is None
    assert (
        SnapshotFiles(tmp_path, "model-a", facts_version=1).read(
            ChainKey("tenant-a", "bo", "biology")
        )
        is None
    )


def test_a_reader_that_does_not_write_reads_anothers_snapshot_and_writes_none(
    tmp_path: Path,
) -> None:
    SnapshotFiles(tmp_path, "model-a", facts_version=1).write(CHAIN, _snapshot(20))
    reader = SnapshotFiles(tmp_path, "model-a", facts_version=1, writes=False)
    before = sorted(p.name for p in tmp_path.iterdir())

    reader.write(CHAIN, _snapshot(30))

    assert sorted(p.name for p in tmp_path.iterdir()) == before
    read = reader.read(CHAIN)
    assert read is not None
    assert read.rows == 20


def test_snapshots_of_one_chain_written_at_once_leave_one_that_reads_back(tmp_path: Path) -> None:
    # A chain's snapshot written after its load from the store, and again at shutdown or
    # eviction, may be written at the same moment from two threads: neither may delete the files
    # that the other's name file then points to.
    files = SnapshotFiles(tmp_path, "model-a", facts_version=1)
    snapshots = [_snapshot(20 + i) for i in range(8)]
    for _ in range(5):
        threads = [
            threading.Thread(target=files.write, args=(CHAIN, snapshot)) for snapshot in snapshots
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        read = files.read(CHAIN)
        assert read is not None
        assert len(list(tmp_path.glob("*.npz"))) == 1
        assert len(list(tmp_path.glob("*.faiss"))) == 1
