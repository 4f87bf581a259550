"""`tutor-memory export` / `import` between stores, both ways (issue 15): every row comes back byte
for byte, every chain verifies, a checkpoint taken before the move still HOLDS after it, and the
imported store serves the same blocks."""

from __future__ import annotations

import asyncio
import gzip
import shutil
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from tests.helpers.course import STUDENT, SUBJECT, T0, at, check, give_course
from tests.helpers.harness import A, Harness, question, start_harness, stop_harness
from tests.helpers.postgres import PostgresCluster
from tutor_memory import cli
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.store.keyfile import KEY_FILE_NAME
from tutor_memory_client._proto import memory_pb2 as pb


async def run(*argv: str) -> int:
    return await asyncio.to_thread(cli.main, list(argv))


def store_args(config: ServerConfig) -> list[str]:
    return ["--store", config.store] if config.store else ["--data", str(config.data_dir)]


async def block(h: Harness) -> pb.BuildBlockReply:
    request = pb.BuildBlockRequest(
        student_id=STUDENT, subject_id=SUBJECT, query="what about osmosis?", budget_tokens=900
    )
    request.now.CopyFrom(at(T0 + timedelta(days=3)))
    reply: pb.BuildBlockReply = await h.stub.BuildBlock(request, metadata=A)
    return reply


async def fill(h: Harness) -> None:
    """A history that touches every table: a file with passages, checks and beliefs that
    supersede each other, an answer with its shown memories and grounding, the nightly cycle's
    digests, state, self-model and citation checks."""
    await give_course(h)
    await h.append(question("What is osmosis, really?", key="q1", seconds=int(T0.timestamp()) + 60))
    for i, right in enumerate((False, False, True, True, True)):
        await check(h, "Osmosis", right, T0 + timedelta(hours=i + 1), predicted=0.25 * (i % 4))
    shown = await block(h)
    answer = await h.append(
        pb.NewEpisode(
            student_id=STUDENT, subject_id=SUBJECT, kind=pb.EPISODE_KIND_ANSWER,
            summary="Osmosis moves water across a membrane.",
            text="Osmosis is the diffusion of water across a membrane.",
            occurred_at=at(T0 + timedelta(hours=7)),
        )
    )  # fmt: skip
    await h.stub.AnnotateAnswer(
        pb.AnnotateAnswerRequest(
            student_id=STUDENT, subject_id=SUBJECT, answer_episode_id=answer.episode.episode_id,
            block_id=shown.block_id, memory_ids=[m.episode_id for m in shown.memories],
        ),
        metadata=A,
    )  # fmt: skip
    reply = await h.stub.Consolidate(
        pb.ConsolidateRequest(now=at(T0 + timedelta(days=2))), metadata=A
    )
    assert reply.consolidation_episodes == 1


def content(path: Path) -> list[str]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return f.read().splitlines()


async def test_a_store_moves_to_the_other_engine_and_back_byte_for_byte(
    server_config: ServerConfig,
    embedder: UseOnnxEmbedder,
    postgres: PostgresCluster,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Runs from each engine: SQLite -> PostgreSQL -> SQLite, and PostgreSQL -> SQLite ->
    PostgreSQL."""
    source = server_config
    h = await start_harness(source, embedder)
    try:
        await fill(h)
        checkpoint = (
            await h.stub.Checkpoint(
                pb.CheckpointRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
            )
        ).checkpoint
        before = await block(h)
        listed = await h.list_all()
    finally:
        await stop_harness(h)

    other = (
        replace(source, store=postgres.create_database())
        if source.store is None
        else replace(source, store=None, data_dir=tmp_path / "moved")
    )
    back = (
        replace(source, store=None, data_dir=tmp_path / "back")
        if source.store is not None
        else replace(source, store=postgres.create_database())
    )
    files = [tmp_path / f"export{i}.jsonl.gz" for i in range(3)]
    assert await run("export", *store_args(source), "--out", str(files[0])) == 0
    assert await run("import", *store_args(other), str(files[0])) == 0
    assert "chains verified" in capsys.readouterr().out
    assert await run("export", *store_args(other), "--out", str(files[1])) == 0
    assert await run("import", *store_args(back), str(files[1])) == 0
    assert await run("export", *store_args(back), "--out", str(files[2])) == 0
    first = content(files[0])
    assert len(first) > 40
    tables = {line.split('"', 2)[1] for line in first[1:]}
    assert tables >= {
        "chains", "episodes", "episode_vectors", "annotations", "file_versions", "passages",
        "beliefs", "self_models", "nightly_state", "day_digests",
    }  # fmt: skip
    assert content(files[1]) == first
    assert content(files[2]) == first
    assert await run("verify", *store_args(other)) == 0

    # An import goes only into an empty store.
    assert await run("import", *store_args(other), str(files[0])) == 2
    assert "already holds chains" in capsys.readouterr().err

    # Every node of one service shares the server's key: the moved store is served with it.
    if other.store is None:
        key = source.data_dir / KEY_FILE_NAME
        shutil.copy(key, other.data_dir / KEY_FILE_NAME)
    else:
        other = replace(other, data_dir=source.data_dir)
    moved = await start_harness(other, embedder)
    try:
        verify = await moved.stub.VerifyChain(
            pb.VerifyChainRequest(student_id=STUDENT, subject_id=SUBJECT, checkpoint=checkpoint),
            metadata=A,
        )
        assert verify.ok
        assert verify.checkpoint_status == pb.CHECKPOINT_STATUS_HOLDS
        assert await moved.list_all() == listed
        after = await block(moved)
        assert after.text == before.text
        assert [m.episode_id for m in after.memories] == [m.episode_id for m in before.memories]
        # The moved chain goes on where it stopped.
        more = await moved.append(question("after the move", key="later"))
        assert more.episode.seq == len(listed) + 1
    finally:
        await stop_harness(moved)
