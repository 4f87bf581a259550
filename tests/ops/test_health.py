"""Health that means something: liveness answers SERVING while the process runs; readiness
(service "" and tutor_memory.v1.Memory) is NOT_SERVING while the server loads and while its
store cannot be reached, and Memory calls wait for the load with UNAVAILABLE."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from dataclasses import replace
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.helpers.harness import A, question, start_harness, stop_harness
from tutor_memory.api import server as server_module
from tutor_memory.api.server import LIVENESS_SERVICE, create_server
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
READINESS = ("", "tutor_memory.v1.Memory")
# How long a test waits for the readiness probe to notice a change.
NOTICE_SECONDS = 10.0


class _Listening(logging.Handler):
    """Catches the server's "listening" line (logged on the event loop) and its port."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.event = asyncio.Event()
        self.port = 0

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("listening"):
            self.port = int(record.__dict__["port"])
            self.event.set()


async def _status(channel: grpc.aio.Channel, service: str) -> int:
    reply = await health_pb2_grpc.HealthStub(channel).Check(
        health_pb2.HealthCheckRequest(service=service), timeout=5
    )
    status: int = reply.status
    return status


async def _wait_for(channel: grpc.aio.Channel, service: str, wanted: int) -> None:
    deadline = time.monotonic() + NOTICE_SECONDS
    while await _status(channel, service) != wanted:
        assert time.monotonic() < deadline, f"{service!r} never became {wanted}"
        await asyncio.sleep(0.05)


async def test_while_loading_only_liveness_serves_and_calls_are_unavailable(
    server_config: ServerConfig,
    embedder: UseOnnxEmbedder,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = threading.Event()
    real_load = server_module._load

    def slow_load(*args: Any) -> Any:
        release.wait(timeout=60)
        return real_load(*args)

    monkeypatch.setattr(server_module, "_load", slow_load)
    caplog.set_level(logging.INFO, logger="tutor_memory.server")
    listening = _Listening()
    logging.getLogger("tutor_memory.server").addHandler(listening)
    starting = asyncio.create_task(create_server(server_config, embedder=embedder))
    try:
        await asyncio.wait_for(listening.event.wait(), NOTICE_SECONDS)
    finally:
        logging.getLogger("tutor_memory.server").removeHandler(listening)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{listening.port}")
    try:
        assert await _status(channel, LIVENESS_SERVICE) == SERVING
        for service in READINESS:
            assert await _status(channel, service) == NOT_SERVING
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await pb_grpc.MemoryStub(channel).AppendEpisode(
                pb.AppendEpisodeRequest(episode=question("too early")), metadata=A
            )
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "loading" in (err.value.details() or "")
        release.set()
        app = await starting
        try:
            for service in (*READINESS, LIVENESS_SERVICE):
                assert await _status(channel, service) == SERVING
            await pb_grpc.MemoryStub(channel).AppendEpisode(
                pb.AppendEpisodeRequest(episode=question("now")), metadata=A
            )
        finally:
            await app.stop(1.0)
    finally:
        release.set()
        await channel.close()


# A SQLite file moved away; PostgreSQL stopped and started again is
# tests/api/test_postgres_failures.py.
@pytest.mark.parametrize("store_kind", ["sqlite"])
async def test_readiness_follows_the_store_and_liveness_stays_up(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    h = await start_harness(replace(server_config, readiness_probe_seconds=0.05), embedder)
    database = server_config.database_path
    away = database.with_name("elsewhere.sqlite3")
    try:
        await h.append(question("stored"))
        assert h.app.telemetry.metrics.ready._value.get() == 1
        database.rename(away)  # the store can no longer be opened where the server keeps it
        try:
            for service in READINESS:
                await _wait_for(h.channel, service, NOT_SERVING)
            assert await _status(h.channel, LIVENESS_SERVICE) == SERVING
            assert h.app.telemetry.metrics.ready._value.get() == 0
        finally:
            away.rename(database)
        for service in READINESS:
            await _wait_for(h.channel, service, SERVING)
        assert [e.summary for e in await h.list_all()] == ["stored"]
    finally:
        await stop_harness(h)
