"""Chains held in memory under a budget (app/resident.py): loaded on first use, evicted least
recently used first, reloaded correctly, and read back from snapshot files after a restart."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pytest

from tests.helpers.harness import A, Harness, question, start_harness, stop_harness
from tutor_memory.app import resident as resident_module
from tutor_memory.app.config import ServerConfig
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.facts import FACTS_VERSION
from tutor_memory.index.snapshots import SnapshotFiles
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.store.postgres.store import PostgresStore
from tutor_memory.store.sqlite.store import SqliteStore
from tutor_memory_client._proto import memory_pb2 as pb

STUDENTS = ["ada", "bo", "cy"]
# How long a test waits for what the server does in the background.
WAIT_SECONDS = 30.0
T = TypeVar("T")


def chain(student: str) -> ChainKey:
    return ChainKey("tenant-a", student, "biology")


async def block(h: Harness, student: str, query: str) -> pb.BuildBlockReply:
    reply: pb.BuildBlockReply = await h.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=student, subject_id="biology", query=query, budget_tokens=1500
        ),
        metadata=A,
    )
    return reply


async def eventually(check: Callable[[], T | None], what: str) -> T:
    """What `check` returns once it returns something (polled for up to WAIT_SECONDS)."""
    deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
    while (found := check()) is None:
        assert asyncio.get_running_loop().time() < deadline, f"never {what}"
        await asyncio.sleep(0.02)
    return found


async def fill(h: Harness, student: str, n: int) -> None:
    await h.ingest(
        [
            question(
                f"{student} asks about topic {i}: osmosis and membranes",
                student=student,
                key=f"{student}-{i}",
            )
            for i in range(n)
        ]
    )


async def test_chains_load_on_first_use_and_the_least_recently_used_leave_first(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    # A budget smaller than one chain: only the chain in use stays.
    config = dataclasses.replace(server_config, cache_budget_bytes=1)
    h = await start_harness(config, embedder)
    try:
        resident = h.app.services.resident
        for student in STUDENTS:
            await fill(h, student, 30)
        assert resident.resident_chains() == 0  # writes alone load nothing
        for student in STUDENTS:
            reply = await block(h, student, "osmosis membranes")
            assert f"{student} asks about topic" in reply.text
            assert resident.is_resident(chain(student))
        assert resident.resident_chains() == 1
        assert resident.evictions() == len(STUDENTS) - 1
        assert not resident.is_resident(chain("ada"))
        # What an operator scrapes (README, Metrics) counts the same evictions.
        scraped = h.app.services.telemetry.metrics.registry
        for cache in ("vectors", "recall_tables"):
            evicted = scraped.get_sample_value(
                "tutor_memory_cache_evictions_total", {"cache": cache}
            )
            assert evicted == len(STUDENTS) - 1, cache

        # Written while evicted, then read: the reload holds everything, each episode once.
        late = await h.append(question("ada asks about mitochondria", student="ada"))
        reply = await block(h, "ada", "mitochondria")
        assert late.episode.episode_id in [m.episode_id for m in reply.memories]
        table = h.app.services.tables.held(chain("ada"))
        assert table is not None
        assert len(table) == 31
        assert len(np.unique(table.snapshot().ids)) == 31
        assert h.app.services.vectors.count(chain("ada")) == 31
        assert resident.loads() == len(STUDENTS) + 1
        assert resident.resident_bytes() > 0
    finally:
        await stop_harness(h)


async def test_a_held_chain_takes_writes_as_they_commit(harness: Harness) -> None:
    await fill(harness, "ada", 10)
    await block(harness, "ada", "osmosis")
    before = harness.app.services.resident.resident_bytes()
    await fill(harness, "ada", 20)  # keys 0-9 again (duplicates), 10-19 new
    reply = await block(harness, "ada", "topic 19")
    table = harness.app.services.tables.held(chain("ada"))
    assert table is not None
    assert len(table) == 20
    assert harness.app.services.vectors.count(chain("ada")) == 20
    assert reply.vectors_pending == 0
    assert harness.app.services.resident.resident_bytes() > before


def _recording(store_class: type, read_after: list[int]) -> Any:
    """The store's `chain_recall`, noting the `after_id` of every call."""
    chain_recall = store_class.chain_recall  # type: ignore[attr-defined]

    def recording(self: Any, *args: Any, **kwargs: Any) -> Any:
        read_after.append(kwargs.get("after_id", 0))
        return chain_recall(self, *args, **kwargs)

    return recording


