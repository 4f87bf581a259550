"""Standard gRPC citizenship (R10.3) and start-up rules: reflection, deadlines, message limits,
development mode, TLS, graceful shutdown, and refusing a model that fails its checksum."""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path

import grpc
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.helpers.harness import A, Harness, question, start_harness, stop_harness
from tests.helpers.server_process import ServerProcess
from tutor_memory.api.server import ConfigError, create_server
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.models.fetch import MODEL_FILE_NAME
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc


async def test_reflection_lists_the_memory_service(harness: Harness) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(harness.channel)
    responses = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names = set()
    async for response in responses:
        names |= {s.name for s in response.list_services_response.service}
    assert "tutor_memory.v1.Memory" in names
    assert "grpc.health.v1.Health" in names


async def test_expired_deadline_is_deadline_exceeded_and_server_keeps_serving(
    harness: Harness,
) -> None:
    batch = [question(f"q{i}", key=f"k{i}") for i in range(2000)]
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.IngestEpisodes(ingest_messages(batch), metadata=A, timeout=0.05)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert (await harness.append(question("still here"))).episode.summary == "still here"


async def test_oversized_message_is_resource_exhausted(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    from dataclasses import replace

    h = await start_harness(replace(server_config, max_message_bytes=64 * 1024), embedder)
    try:
        ep = question("big")
        ep.text = "x" * (128 * 1024)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await h.append(ep)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert await h.list_all() == []
    finally:
        await stop_harness(h)


async def test_development_mode_binds_loopback_only(
    tmp_path: Path, embedder: UseOnnxEmbedder
) -> None:
    with pytest.raises(ConfigError, match="loopback"):
        await create_server(ServerConfig(listen="0.0.0.0:0", data_dir=tmp_path), embedder=embedder)


async def test_a_negative_count_of_import_processes_is_refused_naming_the_flag(
    tmp_path: Path, embedder: UseOnnxEmbedder
) -> None:
    config = ServerConfig(listen="127.0.0.1:0", data_dir=tmp_path, import_processes=-1)
    with pytest.raises(ConfigError, match="--import-processes must be at least 0, got -1"):
        await create_server(config, embedder=embedder)


@pytest.mark.parametrize("count", [-1, 2])
async def test_a_count_of_file_processes_other_than_0_or_1_is_refused_naming_the_flag(
    tmp_path: Path, embedder: UseOnnxEmbedder, count: int
) -> None:
    config = ServerConfig(listen="127.0.0.1:0", data_dir=tmp_path, file_processes=count)
    with pytest.raises(ConfigError, match=f"--file-processes must be 0 or 1, got {count}"):
        await create_server(config, embedder=embedder)


async def test_development_mode_serves_one_tenant_without_tokens(
    tmp_path: Path, embedder: UseOnnxEmbedder
) -> None:
    h = await start_harness(ServerConfig(listen="127.0.0.1:0", data_dir=tmp_path), embedder)
    try:
        reply = await h.append(question("no token needed"), md=())
        assert reply.episode.seq == 1
    finally:
        await stop_harness(h)


def _self_signed(tmp_path: Path) -> tuple[Path, Path, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    cert_path, key_path = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_path.write_bytes(cert_pem)
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path, cert_pem


async def test_tls_serves_a_client_that_trusts_the_certificate(
    tmp_path: Path, embedder: UseOnnxEmbedder
) -> None:
    cert, key, cert_pem = _self_signed(tmp_path)
    config = ServerConfig(
        listen="localhost:0", data_dir=tmp_path / "data", tls_cert=cert, tls_key=key
    )
    app = await create_server(config, embedder=embedder)
    creds = grpc.ssl_channel_credentials(root_certificates=cert_pem)
    channel = grpc.aio.secure_channel(f"localhost:{app.port}", creds)
    try:
        stub = pb_grpc.MemoryStub(channel)
        reply = await stub.AppendEpisode(pb.AppendEpisodeRequest(episode=question("over tls")))
        assert reply.episode.seq == 1
    finally:
        await channel.close()
        await app.stop(1.0)


@pytest.mark.slow
def test_sigterm_stops_gracefully(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", None)
    server.wait_ready()
    assert server.terminate() == 0
    assert any('"msg": "stopped"' in line for line in server.lines)


@pytest.mark.slow
def test_server_refuses_to_start_on_a_model_checksum_mismatch(tmp_path: Path) -> None:
    model_dir = tmp_path / "models"
    model_dir.mkdir()
    (model_dir / MODEL_FILE_NAME).write_bytes(b"not the pinned model")
    server = ServerProcess(tmp_path / "data", None, "--model-dir", str(model_dir))
    assert server.wait_exit() == 2
    log = "".join(server.lines)
    assert "cannot start" in log
    assert "sha256" in log


async def test_calls_in_flight_finish_during_graceful_stop(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    h = await start_harness(server_config, embedder)
    batch = [question(f"q{i}", key=f"k{i}") for i in range(1500)]
    call = asyncio.ensure_future(h.ingest(batch))
    await asyncio.sleep(0.2)
    await h.app.server.stop(grace=30)
    reply = await call
    assert reply.inserted == len(batch)
    await h.channel.close()
    h.app.services.close()
