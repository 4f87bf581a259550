"""R10.4: the tenant comes from the token; nothing of one tenant, student or subject leaks."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from tests.helpers.harness import A, B, Harness, auth, question
from tutor_memory_client._proto import memory_pb2 as pb


async def test_tenants_with_the_same_ids_see_only_their_own(harness: Harness) -> None:
    await harness.append(question("tenant a's secret", key="same-key"), md=A)
    await harness.append(question("tenant b's secret", key="same-key"), md=B)
    seen_a = [e.summary for e in await harness.list_all(md=A)]
    seen_b = [e.summary for e in await harness.list_all(md=B)]
    assert seen_a == ["tenant a's secret"]
    assert seen_b == ["tenant b's secret"]
    # Separate chains: each starts at seq 1 with its own links.
    verify_b = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=B
    )
    assert verify_b.length == 1


async def test_students_and_subjects_are_separate_chains(harness: Harness) -> None:
    await harness.append(question("s1 biology"))
    await harness.append(question("s2 biology", student="s2"))
    await harness.append(question("s1 chemistry", subject="chemistry"))
    assert [e.summary for e in await harness.list_all("s1", "biology")] == ["s1 biology"]
    assert [e.summary for e in await harness.list_all("s2", "biology")] == ["s2 biology"]
    assert [e.summary for e in await harness.list_all("s1", "chemistry")] == ["s1 chemistry"]


async def test_vector_index_is_per_chain(harness: Harness) -> None:
    from tutor_memory.domain.episodes import ChainKey

    a = (await harness.append(question("photosynthesis in leaves"), md=A)).episode
    b = (await harness.append(question("photosynthesis in leaves"), md=B)).episode
    services = harness.app.services
    query = services.embedder.embed(["photosynthesis"])[0]
    chain_a, chain_b = ChainKey("tenant-a", "s1", "biology"), ChainKey("tenant-b", "s1", "biology")
    services.resident.ensure(chain_a)
    services.resident.ensure(chain_b)
    ids_a = services.vectors.neighbours(chain_a, query, 10, centre=False).ids
    ids_b = services.vectors.neighbours(chain_b, query, 10, centre=False).ids
    assert ids_a.tolist() == [a.episode_id]
    assert ids_b.tolist() == [b.episode_id]


@pytest.mark.parametrize(
    ("metadata", "problem"),
    [
        ((), "missing"),
        (auth("not-a-real-token"), "unknown token"),
        ((("authorization", "Basic dXNlcjpwYXNz"),), "Bearer"),
        ((("authorization", "Bearer "),), "Bearer"),
    ],
)
async def test_calls_without_a_valid_token_are_refused(
    harness: Harness, metadata: tuple[tuple[str, str], ...], problem: str
) -> None:
    for call in (
        harness.stub.AppendEpisode(
            pb.AppendEpisodeRequest(episode=question("x")), metadata=metadata
        ),
        harness.stub.ListEpisodes(
            pb.ListEpisodesRequest(student_id="s1", subject_id="biology"), metadata=metadata
        ),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call
        assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert problem in (err.value.details() or "")
    assert await harness.list_all() == []


async def test_refused_batch_writes_nothing(harness: Harness) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.ingest([question("x", key="1")], md=auth("wrong"))
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert await harness.list_all() == []


async def test_health_needs_no_token_and_reports_serving(harness: Harness) -> None:
    stub = health_pb2_grpc.HealthStub(harness.channel)
    for service in ("", "tutor_memory.v1.Memory"):
        reply = await stub.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
