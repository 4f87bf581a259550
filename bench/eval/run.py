"""One pass of the benchmark: every history replayed into one fresh server (a chain per student),
then every question asked of the four versions and graded.

Versions are the same server, differing only in BuildBlock's `mode`, and all four get the same
file passages (SearchPassages with the question): the chat service's own file retrieval, which
every prompt carries whatever its memory.

Budget: one BuildBlock budget for every version, BUDGET_TOKENS. At 1,500 tokens the window
version's 20 turns fit whole (its blocks stay under it in this run: see `max_tokens_used`), so the
window is limited by being a window, not by the budget; and FULL must still choose, since a
history's map, beliefs and months of episodes do not fit. It is also the largest budget the
LoCoMo benchmark measures.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench._server import fresh_server
from bench.eval.grading import Grade, Shown, expected_ids, grade
from bench.eval.history import History
from bench.eval.questions import Question
from bench.eval.replay import Replayed, replay
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

BUDGET_TOKENS = 1_500
# File passages every version gets for a question: a few, as a chat prompt beside its memory
# block would carry.
PASSAGES_PER_QUESTION = 3
# Seconds one BuildBlock or SearchPassages call may take before the run fails (the server's own
# hard cap on a block is 2.5 s).
CALL_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Version:
    name: str
    mode: pb.BlockMode
    description: str


VERSIONS = (
    Version("none", pb.BLOCK_MODE_NONE, "plain retrieval: the file passages only, no memory"),
    Version("window", pb.BLOCK_MODE_WINDOW, "the last 20 conversation turns, whatever the query"),
    Version(
        "episodes",
        pb.BLOCK_MODE_EPISODES,
        "ranked recall of the episode log only: no map, no beliefs, no record-question mode",
    ),
    Version(
        "full",
        pb.BLOCK_MODE_FULL,
        "everything: recall, time windows, record mode, beliefs, the subject map",
    ),
)
VERSION_NAMES = tuple(v.name for v in VERSIONS)


class BadBlock(RuntimeError):
    """A block dropped or over budget: a server bug the figures must not hide."""


@dataclass(frozen=True, slots=True)
class Answer:
    """One version's reply to one question, graded."""

    question: Question
    version: str
    grade: Grade
    text: str
    passages: tuple[str, ...]
    # The history's event keys of the memories shown, in the block's order (to compare runs).
    shown_keys: tuple[str, ...]
    expected_ids: tuple[int, ...]
    tokens_used: int
    latency_ms: float


@dataclass
class RunResult:
    answers: list[Answer] = field(default_factory=list)
    replays: list[Replayed] = field(default_factory=list)
    seconds: float = 0.0


def passage_label(p: pb.Passage) -> str:
    return f"[{p.ref.file_id} p.{p.ref.page}] {p.text}"


def block_request(
    history: History, question: Question, mode: pb.BlockMode, budget: int
) -> pb.BuildBlockRequest:
    request = pb.BuildBlockRequest(
        student_id=history.student_id,
        subject_id=history.subject_id,
        query=question.text,
        budget_tokens=budget,
        time_zone=history.time_zone,
        mode=mode,
    )
    request.now.FromDatetime(history.now)
    return request


def ask(
    stub: pb_grpc.MemoryStub,
    history: History,
    question: Question,
    replayed: Replayed,
    budget: int,
) -> list[Answer]:
    search = stub.SearchPassages(
        pb.SearchPassagesRequest(
            student_id=history.student_id,
            subject_id=history.subject_id,
            query=question.text,
            limit=PASSAGES_PER_QUESTION,
        ),
        timeout=CALL_TIMEOUT_S,
    )
    passages = tuple(p.text for p in search.passages)
    labels = tuple(passage_label(p) for p in search.passages)
    keys = replayed.keys
    out = []
    for version in VERSIONS:
        started = time.perf_counter()
        reply = stub.BuildBlock(
            block_request(history, question, version.mode, budget), timeout=CALL_TIMEOUT_S
        )
        latency = (time.perf_counter() - started) * 1000
        if reply.dropped or reply.tokens_used > budget:
            raise BadBlock(
                f"{question.qid} ({version.name}): dropped={reply.dropped}, "
                f"tokens_used={reply.tokens_used} of {budget}"
            )
        shown = Shown.of(reply, passages)
        shown_keys = tuple(keys.get(m.episode_id, str(m.episode_id)) for m in reply.memories)
        out.append(
            Answer(
                question=question,
                version=version.name,
                grade=grade(question, shown, replayed.ids),
                text=reply.text,
                passages=labels,
                shown_keys=shown_keys,
                expected_ids=tuple(expected_ids(question, replayed.ids)),
                tokens_used=reply.tokens_used,
                latency_ms=latency,
            )
        )
    return out


def run_once(
    histories: Sequence[History],
    questions: Sequence[Question],
    budget: int = BUDGET_TOKENS,
    log: bool = True,
) -> RunResult:
    """Replays every history into one fresh server and asks every question of every version."""
    result = RunResult()
    started = time.perf_counter()
    by_history: dict[int, list[Question]] = {}
    for q in questions:
        by_history.setdefault(q.history, []).append(q)
    with fresh_server() as stub:
        for history in histories:
            replayed = replay(stub, history)
            result.replays.append(replayed)
            for question in by_history.get(history.index, []):
                result.answers += ask(stub, history, question, replayed, budget)
            if log:
                print(
                    f"{history.student_id}: {len(history.events)} events replayed in "
                    f"{replayed.seconds:.1f} s, {len(by_history.get(history.index, []))} questions",
                    file=sys.stderr,
                )
    result.seconds = time.perf_counter() - started
    return result


@dataclass(frozen=True, slots=True)
class Differences:
    compared: int
    scores: int  # (question, version) pairs graded differently
    blocks: int  # (question, version) pairs whose memories differ
    examples: tuple[str, ...]


def differences(first: RunResult, second: RunResult, examples: int = 10) -> Differences:
    """How two runs of the same question set differ, pair by pair."""
    other = {(a.question.qid, a.version): a for a in second.answers}
    scores = blocks = 0
    shown: list[str] = []
    for a in first.answers:
        b = other[(a.question.qid, a.version)]
        if a.grade.passed != b.grade.passed:
            scores += 1
            if len(shown) < examples:
                shown.append(
                    f"{a.question.qid} ({a.version}): {a.grade.passed}, then {b.grade.passed}"
                )
        if a.shown_keys != b.shown_keys:
            blocks += 1
    return Differences(len(first.answers), scores, blocks, tuple(shown))
