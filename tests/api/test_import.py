"""ImportEpisodes (issue 14): progress per committed chunk, interruption and resume; and the
embedding that follows an import's acknowledgement: visible by words and recency at once, the lag
reported by BuildBlock, and re-embedded after a restart that lost the queue."""

from __future__ import annotations

import asyncio

import grpc

from tests.helpers.harness import A, Harness, question, start_harness, stop_harness
from tutor_memory.app.config import ServerConfig
from tutor_memory.app.ingest import INGEST_CHUNK
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client import import_messages
from tutor_memory_client._proto import memory_pb2 as pb

CHAIN = ChainKey("tenant-a", "s1", "biology")


def _items(n: int, prefix: str = "item") -> list[pb.NewEpisode]:
    return [question(f"{prefix} {i}: why do cells divide?", key=f"{prefix}-{i}") for i in range(n)]


async def _block(h: Harness, query: str) -> pb.BuildBlockReply:
    reply: pb.BuildBlockReply = await h.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id="s1", subject_id="biology", query=query, budget_tokens=1500
        ),
        metadata=A,
    )
    return reply


async def test_import_acknowledges_every_chunk_once_it_is_committed(harness: Harness) -> None:
    items = _items(2 * INGEST_CHUNK + 50)
    replies: list[pb.ImportEpisodesReply] = []
    call = harness.stub.ImportEpisodes(import_messages(items), metadata=A)
    async for reply in call:
        replies.append(reply)
        # What a reply acknowledges is committed: listed before the next reply arrives.
        listed = {e.client_key for e in await harness.list_all()}
        acknowledged = {r.client_key for reply in replies for r in reply.items}
        assert acknowledged <= listed
    assert len(replies) == 3
    assert [len(r.items) for r in replies] == [INGEST_CHUNK, INGEST_CHUNK, 50]
    assert [r.index for reply in replies for r in reply.items] == list(range(len(items)))
    assert (replies[-1].inserted, replies[-1].duplicate, replies[-1].rejected) == (len(items), 0, 0)
    assert all(r.status == pb.INGEST_STATUS_INSERTED for reply in replies for r in reply.items)


async def test_an_interrupted_import_resends_only_what_was_not_acknowledged(
    harness: Harness,
) -> None:
    items = _items(4 * INGEST_CHUNK)
    call = harness.stub.ImportEpisodes(import_messages(items), metadata=A)
    first = await call.read()
    assert isinstance(first, pb.ImportEpisodesReply)
    call.cancel()  # the client goes away after its first acknowledgement
    acknowledged = {r.client_key for r in first.items}
    assert len(acknowledged) == INGEST_CHUNK

    await asyncio.sleep(0.5)  # a chunk already handed to the writer still commits
    stored = {e.client_key for e in await harness.list_all()}
    assert acknowledged <= stored

    rest = [ep for ep in items if ep.client_key not in acknowledged]
    resumed = [r async for r in harness.stub.ImportEpisodes(import_messages(rest), metadata=A)]
    last = resumed[-1]
    # What committed after the cut without being acknowledged comes back as a duplicate.
    assert last.inserted + last.duplicate == len(rest)
    assert last.rejected == 0
    assert last.duplicate == len(stored - acknowledged)
    keys = [e.client_key for e in await harness.list_all()]
    assert sorted(keys) == sorted(ep.client_key for ep in items)
    verify = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=A
    )
    assert verify.ok
    assert verify.length == len(items)


async def test_a_bad_token_ends_an_import_before_anything_is_stored(harness: Harness) -> None:
    call = harness.stub.ImportEpisodes(metadata=(("authorization", "Bearer wrong"),))
    # Written here rather than by grpc's own task from an iterator: a write that races the
    # server's refusal fails in that task, which then ends the call as INTERNAL ("Failed
    # execute_batch") in place of the server's status, as one CI run saw.
    try:
        for message in import_messages(_items(10)):
            await call.write(message)
        await call.done_writing()
    except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
        pass  # the server ended the call before every message was sent
    assert await call.code() == grpc.StatusCode.UNAUTHENTICATED
    assert await harness.list_all() == []


async def test_acknowledged_episodes_wait_for_their_vectors_and_a_restart_embeds_them(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    """The state a kill leaves between a commit and its embedding: the queue is stopped before
    the import, so nothing is embedded; a restart must embed every acknowledged episode."""
    h = await start_harness(server_config, embedder)
    try:
        h.app.services.embedding.stop()
        topics = ["osmosis moves water across a membrane", "mitochondria make energy"]
        items = [question(t, key=t) for t in topics] + _items(300)
        replies = [r async for r in h.stub.ImportEpisodes(import_messages(items), metadata=A)]
        assert replies[-1].inserted == len(items)
        assert replies[-1].vectors_pending == len(items)
        # Listed, recalled by words and by recency at once; not yet searchable by meaning.
        assert len(await h.list_all()) == len(items)
        block = await _block(h, "osmosis membrane")
        assert block.vectors_pending == len(items)
        assert "osmosis moves water across a membrane" in block.text
        assert h.app.services.vectors.count(CHAIN) == 0
    finally:
        await stop_harness(h)

    h = await start_harness(server_config, embedder)
    try:
        await h.vectors_settled()
        h.app.services.resident.ensure(CHAIN)
        assert h.app.services.vectors.count(CHAIN) == len(items)
        assert (await _block(h, "osmosis")).vectors_pending == 0
        query = embedder.embed(["water passing through a membrane"])[0]
        ids = h.app.services.vectors.neighbours(CHAIN, query, 1, centre=False).ids
        listed = {e.client_key: e.episode_id for e in await h.list_all()}
        assert ids.tolist() == [listed[topics[0]]]
        assert h.app.services.embedding.embedded() == len(items)
    finally:
        await stop_harness(h)
