"""Scoped tokens on a real server: a call outside its token's scope gets PERMISSION_DENIED and
writes nothing; a call inside it works as before."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest

from tests.helpers.harness import Harness, auth, question, start_harness, stop_harness
from tests.helpers.scoped_tokens import BIOLOGY, CLASS_7B, FULL, READER, TOKENS
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client._proto import memory_pb2 as pb


@pytest.fixture
async def school(tmp_path: Path, embedder: UseOnnxEmbedder) -> AsyncIterator[Harness]:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    config = ServerConfig(listen="127.0.0.1:0", data_dir=tmp_path / "data", tokens_file=tokens)
    h = await start_harness(config, embedder)
    try:
        yield h
    finally:
        await stop_harness(h)


async def _denied(call: object) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call  # type: ignore[misc]
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
    return err.value.details() or ""


async def _stored(h: Harness, student: str, subject: str) -> list[str]:
    return [e.summary for e in await h.list_all(student, subject, md=auth(FULL))]


async def test_a_read_only_token_reads_and_never_writes(school: Harness) -> None:
    await school.append(question("kept", student="7b-ada"), md=auth(FULL))
    assert [e.summary for e in await school.list_all("7b-ada", md=auth(READER))] == ["kept"]
    block = await school.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id="7b-ada", subject_id="biology", query="kept", budget_tokens=500
        ),
        metadata=auth(READER),
    )
    assert block.text
    detail = await _denied(
        school.stub.AppendEpisode(
            pb.AppendEpisodeRequest(episode=question("no", student="7b-ada")),
            metadata=auth(READER),
        )
    )
    assert "read-only" in detail
    await _denied(school.ingest([question("no", student="7b-ada", key="k")], md=auth(READER)))
    await _denied(
        school.stub.Teach(
            pb.TeachRequest(student_id="7b-ada", subject_id="biology", text="Remember X is Y"),
            metadata=auth(READER),
        )
    )
    await _denied(school.stub.Consolidate(pb.ConsolidateRequest(), metadata=auth(READER)))
    assert await _stored(school, "7b-ada", "biology") == ["kept"]


async def test_a_student_prefix_token_reaches_only_its_students(school: Harness) -> None:
    await school.append(question("mine", student="7b-ada"), md=auth(CLASS_7B))
    detail = await _denied(
        school.stub.AppendEpisode(
            pb.AppendEpisodeRequest(episode=question("theirs", student="7a-bob")),
            metadata=auth(CLASS_7B),
        )
    )
    assert "'7a-bob' is outside" in detail
    await _denied(
        school.stub.ListEpisodes(
            pb.ListEpisodesRequest(student_id="7a-bob", subject_id="biology"),
            metadata=auth(CLASS_7B),
        )
    )
    # A whole-tenant nightly run reaches students outside the prefix; one student's does not.
    await _denied(school.stub.Consolidate(pb.ConsolidateRequest(), metadata=auth(CLASS_7B)))
    await school.stub.Consolidate(
        pb.ConsolidateRequest(student_id="7b-ada"), metadata=auth(CLASS_7B)
    )
    assert await _stored(school, "7b-ada", "biology") == ["mine"]
    assert await _stored(school, "7a-bob", "biology") == []


async def test_a_subjects_token_reaches_only_its_subjects(school: Harness) -> None:
    await school.append(question("cells", subject="biology"), md=auth(BIOLOGY))
    detail = await _denied(
        school.stub.RecordCheck(
            pb.RecordCheckRequest(
                student_id="s1", subject_id="history", topic="Rome", outcome=pb.CHECK_OUTCOME_RIGHT
            ),
            metadata=auth(BIOLOGY),
        )
    )
    assert "'history' is outside" in detail
    assert await _stored(school, "s1", "history") == []
    assert await _stored(school, "s1", "biology") == ["cells"]


async def test_a_batch_with_an_item_outside_the_scope_writes_nothing(school: Harness) -> None:
    # The out-of-scope item sits in the first stream message: nothing of the call is written.
    batch = [question(f"q{i}", student="7b-ada", key=f"k{i}") for i in range(5)]
    batch.insert(3, question("intruder", student="7a-bob", key="bad"))
    detail = await _denied(school.ingest(batch, md=auth(CLASS_7B), per_message=100))
    assert "'7a-bob' is outside" in detail
    assert await _stored(school, "7b-ada", "biology") == []
    assert await _stored(school, "7a-bob", "biology") == []
    # The same batch without the intruder goes through whole.
    batch.pop(3)
    reply = await school.ingest(batch, md=auth(CLASS_7B))
    assert reply.inserted == 5


async def test_an_unscoped_token_of_the_same_tenant_still_reaches_everything(
    school: Harness,
) -> None:
    await school.append(question("a", student="7a-bob", subject="history"), md=auth(FULL))
    await school.stub.Consolidate(pb.ConsolidateRequest(), metadata=auth(FULL))
    assert await _stored(school, "7a-bob", "history") == ["a"]


async def test_only_a_write_token_covering_every_subject_of_the_student_may_forget(
    school: Harness,
) -> None:
    await school.append(question("kept", student="7b-ada"), md=auth(FULL))
    await school.append(question("kept too", student="7a-bob"), md=auth(FULL))

    async def forget(student: str, token: str) -> pb.ForgetStudentReply:
        reply: pb.ForgetStudentReply = await school.stub.ForgetStudent(
            pb.ForgetStudentRequest(student_id=student), metadata=auth(token)
        )
        return reply

    assert "read-only" in await _denied(forget("7b-ada", READER))
    assert "'7a-bob' is outside" in await _denied(forget("7a-bob", CLASS_7B))
    # Erasure reaches every subject of the student: a token limited to some subjects may not.
    assert "covers every subject" in await _denied(forget("7b-ada", BIOLOGY))
    assert await _stored(school, "7b-ada", "biology") == ["kept"]
    assert await _stored(school, "7a-bob", "biology") == ["kept too"]
    verified = await school.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="7b-ada", subject_id="biology"), metadata=auth(FULL)
    )
    assert not verified.erased
    # Within its prefix, a write token erases; its name is recorded.
    reply = await forget("7b-ada", CLASS_7B)
    assert isinstance(reply, pb.ForgetStudentReply)
    assert reply.erasure.erased_by == "class-7b"
    assert await _stored(school, "7a-bob", "biology") == ["kept too"]
