"""OpenTelemetry tracing: off by default, switched on by OTEL_* variables; every Memory call is a
span, and a block's stages are spans under it (checked with the in-memory exporter)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from tests.helpers.harness import A, Harness, auth, question
from tutor_memory.api.server import create_server
from tutor_memory.app.config import ServerConfig
from tutor_memory.app.tracing import TracingConfigError, tracer_provider_from_env
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc


@pytest.mark.parametrize(
    "environ",
    [
        {},
        {"OTEL_TRACES_EXPORTER": "none"},
        {"OTEL_TRACES_EXPORTER": "console", "OTEL_SDK_DISABLED": "true"},
        {"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"},
    ],
)
def test_tracing_is_off_unless_an_exporter_is_named(environ: dict[str, str]) -> None:
    assert tracer_provider_from_env(environ) is None


def test_an_exporter_switches_tracing_on_with_the_environment_s_service_name() -> None:
    provider = tracer_provider_from_env({"OTEL_TRACES_EXPORTER": "otlp,console"})
    assert provider is not None
    assert provider.resource.attributes["service.name"] == "tutor-memory"
    provider.shutdown()


def test_an_unknown_exporter_is_refused_by_name() -> None:
    with pytest.raises(TracingConfigError, match="'zipkin'"):
        tracer_provider_from_env({"OTEL_TRACES_EXPORTER": "zipkin"})


async def test_every_call_is_a_span_and_a_block_s_stages_are_spans_under_it(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = await create_server(server_config, embedder=embedder, tracer_provider=provider)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    h = Harness(app, channel, pb_grpc.MemoryStub(channel), server_config)
    try:
        await h.append(question("What is osmosis?"))
        block = await h.stub.BuildBlock(
            pb.BuildBlockRequest(
                student_id="s1", subject_id="biology", query="osmosis", budget_tokens=500
            ),
            metadata=A,
        )
        with pytest.raises(grpc.aio.AioRpcError):
            await h.append(question("x"), md=auth("wrong"))
        await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    finally:
        await channel.close()
        await app.stop(1.0)
    spans = exporter.get_finished_spans()
    calls = [s for s in spans if s.kind is SpanKind.SERVER]
    names = [s.name for s in calls]
    assert names == [
        "/tutor_memory.v1.Memory/AppendEpisode",
        "/tutor_memory.v1.Memory/BuildBlock",
        "/tutor_memory.v1.Memory/AppendEpisode",
    ]  # the health check is not traced
    refused = calls[2]
    # The semantic conventions leave a server span's status unset for the caller's errors; the
    # code is an attribute.
    assert refused.status.status_code is StatusCode.UNSET
    assert refused.attributes is not None
    assert refused.attributes["rpc.grpc.status_code"] == grpc.StatusCode.UNAUTHENTICATED.value[0]
    build = calls[1]
    stages = [s for s in spans if s.name.startswith("block.")]
    assert [s.name.removeprefix("block.") for s in stages] == [n for n, _ in _timings(block)]
    for stage in stages:
        assert stage.parent is not None
        assert stage.parent.span_id == build.context.span_id
        assert stage.context.trace_id == build.context.trace_id
        assert stage.start_time is not None
        assert stage.end_time is not None
        assert build.start_time is not None
        assert build.end_time is not None
        assert build.start_time <= stage.start_time <= stage.end_time <= build.end_time


async def test_the_environment_alone_switches_a_server_s_tracing_on(
    server_config: ServerConfig, embedder: UseOnnxEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As an operator does it: no provider passed in, only the standard variables.
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    monkeypatch.setenv("OTEL_SERVICE_NAME", "tutor-memory-under-test")
    app = await create_server(server_config, embedder=embedder)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        provider = app.services.telemetry.tracer_provider
        assert provider is not None
        assert provider.resource.attributes["service.name"] == "tutor-memory-under-test"
        # Beside the console exporter the environment asked for, one the test can read.
        seen = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(seen))
        await pb_grpc.MemoryStub(channel).BuildBlock(
            pb.BuildBlockRequest(
                student_id="s1", subject_id="biology", query="osmosis", budget_tokens=500
            ),
            metadata=A,
        )
    finally:
        await channel.close()
        await app.stop(1.0)
    names = [s.name for s in seen.get_finished_spans()]
    assert "/tutor_memory.v1.Memory/BuildBlock" in names
    assert "block.compose" in names


def _timings(block: pb.BuildBlockReply) -> list[tuple[str, float]]:
    return [(t.stage, t.ms) for t in block.timings]


async def test_a_block_dropped_at_the_cap_is_counted(
    server_config: ServerConfig, embedder: UseOnnxEmbedder, tmp_path: Path
) -> None:
    config = replace(server_config, block_cap_seconds=1e-6)
    app = await create_server(config, embedder=embedder)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{app.port}")
    try:
        stub = pb_grpc.MemoryStub(channel)
        await stub.AppendEpisode(pb.AppendEpisodeRequest(episode=question("q")), metadata=A)
        reply = await stub.BuildBlock(
            pb.BuildBlockRequest(student_id="s1", subject_id="biology", query="q", budget_tokens=9),
            metadata=A,
        )
        assert reply.dropped
    finally:
        await channel.close()
        await app.stop(1.0)
    assert app.telemetry.metrics.blocks_dropped._value.get() == 1
