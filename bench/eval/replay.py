"""A generated history sent through the real gRPC API, in the order it happened.

- Course files: IngestFile (Markdown), with the generator's concepts as caller-supplied concepts
  (name, summary, definition, builds_on, pages): this stands for a chat service whose own model
  extracted them (SPEC R5.1), so the map is the one the course describes.
- Conversation turns: IngestEpisodes, each run of consecutive turns in one call, the student's as
  question episodes and the tutor's as answer episodes; a tutor answer cites its file and page
  with the file's fingerprint; each turn is tagged with the concept it is about.
- Checks: RecordCheck (topic, outcome, the tutor's evaluation, the student's answer, the mastery
  the tutor predicted). Taught notes: Teach.
Every call carries the event's own time as `occurred_at`. Anything the server refuses stops the
replay with what it said: a history that did not go in whole would grade nonsense.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime

from bench.eval.history import Check, CourseFile, Event, FileArrival, History, Teaching, Turn
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

# Seconds one call may take before the replay fails (a batch of turns embeds them all).
CALL_TIMEOUT_S = 120.0


class ReplayFailed(RuntimeError):
    pass


@dataclass(frozen=True, slots=True)
class Replayed:
    ids: dict[str, int]  # event key -> episode id
    seconds: float
    calls: int

    @property
    def keys(self) -> dict[int, str]:
        return {i: k for k, i in self.ids.items()}


def _stamp(
    message: pb.NewEpisode | pb.IngestFileRequest | pb.RecordCheckRequest | pb.TeachRequest,
    at: datetime,
) -> None:
    message.occurred_at.FromDatetime(at)


def turn_episode(history: History, turn: Turn) -> pb.NewEpisode:
    episode = pb.NewEpisode(
        student_id=history.student_id,
        subject_id=history.subject_id,
        kind=pb.EPISODE_KIND_QUESTION if turn.student else pb.EPISODE_KIND_ANSWER,
        summary=turn.text,
        text=turn.text,
        concepts=list(turn.concepts),
        evidence=[
            pb.Evidence(file_id=c.file_id, page=c.page, file_fingerprint=c.fingerprint)
            for c in turn.citations
        ],
        client_key=turn.key,
    )
    _stamp(episode, turn.at)
    return episode


def file_request(history: History, arrival: FileArrival) -> pb.IngestFileRequest:
    file: CourseFile = arrival.file
    request = pb.IngestFileRequest(
        student_id=history.student_id,
        subject_id=history.subject_id,
        file_id=file.file_id,
        filename=file.filename,
        media_type="text/markdown",
        content=file.content,
        concepts=[
            pb.ConceptInput(
                name=c.name,
                summary=c.summary,
                definition=c.definition,
                builds_on=list(c.builds_on),
                pages=[file.page_of(c.name)],
            )
            for c in file.concepts
        ],
    )
    _stamp(request, arrival.at)
    return request


def check_request(history: History, check: Check) -> pb.RecordCheckRequest:
    request = pb.RecordCheckRequest(
        student_id=history.student_id,
        subject_id=history.subject_id,
        topic=check.topic,
        outcome=pb.CHECK_OUTCOME_RIGHT if check.right else pb.CHECK_OUTCOME_WRONG,
        evaluation=check.evaluation,
        predicted_mastery=check.predicted_mastery,
        student_answer=check.student_answer,
        client_key=check.key,
    )
    _stamp(request, check.at)
    return request


def teach_request(history: History, teaching: Teaching) -> pb.TeachRequest:
    request = pb.TeachRequest(
        student_id=history.student_id, subject_id=history.subject_id, text=teaching.text
    )
    _stamp(request, teaching.at)
    return request


def _runs(events: Sequence[Event]) -> Iterator[list[Event]]:
    """The events in order, consecutive turns grouped into one list, anything else alone."""
    run: list[Event] = []
    for event in events:
        if isinstance(event, Turn):
            run.append(event)
            continue
        if run:
            yield run
            run = []
        yield [event]
    if run:
        yield run


def replay(stub: pb_grpc.MemoryStub, history: History) -> Replayed:
    ids: dict[str, int] = {}
    calls = 0
    started = time.perf_counter()
    for run in _runs(history.events):
        calls += 1
        first = run[0]
        if isinstance(first, Turn):
            turns = [e for e in run if isinstance(e, Turn)]
            episodes = [turn_episode(history, t) for t in turns]
            reply = stub.IngestEpisodes(ingest_messages(episodes), timeout=CALL_TIMEOUT_S)
            bad = [f"{i.client_key}: {i.reason}" for i in reply.items if not i.episode_id]
            if bad or len(reply.items) != len(episodes):
                raise ReplayFailed(f"{history.student_id}: turns refused: {'; '.join(bad[:5])}")
            ids.update((i.client_key, i.episode_id) for i in reply.items)
        elif isinstance(first, FileArrival):
            file_reply = stub.IngestFile(file_request(history, first), timeout=CALL_TIMEOUT_S)
            if file_reply.rejected:
                refused = ", ".join(f"{r.name} ({r.reason})" for r in file_reply.rejected)
                raise ReplayFailed(f"{history.student_id}: concepts refused: {refused}")
            ids[first.key] = file_reply.episode.episode_id
        elif isinstance(first, Check):
            check_reply = stub.RecordCheck(check_request(history, first), timeout=CALL_TIMEOUT_S)
            ids[first.key] = check_reply.episode.episode_id
        else:
            teach_reply = stub.Teach(teach_request(history, first), timeout=CALL_TIMEOUT_S)
            ids[first.key] = teach_reply.episode.episode_id
    missing = [e.key for e in history.events if not ids.get(e.key)]
    if missing:
        raise ReplayFailed(f"{history.student_id}: no episode id for {missing[:5]}")
    return Replayed(ids, time.perf_counter() - started, calls)
