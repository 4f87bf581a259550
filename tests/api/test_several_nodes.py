"""Two server nodes over one PostgreSQL database behave as one service (issue 15): read-your-writes
per chain, no fork under concurrent appends through both, the chain verifies after any
interleaving, the nightly cycle runs once per (chain, day), and the caches derived on one node
(map, beliefs) follow what the other wrote. The same mechanism serves two processes over one
SQLite file with `--sync`."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.helpers.course import STUDENT, SUBJECT, T0, at, check, give_course
from tests.helpers.harness import (
    A,
    Harness,
    question,
    start_harness,
    stop_harness,
    write_tokens_file,
)
from tests.helpers.stores import raw_database
from tutor_memory.app.changes import Change
from tutor_memory.app.config import ServerConfig
from tutor_memory.app.sync import VECTOR_RECHECK_SECONDS
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb

NOW = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


@pytest.fixture
def store_kind() -> str:
    """Several nodes need a shared database server: these tests run on PostgreSQL only."""
    return "postgres"


@pytest.fixture
async def nodes(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> AsyncIterator[tuple[Harness, Harness]]:
    """Two servers on two ports, one database, one signing key (the same data directory)."""
    first = await start_harness(server_config, embedder)
    second = await start_harness(replace(server_config, listen="127.0.0.1:0"), embedder)
    try:
        yield first, second
    finally:
        await stop_harness(first)
        await stop_harness(second)


async def block(h: Harness, query: str) -> pb.BuildBlockReply:
    request = pb.BuildBlockRequest(
        student_id=STUDENT, subject_id=SUBJECT, query=query, budget_tokens=1500
    )
    request.now.seconds = int(NOW.timestamp())
    reply: pb.BuildBlockReply = await h.stub.BuildBlock(request, metadata=A, timeout=30)
    return reply


async def verify(h: Harness) -> pb.VerifyChainReply:
    reply: pb.VerifyChainReply = await h.stub.VerifyChain(
        pb.VerifyChainRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    return reply


def shown(reply: pb.BuildBlockReply) -> set[int]:
    return {m.episode_id for m in reply.memories}


async def test_an_episode_acknowledged_by_one_node_is_in_the_next_block_of_the_other(
    nodes: tuple[Harness, Harness],
) -> None:
    a, b = nodes
    # Node B has served the chain before, so its caches hold it (an old state to fall behind).
    await a.append(question("How do plants make sugar from light?", key="k0"))
    assert shown(await block(b, "photosynthesis")) != set()
    for i in range(3):
        written = await a.append(
            question(
                f"What does the mitochondrion do, part {i}?", key=f"m{i}", seconds=1_780_000_000 + i
            )
        )
        # Written through A, acknowledged: the very next block of B shows it, by its word...
        assert written.episode.episode_id in shown(await block(b, "mitochondrion"))
    # ...and by meaning: the vectors reached B's index too.
    neighbours = await block(b, "the powerhouse of the cell")
    assert shown(neighbours) & {e.episode_id for e in await a.list_all()}
    assert b.app.services.vectors.count(next(iter(b.app.services.store.chains()))) == 4


async def test_concurrent_appends_through_both_nodes_never_fork_the_chain(
    nodes: tuple[Harness, Harness],
) -> None:
    a, b = nodes
    per_node = 40

    async def writer(h: Harness, name: str) -> list[int]:
        seqs = []
        for i in range(per_node):
            reply = await h.append(question(f"{name} question {i}", key=f"{name}-{i}"))
            seqs.append(reply.episode.seq)
        return seqs

    async def batch(h: Harness, name: str) -> int:
        reply = await h.ingest(
            [question(f"{name} batch {i}", key=f"{name}-b{i}") for i in range(60)]
        )
        return int(reply.inserted)

    results = await asyncio.gather(
        writer(a, "a"), writer(b, "b"), batch(a, "x"), batch(b, "y"), writer(a, "c")
    )
    seqs = [s for r in results if isinstance(r, list) for s in r]
    assert len(seqs) == len(set(seqs)), "two appends got the same seq"
    total = 3 * per_node + 120
    for h in (a, b):
        listed = await h.list_all()
        assert sorted(e.seq for e in listed) == list(range(1, total + 1))
        reply = await verify(h)
        assert reply.ok
        assert reply.length == total
    # Both nodes' caches hold the whole chain after their next block.
    for h in (a, b):
        await block(h, "question")
        table = h.app.services.tables.get(next(iter(h.app.services.store.chains())))
        assert table is not None
        assert len(table) == total


async def test_a_belief_and_the_map_written_through_one_node_are_read_by_the_other(
    nodes: tuple[Harness, Harness],
) -> None:
    a, b = nodes
    request = pb.GetMapRequest(student_id=STUDENT, subject_id=SUBJECT)
    await a.append(question("Where do we start?", key="start"))
    # B caches the chain's map while it is empty; A then gives the course.
    assert not (await b.stub.GetMap(request, metadata=A)).nodes
    await give_course(a)
    map_b = await b.stub.GetMap(request, metadata=A)
    assert {c.name for c in map_b.nodes} >= {"Osmosis", "Diffusion"}
    # B has built its caches of the chain; A records wrong checks: B's next block says so.
    assert "struggles" not in (await block(b, "osmosis")).text
    for i in range(3):
        await check(a, "Osmosis", False, T0 + timedelta(hours=i + 1))
    assert "struggles with Osmosis" in (await block(b, "osmosis")).text
    # A re-derivation writes belief rows and no episode: B still notices, and drops its cached
    # beliefs of the chain before its next block.
    dropped: list[ChainKey] = []
    b.app.services.changes.subscribe(Change.BELIEFS, dropped.append)
    await block(b, "osmosis")
    dropped.clear()
    await a.stub.Rederive(pb.RederiveRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A)
    assert "struggles with Osmosis" in (await block(b, "osmosis")).text
    assert dropped == [ChainKey("tenant-a", STUDENT, SUBJECT)]
    rows = await b.stub.GetBeliefHistory(
        pb.GetBeliefHistoryRequest(student_id=STUDENT, subject_id=SUBJECT, concept="Osmosis"),
        metadata=A,
    )
    assert any("re-derived" in r.reason for h in rows.histories for r in h.rows)


async def test_a_student_erased_through_one_node_is_gone_from_the_other(
    nodes: tuple[Harness, Harness],
) -> None:
    """Node B has the student's chain in its caches (vectors, recall tables, map, beliefs) when
    node A erases them: B's next read finds the erasure, drops its caches and shows nothing; B
    refuses their writes; the chain verifies through B and says erased."""
    a, b = nodes
    secret = "Quetzalcoatlus"
    await give_course(a)
    for i in range(3):
        await a.append(question(f"{secret} wing question {i}", key=f"q{i}"))
        await check(a, "Osmosis", False, T0 + timedelta(hours=i + 1))
    warm = await block(b, f"{secret} wings")
    assert secret in "\n".join(m.line for m in warm.memories)
    assert "struggles with Osmosis" in warm.text
    map_request = pb.GetMapRequest(student_id=STUDENT, subject_id=SUBJECT)
    assert (await b.stub.GetMap(map_request, metadata=A)).nodes

    await a.stub.ForgetStudent(pb.ForgetStudentRequest(student_id=STUDENT), metadata=A)

    after = await block(b, f"{secret} wings")
    assert not after.memories
    assert secret not in after.text
    assert "Osmosis" not in after.text
    assert not (await b.stub.GetMap(map_request, metadata=A)).nodes
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await b.append(question("back again", key="again"))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    verified = await verify(b)
    assert verified.ok
    assert verified.erased


async def test_two_nodes_consolidating_at_once_write_one_digest_per_day(
    nodes: tuple[Harness, Harness],
) -> None:
    a, b = nodes
    day = datetime(2026, 3, 2, tzinfo=UTC)
    for d in range(3):
        for i in range(4):
            await a.append(
                question(
                    f"day {d} question {i}",
                    key=f"d{d}q{i}",
                    seconds=int((day + timedelta(days=d, hours=9 + i)).timestamp()),
                )
            )
    end = day + timedelta(days=3)

    async def consolidate(h: Harness) -> pb.ConsolidateReply:
        reply: pb.ConsolidateReply = await h.stub.Consolidate(
            pb.ConsolidateRequest(now=at(end)), metadata=A
        )
        return reply

    replies = await asyncio.gather(*(consolidate(h) for h in (a, b, a, b)))
    assert sum(r.consolidation_episodes for r in replies) == 3
    episodes = await b.list_all()
    digests = [e for e in episodes if e.kind == pb.EPISODE_KIND_CONSOLIDATION]
    assert len(digests) == 3
    with raw_database(a.config) as db:
        rows = db.execute("SELECT chain_id, day_start, count(*) FROM day_digests GROUP BY 1, 2")
    assert len(rows) == 3
    assert all(count == 1 for _, _, count in rows)
    # A retry through either node is a no-op.
    again = await consolidate(b)
    assert again.consolidation_episodes == 0
    assert (await verify(a)).ok


async def test_two_processes_over_one_sqlite_file_with_sync_read_each_others_writes(
    tmp_path: Path, embedder: UseOnnxEmbedder
) -> None:
    """`--sync` gives the same read-your-writes to several servers over one SQLite file."""
    config = ServerConfig(
        listen="127.0.0.1:0",
        data_dir=tmp_path / "data",
        tokens_file=write_tokens_file(tmp_path / "tokens.toml"),
        sync=True,
    )
    a = await start_harness(config, embedder)
    b = await start_harness(config, embedder)
    try:
        await a.append(question("How do plants make sugar from light?", key="k0"))
        assert shown(await block(b, "photosynthesis"))
        written = await a.append(question("What does the mitochondrion do?", key="k1"))
        assert written.episode.episode_id in shown(await block(b, "mitochondrion"))
        reply = await b.append(question("And the ribosome?", key="k2"))
        assert reply.episode.seq == 3
        assert (await verify(a)).length == 3
    finally:
        await stop_harness(a)
        await stop_harness(b)


async def test_vectors_another_node_embeds_after_an_import_reach_this_nodes_index(
    nodes: tuple[Harness, Harness], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = nodes
    chain = ChainKey("tenant-a", STUDENT, SUBJECT)
    await a.append(question("How do plants make sugar from light?", key="k0"))
    await block(b, "photosynthesis")  # B holds the chain now
    assert b.app.services.resident.is_resident(chain)
    # A's embedding queue is held back until B has read the imported episodes.
    queue = a.app.services.embedding
    release = threading.Event()
    embed_and_store = queue._embed_and_store

    def held_back(batch: list[Any]) -> None:
        release.wait(60)
        embed_and_store(batch)

    monkeypatch.setattr(queue, "_embed_and_store", held_back)
    # An import through A is acknowledged before its embeddings: B sees the episodes at once,
    # and their vectors once A's queue stored them.
    imported = [question(f"Why do cells divide, part {i}?", key=f"d{i}") for i in range(20)]
    reply = await a.stub.IngestEpisodes(ingest_messages(imported, 7), metadata=A)
    assert reply.inserted == 20
    assert len(shown(await block(b, "cells divide"))) >= 2
    assert b.app.services.vectors.count(chain) == 1
    release.set()
    assert await asyncio.to_thread(queue.wait_idle, 60)
    await asyncio.sleep(VECTOR_RECHECK_SECONDS)
    await block(b, "cells divide")
    assert b.app.services.vectors.count(chain) == 21
    assert b.app.services.resident.missing_of(chain, 100) == []


async def test_a_chain_evicted_on_one_node_reloads_with_what_the_other_wrote_meanwhile(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    a = await start_harness(server_config, embedder)
    # B holds one chain at most: reading another evicts the first.
    b = await start_harness(replace(server_config, cache_budget_bytes=1), embedder)
    try:
        chain = ChainKey("tenant-a", STUDENT, SUBJECT)
        await a.append(question("How do plants make sugar from light?", key="k0"))
        await block(b, "photosynthesis")
        other = pb.BuildBlockRequest(
            student_id="someone-else", subject_id=SUBJECT, query="osmosis", budget_tokens=500
        )
        await a.append(question("What is osmosis?", student="someone-else", key="o0"))
        await b.stub.BuildBlock(other, metadata=A, timeout=30)
        assert not b.app.services.resident.is_resident(chain)
        written = await a.append(question("What does the mitochondrion do?", key="m0"))
        reply = await block(b, "mitochondrion")
        assert written.episode.episode_id in shown(reply)
        table = b.app.services.tables.held(chain)
        assert table is not None
        assert len(table) == 2
        assert b.app.services.vectors.count(chain) == 2
    finally:
        await stop_harness(a)
        await stop_harness(b)
