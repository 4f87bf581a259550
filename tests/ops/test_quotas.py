"""Per-tenant quotas on a real server: over its rate a tenant gets RESOURCE_EXHAUSTED with a
RetryInfo; at its episode ceiling, RESOURCE_EXHAUSTED and nothing written; and a noisy tenant
held to its rate leaves another tenant's latency where it was."""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from tests.helpers.harness import Harness, auth, question, start_harness, stop_harness
from tests.helpers.server_process import ServerProcess
from tutor_memory.api.auth import token_sha256
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

ROOT = Path(__file__).resolve().parents[2]
LOUD, QUIET, SMALL = "loud-token", "quiet-token", "small-token"
DETAILS_TRAILER = "grpc-status-details-bin"


def _tokens(loud_rate: float | None) -> str:
    body = "".join(
        f'[[tokens]]\ntenant = "{tenant}"\nsha256 = "{token_sha256(token)}"\n\n'
        for tenant, token in (("loud", LOUD), ("quiet", QUIET), ("small", SMALL))
    )
    if loud_rate is not None:
        body += f"[tenants.loud]\nrequests_per_second = {loud_rate}\nburst = {int(loud_rate)}\n\n"
    return body + "[tenants.small]\nmax_episodes = 3\n"


@pytest.fixture
async def limited(tmp_path: Path, embedder: UseOnnxEmbedder) -> AsyncIterator[Harness]:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(_tokens(loud_rate=5))
    config = ServerConfig(listen="127.0.0.1:0", data_dir=tmp_path / "data", tokens_file=tokens)
    h = await start_harness(config, embedder)
    try:
        yield h
    finally:
        await stop_harness(h)


def _details(err: grpc.aio.AioRpcError) -> list[object]:
    """The google.rpc details of the status in the `grpc-status-details-bin` trailer."""
    trailers = dict(err.trailing_metadata() or ())
    raw = trailers.get(DETAILS_TRAILER)
    assert isinstance(raw, bytes), "no google.rpc.Status in the trailers"
    status = status_pb2.Status.FromString(raw)
    assert status.code == err.code().value[0]
    out: list[object] = []
    for any_detail in status.details:
        for kind in (error_details_pb2.RetryInfo, error_details_pb2.QuotaFailure):
            if any_detail.Is(kind.DESCRIPTOR):
                detail = kind()
                any_detail.Unpack(detail)
                out.append(detail)
    return out


async def test_over_its_rate_a_tenant_is_told_when_to_retry(limited: Harness) -> None:
    request = pb.ListEpisodesRequest(student_id="s1", subject_id="biology")
    refused: grpc.aio.AioRpcError | None = None
    for _ in range(6):  # a burst of 5, then the bucket is empty
        try:
            await limited.stub.ListEpisodes(request, metadata=auth(LOUD))
        except grpc.aio.AioRpcError as err:
            refused = err
            break
    assert refused is not None
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "requests per second" in (refused.details() or "")
    retry, failure = _details(refused)
    assert isinstance(retry, error_details_pb2.RetryInfo)
    wait = retry.retry_delay.seconds + retry.retry_delay.nanos / 1e9
    assert 0 < wait <= 0.2  # one token comes back every 1/5 s
    assert isinstance(failure, error_details_pb2.QuotaFailure)
    assert failure.violations[0].subject == "tenant:loud"
    # Another tenant is not limited, and the loud one is let in again after the hinted wait.
    await limited.stub.ListEpisodes(request, metadata=auth(QUIET))
    await asyncio.sleep(wait)
    await limited.stub.ListEpisodes(request, metadata=auth(LOUD))
    metrics = limited.app.telemetry.metrics
    denied = metrics.quota_denials.labels("loud", "requests_per_second")._value.get()
    assert denied == 1


async def test_at_its_episode_ceiling_a_tenant_writes_nothing_more(limited: Harness) -> None:
    for i in range(3):
        await limited.append(question(f"q{i}", key=f"k{i}"), md=auth(SMALL))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await limited.append(question("one too many"), md=auth(SMALL))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "limit is 3" in (err.value.details() or "")
    (failure,) = _details(err.value)  # no RetryInfo: waiting does not help
    assert isinstance(failure, error_details_pb2.QuotaFailure)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await limited.ingest([question("batch", key="b1")], md=auth(SMALL))
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert [e.summary for e in await limited.list_all(md=auth(SMALL))] == ["q0", "q1", "q2"]
    # Reads still work at the ceiling.
    await limited.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=auth(SMALL)
    )


def _quiet_latencies(stub: pb_grpc.MemoryStub, calls: int) -> list[float]:
    request = pb.BuildBlockRequest(
        student_id="calm", subject_id="biology", query="what is osmosis?", budget_tokens=800
    )
    out = []
    for _ in range(calls):
        t0 = time.perf_counter()
        stub.BuildBlock(request, metadata=auth(QUIET), timeout=10)
        out.append(time.perf_counter() - t0)
    return out


def _noise(target: str, seconds: float) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "tests.helpers.noisy_tenant", "--target", target]
    args += ["--token", LOUD, "--seconds", str(seconds), "--threads", "6"]
    return subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_a_noisy_tenant_held_to_its_rate_leaves_the_others_latency_alone(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(_tokens(loud_rate=20))
    server = ServerProcess(tmp_path / "data", tokens)
    server.wait_ready()
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            for token, student in ((QUIET, "calm"), (LOUD, "loud")):
                batch = [
                    question(f"osmosis note {i}", student=student, key=f"k{i}") for i in range(300)
                ]
                stub.IngestEpisodes(ingest_messages(batch), metadata=auth(token))
            _quiet_latencies(stub, 10)  # warm up
            alone = statistics.median(_quiet_latencies(stub, 60))
            noise = _noise(server.target, seconds=8)
            time.sleep(1.0)
            held = statistics.median(_quiet_latencies(stub, 60))
            out, _ = noise.communicate(timeout=60)
            counts = json.loads(out)
            # The same noise with no limit: the control, showing what the limit prevents.
            tokens.write_text(_tokens(loud_rate=None))
            server.proc.send_signal(1)  # SIGHUP
            time.sleep(1.0)
            noise = _noise(server.target, seconds=8)
            time.sleep(1.0)
            unlimited = statistics.median(_quiet_latencies(stub, 60))
            noise.communicate(timeout=60)
    finally:
        server.terminate()
    print(
        f"quiet p50 alone {alone * 1000:.1f} ms, with held noise {held * 1000:.1f} ms, "
        f"with unlimited noise {unlimited * 1000:.1f} ms; noisy calls {counts}"
    )
    assert counts["exhausted"] > counts.get("ok", 0)
    assert counts.get("exhausted_no_hint", 0) == 0
    assert counts.get("failed", 0) == 0
    # At most the rate over the run plus the burst got through.
    assert counts.get("ok", 0) <= 20 * 9 + 20
    # The quiet tenant's median stays near where it was alone (the loud tenant's 20 blocks a
    # second and its paced refusals cost a little), and well below what the same noise costs
    # it without the limit.
    assert held < unlimited
    assert held < 3 * alone + 0.005
