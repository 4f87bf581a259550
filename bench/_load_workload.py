"""What the load benchmark stores and asks: 50 students' chains and the calls ghz makes.

Each student has a course file whose 40 concepts (the most one file may carry) start the
subject map, then a year of history from bench_block's generator (questions, answers, checks
right and wrong, taught notes); its taught notes add to the map and its checks on concepts of the
map become beliefs, so a FULL block has its map, belief and earlier-work sections. The calls
are FULL BuildBlock requests with bench_block's mixed queries, and AppendEpisode requests with
episodes of the same generator, each spread over every student.
"""

from __future__ import annotations

import random

from bench import bench_block
from tutor_memory_client._proto import memory_pb2 as pb

STUDENTS = 50
SUBJECT = "science"
TIME_ZONE = "Europe/Rome"
# The most concepts one file may carry (the server refuses more): one course file each.
COURSE_CONCEPTS = 40
# Distinct requests in each ghz data file; ghz cycles through them.
BLOCK_REQUESTS = 1_000
APPEND_REQUESTS = 1_000
# ghz fills this template in for every call, so that no append is a duplicate of an earlier one
# (AppendEpisode with a known client_key writes nothing).
UNIQUE_CLIENT_KEY = "load-{{.UUID}}"


def student_id(index: int) -> str:
    return f"student-{index:02d}"


def course(index: int) -> list[str]:
    """The student's course: COURSE_CONCEPTS consecutive concepts of bench_block's list (whole
    stems, each with its five aspects), a different slice for neighbouring students."""
    concepts = bench_block.CONCEPTS
    start = (index * COURSE_CONCEPTS) % len(concepts)
    return [concepts[(start + k) % len(concepts)] for k in range(COURSE_CONCEPTS)]


def course_file(index: int) -> pb.IngestFileRequest:
    """A Markdown course file, one section per concept, with caller-supplied concepts (as a chat
    service whose own model extracted them sends): the basics of each stem come first."""
    names = course(index)
    sections = [f"## {name}\n\n{_definition(name)}" for name in names]
    text = "# Science course\n\nWhat this year covers, one section per idea.\n\n"
    text += "\n\n".join(sections) + "\n"
    request = pb.IngestFileRequest(
        student_id=student_id(index),
        subject_id=SUBJECT,
        file_id="course",
        filename="course.md",
        media_type="text/markdown",
        content=text.encode("utf-8"),
        concepts=[
            pb.ConceptInput(
                name=name,
                summary=f"What {name} covers in this course.",
                definition=_definition(name),
                builds_on=[] if name == _basics(name) else [_basics(name)],
                # Page 1 is the title and the introduction; each section is a page after it.
                pages=[position + 2],
            )
            for position, name in enumerate(names)
        ],
    )
    request.occurred_at.FromDatetime(bench_block.START)
    return request


def _basics(name: str) -> str:
    return f"{name.split()[0]} basics"


def _definition(name: str) -> str:
    stem = name.split()[0]
    return f"{name.capitalize()} is the part of the {stem} unit that the exam asks about first."


def chains(episodes_per_student: int, rng: random.Random) -> list[list[pb.NewEpisode]]:
    """Every student's history, in time order."""
    out = []
    for index in range(STUDENTS):
        history = bench_block.history(episodes_per_student, rng)
        for episode in history:
            episode.student_id = student_id(index)
            episode.subject_id = SUBJECT
        out.append(history)
    return out


def block_requests(rng: random.Random) -> list[pb.BuildBlockRequest]:
    """FULL blocks within the issue's 1,500-token budget, by the server's clock (as a live chat
    turn asks), for every student in a shuffled order, with bench_block's mixed queries."""
    students = _spread(BLOCK_REQUESTS, rng)
    queries: list[str] = []
    while len(queries) < BLOCK_REQUESTS:
        queries += bench_block.queries(rng)
    return [
        pb.BuildBlockRequest(
            student_id=student_id(s),
            subject_id=SUBJECT,
            query=q,
            budget_tokens=bench_block.BUDGET,
            time_zone=TIME_ZONE,
            mode=pb.BLOCK_MODE_FULL,
        )
        for s, q in zip(students, queries, strict=False)
    ]


def append_requests(rng: random.Random) -> list[pb.AppendEpisodeRequest]:
    """New episodes of a live conversation (server's clock), for every student in a shuffled
    order, each with a client key unique per call."""
    students = _spread(APPEND_REQUESTS, rng)
    out = []
    for s, episode in zip(students, bench_block.history(APPEND_REQUESTS, rng), strict=True):
        episode.student_id = student_id(s)
        episode.subject_id = SUBJECT
        episode.ClearField("occurred_at")
        episode.client_key = UNIQUE_CLIENT_KEY
        out.append(pb.AppendEpisodeRequest(episode=episode))
    return out


def _spread(count: int, rng: random.Random) -> list[int]:
    """`count` student indices, each student as often as the others (to within one)."""
    indices = [i % STUDENTS for i in range(count)]
    rng.shuffle(indices)
    return indices
