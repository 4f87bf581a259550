"""AnnotateAnswer traces an answer to the file passages and the recalled memories (SPEC R7.2,
R7.3), saves the status, and the report lists the questions the files could not answer."""

from __future__ import annotations

from datetime import timedelta

from tests.helpers.course import STUDENT, SUBJECT, T0, at, give_course
from tests.helpers.harness import A, Harness
from tutor_memory_client._proto import memory_pb2 as pb


async def turn(h: Harness, question: str, answer: str, hours: int) -> pb.AnnotateAnswerReply:
    asked = pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_QUESTION,
        summary=question,
        text=question,
        occurred_at=at(T0 + timedelta(hours=hours)),
    )
    await h.append(asked)
    block = await h.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            query=question,
            budget_tokens=600,
            now=at(T0 + timedelta(hours=hours)),
        ),
        metadata=A,
    )
    answered = pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_ANSWER,
        summary=answer[:200],
        text=answer,
        occurred_at=at(T0 + timedelta(hours=hours, minutes=1)),
    )
    episode = (await h.append(answered)).episode
    reply: pb.AnnotateAnswerReply = await h.stub.AnnotateAnswer(
        pb.AnnotateAnswerRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            answer_episode_id=episode.episode_id,
            block_id=block.block_id,
            memory_ids=[m.episode_id for m in block.memories],
        ),
        metadata=A,
    )
    return reply


async def test_an_answer_from_the_file_is_answered_and_traced_to_its_page(
    harness: Harness,
) -> None:
    await give_course(harness)
    reply = await turn(
        harness,
        "What is osmosis?",
        "Osmosis is the diffusion of water across a membrane.",
        hours=2,
    )
    assert reply.grounding == pb.GROUNDING_ANSWERED
    (sentence,) = reply.sentences
    assert [p.file_id for p in sentence.passages] == ["cells.md"]
    assert sentence.labels[0].startswith("file cells.md")


async def test_an_answer_nothing_supports_is_impossible_and_the_report_lists_its_question(
    harness: Harness,
) -> None:
    await give_course(harness)
    reply = await turn(
        harness,
        "Who discovered the Krebs cycle?",
        "Hans Krebs described the citric acid cycle in Sheffield in 1937.",
        hours=3,
    )
    assert reply.grounding == pb.GROUNDING_IMPOSSIBLE
    report = await harness.stub.GetReport(
        pb.GetReportRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert [e.summary for e in report.unanswered] == ["Who discovered the Krebs cycle?"]


async def test_a_recalled_memory_counts_as_a_source_labelled_with_its_date(
    harness: Harness,
) -> None:
    await give_course(harness)
    await turn(
        harness,
        "Can we talk about the lab on onion cells?",
        "Last time you saw onion cells shrink in salty water during the lab.",
        hours=1,
    )
    reply = await turn(
        harness,
        "What happened to the onion cells in the lab?",
        "You saw onion cells shrink in salty water during the lab.",
        hours=30,
    )
    traced = [s for s in reply.sentences if s.episode_ids]
    assert traced, reply
    assert any(label.startswith("memory of ") for label in traced[0].labels)
