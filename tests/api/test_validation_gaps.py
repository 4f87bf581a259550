"""The validation gaps issue 12 found, one by one: each field is refused with INVALID_ARGUMENT
naming it, before any work, and nothing is stored. (The boundary walk, test_boundary_walk.py,
shows that no value of any field reaches INTERNAL; these pin what the answer is.)"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import pytest

from tests.helpers.course import COURSE, give_course
from tests.helpers.harness import A, Harness, question
from tutor_memory.domain.beliefs.routing import route_topic
from tutor_memory.domain.limits import MAX_BLOCK_ID_CHARS, MAX_TEXT_BYTES
from tutor_memory_client._proto import memory_pb2 as pb

CHAIN: dict[str, Any] = {"student_id": "s1", "subject_id": "biology"}
# Characters no id may hold: a line or paragraph separator, next line, zero width space, a
# right-to-left override, NUL and a newline.
HIDDEN = ["\u2028", "\u2029", "\x85", "\u200b", "\u202e", "\x00", "\n"]
# The largest detail a gRPC client reliably receives is 8 KiB of trailers; a refusal that
# echoed a long value would arrive as RESOURCE_EXHAUSTED or not at all.
DETAIL_BYTES = 8 * 1024


async def refused(call: Awaitable[Any], field: str) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    details = err.value.details() or ""
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, details
    assert details.startswith(f"{field}:") or f" {field}:" in details, details
    assert len(details.encode()) < DETAIL_BYTES
    return details


async def stored(harness: Harness) -> int:
    return len(await harness.list_all())


@pytest.mark.parametrize("char", HIDDEN, ids=[f"U+{ord(c):04X}" for c in HIDDEN])
async def test_ids_with_control_invisible_or_bidirectional_characters_are_refused(
    harness: Harness, char: str
) -> None:
    for field in ("student_id", "subject_id"):
        ep = question("What is osmosis?")
        setattr(ep, field, f"s{char}1")
        await refused(harness.stub.AppendEpisode(pb.AppendEpisodeRequest(episode=ep), metadata=A),
                      field)  # fmt: skip
        request = pb.BuildBlockRequest(**{**CHAIN, field: f"s{char}1"}, query="x", budget_tokens=50)
        await refused(harness.stub.BuildBlock(request, metadata=A), field)
    assert await stored(harness) == 0


@pytest.mark.parametrize("file_id", ["a\x00b", "a\nb", "a\rb", "a\tb", "a\u2028b", "a\u202eb"])
async def test_a_file_id_with_control_or_hidden_characters_is_refused_everywhere(
    harness: Harness, file_id: str
) -> None:
    upload = pb.IngestFileRequest(**CHAIN, file_id=file_id, filename="f.md", content=COURSE)
    await refused(harness.stub.IngestFile(upload, metadata=A), "file_id")
    removal = pb.RemoveFileRequest(**CHAIN, file_id=file_id)
    await refused(harness.stub.RemoveFile(removal, metadata=A), "file_id")
    ep = question("From the notes")
    ep.evidence.append(pb.Evidence(file_id=file_id, page=1, file_fingerprint="ab" * 32))
    await refused(
        harness.stub.AppendEpisode(pb.AppendEpisodeRequest(episode=ep), metadata=A),
        "evidence[0].file_id",
    )
    assert await stored(harness) == 0


async def test_nul_in_a_callers_concept_name_or_in_teach_text_is_refused(harness: Harness) -> None:
    upload = pb.IngestFileRequest(
        **CHAIN,
        file_id="cells.md",
        filename="cells.md",
        content=COURSE,
        concepts=[pb.ConceptInput(name="Osmo\x00sis", summary="Water moves.", pages=[1])],
    )
    await refused(harness.stub.IngestFile(upload, metadata=A), "concepts[0].name")
    teach = pb.TeachRequest(**CHAIN, text="Remember that we call it the power\x00house")
    await refused(harness.stub.Teach(teach, metadata=A), "text")
    assert await stored(harness) == 0


async def test_a_block_id_over_its_limit_is_refused_and_nothing_is_annotated(
    harness: Harness,
) -> None:
    answer = (await harness.append(question("The answer", key="a1"))).episode
    block = await harness.stub.BuildBlock(
        pb.BuildBlockRequest(**CHAIN, query="answer", budget_tokens=300), metadata=A
    )
    request = pb.AnnotateAnswerRequest(
        **CHAIN,
        answer_episode_id=answer.episode_id,
        block_id="b" * (MAX_BLOCK_ID_CHARS + 1),
        memory_ids=[m.episode_id for m in block.memories],
    )
    await refused(harness.stub.AnnotateAnswer(request, metadata=A), "block_id")
    request.block_id = "b" * 10_000_000
    await refused(harness.stub.AnnotateAnswer(request, metadata=A), "block_id")
    (listed,) = await harness.list_all()
    assert listed.episode_id == answer.episode_id


async def test_an_over_limit_evaluation_is_refused_before_it_is_routed(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    routed: list[str] = []

    def spy(topic: str, *args: Any, **kwargs: Any) -> Any:
        routed.append(topic)
        return route_topic(topic, *args, **kwargs)

    monkeypatch.setattr("tutor_memory.app.beliefs.route_topic", spy)
    await give_course(harness)
    before = await stored(harness)
    request = pb.RecordCheckRequest(
        **CHAIN,
        topic="Osmosis",
        outcome=pb.CHECK_OUTCOME_WRONG,
        evaluation="osmosis " * (MAX_TEXT_BYTES // 8 + 1),
    )
    await refused(harness.stub.RecordCheck(request, metadata=A), "evaluation")
    assert routed == []
    assert await stored(harness) == before


async def test_a_long_bad_time_zone_is_invalid_argument_with_a_short_message(
    harness: Harness,
) -> None:
    zone = "Mars/" + "x" * 10_000
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: harness.stub.BuildBlock(
            pb.BuildBlockRequest(**CHAIN, query="x", budget_tokens=50, time_zone=zone), metadata=A
        ),
        lambda: harness.stub.Consolidate(pb.ConsolidateRequest(time_zone=zone), metadata=A),
    ]
    for call in calls:
        details = await refused(call(), "time_zone")
        assert len(details) < 300


@pytest.mark.parametrize(
    "seconds", [-62_135_596_801, -107_883_305_194, -1], ids=["year-0", "far-bc", "before-1970"]
)
async def test_a_timestamp_before_the_documented_range_is_refused(
    harness: Harness, seconds: int
) -> None:
    ep = question("When?")
    ep.occurred_at.seconds = seconds
    await refused(
        harness.stub.AppendEpisode(pb.AppendEpisodeRequest(episode=ep), metadata=A), "occurred_at"
    )
    request = pb.BuildBlockRequest(**CHAIN, query="x", budget_tokens=50)
    request.now.seconds = seconds
    await refused(harness.stub.BuildBlock(request, metadata=A), "now")
    assert await stored(harness) == 0
