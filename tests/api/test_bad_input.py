"""Bad input gets INVALID_ARGUMENT naming the field, writes nothing, and the server keeps
serving."""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc
import pytest

from tests.helpers.harness import A, Harness, question
from tutor_memory.domain.limits import MAX_SUMMARY_CHARS, MAX_TEXT_BYTES
from tutor_memory_client._proto import memory_pb2 as pb

Mutation = Callable[[pb.NewEpisode], None]


def _set(**fields: object) -> Mutation:
    def apply(ep: pb.NewEpisode) -> None:
        for name, value in fields.items():
            setattr(ep, name, value)

    return apply


def _future(ep: pb.NewEpisode) -> None:
    ep.occurred_at.seconds = int(time.time()) + 86_400 * 365


def _evidence(file_id: str = "f.pdf", page: int = 1, fingerprint: str = "ab" * 32) -> Mutation:
    def apply(ep: pb.NewEpisode) -> None:
        ep.evidence.append(pb.Evidence(file_id=file_id, page=page, file_fingerprint=fingerprint))

    return apply


def _check_on_question(ep: pb.NewEpisode) -> None:
    ep.check.outcome = pb.CHECK_OUTCOME_RIGHT
    ep.check.topic = "osmosis"


def _check_without_outcome(ep: pb.NewEpisode) -> None:
    ep.kind = pb.EPISODE_KIND_CHECK
    ep.check.topic = "osmosis"


def _check_bad_prediction(ep: pb.NewEpisode) -> None:
    ep.kind = pb.EPISODE_KIND_CHECK
    ep.check.outcome = pb.CHECK_OUTCOME_WRONG
    ep.check.topic = "osmosis"
    ep.check.predicted_mastery = 1.5


def _quiz_overflow(ep: pb.NewEpisode) -> None:
    ep.kind = pb.EPISODE_KIND_QUIZ
    ep.quiz.correct = 5
    ep.quiz.total = 3


def _duplicate_concepts(ep: pb.NewEpisode) -> None:
    ep.concepts.extend(["osmosis", "osmosis"])


BAD_INPUTS: list[tuple[str, Mutation, str]] = [
    ("empty student id", _set(student_id=""), "student_id:"),
    ("blank-padded subject id", _set(subject_id=" bio "), "subject_id:"),
    ("control char in student id", _set(student_id="s\n1"), "student_id:"),
    ("unspecified kind", _set(kind=pb.EPISODE_KIND_UNSPECIFIED), "kind: required"),
    ("unknown kind", _set(kind=42), "kind: unknown value 42"),
    ("client consolidation", _set(kind=pb.EPISODE_KIND_CONSOLIDATION), "kind: consolidation"),
    ("salience from the client", _set(salience=0.99), "salience: must not be set"),
    ("empty summary", _set(summary=""), "summary:"),
    ("multi-line summary", _set(summary="one\ntwo"), "summary:"),
    ("summary too long", _set(summary="x" * (MAX_SUMMARY_CHARS + 1)), "summary:"),
    ("text over the size limit", _set(text="é" * (MAX_TEXT_BYTES // 2 + 1)), "text:"),
    ("occurred_at far in the future", _future, "occurred_at:"),
    ("evidence without file id", _evidence(file_id=""), "evidence[0].file_id:"),
    ("evidence with bad fingerprint", _evidence(fingerprint="xyz"), "evidence[0].file_fingerprint"),
    ("evidence with negative page", _evidence(page=-3), "evidence[0].page:"),
    ("check on a question", _check_on_question, "check: only a check episode"),
    ("check without outcome", _check_without_outcome, "check.outcome:"),
    ("check with impossible prediction", _check_bad_prediction, "check.predicted_mastery:"),
    ("quiz with more right than asked", _quiz_overflow, "quiz.correct:"),
    ("duplicate concept", _duplicate_concepts, "concepts[1]: duplicate"),
]


@pytest.mark.parametrize(("case", "mutate", "message"), BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
async def test_bad_episode_is_invalid_argument_and_writes_nothing(
    harness: Harness, case: str, mutate: Mutation, message: str
) -> None:
    ep = question("a valid question")
    mutate(ep)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.append(ep)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, case
    assert message in (err.value.details() or ""), err.value.details()
    # Nothing written, and the server still serves.
    assert await harness.list_all() == []
    assert (await harness.append(question("still serving"))).episode.seq == 1


async def test_batch_rejects_bad_items_one_by_one(harness: Harness) -> None:
    batch = []
    for i, (_case, mutate, _message) in enumerate(BAD_INPUTS):
        ep = question(f"bad {i}", key=f"bad-{i}")
        mutate(ep)
        batch.append(ep)
    batch.append(question("the good one", key="good"))
    reply = await harness.ingest(batch)
    assert reply.rejected == len(BAD_INPUTS)
    assert reply.inserted == 1
    for item, (_case, _mutate, message) in zip(reply.items, BAD_INPUTS, strict=False):
        assert item.status == pb.INGEST_STATUS_REJECTED
        assert message in item.reason
    assert [e.summary for e in await harness.list_all()] == ["the good one"]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (pb.ListEpisodesRequest(student_id="", subject_id="b"), "student_id:"),
        (pb.ListEpisodesRequest(student_id="s", subject_id="b", page_size=5000), "page_size:"),
    ],
)
async def test_bad_list_request_is_invalid_argument(
    harness: Harness, request_: pb.ListEpisodesRequest, message: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.ListEpisodes(request_, metadata=A)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (err.value.details() or "")


async def test_inverted_time_range_is_invalid_argument(harness: Harness) -> None:
    request = pb.ListEpisodesRequest(student_id="s1", subject_id="biology")
    request.occurred_from.seconds = 2_000
    request.occurred_to.seconds = 1_000
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.ListEpisodes(request, metadata=A)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "occurred_to" in (err.value.details() or "")
