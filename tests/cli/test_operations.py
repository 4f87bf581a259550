"""`tutor-memory ingest` and `tutor-memory consolidate` against a real server and, offline, a
stopped server's data directory."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

import pytest

from tests.fixtures.biology.make_pdf import FIXTURE_DIR
from tests.helpers.course import STUDENT, SUBJECT, T0, check, give_course
from tests.helpers.harness import TOKEN_A, Harness, start_harness, stop_harness
from tutor_memory import cli
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client._proto import memory_pb2 as pb


async def run(*argv: str) -> int:
    # The CLI's blocking gRPC calls must not run on the loop that serves them.
    return await asyncio.to_thread(cli.main, list(argv))


async def test_ingest_sends_every_file_and_reports_a_bad_one(
    harness: Harness, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.pdf"
    broken.write_bytes(b"%PDF-1.7 not really")
    code = await run(
        "ingest",
        str(FIXTURE_DIR / "cells.md"),
        str(broken),
        str(FIXTURE_DIR / "organelles.txt"),
        "--student", STUDENT, "--subject", SUBJECT,
        "--target", f"127.0.0.1:{harness.app.port}", "--token", TOKEN_A,
    )  # fmt: skip
    assert code == 1
    err = capsys.readouterr().err
    assert "broken.pdf: FAILED" in err
    assert "cells.md: version 1, 9 pages" in err
    reply = await harness.stub.GetMap(
        pb.GetMapRequest(student_id=STUDENT, subject_id=SUBJECT),
        metadata=(("authorization", f"Bearer {TOKEN_A}"),),
    )
    files = {p.file_id for n in reply.nodes for p in n.provenance}
    assert files == {"cells.md", "organelles.txt"}


async def test_consolidate_through_the_server(
    harness: Harness, capsys: pytest.CaptureFixture[str]
) -> None:
    await give_course(harness)
    await check(harness, "Osmosis", False, T0 + timedelta(hours=2))
    # The end of T0's day: its episodes are digested once it has ended.
    now = (T0 + timedelta(hours=15)).isoformat()
    target = f"127.0.0.1:{harness.app.port}"
    assert await run("consolidate", "--target", target, "--token", TOKEN_A, "--now", now) == 0
    assert "consolidation episodes: 1," in capsys.readouterr().out
    assert await run("consolidate", "--target", target, "--token", TOKEN_A, "--now", now) == 0
    assert "already done: 1" in capsys.readouterr().out


async def test_consolidate_offline_on_a_stopped_servers_data(
    server_config: ServerConfig, embedder: UseOnnxEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    h = await start_harness(server_config, embedder)
    try:
        await give_course(h)
        await check(h, "Osmosis", False, T0 + timedelta(hours=2))
    finally:
        await stop_harness(h)
    # The end of T0's day: its episodes are digested once it has ended.
    now = (T0 + timedelta(hours=15)).isoformat()
    where = ["--data", str(server_config.data_dir)]
    if server_config.store:
        where += ["--store", server_config.store]
    code = await run("consolidate", *where, "--now", now)
    assert code == 0
    assert "consolidation episodes: 1," in capsys.readouterr().out

    h = await start_harness(server_config, embedder)
    try:
        kinds = [e.kind for e in await h.list_all()]
        assert kinds.count(pb.EPISODE_KIND_CONSOLIDATION) == 1
        verified = await h.stub.VerifyChain(
            pb.VerifyChainRequest(student_id=STUDENT, subject_id=SUBJECT),
            metadata=(("authorization", f"Bearer {TOKEN_A}"),),
        )
        assert verified.ok
    finally:
        await stop_harness(h)


def test_consolidate_needs_exactly_one_of_target_and_data(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["consolidate"]) == 2
    assert "either --target" in capsys.readouterr().err
