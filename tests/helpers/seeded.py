"""A seeded history for the console and the explained block: tenant A's student s1 in biology
has the course, two weeks of questions and answers (some repeated word for word), checks with
predicted mastery, a taught note, a grounded answer, a nightly run and an episode whose text is a
script tag; tenant B's student has a secret of its own."""

from __future__ import annotations

from datetime import timedelta

from tests.helpers.course import SUBJECT, T0, at, check, give_course
from tests.helpers.harness import A, B, Harness
from tutor_memory_client._proto import memory_pb2 as pb

STUDENT = "s1"
# What tenant B's student said: no page of tenant A may ever show it.
B_SECRET = "zebra-secret-of-tenant-b"
B_STUDENT = "b-student"
# An episode whose text would run if the console did not escape it.
SCRIPT_TEXT = "<script>document.title='pwned'</script><b>bold?</b>"
# The moment the history ends (every block of the tests is built as of then).
END = T0 + timedelta(days=15)

QUESTIONS = [
    "How does osmosis move water across a membrane?",
    "What is diffusion?",
    "Why do cells need mitochondria?",
    "Can you explain osmosis again?",
    "What is the difference between diffusion and osmosis?",
    "How do mitochondria release energy from glucose?",
]


def _episode(
    kind: int, summary: str, hours: float, *, text: str = "", key: str = ""
) -> pb.NewEpisode:
    ep = pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=kind,  # type: ignore[arg-type]
        summary=summary,
        text=text or summary,
        client_key=key,
    )
    ep.occurred_at.CopyFrom(at(T0 + timedelta(hours=hours)))
    return ep


async def seed(h: Harness) -> None:
    await give_course(h)
    episodes = []
    for day in range(12):
        for i, q in enumerate(QUESTIONS[day % 3 :: 2]):
            hours = day * 24 + 1 + i
            episodes.append(_episode(pb.EPISODE_KIND_QUESTION, q, hours, key=f"q{day}-{i}"))
            episodes.append(
                _episode(
                    pb.EPISODE_KIND_ANSWER,
                    f"Explained: {q.lower().rstrip('?')}",
                    hours + 0.1,
                    key=f"a{day}-{i}",
                )
            )
    # The same note three times: a block shows it once, standing for the others (collapse).
    for i in range(3):
        episodes.append(
            _episode(
                pb.EPISODE_KIND_QUESTION,
                "Is osmosis a kind of diffusion?",
                13 * 24 + i,
                key=f"dup{i}",
            )
        )
    episodes.append(
        _episode(pb.EPISODE_KIND_QUESTION, "Hostile text", 13 * 24 + 5, text=SCRIPT_TEXT, key="x")
    )
    reply = await h.ingest(episodes)
    assert reply.inserted == len(episodes), reply
    for day, (topic, right, predicted) in enumerate(
        [
            ("Osmosis", False, 0.7),
            ("Osmosis", True, 0.6),
            ("Diffusion", True, 0.8),
            ("Mitochondria", False, 0.4),
            ("Diffusion", True, 0.9),
            ("Osmosis", True, 0.75),
        ]
    ):
        await check(
            h,
            topic,
            right,
            T0 + timedelta(days=day * 2, hours=8),
            predicted=predicted,
            key=f"c{day}",
        )
    await h.stub.Teach(
        pb.TeachRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            text="Remember that osmosis needs a semi-permeable membrane.",
            occurred_at=at(T0 + timedelta(days=14)),
        ),
        metadata=A,
    )
    await _grounded_answer(h)
    await h.stub.Consolidate(
        pb.ConsolidateRequest(
            student_id=STUDENT, subject_id=SUBJECT, now=at(T0 + timedelta(days=7))
        ),
        metadata=A,
    )
    other = pb.NewEpisode(
        student_id=B_STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_QUESTION,
        summary=f"My password hint is {B_SECRET}",
        text=f"My password hint is {B_SECRET}",
    )
    other.occurred_at.CopyFrom(at(T0))
    await h.append(other, B)


async def _grounded_answer(h: Harness) -> None:
    block = await h.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            query="osmosis",
            budget_tokens=400,
            now=at(T0 + timedelta(days=14, hours=2)),
        ),
        metadata=A,
    )
    answer = _episode(
        pb.EPISODE_KIND_ANSWER,
        "Osmosis is the diffusion of water across a membrane.",
        14 * 24 + 2.1,
        key="grounded",
    )
    stored = (await h.append(answer)).episode
    await h.stub.AnnotateAnswer(
        pb.AnnotateAnswerRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            answer_episode_id=stored.episode_id,
            block_id=block.block_id,
            memory_ids=[m.episode_id for m in block.memories],
        ),
        metadata=A,
    )
