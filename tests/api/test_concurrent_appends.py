"""Appends that reach the writer together commit as one transaction (app/group_commit.py) and
behave exactly as if committed one after another: one chain without gaps or forks, every
acknowledged episode stored, a client key stored once."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import grpc
import pytest

from tests.helpers.harness import A, Harness, question
from tutor_memory_client._proto import memory_pb2 as pb

# Seconds the test waits for the appends to queue behind the held writer thread.
QUEUE_WAIT_S = 30.0


def count_transactions(h: Harness, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the store's write transactions from now on (one element per transaction)."""
    store = h.app.services.store
    opened: list[int] = []
    real: Callable[[], AbstractContextManager[Any]] = store.writing

    @contextmanager
    def writing() -> Iterator[Any]:
        opened.append(1)
        with real() as w:
            yield w

    monkeypatch.setattr(store, "writing", writing)
    return opened


async def wait_for_queued(h: Harness, count: int) -> None:
    deadline = time.monotonic() + QUEUE_WAIT_S
    while h.app.services.ledger.writes_waiting() < count:
        assert time.monotonic() < deadline, "the appends never reached the writer"
        await asyncio.sleep(0.01)


async def append_outcome(
    h: Harness, episode: pb.NewEpisode
) -> pb.AppendEpisodeReply | grpc.StatusCode:
    try:
        return await h.append(episode)
    except grpc.aio.AioRpcError as exc:
        return exc.code()


async def test_appends_waiting_together_commit_once_as_a_chain_without_gaps(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    await harness.append(question("the first question, alone", key="first"))
    release = threading.Event()
    harness.app.services.executors.writer.submit(release.wait)
    transactions = count_transactions(harness, monkeypatch)
    plain = [question(f"question {i} about cells", key=f"q{i}") for i in range(10)]
    same_twice = [question("what is osmosis?", key="same")] * 2
    clashing = [
        question("what is diffusion?", key="clash"),
        question("what is mitosis?", key="clash"),
    ]
    episodes = plain + same_twice + clashing
    calls = [asyncio.create_task(append_outcome(harness, ep)) for ep in episodes]
    registry = harness.app.services.telemetry.metrics.registry
    try:
        await wait_for_queued(harness, len(episodes))
        # Operators see the queue: the gauge a scrape reads.
        assert registry.get_sample_value("tutor_memory_writes_waiting") == len(episodes)
    finally:
        release.set()
    results = await asyncio.gather(*calls)
    assert len(transactions) == 1
    assert registry.get_sample_value("tutor_memory_writes_waiting") == 0

    replies = [r for r in results if isinstance(r, pb.AppendEpisodeReply)]
    for reply in results[: len(plain)]:
        assert isinstance(reply, pb.AppendEpisodeReply)
        assert not reply.duplicate
    first, second = results[len(plain) : len(plain) + 2]
    assert isinstance(first, pb.AppendEpisodeReply)
    assert isinstance(second, pb.AppendEpisodeReply)
    # The same client key and content, twice in one group: stored once, the other a duplicate.
    assert sorted([first.duplicate, second.duplicate]) == [False, True]
    assert first.episode.episode_id == second.episode.episode_id
    # The same key with other content: one stored, the other refused.
    clash = results[len(plain) + 2 :]
    assert sorted(str(r) for r in clash if not isinstance(r, pb.AppendEpisodeReply)) == [
        str(grpc.StatusCode.ALREADY_EXISTS)
    ]

    # Listed by when they occurred (each at its own call's arrival); linked in commit order.
    stored = sorted(await harness.list_all(), key=lambda e: e.seq)
    assert [e.seq for e in stored] == list(range(1, len(stored) + 1))
    # The first question, ten plain, one of the same pair, one of the clashing pair.
    assert len(stored) == 1 + len(plain) + 2
    by_id = {e.episode_id: e for e in stored}
    for reply in replies:
        assert by_id[reply.episode.episode_id].hash == reply.episode.hash
    verify = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=A
    )
    assert verify.ok
    assert verify.length == len(stored)


async def test_appends_to_several_chains_in_one_group_each_extend_their_own_chain(
    harness: Harness,
) -> None:
    release = threading.Event()
    harness.app.services.executors.writer.submit(release.wait)
    students = ["s1", "s2", "s3"]
    episodes = [
        question(f"turn {i}", student=s, key=f"{s}-{i}") for i in range(4) for s in students
    ]
    calls = [asyncio.create_task(harness.append(ep)) for ep in episodes]
    try:
        await wait_for_queued(harness, len(episodes))
    finally:
        release.set()
    await asyncio.gather(*calls)
    for student in students:
        stored = sorted(await harness.list_all(student=student), key=lambda e: e.seq)
        assert [e.seq for e in stored] == [1, 2, 3, 4]
        verify = await harness.stub.VerifyChain(
            pb.VerifyChainRequest(student_id=student, subject_id="biology"), metadata=A
        )
        assert verify.ok
        assert verify.length == 4


async def test_an_append_abandoned_while_its_text_waits_for_the_model_leaves_appends_working(
    harness: Harness,
) -> None:
    release = threading.Event()
    pool = harness.app.services.executors.embed
    # Both embed threads busy: the append's text waits in the batcher.
    held = [pool.submit(release.wait) for _ in range(2)]
    with pytest.raises(grpc.aio.AioRpcError) as cut:
        await harness.stub.AppendEpisode(
            pb.AppendEpisodeRequest(episode=question("left behind", key="gone")),
            metadata=A,
            timeout=0.5,
        )
    assert cut.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    release.set()
    for gate in held:
        gate.result(5)
    reply = await asyncio.wait_for(harness.append(question("after it", key="next")), 30)
    assert not reply.duplicate
    stored = await harness.list_all()
    assert [e.client_key for e in stored] == ["next"]
