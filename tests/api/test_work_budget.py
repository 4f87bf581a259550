"""A call whose deadline passes stops its work (issue 12): the thread that read, extracted and
embedded a long file for it is free again soon after, instead of finishing work nobody waits for,
and nothing is stored. The budget itself (deadline, cap, cancellation) is pinned in
`tests/domain/test_budget.py`.
"""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from tests.fixtures.biology.make_pdf import FIXTURE_DIR
from tests.helpers.harness import A, Harness
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.files.read import read_document
from tutor_memory_client._proto import memory_pb2 as pb

STUDENT, SUBJECT = "s1", "biology"

# How soon after the deadline the file pool must be free again. The whole file takes far longer
# (most of a minute on the development machine: 4,000 passages to embed), so a pool still busy
# this long after would mean the work went on. Generous, for a loaded machine.
FREED_WITHIN_SECONDS = 10.0
DEADLINE_SECONDS = 1.0


def long_course() -> bytes:
    """A legitimate plain-text course of about 4 million characters (within every limit)."""
    text = (FIXTURE_DIR / "organelles.txt").read_text(encoding="utf-8") + "\n\n"
    return (text * (4_000_000 // len(text))).encode()


def test_the_long_course_is_within_every_limit() -> None:
    # The test below is about a deadline, not a refusal: the file must be one the server reads.
    try:
        document = read_document(long_course(), "long.txt", "text/plain")
    except FileRejected as exc:  # pragma: no cover - the failure message is the point
        pytest.fail(f"the long course is refused: {exc.reason}")
    assert len(document.pages) > 1_000


async def test_a_file_whose_deadline_passes_stops_its_work_and_stores_nothing(
    harness: Harness,
) -> None:
    executors = harness.app.services.executors
    request = pb.IngestFileRequest(
        student_id=STUDENT,
        subject_id=SUBJECT,
        file_id="long.txt",
        filename="long.txt",
        media_type="text/plain",
        content=long_course(),
    )
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.IngestFile(request, metadata=A, timeout=DEADLINE_SECONDS)
    assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    expired = time.monotonic()
    # The file pool has one thread: this runs only once the file's work has stopped.
    freed = await asyncio.wait_for(executors.run(executors.files, time.monotonic), timeout=120)
    assert freed - expired < FREED_WITHIN_SECONDS
    assert await harness.list_all(STUDENT, SUBJECT) == []
