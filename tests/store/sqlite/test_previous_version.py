"""A data directory written by the previous version (tests/fixtures/previous_version) opens,
migrates, reindexes its recall facts at start, verifies, and is recalled from."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import grpc
import pytest

from tests.helpers.harness import Harness, start_harness, stop_harness
from tests.helpers.paths import REPO_ROOT
from tutor_memory.app.config import DATABASE_FILE_NAME, ServerConfig
from tutor_memory.domain.recall.facts import FACTS_VERSION
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client._proto import memory_pb2 as pb

FIXTURE = REPO_ROOT / "tests" / "fixtures" / "previous_version" / DATABASE_FILE_NAME


@pytest.fixture
def old_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    data.mkdir()
    shutil.copy(FIXTURE, data / DATABASE_FILE_NAME)
    return data


async def test_a_previous_versions_data_directory_is_reindexed_and_recalled(
    old_data: Path, embedder: UseOnnxEmbedder
) -> None:
    with sqlite3.connect(old_data / DATABASE_FILE_NAME) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    config = ServerConfig(listen="127.0.0.1:0", data_dir=old_data)
    h: Harness = await start_harness(config, embedder)
    try:
        verified = await h.stub.VerifyChain(
            pb.VerifyChainRequest(student_id="ada", subject_id="biology")
        )
        assert verified.ok
        assert verified.length == 6
        block = await h.stub.BuildBlock(
            pb.BuildBlockRequest(
                student_id="ada", subject_id="biology", query="osmosis membrane", budget_tokens=400
            )
        )
        lines = "\n".join(m.line for m in block.memories)
        assert "Osmosis is the diffusion of water across a membrane." in lines
        italian = await h.stub.BuildBlock(
            pb.BuildBlockRequest(
                student_id="ada",
                subject_id="biology",
                query="cosa sai della fotosintesi?",
                budget_tokens=400,
            )
        )
        assert any("fotosintesi" in m.line for m in italian.memories)
    finally:
        await stop_harness(h)
    with sqlite3.connect(old_data / DATABASE_FILE_NAME) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        versions = conn.execute("SELECT DISTINCT version FROM recall_facts").fetchall()
        facts = conn.execute("SELECT count(*) FROM recall_facts").fetchone()[0]
    assert "episode_fts" not in tables
    assert versions == [(FACTS_VERSION,)]
    assert facts == 6


async def test_erasing_a_student_with_plaintext_history_is_refused_then_erases_all_it_can(
    old_data: Path, embedder: UseOnnxEmbedder
) -> None:
    """Chains written before sealing keep their words in the hashed rows: ForgetStudent says so
    and changes nothing, unless asked to erase everything else; the chain still verifies."""
    config = ServerConfig(listen="127.0.0.1:0", data_dir=old_data)
    h: Harness = await start_harness(config, embedder)
    try:
        # Appended after the upgrade: sealed, in the same chain as the plaintext history.
        added = await h.stub.AppendEpisode(
            pb.AppendEpisodeRequest(
                episode=pb.NewEpisode(
                    student_id="ada",
                    subject_id="biology",
                    kind=pb.EPISODE_KIND_QUESTION,
                    summary="Xylophagous beetles after the upgrade",
                )
            )
        )
        assert added.episode.seq == 7
        mixed = await h.stub.VerifyChain(
            pb.VerifyChainRequest(student_id="ada", subject_id="biology")
        )
        assert mixed.ok
        assert mixed.length == 7

        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.stub.ForgetStudent(pb.ForgetStudentRequest(student_id="ada"))
        assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "6 of their 7 episodes were written before" in (err.value.details() or "")
        still = await h.stub.ListEpisodes(
            pb.ListEpisodesRequest(student_id="ada", subject_id="biology")
        )
        assert len(still.episodes) == 7

        reply = await h.stub.ForgetStudent(
            pb.ForgetStudentRequest(student_id="ada", allow_plaintext_history=True)
        )
        assert reply.erasure.plaintext_history_kept
        assert (reply.erasure.episodes, reply.erasure.plaintext_episodes) == (7, 6)
        verified = await h.stub.VerifyChain(
            pb.VerifyChainRequest(student_id="ada", subject_id="biology")
        )
        assert verified.ok
        assert verified.erased
        assert verified.erasure.plaintext_history_kept
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.stub.ListEpisodes(
                pb.ListEpisodesRequest(student_id="ada", subject_id="biology")
            )
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        block = await h.stub.BuildBlock(
            pb.BuildBlockRequest(
                student_id="ada", subject_id="biology", query="osmosis membrane", budget_tokens=400
            )
        )
        assert not block.memories
    finally:
        await stop_harness(h)
    database = old_data / DATABASE_FILE_NAME
    on_disk = database.read_bytes()
    # What erasure can do: the sealed episode's words and every derived copy are gone. What it
    # cannot: the plaintext history stays in the hashed rows, readable with the file.
    assert b"Xylophagous" not in on_disk
    assert b"Osmosis is the diffusion of water across a membrane." in on_disk
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM recall_facts").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM episode_vectors").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM beliefs").fetchone()[0] == 0
