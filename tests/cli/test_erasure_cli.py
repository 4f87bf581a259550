"""`tutor-memory forget`, `master-key new` and `rotate-master-key`, offline on a stopped server's
store (both engines)."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path

import grpc
import pytest

from tests.helpers.harness import A, Harness, question, start_harness, stop_harness
from tutor_memory import cli
from tutor_memory.app.config import ServerConfig
from tutor_memory.app.root import ConfigError
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.store.masterkey import MASTER_KEY_FILE_NAME
from tutor_memory_client._proto import memory_pb2 as pb


async def run(*argv: str) -> int:
    return await asyncio.to_thread(cli.main, list(argv))


def where(config: ServerConfig) -> list[str]:
    """The store a command opens: the data directory (it holds the master key on both stores),
    and PostgreSQL's connection string."""
    return ["--data", str(config.data_dir), *(["--store", config.store] if config.store else [])]


async def written(config: ServerConfig, embedder: UseOnnxEmbedder) -> None:
    h = await start_harness(config, embedder)
    try:
        await h.append(question("Pangolin scales", student="s1"))
        await h.append(question("Pangolin again", student="s1", subject="math"))
        await h.append(question("Okapi stripes", student="s2"))
    finally:
        await stop_harness(h)


async def test_forget_erases_offline_once_and_names_an_unknown_student(
    server_config: ServerConfig, embedder: UseOnnxEmbedder, capsys: pytest.CaptureFixture[str]
) -> None:
    await written(server_config, embedder)
    args = ("forget", *where(server_config), "--tenant", "tenant-a")
    assert await run(*args, "--student", "s1", "--by", "dpo@school") == 0
    out = capsys.readouterr().out
    assert "erased tenant-a/s1" in out
    assert "2 chains, 2 episodes" in out
    assert await run(*args, "--student", "s1") == 0
    assert "already erased" in capsys.readouterr().out
    assert await run(*args, "--student", "nobody") == 2
    assert "no episode of this student" in capsys.readouterr().err
    assert await run("verify", *where(server_config)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert sum("(student erased)" in line for line in lines) == 2
    assert all(line.startswith("ok") for line in lines)

    h: Harness = await start_harness(server_config, embedder)
    try:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.list_all("s1")
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        verified = await h.stub.VerifyChain(
            pb.VerifyChainRequest(student_id="s1", subject_id="math"), metadata=A
        )
        assert verified.ok
        assert verified.erasure.erased_by == "dpo@school"
        assert [e.summary for e in await h.list_all("s2")] == ["Okapi stripes"]
    finally:
        await stop_harness(h)


async def test_rotation_rewraps_the_data_keys_and_the_old_key_no_longer_opens_them(
    server_config: ServerConfig,
    embedder: UseOnnxEmbedder,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    await written(server_config, embedder)
    data = server_config.data_dir
    old = data / MASTER_KEY_FILE_NAME
    new = tmp_path / "secrets" / "master-2.key"
    assert await run("master-key", "new", "--out", str(new)) == 0
    assert os.stat(new).st_mode & 0o777 == 0o600
    assert await run("master-key", "new", "--out", str(new)) == 2
    rotate = ("rotate-master-key", *where(server_config), "--new-master-key-file", str(new))
    assert await run(*rotate, "--master-key-file", str(old)) == 0
    assert "re-wrapped 2 data keys" in capsys.readouterr().out
    # Run again, it finds nothing left to re-wrap (an interrupted rotation can be resumed).
    assert await run(*rotate, "--master-key-file", str(new)) == 0
    assert "re-wrapped 0 data keys" in capsys.readouterr().out

    rotated = dataclasses.replace(server_config, master_key_file=new)
    h = await start_harness(rotated, embedder)
    try:
        assert [e.summary for e in await h.list_all("s1")] == ["Pangolin scales"]
    finally:
        await stop_harness(h)
    # The old master key still sits in the data directory: a server given it refuses to start,
    # naming both keys; the chains verify without any key.
    with pytest.raises(ConfigError, match="wrapped by another master key"):
        await start_harness(server_config, embedder)
    assert await run("verify", *where(server_config)) == 0


def test_a_master_key_file_that_is_not_a_key_stops_the_server_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.key"
    bad.write_text("not base64!\n")
    code = cli.main(
        ["serve", "--data", str(tmp_path / "d"), "--listen", "127.0.0.1:0", "--master-key-file",
         str(bad)]
    )  # fmt: skip
    assert code == 2
