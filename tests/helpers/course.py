"""A small biology course and the calls that give it to a server and record checks on it, shared
by the tests of beliefs, grounding, the nightly cycle and the CLI."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf.timestamp_pb2 import Timestamp

from tests.helpers.harness import A, Harness
from tutor_memory_client._proto import memory_pb2 as pb

STUDENT, SUBJECT = "s1", "biology"
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

COURSE = b"""# Cells

## Osmosis
Osmosis is the diffusion of water across a membrane.

## Diffusion
Diffusion is the movement of particles from high to low concentration.

## Mitochondria
Mitochondria release energy from glucose.
"""

COURSE_CONCEPTS = [
    pb.ConceptInput(
        name="Diffusion",
        summary="Diffusion is the movement of particles from high to low concentration.",
        pages=[1],
    ),
    pb.ConceptInput(
        name="Osmosis",
        summary="Osmosis is the diffusion of water across a membrane.",
        builds_on=["Diffusion"],
        pages=[1],
    ),
    pb.ConceptInput(
        name="Mitochondria", summary="Mitochondria release energy from glucose.", pages=[1]
    ),
]


def at(when: datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(when)
    return ts


async def give_course(h: Harness, when: datetime = T0) -> pb.IngestFileReply:
    reply: pb.IngestFileReply = await h.stub.IngestFile(
        pb.IngestFileRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            file_id="cells.md",
            filename="cells.md",
            content=COURSE,
            occurred_at=at(when),
            concepts=COURSE_CONCEPTS,
        ),
        metadata=A,
    )
    return reply


async def check(
    h: Harness,
    topic: str,
    right: bool,
    when: datetime,
    *,
    evaluation: str = "",
    predicted: float | None = None,
    key: str = "",
) -> pb.RecordCheckReply:
    request = pb.RecordCheckRequest(
        student_id=STUDENT,
        subject_id=SUBJECT,
        topic=topic,
        outcome=pb.CHECK_OUTCOME_RIGHT if right else pb.CHECK_OUTCOME_WRONG,
        evaluation=evaluation,
        student_answer="my answer",
        occurred_at=at(when),
        client_key=key,
    )
    if predicted is not None:
        request.predicted_mastery = predicted
    reply: pb.RecordCheckReply = await h.stub.RecordCheck(request, metadata=A)
    return reply


async def history(h: Harness, concept: str = "") -> list[pb.BeliefHistory]:
    reply = await h.stub.GetBeliefHistory(
        pb.GetBeliefHistoryRequest(student_id=STUDENT, subject_id=SUBJECT, concept=concept),
        metadata=A,
    )
    return list(reply.histories)
