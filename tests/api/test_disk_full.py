"""A full disk under the store: the write is refused with RESOURCE_EXHAUSTED naming the
cause, nothing of it stays (not even the new student's data key it made), the server keeps
serving, and once there is room the same write succeeds and survives a restart.

On SQLite the disk is filled for the database alone with `max_page_count`, which fails a write
that needs a new page exactly as a full disk does (SQLITE_FULL), and, as with a full disk,
SQLite ends the transaction itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import grpc
import psycopg
import pytest

from tests.helpers.harness import (
    A,
    Harness,
    question,
    start_harness,
    stop_harness,
    write_tokens_file,
)
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.store.sqlite.store import SqliteStore
from tutor_memory_client._proto import memory_pb2 as pb

# A text that needs pages the full database does not have.
LONG = "osmosis moves water across a membrane " * 1_000


def _fill(h: Harness, *, full: bool) -> None:
    store = h.app.services.store
    assert isinstance(store, SqliteStore)
    writer = store._writer  # the one connection that writes
    pages = writer.execute("PRAGMA page_count").fetchone()[0]
    writer.execute(f"PRAGMA max_page_count = {pages if full else 2**30}")


def _config(tmp_path: Path, store: str | None = None) -> ServerConfig:
    return ServerConfig(
        listen="127.0.0.1:0",
        data_dir=tmp_path / "data",
        tokens_file=write_tokens_file(tmp_path / "tokens.toml"),
        store=store,
    )


async def _refused_then_stored(
    h: Harness, fill: Callable[[], None], free: Callable[[], None]
) -> None:
    """One student's episode stored, the disk filled; a new student's long episode (its append
    also makes the student's data key) refused and kept nowhere while reads go on; the disk
    freed, the same episode stored."""
    await h.append(question("first", student="s1"))
    fill()
    episode = question("a long one", student="s2", key="k-long")
    episode.text = LONG
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await h.append(episode)
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "disk is full; nothing was written" in (err.value.details() or "")
    assert await h.list_all(student="s2") == []
    assert len(await h.list_all(student="s1")) == 1  # reads go on
    free()
    assert (await h.append(episode)).episode.text == LONG


async def _read_back(h: Harness) -> None:
    """The retried episode, read from the store with its words, in a chain that verifies."""
    (again,) = await h.list_all(student="s2")
    assert again.text == LONG
    verified = await h.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s2", subject_id="biology"), metadata=A
    )
    assert verified.ok


async def test_a_full_disk_refuses_the_write_keeps_nothing_and_the_retry_lasts(
    tmp_path: Path, embedder: UseOnnxEmbedder
) -> None:
    config = _config(tmp_path)
    h = await start_harness(config, embedder)
    try:
        await _refused_then_stored(h, lambda: _fill(h, full=True), lambda: _fill(h, full=False))
    finally:
        await stop_harness(h)
    h = await start_harness(config, embedder)  # the retry survives a restart
    try:
        await _read_back(h)
    finally:
        await stop_harness(h)


async def test_a_full_postgresql_disk_is_resource_exhausted_and_the_retry_lasts(
    tmp_path: Path, embedder: UseOnnxEmbedder, postgres_url: str
) -> None:
    """PostgreSQL's disk full (SQLSTATE 53100, "could not extend file") raised where a real one
    would come from, the episode insert, by a trigger that stands in for the disk."""

    def run(sql: str) -> None:
        with psycopg.connect(postgres_url, autocommit=True) as conn:
            conn.execute(sql.encode())

    h = await start_harness(_config(tmp_path, postgres_url), embedder)
    try:
        await _refused_then_stored(
            h, lambda: run(DISK_FULL_TRIGGER), lambda: run("DROP TRIGGER disk_full ON episodes")
        )
        await _read_back(h)
    finally:
        await stop_harness(h)


DISK_FULL_TRIGGER = """
CREATE OR REPLACE FUNCTION disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'could not extend file "base/1/2": No space left on device'
        USING ERRCODE = 'disk_full';
END;
$$;
CREATE TRIGGER disk_full BEFORE INSERT ON episodes FOR EACH STATEMENT EXECUTE FUNCTION disk_full();
"""