async def test_a_restart_reads_a_large_chain_back_from_its_snapshot(
    server_config: ServerConfig, embedder: UseOnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resident_module, "SNAPSHOT_MIN_EPISODES", 20)
    h = await start_harness(server_config, embedder)
    try:
        await fill(h, "ada", 40)
        first = await block(h, "ada", "topic 7 osmosis")
    finally:
        await stop_harness(h)  # writes the snapshot of the chain it held
    [meta] = server_config.snapshot_dir.glob("*.json")
    snapshot_last_id = json.loads(meta.read_text())["last_id"]
    assert snapshot_last_id > 0

    read_after: list[int] = []
    for store_class in (SqliteStore, PostgresStore):
        monkeypatch.setattr(store_class, "chain_recall", _recording(store_class, read_after))
    h = await start_harness(server_config, embedder)
    try:
        # Committed after the snapshot: read from the store on top of it.
        late = await h.append(question("ada asks about mitochondria", student="ada"))
        again = await block(h, "ada", "topic 7 osmosis")
        # The load read the store only after the snapshot's last episode.
        assert read_after == [snapshot_last_id]
        assert [m.episode_id for m in again.memories] == [m.episode_id for m in first.memories]
        table = h.app.services.tables.held(chain("ada"))
        assert table is not None
        assert len(table) == 41
        assert int(table.snapshot().ids[-1]) == late.episode.episode_id
        assert h.app.services.vectors.count(chain("ada")) == 41
        from_snapshot = table.to_arrays()
    finally:
        await stop_harness(h)

    # The same chain loaded from the store alone holds the same.
    for file in server_config.snapshot_dir.iterdir():
        file.unlink()
    h = await start_harness(server_config, embedder)
    try:
        h.app.services.resident.ensure(chain("ada"))
        table = h.app.services.tables.held(chain("ada"))
        assert table is not None
        from_store = table.to_arrays()
    finally:
        await stop_harness(h)
    assert from_store.keys() == from_snapshot.keys()
    for name, values in from_store.items():
        assert np.array_equal(values, from_snapshot[name]), name


async def test_a_starting_server_loads_the_chains_that_have_a_snapshot_without_a_call(
    server_config: ServerConfig, embedder: UseOnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resident_module, "SNAPSHOT_MIN_EPISODES", 20)
    h = await start_harness(server_config, embedder)
    try:
        await fill(h, "ada", 30)
        await fill(h, "bo", 5)  # too small for a snapshot: loads on its first call
        await block(h, "ada", "osmosis")
        await block(h, "bo", "osmosis")
    finally:
        await stop_harness(h)

    h = await start_harness(server_config, embedder)
    try:
        resident = h.app.services.resident
        await eventually(lambda: resident.is_resident(chain("ada")) or None, "loaded")
        assert resident.resident_episodes() == 30
        assert not resident.holds(chain("bo"))
    finally:
        await stop_harness(h)


async def test_a_large_chain_read_from_the_store_gets_a_snapshot_without_waiting_for_a_stop(
    server_config: ServerConfig, embedder: UseOnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resident_module, "SNAPSHOT_MIN_EPISODES", 20)
    h = await start_harness(server_config, embedder)
    try:
        await fill(h, "ada", 30)  # committed; the chain is not loaded until it is read
        assert not h.app.services.resident.holds(chain("ada"))
        await block(h, "ada", "osmosis")  # loads the chain from the store
        files = SnapshotFiles(server_config.snapshot_dir, embedder.model_id, FACTS_VERSION)
        written = await eventually(lambda: files.read(chain("ada")), "a snapshot written")
        # Written while the server runs: a crash now would leave it for the next start.
        assert written.rows == 30
        assert written.index is not None
        assert written.index.ntotal == 30
    finally:
        await stop_harness(h)


