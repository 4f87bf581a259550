"""A data directory written by the previous version (tests/fixtures/previous_version) opens,
migrates, reindexes its recall facts at start, verifies, and is recalled from."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

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
