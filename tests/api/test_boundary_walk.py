"""Every RPC, walked field by field through boundary values (empty, at the limit, just over it,
absurd, years 1 and 9999, unknown enum numbers, hostile characters): no request a client can build
reaches INTERNAL or UNKNOWN, and the server keeps answering.

Each request starts from a valid one for its RPC, so a varied field is reached past the checks of
the fields before it; the variants come from the field's type, not from the server's own limits.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from tests.helpers.course import COURSE, give_course
from tests.helpers.harness import A, Harness, question
from tutor_memory_client import import_messages
from tutor_memory_client._proto import memory_pb2 as pb

STUDENT, SUBJECT = "s1", "biology"
FORGOTTEN = "walk-forgotten"
# Lengths around every limit the README documents, and far beyond them.
STRING_LENGTHS = (1, 64, 65, 128, 129, 200, 201, 256, 257, 500, 501, 1025, 8001, 65_537)
HOSTILE_STRINGS = (
    "",
    " ",
    " padded ",
    "\x00",
    "a\x00b",
    "a\nb",
    "\u2028",
    "\x85",
    "\u200b",
    "\u202e",
    "\ufeff",
    "\u00a0",
    "..." * 10_000 + "a",
    "Europe/Rome",
    "../../etc/passwd",
    "😀" * 300,
    "ال" * 3000,
)
INTS = (0, 1, -1, 2**31 - 1, -(2**31), 2**32 - 1, 2**63 - 1, -(2**63), 2**64 - 1)
DOUBLES = (0.0, -0.0, 1.0, 1.0000001, -0.5, float("nan"), float("inf"), float("-inf"), 1e308)
# Timestamp seconds: year 1, the epoch's edges, year 9999, past it, and protobuf's own bounds.
SECONDS = (-62_135_596_800, -1, 0, 1, 253_402_300_799, 253_402_300_800, -(2**62), 2**62)
NANOS = (0, 999_999_999, 1_000_000_000, -1)


def _valid(method: str, answer_id: int, block: pb.BuildBlockReply) -> Message:
    """A request of `method` the server accepts."""
    when = Timestamp()
    when.FromDatetime(datetime(2026, 3, 2, 9, tzinfo=UTC))
    chain: dict[str, Any] = {"student_id": STUDENT, "subject_id": SUBJECT}
    requests: dict[str, Message] = {
        "AppendEpisode": pb.AppendEpisodeRequest(episode=question("What is osmosis?", key="k1")),
        "ListEpisodes": pb.ListEpisodesRequest(**chain, page_size=10),
        "VerifyChain": pb.VerifyChainRequest(**chain),
        "Checkpoint": pb.CheckpointRequest(**chain),
        "BuildBlock": pb.BuildBlockRequest(
            **chain, query="osmosis", budget_tokens=500, time_zone="Europe/Rome"
        ),
        "AnnotateAnswer": pb.AnnotateAnswerRequest(
            **chain,
            answer_episode_id=answer_id,
            block_id=block.block_id,
            memory_ids=[m.episode_id for m in block.memories],
        ),
        "IngestFile": pb.IngestFileRequest(
            **chain, file_id="walk.md", filename="walk.md", content=COURSE, occurred_at=when
        ),
        "RemoveFile": pb.RemoveFileRequest(**chain, file_id="cells.md"),
        "SearchPassages": pb.SearchPassagesRequest(**chain, query="osmosis", limit=3),
        "GetMap": pb.GetMapRequest(**chain),
        "Teach": pb.TeachRequest(
            **chain, text="Remember that in our class we call it the powerhouse"
        ),
        "RecordCheck": pb.RecordCheckRequest(
            **chain, topic="Osmosis", outcome=pb.CHECK_OUTCOME_RIGHT, predicted_mastery=0.5
        ),
        "GetBeliefHistory": pb.GetBeliefHistoryRequest(**chain),
        "Rederive": pb.RederiveRequest(**chain),
        "GetReport": pb.GetReportRequest(**chain),
        "Consolidate": pb.ConsolidateRequest(student_id=STUDENT, subject_id=SUBJECT, now=when),
        # Another student: erasing the walk's own would leave the calls after it nothing to read.
        "ForgetStudent": pb.ForgetStudentRequest(student_id=FORGOTTEN),
    }
    return requests[method]


def _variants(msg: Message, depth: int = 0) -> Iterator[tuple[str, Message]]:
    """Copies of `msg`, each with one field set to a boundary value of its type."""
    for field in msg.DESCRIPTOR.fields:
        for label, value in _values(field, depth):
            out = type(msg)()
            out.CopyFrom(msg)
            try:
                _assign(out, field, value)
            except (ValueError, TypeError, OverflowError):
                continue  # a value protobuf itself refuses cannot be sent
            yield f"{field.name}={label}", out
        if field.message_type is not None and not _repeated(field) and depth < 1:
            child = getattr(msg, field.name)
            for label, variant in _variants(child, depth + 1):
                out = type(msg)()
                out.CopyFrom(msg)
                getattr(out, field.name).CopyFrom(variant)
                yield f"{field.name}.{label}", out


def _repeated(field: Any) -> bool:
    return bool(field.is_repeated)


def _values(field: Any, depth: int) -> Iterator[tuple[str, Any]]:
    # Past every repeated field's limit (the largest is 200 pages of a concept).
    many = 2_049
    if field.type == FieldDescriptor.TYPE_STRING:
        scalars: list[tuple[str, Any]] = [(f"len{n}", "a" * n) for n in STRING_LENGTHS]
        scalars += [(repr(s[:12]), s) for s in HOSTILE_STRINGS]
    elif field.type == FieldDescriptor.TYPE_BYTES:
        scalars = [(f"bytes{n}", b"\x00" * n) for n in (0, 1, 31, 32, 33, 64, 2049, 1 << 20)]
    elif field.type == FieldDescriptor.TYPE_DOUBLE:
        scalars = [(repr(d), d) for d in DOUBLES]
    elif field.type == FieldDescriptor.TYPE_ENUM:
        scalars = [(str(n), n) for n in (0, 1, 2, 3, 4, 999, -1)]
    elif field.type == FieldDescriptor.TYPE_BOOL:
        scalars = [("true", True), ("false", False)]
    elif field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type is not None and (
            field.message_type.full_name == "google.protobuf.Timestamp"
        ):
            scalars = [(f"ts{s},{n}", (s, n)) for s in SECONDS for n in NANOS if n == 0 or s == 0]
        else:
            scalars = [("empty", None)]
    else:
        scalars = [(str(n), n) for n in INTS]
    if _repeated(field):
        yield "none", []
        for label, value in scalars[:6]:
            yield f"[{label}]", [value]
        if field.type != FieldDescriptor.TYPE_MESSAGE or depth == 0:
            yield f"{many}x", [scalars[0][1]] * many
        return
    yield from scalars


def _assign(msg: Message, field: Any, value: Any) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if _repeated(field):
            target = getattr(msg, field.name)
            del target[:]
            for item in value:
                added = target.add()
                if isinstance(item, tuple):
                    added.seconds, added.nanos = item
            return
        if value is None:
            msg.ClearField(field.name)
            getattr(msg, field.name).SetInParent()
        else:
            stamp = getattr(msg, field.name)
            stamp.seconds, stamp.nanos = value
        return
    if _repeated(field):
        target = getattr(msg, field.name)
        del target[:]
        target.extend(value)
        return
    setattr(msg, field.name, value)


UNARY = [
    "AppendEpisode", "ListEpisodes", "VerifyChain", "Checkpoint", "BuildBlock", "AnnotateAnswer",
    "IngestFile", "RemoveFile", "SearchPassages", "GetMap", "Teach", "RecordCheck",
    "GetBeliefHistory", "Rederive", "GetReport", "Consolidate", "ForgetStudent",
]  # fmt: skip
STREAMS = ["IngestEpisodes", "ImportEpisodes"]


@pytest.mark.slow
async def test_no_boundary_value_of_any_rpc_reaches_internal_or_unknown(harness: Harness) -> None:
    await give_course(harness)
    block = await harness.stub.BuildBlock(
        pb.BuildBlockRequest(student_id=STUDENT, subject_id=SUBJECT, query="osmosis",
                             budget_tokens=800), metadata=A)  # fmt: skip
    answer = await harness.append(
        pb.NewEpisode(student_id=STUDENT, subject_id=SUBJECT, kind=pb.EPISODE_KIND_ANSWER,
                      summary="Osmosis moves water.", client_key="answer-1"))  # fmt: skip
    failures: list[str] = []
    calls = 0
    took: dict[str, float] = {}
    for method in UNARY:
        started = time.perf_counter()
        call = getattr(harness.stub, method)
        base = _valid(method, answer.episode.episode_id, block)
        for label, request in _variants(base):
            calls += 1
            try:
                await call(request, metadata=A, timeout=60)
            except grpc.aio.AioRpcError as err:
                if err.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
                    failures.append(f"{method} {label}: {err.code().name} {err.details()}")
        took[method] = round(time.perf_counter() - started, 1)
    print("seconds per rpc:", took)
    # The stream too: one batch of boundary items, and one item per variant of a NewEpisode.
    items: list[pb.NewEpisode] = []
    for i, (_, item) in enumerate(_variants(question("What is osmosis?", key="k"))):
        assert isinstance(item, pb.NewEpisode)
        item.client_key = item.client_key or f"walk-{i}"
        items.append(item)
    try:
        reply = await harness.ingest(items[:20_000])
        assert reply.inserted + reply.duplicate + reply.rejected == len(items[:20_000])
    except grpc.aio.AioRpcError as err:
        if err.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
            failures.append(f"IngestEpisodes: {err.code().name} {err.details()}")
    # The same items again through ImportEpisodes (those stored above come back as duplicates).
    try:
        answered = 0
        async for chunk in harness.stub.ImportEpisodes(
            import_messages(items[:20_000]), metadata=A, timeout=120
        ):
            answered = chunk.inserted + chunk.duplicate + chunk.rejected
        assert answered == len(items[:20_000])
    except grpc.aio.AioRpcError as err:
        if err.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
            failures.append(f"ImportEpisodes: {err.code().name} {err.details()}")
    assert calls > 1_000
    assert failures == []
    # Still serving, and the chain still verifies.
    verified = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert verified.ok


def test_the_walk_covers_every_rpc_of_the_service() -> None:
    service = pb.DESCRIPTOR.services_by_name["Memory"]
    assert sorted(m.name for m in service.methods) == sorted(UNARY + STREAMS)