async def test_a_snapshot_of_another_store_is_ignored(
    server_config: ServerConfig,
    embedder: UseOnnxEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
) -> None:
    monkeypatch.setattr(resident_module, "SNAPSHOT_MIN_EPISODES", 20)
    h = await start_harness(server_config, embedder)
    try:
        await fill(h, "ada", 30)
        await block(h, "ada", "osmosis")
    finally:
        await stop_harness(h)
    kept = {f.name: f.read_bytes() for f in server_config.snapshot_dir.iterdir()}

    # A fresh store with fewer episodes of the chain, and the old snapshot put beside it.
    other = dataclasses.replace(server_config, data_dir=server_config.data_dir.parent / "other")
    if server_config.store is not None:
        # On PostgreSQL the store is the database, not the data directory: another one.
        other = dataclasses.replace(other, store=request.getfixturevalue("postgres_url_2"))
    h = await start_harness(other, embedder)
    try:
        await fill(h, "ada", 5)
        other.snapshot_dir.mkdir(parents=True)
        for name, data in kept.items():
            (other.snapshot_dir / name).write_bytes(data)
        reply = await block(h, "ada", "osmosis")
        table = h.app.services.tables.held(chain("ada"))
        assert table is not None
        assert len(table) == 5
        assert len(reply.memories) == 5
    finally:
        await stop_harness(h)


async def test_forgetting_a_student_drops_their_held_chain_and_deletes_its_snapshot(
    server_config: ServerConfig, embedder: UseOnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resident_module, "SNAPSHOT_MIN_EPISODES", 20)
    h = await start_harness(server_config, embedder)
    try:
        await fill(h, "ada", 40)
        await fill(h, "bo", 40)
        for student in ("ada", "bo"):
            await block(h, student, "topic 7 osmosis")
    finally:
        await stop_harness(h)  # writes a snapshot of each chain it held
    assert len(list(server_config.snapshot_dir.glob("*.json"))) == 2

    h = await start_harness(server_config, embedder)
    try:
        resident = h.app.services.resident
        resident.ensure(chain("ada"))
        resident.ensure(chain("bo"))
        await h.stub.ForgetStudent(pb.ForgetStudentRequest(student_id="ada"), metadata=A)
        assert not resident.holds(chain("ada"))
        assert h.app.services.tables.held(chain("ada")) is None
        assert h.app.services.vectors.count(chain("ada")) == 0
        assert resident.is_resident(chain("bo"))
    finally:
        await stop_harness(h)
    # Only the other student's snapshot is left; nothing names the erased one.
    metas = [json.loads(p.read_text()) for p in server_config.snapshot_dir.glob("*.json")]
    assert [m["chain"] for m in metas] == [["tenant-a", "bo", "biology"]]
    generation = metas[0]["generation"]
    assert all(
        generation in p.name for p in server_config.snapshot_dir.iterdir() if p.suffix != ".json"
    )


async def test_a_snapshot_being_written_when_its_student_is_erased_is_deleted(
    server_config: ServerConfig, embedder: UseOnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resident_module, "SNAPSHOT_MIN_EPISODES", 20)
    h = await start_harness(server_config, embedder)
    try:
        resident = h.app.services.resident
        real_write = SnapshotFiles.write

        def erased_meanwhile(files: SnapshotFiles, key: ChainKey, snapshot: Any) -> None:
            resident.forget(key)  # the erasure lands while the snapshot is being written
            real_write(files, key, snapshot)

        monkeypatch.setattr(SnapshotFiles, "write", erased_meanwhile)
        await fill(h, "ada", 30)
        await block(h, "ada", "osmosis")  # read from the store: its snapshot is written at once
        resident.write_snapshots()  # waits for the writes under way
        files = SnapshotFiles(server_config.snapshot_dir, embedder.model_id, FACTS_VERSION)
        assert files.read(chain("ada")) is None
        left = (
            list(server_config.snapshot_dir.glob("*"))
            if server_config.snapshot_dir.exists()
            else []
        )
        assert left == []
    finally:
        await stop_harness(h)
