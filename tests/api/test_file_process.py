"""IngestFile with the file-reading process (app/file_reading.py) answers as the file thread does,
and a call that goes away ends the read."""

from __future__ import annotations

import asyncio
import dataclasses

import grpc
import pytest

from tests.helpers.harness import A, Harness, start_harness, stop_harness
from tests.helpers.processes import ended
from tutor_memory.app.config import ServerConfig
from tutor_memory.app.file_reading import PROCESS_MIN_BYTES
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client._proto import memory_pb2 as pb

STUDENT, SUBJECT = "s1", "biology"

# A course large enough to be read in the process, with the headings the built-in extractor reads.
LARGE_COURSE = "".join(
    f"# {name}\n\n" + f"{name} is {what}. " * 80 + "\n\n"
    for name, what in [
        ("Osmosis", "the diffusion of water across a membrane"),
        ("Diffusion", "the movement of particles from high to low concentration"),
        ("Active transport", "movement against a gradient that uses energy"),
        ("Mitochondria", "the organelles that release energy from glucose"),
    ]
).encode()


def _ingest(
    content: bytes, file_id: str = "course.md", student: str = STUDENT
) -> pb.IngestFileRequest:
    return pb.IngestFileRequest(
        student_id=student,
        subject_id=SUBJECT,
        file_id=file_id,
        filename=file_id,
        media_type="text/markdown",
        content=content,
    )


async def _course_reply(
    h: Harness, student: str
) -> tuple[pb.IngestFileReply, pb.SearchPassagesReply]:
    reply = await h.stub.IngestFile(_ingest(LARGE_COURSE, student=student), metadata=A, timeout=60)
    found = await h.stub.SearchPassages(
        pb.SearchPassagesRequest(student_id=student, subject_id=SUBJECT, query="water membrane"),
        metadata=A,
    )
    return reply, found


async def test_a_course_read_in_the_process_answers_as_one_read_on_the_file_thread(
    server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> None:
    assert len(LARGE_COURSE) >= PROCESS_MIN_BYTES
    answers = []
    for processes, student in ((1, "s1"), (0, "s2")):
        config = dataclasses.replace(server_config, file_processes=processes)
        h = await start_harness(config, embedder)
        try:
            reply, found = await _course_reply(h, student)
            reading = h.app.services.files._reader.running_processes()
        finally:
            await stop_harness(h)
        reply.ClearField("episode")
        answers.append((reply, [(p.ref.page, p.text) for p in found.passages], reading))
    (in_process, found_there, running), (on_thread, found_here, none) = answers
    assert (running, none) == (1, 0)
    assert in_process == on_thread
    assert list(in_process.concepts) == ["Osmosis", "Diffusion", "Active transport", "Mitochondria"]
    assert found_there
    assert found_there == found_here


def _slow_course() -> bytes:
    """A course whose reading takes seconds: long enough to be stopped in the middle."""
    return "".join(
        f"# Part {i}\n\n" + f"The cell membrane, part {i}. " * 40 + "\n\n" for i in range(1_500)
    ).encode()


async def test_a_call_its_caller_cancels_ends_the_reading_process_and_stores_nothing(
    harness: Harness,
) -> None:
    await harness.stub.IngestFile(_ingest(LARGE_COURSE), metadata=A, timeout=60)
    reader = harness.app.services.files._reader
    assert reader.running_processes() == 1
    pid = reader._pid.result() if reader._pid else 0
    call = harness.stub.IngestFile(_ingest(_slow_course(), "slow.md"), metadata=A)
    await asyncio.sleep(0.5)
    call.cancel()
    gone = await asyncio.to_thread(ended, pid, 10)
    assert gone, "the read went on after its call went away"
    again = await harness.stub.IngestFile(_ingest(LARGE_COURSE, "again.md"), metadata=A, timeout=60)
    assert list(again.concepts)
    assert reader.running_processes() == 1  # a new one
    listed = await harness.list_all(STUDENT, SUBJECT)
    assert [e.summary.split(" (")[0] for e in listed] == ["File course.md", "File again.md"]


async def test_a_read_past_its_deadline_is_deadline_exceeded_and_stores_nothing(
    harness: Harness,
) -> None:
    await harness.stub.IngestFile(_ingest(LARGE_COURSE), metadata=A, timeout=60)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.IngestFile(_ingest(_slow_course(), "slow.md"), metadata=A, timeout=0.5)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    again = await harness.stub.IngestFile(_ingest(LARGE_COURSE, "again.md"), metadata=A, timeout=60)
    assert list(again.concepts)
    listed = await harness.list_all(STUDENT, SUBJECT)
    assert [e.summary.split(" (")[0] for e in listed] == ["File course.md", "File again.md"]
