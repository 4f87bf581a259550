"""PostgreSQL failures as a caller sees them (issue 15): a database that cannot be reached at start
stops the server with the reason; one lost while serving gives UNAVAILABLE and comes back without
a restart; an exhausted pool gives RESOURCE_EXHAUSTED at the call's deadline; kill -9 of one node
during a batch loses nothing acknowledged while the other node serves on."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import grpc
import psycopg
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.helpers.harness import (
    TOKEN_A,
    A,
    question,
    start_harness,
    stop_harness,
    write_tokens_file,
)
from tests.helpers.postgres import PostgresCluster, free_port
from tests.helpers.server_process import ServerProcess
from tests.helpers.stores import raw_database
from tutor_memory.api.server import LIVENESS_SERVICE
from tutor_memory.app.config import ServerConfig
from tutor_memory.app.embedding_queue import BACKLOG_RESCAN_SECONDS
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
HealthCheckRequest = health_pb2.HealthCheckRequest


@pytest.fixture
def store_kind() -> str:
    return "postgres"


def test_a_database_that_cannot_be_reached_stops_the_server_with_the_reason(
    tmp_path: Path,
) -> None:
    url = f"postgresql://tutor:secret@127.0.0.1:{free_port()}/nothing"
    result = subprocess.run(
        [sys.executable, "-m", "tutor_memory", "serve", "--listen", "127.0.0.1:0",
         "--data", str(tmp_path / "data"), "--store", url],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert "cannot start" in result.stderr
    assert "cannot use PostgreSQL at" in result.stderr
    assert "Connection refused" in result.stderr or "connection" in result.stderr.lower()
    assert "secret" not in result.stderr, "the password is never logged"
    bad = subprocess.run(
        [sys.executable, "-m", "tutor_memory", "serve", "--listen", "127.0.0.1:0",
         "--data", str(tmp_path / "data"), "--store", "mysql://localhost/x"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert bad.returncode == 2
    assert "PostgreSQL connection string" in bad.stderr


@pytest.fixture
def own_cluster() -> Iterator[PostgresCluster]:
    """A cluster this test may stop and start without disturbing the others."""
    cluster = PostgresCluster()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.destroy()


async def _code_of(call: object) -> grpc.StatusCode:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as exc:
        code: grpc.StatusCode = exc.code()
        return code
    return grpc.StatusCode.OK


async def _health_becomes(health: health_pb2_grpc.HealthStub, service: str, wanted: int) -> None:
    deadline = time.monotonic() + 10
    while (await health.Check(HealthCheckRequest(service=service))).status != wanted:
        assert time.monotonic() < deadline, f"health of {service!r} never became {wanted}"
        await asyncio.sleep(0.05)


async def test_losing_the_database_gives_unavailable_and_it_recovers_without_a_restart(
    own_cluster: PostgresCluster, server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    config = replace(
        server_config, store=own_cluster.create_database(), readiness_probe_seconds=0.1
    )
    h = await start_harness(config, embedder)
    health = health_pb2_grpc.HealthStub(h.channel)
    try:
        await h.append(question("before the outage", key="k1"))
        own_cluster.stop()
        block = pb.BuildBlockRequest(
            student_id="s1", subject_id="biology", query="outage", budget_tokens=500
        )
        listing = pb.ListEpisodesRequest(student_id="s1", subject_id="biology")
        for _ in range(3):
            assert await _code_of(h.append(question("during", key="k2"))) == (
                grpc.StatusCode.UNAVAILABLE
            )
            assert await _code_of(h.stub.ListEpisodes(listing, metadata=A)) == (
                grpc.StatusCode.UNAVAILABLE
            )
            assert await _code_of(h.stub.BuildBlock(block, metadata=A)) == (
                grpc.StatusCode.UNAVAILABLE
            )
        # Readiness says so too (the load balancer sends calls elsewhere), liveness does not.
        await _health_becomes(health, "", NOT_SERVING)
        assert (await health.Check(HealthCheckRequest(service=LIVENESS_SERVICE))).status == SERVING
        own_cluster.start()
        await _health_becomes(health, "", SERVING)
        reply = await h.append(question("after the outage", key="k3"))
        assert reply.episode.seq == 2
        assert len(await h.list_all()) == 2
        verify = await h.stub.VerifyChain(
            pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=A
        )
        assert verify.ok
        assert verify.length == 2
    finally:
        await stop_harness(h)


async def test_an_exhausted_pool_waits_until_the_deadline_then_says_resource_exhausted(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    h = await start_harness(replace(server_config, pool_size=1), embedder)
    assert server_config.store is not None
    listing = pb.ListEpisodesRequest(student_id="s1", subject_id="biology")
    try:
        await h.append(question("one", key="k1"))
        with psycopg.connect(server_config.store) as blocker:
            # An operator's long lock holds the pool's one connection inside the first call.
            blocker.execute("LOCK TABLE episodes IN ACCESS EXCLUSIVE MODE")
            holding = asyncio.ensure_future(h.stub.ListEpisodes(listing, metadata=A, timeout=20))
            await asyncio.sleep(0.5)
            started = time.monotonic()
            code = await _code_of(h.stub.ListEpisodes(listing, metadata=A, timeout=1.5))
            waited = time.monotonic() - started
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert 1.0 < waited < 1.5
            blocker.rollback()
        assert len((await holding).episodes) == 1
        assert len((await h.stub.ListEpisodes(listing, metadata=A, timeout=5)).episodes) == 1
    finally:
        await stop_harness(h)


# The crash test through two nodes: CALLS batches of ITEMS through node A, killed with SIGKILL
# after KILL_AFTER calls were acknowledged, while node B answers blocks and listings throughout.
CALLS = 8
ITEMS = 400
KILL_AFTER = 2


def _batch(call: int) -> list[pb.NewEpisode]:
    return [
        question(f"call {call} item {i}: why do leaves change colour?", key=f"c{call}-i{i}")
        for i in range(ITEMS)
    ]


def _ingest(stub: pb_grpc.MemoryStub, batch: list[pb.NewEpisode]) -> pb.IngestEpisodesReply:
    reply: pb.IngestEpisodesReply = stub.IngestEpisodes(
        ingest_messages(batch), metadata=(("authorization", f"Bearer {TOKEN_A}"),), timeout=120
    )
    return reply


def _list_everything(stub: pb_grpc.MemoryStub) -> list[pb.Episode]:
    request = pb.ListEpisodesRequest(student_id="s1", subject_id="biology", page_size=1000)
    out: list[pb.Episode] = []
    while True:
        reply = stub.ListEpisodes(request, metadata=A, timeout=30)
        out.extend(reply.episodes)
        if not reply.next_page_token:
            return out
        request.page_token = reply.next_page_token


@pytest.mark.slow
def test_kill_9_of_one_node_mid_batch_loses_nothing_and_the_other_node_serves_on(
    tmp_path: Path, postgres_url: str
) -> None:
    data_dir = tmp_path / "data"
    tokens = write_tokens_file(tmp_path / "tokens.toml")
    a = ServerProcess(data_dir, tokens, "--store", postgres_url)
    b = ServerProcess(data_dir, tokens, "--store", postgres_url)
    a.wait_ready()
    b.wait_ready()
    acknowledged: set[str] = set()
    acked_calls = 0
    in_flight_failed = threading.Event()
    stop_reading = threading.Event()
    reads: list[grpc.StatusCode] = []

    def client() -> None:
        nonlocal acked_calls
        with grpc.insecure_channel(a.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            for call in range(CALLS):
                try:
                    reply = _ingest(stub, _batch(call))
                except grpc.RpcError:
                    in_flight_failed.set()
                    return
                acknowledged.update(r.client_key for r in reply.items)
                acked_calls += 1

    def reader() -> None:
        """Node B's callers, before, during and after the crash of node A."""
        with grpc.insecure_channel(b.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            request = pb.BuildBlockRequest(
                student_id="s1", subject_id="biology", query="leaves colour", budget_tokens=600
            )
            while not stop_reading.is_set():
                try:
                    stub.BuildBlock(request, metadata=A, timeout=10)
                    reads.append(grpc.StatusCode.OK)
                except grpc.RpcError as exc:
                    reads.append(exc.code())
                time.sleep(0.05)

    writing = threading.Thread(target=client)
    reading = threading.Thread(target=reader)
    writing.start()
    reading.start()
    try:
        while acked_calls < KILL_AFTER and writing.is_alive():
            time.sleep(0.01)
        time.sleep(0.15)  # inside the next call's stream
        a.kill()
        writing.join(timeout=60)
        assert in_flight_failed.is_set(), "the kill must land while a call is in flight"
        assert len(acknowledged) >= KILL_AFTER * ITEMS
        time.sleep(0.5)
        stop_reading.set()
        reading.join(timeout=30)
        assert reads
        assert set(reads) == {grpc.StatusCode.OK}, "node B answered every call"

        episodes, vectors, indexed = _table_counts(postgres_url)
        # Nothing half-written: every stored episode has its recall facts; its embedding may
        # still have been queued on node A when it died (a batch is acknowledged before it).
        assert episodes == indexed, "nothing half-written"
        assert vectors <= episodes
        assert episodes >= len(acknowledged)
        # Node B, idle, takes up the embeddings node A left (app/embedding_queue.py).
        deadline = time.monotonic() + BACKLOG_RESCAN_SECONDS + 60
        while _table_counts(postgres_url)[1] < episodes:
            assert time.monotonic() < deadline, "node B never embedded what node A left"
            time.sleep(0.5)

        with grpc.insecure_channel(b.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            stored = _list_everything(stub)
            keys = [e.client_key for e in stored]
            assert len(keys) == len(set(keys)), "no item is stored twice"
            assert acknowledged <= set(keys), "every acknowledged item survived the crash"
            # The client retries every batch through node B: only what is missing goes in.
            inserted = 0
            for call in range(CALLS):
                reply = _ingest(stub, _batch(call))
                assert reply.rejected == 0
                assert reply.inserted + reply.duplicate == ITEMS
                inserted += reply.inserted
            assert inserted == CALLS * ITEMS - len(stored)
            final = stub.VerifyChain(
                pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=A
            )
            assert final.ok
            assert final.length == CALLS * ITEMS
    finally:
        stop_reading.set()
        a.kill()
        assert b.terminate() == 0


def _table_counts(postgres_url: str) -> tuple[int, int, int]:
    """(episodes, embeddings, recall facts) stored."""
    with raw_database(ServerConfig(store=postgres_url)) as db:
        row = db.execute(
            "SELECT (SELECT count(*) FROM episodes), (SELECT count(*) FROM episode_vectors), "
            "(SELECT count(*) FROM recall_facts)"
        )[0]
    return int(row[0]), int(row[1]), int(row[2])
