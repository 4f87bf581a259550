"""R10.5: restarts keep everything; a kill -9 mid-batch loses no acknowledged item."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import grpc
import pytest

from tests.helpers.harness import (
    TOKEN_A,
    A,
    question,
    start_harness,
    stop_harness,
    write_tokens_file,
)
from tests.helpers.server_process import ServerProcess
from tutor_memory.app.config import DATABASE_FILE_NAME, ServerConfig
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc


async def test_restart_keeps_episodes_and_rebuilds_the_vector_index(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    topics = [
        "mitochondria make energy",
        "osmosis moves water",
        "the French Revolution",
        "fractions",
    ]
    h = await start_harness(server_config, embedder)
    await h.ingest([question(t, key=t) for t in topics])
    before = await h.list_all()
    await stop_harness(h)

    h = await start_harness(server_config, embedder)
    try:
        after = await h.list_all()
        assert after == before
        chain = ChainKey("tenant-a", "s1", "biology")
        # Nothing is loaded at start: the chain loads on its first read.
        assert not h.app.services.resident.is_resident(chain)
        h.app.services.resident.ensure(chain)
        assert h.app.services.vectors.count(chain) == len(topics)
        query = embedder.embed(["how does water cross a membrane?"])[0]
        ids = h.app.services.vectors.neighbours(chain, query, 1, centre=False).ids
        assert ids.tolist() == [before[1].episode_id]
        verify = await h.stub.VerifyChain(
            pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=A
        )
        assert verify.ok
        assert verify.length == len(topics)
        # The chain goes on where it stopped.
        more = await h.append(question("after the restart"))
        assert more.episode.seq == len(topics) + 1
        assert more.episode.prev_hash == before[-1].hash
    finally:
        await stop_harness(h)


# The crash test streams CALLS batches of ITEMS each and kills the server after KILL_AFTER calls
# were acknowledged, while the next call is in flight.
CALLS = 12
ITEMS = 600
KILL_AFTER = 2


def _batch(call: int) -> list[pb.NewEpisode]:
    return [
        question(f"call {call} item {i}: why do cells divide?", key=f"c{call}-i{i}")
        for i in range(ITEMS)
    ]


def _ingest(stub: pb_grpc.MemoryStub, batch: list[pb.NewEpisode]) -> pb.IngestEpisodesReply:
    reply: pb.IngestEpisodesReply = stub.IngestEpisodes(
        ingest_messages(batch),
        metadata=(("authorization", f"Bearer {TOKEN_A}"),),
        timeout=120,
    )
    return reply


def _table_counts(data_dir: Path) -> tuple[int, int, int]:
    with sqlite3.connect(data_dir / DATABASE_FILE_NAME) as conn:
        episodes = conn.execute("SELECT count(*) FROM episodes").fetchone()[0]
        vectors = conn.execute("SELECT count(*) FROM episode_vectors").fetchone()[0]
        facts = conn.execute("SELECT count(*) FROM recall_facts").fetchone()[0]
    return episodes, vectors, facts


@pytest.mark.slow
def test_kill_9_mid_batch_loses_no_acknowledged_item(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    tokens = write_tokens_file(tmp_path / "tokens.toml")
    server = ServerProcess(data_dir, tokens)
    server.wait_ready()
    sent = {ep.client_key: ep for call in range(CALLS) for ep in _batch(call)}
    acknowledged: set[str] = set()
    acked_calls = 0
    in_flight_failed = threading.Event()

    def client() -> None:
        nonlocal acked_calls
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            for call in range(CALLS):
                try:
                    reply = _ingest(stub, _batch(call))
                except grpc.RpcError:
                    in_flight_failed.set()
                    return
                acknowledged.update(r.client_key for r in reply.items)
                acked_calls += 1

    thread = threading.Thread(target=client)
    thread.start()
    while acked_calls < KILL_AFTER and thread.is_alive():
        time.sleep(0.01)
    time.sleep(0.15)  # well inside the next call's stream
    server.kill()
    thread.join(timeout=60)
    assert in_flight_failed.is_set(), "the kill must land while a call is in flight"
    assert len(acknowledged) >= KILL_AFTER * ITEMS

    # Nothing half-written: every stored episode has its recall facts; its embedding may still
    # have been queued when the server died (the batch was acknowledged before it).
    episodes, vectors, facts = _table_counts(data_dir)
    assert episodes == facts
    assert vectors <= episodes
    assert episodes >= len(acknowledged)

    restarted = ServerProcess(data_dir, tokens)
    restarted.wait_ready()
    try:
        with grpc.insecure_channel(restarted.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            stored = _list_everything(stub)
            keys = [e.client_key for e in stored]
            assert len(keys) == len(set(keys)), "no item is stored twice"
            assert acknowledged <= set(keys), "every acknowledged item survived the crash"
            for ep in stored:
                assert ep.summary == sent[ep.client_key].summary
                assert ep.text == sent[ep.client_key].text
            assert _verify(stub).ok

            # The client retries everything it did not hear back about; keys make it safe.
            for call in range(CALLS):
                reply = _ingest(stub, _batch(call))
                assert reply.rejected == 0
                assert reply.inserted + reply.duplicate == ITEMS
            final = _verify(stub)
            assert final.ok
            assert final.length == CALLS * ITEMS
            # The embeddings lost with the queue are computed again after the restart.
            _wait_for_vectors(stub)
        assert _table_counts(data_dir) == (CALLS * ITEMS,) * 3
    finally:
        assert restarted.terminate() == 0


def _wait_for_vectors(stub: pb_grpc.MemoryStub, timeout: float = 120.0) -> None:
    """Until BuildBlock reports no episode of the chain waiting for its embedding."""
    request = pb.BuildBlockRequest(
        student_id="s1", subject_id="biology", query="cells", budget_tokens=300
    )
    deadline = time.monotonic() + timeout
    while stub.BuildBlock(request, metadata=A).vectors_pending:
        assert time.monotonic() < deadline, "the embeddings never caught up"
        time.sleep(0.2)


def _list_everything(stub: pb_grpc.MemoryStub) -> list[pb.Episode]:
    request = pb.ListEpisodesRequest(student_id="s1", subject_id="biology", page_size=1000)
    out: list[pb.Episode] = []
    while True:
        reply = stub.ListEpisodes(request, metadata=A)
        out.extend(reply.episodes)
        if not reply.next_page_token:
            return out
        request.page_token = reply.next_page_token


def _verify(stub: pb_grpc.MemoryStub) -> pb.VerifyChainReply:
    reply: pb.VerifyChainReply = stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=A
    )
    return reply
