"""Hostile course files through IngestFile (issue 12): each file of the corpus made by
`tests.helpers.hostile_files` (pages repeating one content stream, a page tree listing one page
200,000 times or 5,000 levels deep, objects nested past any stack, a stream inflating to 1 GB,
megabyte lines, deep nesting, a fence that never closes) is refused with INVALID_ARGUMENT naming
its reason, and nothing is stored. How long each refusal takes is measured by
`bench/bench_hostile_files.py`, not here.
"""

from __future__ import annotations

import functools

import grpc
import pytest

from tests.helpers.harness import A, Harness
from tests.helpers.hostile_files import HostileFile, hostile_corpus
from tutor_memory_client._proto import memory_pb2 as pb

STUDENT, SUBJECT = "s1", "biology"


@functools.cache
def corpus() -> dict[str, HostileFile]:
    return {f.name: f for f in hostile_corpus()}


@pytest.mark.parametrize("name", [f.name for f in hostile_corpus()])
async def test_a_hostile_file_is_refused_naming_its_reason_and_nothing_is_stored(
    harness: Harness, name: str
) -> None:
    hostile = corpus()[name]
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.IngestFile(
            pb.IngestFileRequest(
                student_id=STUDENT,
                subject_id=SUBJECT,
                file_id=hostile.filename,
                filename=hostile.filename,
                media_type=hostile.media_type,
                content=hostile.make(),
            ),
            metadata=A,
            timeout=120,
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    details = err.value.details() or ""
    assert details.startswith("content: ")
    assert hostile.reason in details
    assert await harness.list_all(STUDENT, SUBJECT) == []
    reply = await harness.stub.GetMap(
        pb.GetMapRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert len(reply.nodes) == 0
