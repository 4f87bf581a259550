"""The cases of the hostile-input benchmark (bench/bench_hostile.py): each makes its requests,
largest allowed and of a hostile shape, and the small course every run's server is given first.

Only the generated client stubs are used: the benchmark is a client and knows the server's limits
only as documented.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from bench import _hostile_inputs as hostile
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

# The limits the server enforces before any work (README "Limits"; server domain/limits.py and
# the RecordCheck conversion). Written out, not imported: the benchmark is a client.
MAX_TEXT_BYTES = 64 * 1024
MAX_SUMMARY_CHARS = 500
MAX_QUERY_CHARS = 8_000
# A check's evaluation and the student's answer: each at most half an episode's text, less 64.
MAX_CHECK_PART_BYTES = MAX_TEXT_BYTES // 2 - 64
MAX_FILE_PAGES = 2_000
# The hostile files are 1 MB (the limit is 25 MiB: a 1 MB file is an ordinary one).
FILE_BYTES = 1_000_000

# Seconds for the calls that prepare a case (a block and an answer for AnnotateAnswer).
SETUP_TIMEOUT_S = 600.0

STUDENT, SUBJECT = "ada", "biology"
BLOCK_BUDGET = 1_500


@dataclass(frozen=True, slots=True)
class Settings:
    text_bytes: int
    summary_chars: int
    query_chars: int
    check_part_bytes: int
    file_bytes: int
    pdf_pages: int
    # Every request's client deadline.
    deadline_s: float
    # Health is watched this long before the requests (the idle figure) and after them.
    idle_s: float
    after_s: float
    # How long the prober waits, when stopped, for checks still unanswered.
    drain_s: float
    cases: tuple[str, ...]


# -- cases ------------------------------------------------------------------------------------

# One request of a case: sends it with the deadline given and says in a few words what the reply
# held; a failure is the grpc.RpcError it raises.
Call = Callable[[pb_grpc.MemoryStub, float], str]


@dataclass(frozen=True, slots=True)
class Case:
    name: str
    rpc: str
    # Makes `copies` requests (and anything they need on the server), and describes the input.
    prepare: Callable[[pb_grpc.MemoryStub, Settings, int], tuple[str, list[Call]]]
    file: bool = False


def _size(text: str) -> str:
    return f"{len(text.encode('utf-8')):,} bytes"


def _append_case(shape: hostile.TextShape) -> Case:
    def prepare(stub: pb_grpc.MemoryStub, s: Settings, copies: int) -> tuple[str, list[Call]]:
        text, summary = shape.within(s.text_bytes), shape.make(s.summary_chars)

        def call(i: int, stub: pb_grpc.MemoryStub, timeout: float) -> str:
            episode = pb.NewEpisode(
                student_id=STUDENT,
                subject_id=SUBJECT,
                kind=pb.EPISODE_KIND_QUESTION,
                summary=summary,
                text=text,
                client_key=f"{shape.name}-{i}",
            )
            reply = stub.AppendEpisode(pb.AppendEpisodeRequest(episode=episode), timeout=timeout)
            return f"episode {reply.episode.episode_id}"

        described = (
            f"QUESTION: text of {_size(text)}, {shape.description}; summary of "
            f"{len(summary)} characters of the same"
        )
        return described, [partial(call, i) for i in range(copies)]

    return Case(f"append_{shape.name}", "AppendEpisode", prepare)


# A teaching phrase, so that a Teach of it goes past the check for one to the sentence it opens.
TEACHING_OPENER = "Remember that "


def _teach_case(name: str, prefix: str, shape: hostile.TextShape) -> Case:
    def prepare(stub: pb_grpc.MemoryStub, s: Settings, copies: int) -> tuple[str, list[Call]]:
        text = prefix + shape.within(s.text_bytes - len(prefix.encode("utf-8")))

        def call(stub: pb_grpc.MemoryStub, timeout: float) -> str:
            request = pb.TeachRequest(student_id=STUDENT, subject_id=SUBJECT, text=text)
            return f"concept {stub.Teach(request, timeout=timeout).concept[:40]!r}"

        opening = f"{prefix.strip()!r}, then " if prefix else ""
        return f"text of {_size(text)}: {opening}{shape.description}", [call] * copies

    return Case(name, "Teach", prepare)


# A topic that names no concept: routing reads the whole evaluation, which names one at its end.
CHECK_TOPIC = "the last exercise"
CHECK_EVALUATION_TAIL = " Osmosis"


def _record_check(stub: pb_grpc.MemoryStub, s: Settings, copies: int) -> tuple[str, list[Call]]:
    evaluation = "." * (s.check_part_bytes - len(CHECK_EVALUATION_TAIL)) + CHECK_EVALUATION_TAIL
    answer = hostile.A_DOT_SPACE.within(s.check_part_bytes)

    def call(i: int, stub: pb_grpc.MemoryStub, timeout: float) -> str:
        reply = stub.RecordCheck(
            pb.RecordCheckRequest(
                student_id=STUDENT,
                subject_id=SUBJECT,
                topic=CHECK_TOPIC,
                outcome=pb.CHECK_OUTCOME_WRONG,
                evaluation=evaluation,
                predicted_mastery=0.4,
                student_answer=answer,
                client_key=f"check-{i}",
            ),
            timeout=timeout,
        )
        return f"routing {pb.TopicRouting.Name(reply.routing)}"

    described = (
        f"topic {CHECK_TOPIC!r}; evaluation of {_size(evaluation)}, dots then "
        f"{CHECK_EVALUATION_TAIL.strip()!r}; answer of {_size(answer)}, "
        f"{hostile.A_DOT_SPACE.description}"
    )
    return described, [partial(call, i) for i in range(copies)]


def _annotate_case(shape: hostile.TextShape) -> Case:
    def prepare(stub: pb_grpc.MemoryStub, s: Settings, copies: int) -> tuple[str, list[Call]]:
        """A block per request (each closes a turn of its own) and one answer they all annotate:
        appending a hostile answer is slow in itself, and the grounding work per request is the
        same whichever answer of that text it reads."""
        text = shape.within(s.text_bytes)
        answer = stub.AppendEpisode(
            pb.AppendEpisodeRequest(
                episode=pb.NewEpisode(
                    student_id=STUDENT,
                    subject_id=SUBJECT,
                    kind=pb.EPISODE_KIND_ANSWER,
                    summary=shape.make(s.summary_chars),
                    text=text,
                    client_key=f"answer-{shape.name}",
                )
            ),
            timeout=SETUP_TIMEOUT_S,
        )
        turns = []
        for _ in range(copies):
            block = stub.BuildBlock(
                pb.BuildBlockRequest(
                    student_id=STUDENT,
                    subject_id=SUBJECT,
                    query="How does osmosis move water?",
                    budget_tokens=BLOCK_BUDGET,
                ),
                timeout=SETUP_TIMEOUT_S,
            )
            turns.append(
                pb.AnnotateAnswerRequest(
                    student_id=STUDENT,
                    subject_id=SUBJECT,
                    answer_episode_id=answer.episode.episode_id,
                    block_id=block.block_id,
                    memory_ids=[m.episode_id for m in block.memories],
                )
            )

        def call(
            request: pb.AnnotateAnswerRequest, stub: pb_grpc.MemoryStub, timeout: float
        ) -> str:
            reply = stub.AnnotateAnswer(request, timeout=timeout)
            return f"grounding {pb.Grounding.Name(reply.grounding)}"

        memories = len(turns[0].memory_ids) if turns else 0
        described = (
            f"answer text of {_size(text)}, {shape.description}; its block showed {memories} "
            "memories"
        )
        return described, [partial(call, t) for t in turns]

    return Case(f"annotate_{shape.name}", "AnnotateAnswer", prepare)


def _block_case(shape: hostile.TextShape) -> Case:
    def prepare(stub: pb_grpc.MemoryStub, s: Settings, copies: int) -> tuple[str, list[Call]]:
        query = shape.make(s.query_chars)

        def call(stub: pb_grpc.MemoryStub, timeout: float) -> str:
            reply = stub.BuildBlock(
                pb.BuildBlockRequest(
                    student_id=STUDENT,
                    subject_id=SUBJECT,
                    query=query,
                    budget_tokens=BLOCK_BUDGET,
                    mode=pb.BLOCK_MODE_FULL,
                ),
                timeout=timeout,
            )
            if reply.dropped:
                return "dropped at the server's block cap"
            return f"{len(reply.memories)} memories, {reply.tokens_used} tokens"

        described = f"query of {len(query):,} characters, {shape.description}; FULL mode"
        return described, [call] * copies

    return Case(f"block_{shape.name}", "BuildBlock", prepare)


def _search_case(shape: hostile.TextShape) -> Case:
    def prepare(stub: pb_grpc.MemoryStub, s: Settings, copies: int) -> tuple[str, list[Call]]:
        query = shape.make(s.query_chars)

        def call(stub: pb_grpc.MemoryStub, timeout: float) -> str:
            reply = stub.SearchPassages(
                pb.SearchPassagesRequest(
                    student_id=STUDENT, subject_id=SUBJECT, query=query, limit=50
                ),
                timeout=timeout,
            )
            return f"{len(reply.passages)} passages"

        described = f"query of {len(query):,} characters, {shape.description}"
        return described, [call] * copies

    return Case(f"search_{shape.name}", "SearchPassages", prepare)


@dataclass(frozen=True, slots=True)
class HostileFile:
    name: str
    extension: str
    media_type: str
    describe: Callable[[Settings, bytes], str]
    content: Callable[[Settings], bytes]


def _file_case(f: HostileFile) -> Case:
    def prepare(stub: pb_grpc.MemoryStub, s: Settings, copies: int) -> tuple[str, list[Call]]:
        content = f.content(s)

        def call(i: int, stub: pb_grpc.MemoryStub, timeout: float) -> str:
            name = f"{f.name}-{i}{f.extension}"
            reply = stub.IngestFile(
                pb.IngestFileRequest(
                    student_id=STUDENT,
                    subject_id=SUBJECT,
                    file_id=name,
                    filename=name,
                    media_type=f.media_type,
                    content=content,
                ),
                timeout=timeout,
            )
            return f"{reply.pages} pages, {reply.passages} passages, {len(reply.concepts)} concepts"

        return f.describe(s, content), [partial(call, i) for i in range(copies)]

    return Case(f"ingest_{f.name}", "IngestFile", prepare, file=True)


HOSTILE_FILES = (
    HostileFile(
        "pdf_shared_stream",
        ".pdf",
        "application/pdf",
        lambda s, c: f"PDF of {s.pdf_pages:,} pages sharing one content stream, {len(c):,} bytes",
        lambda s: hostile.pdf_sharing_one_stream(s.pdf_pages),
    ),
    HostileFile(
        "md_unclosed_fence",
        ".md",
        "text/markdown",
        lambda s, c: f"Markdown of {len(c):,} bytes whose first code fence never closes",
        lambda s: hostile.markdown_unclosed_fence(s.file_bytes),
    ),
    HostileFile(
        "txt_a_dot_space",
        ".txt",
        "text/plain",
        lambda s, c: f'text of {len(c):,} bytes, repeated "a. "',
        lambda s: hostile.text_a_dot_space(s.file_bytes),
    ),
    HostileFile(
        "md_heading_line",
        ".md",
        "text/markdown",
        lambda s, c: f'one Markdown heading line of {len(c):,} bytes: "# a", spaces, "b"',
        lambda s: hostile.markdown_heading_line(s.file_bytes),
    ),
)

CASES: tuple[Case, ...] = (
    *(_append_case(shape) for shape in hostile.TEXT_SHAPES),
    _teach_case("teach_only_dots", "", hostile.ONLY_DOTS),
    _teach_case("teach_remember_dots_then_letter", TEACHING_OPENER, hostile.DOTS_THEN_LETTER),
    Case("record_check_largest", "RecordCheck", _record_check),
    *(_annotate_case(shape) for shape in (hostile.ONLY_DOTS, hostile.DOTS_THEN_LETTER)),
    *(_block_case(shape) for shape in (hostile.DOTS_THEN_LETTER, hostile.A_DOT_SPACE)),
    *(_search_case(shape) for shape in (hostile.DOTS_THEN_LETTER, hostile.A_DOT_SPACE)),
    *(_file_case(f) for f in HOSTILE_FILES),
)
CASE_NAMES = tuple(c.name for c in CASES)

# The limits themselves; every request has two minutes before the benchmark moves on.
FULL = Settings(
    text_bytes=MAX_TEXT_BYTES,
    summary_chars=MAX_SUMMARY_CHARS,
    query_chars=MAX_QUERY_CHARS,
    check_part_bytes=MAX_CHECK_PART_BYTES,
    file_bytes=FILE_BYTES,
    pdf_pages=MAX_FILE_PAGES,
    deadline_s=120.0,
    idle_s=1.0,
    after_s=3.0,
    drain_s=10.0,
    cases=CASE_NAMES,
)
# Small sizes and two cases (a text, a file: every mode), for the test.
QUICK = Settings(
    text_bytes=2_048,
    summary_chars=200,
    query_chars=400,
    check_part_bytes=1_024,
    file_bytes=20_000,
    pdf_pages=40,
    deadline_s=20.0,
    idle_s=0.5,
    after_s=0.5,
    drain_s=2.0,
    cases=("append_dots_then_letter", "ingest_md_unclosed_fence"),
)


def give_course(stub: pb_grpc.MemoryStub) -> None:
    """What every run's server holds before its case: the Markdown chapter (built-in extractor,
    so a map), a question and its answer, and a wrong check on a concept of the map."""
    stub.IngestFile(
        pb.IngestFileRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            file_id="cells.md",
            filename="cells.md",
            content=hostile.COURSE_MD.read_bytes(),
        ),
        timeout=SETUP_TIMEOUT_S,
    )
    turn = [
        (pb.EPISODE_KIND_QUESTION, "How does osmosis move water?"),
        (pb.EPISODE_KIND_ANSWER, "Osmosis moves water toward the side with more dissolved solute."),
    ]
    for n, (kind, said) in enumerate(turn):
        episode = pb.NewEpisode(
            student_id=STUDENT, subject_id=SUBJECT, kind=kind, summary=said, text=said,
            client_key=f"course-{n}",
        )  # fmt: skip
        stub.AppendEpisode(pb.AppendEpisodeRequest(episode=episode), timeout=SETUP_TIMEOUT_S)
    stub.RecordCheck(
        pb.RecordCheckRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            topic="Osmosis",
            outcome=pb.CHECK_OUTCOME_WRONG,
            evaluation="Confused osmosis with diffusion of solute.",
            student_answer="Salt moves into the cell.",
            client_key="course-check",
        ),
        timeout=SETUP_TIMEOUT_S,
    )
