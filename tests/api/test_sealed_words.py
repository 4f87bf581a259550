"""Sealed words on a real server (issue 16): what a caller wrote reads back as written, is stored
only as ciphertext, and a ciphertext moved to another row neither opens nor verifies. On both
stores."""

from __future__ import annotations

import grpc
import pytest

from tests.helpers.harness import A, Harness, question
from tests.helpers.stores import raw_database
from tutor_memory_client._proto import memory_pb2 as pb

MARKER = "Zanzibarquux"


async def test_words_read_back_as_written_and_are_stored_only_sealed(harness: Harness) -> None:
    check = pb.NewEpisode(
        student_id="s1",
        subject_id="biology",
        kind=pb.EPISODE_KIND_CHECK,
        summary=f"{MARKER} check",
        text=f"{MARKER} explained osmosis",
        concepts=[f"{MARKER} membranes"],
        check=pb.CheckResult(outcome=pb.CHECK_OUTCOME_RIGHT, topic=f"{MARKER} topic"),
    )
    written = (await harness.append(check)).episode
    await harness.append(question(f"{MARKER} asks about cells"))
    listed = await harness.list_all()
    assert listed[0].summary == f"{MARKER} check"
    assert listed[0].text == f"{MARKER} explained osmosis"
    assert list(listed[0].concepts) == [f"{MARKER} membranes"]
    assert listed[0].check.topic == f"{MARKER} topic"
    assert listed[0].hash == written.hash
    with raw_database(harness.config) as db:
        rows = [
            tuple(r)
            for r in db.execute(
                "SELECT summary, text, concepts, check_topic, length(sealed) FROM episodes"
            )
        ]
    assert rows
    assert all(r[:4] == ("", "", "[]", "") and r[4] > 0 for r in rows)
    # Derived data keeps what recall needs in the clear (stems), and goes when the student is
    # erased (test_erasure.py): the design document's "Erasure" table.
    with raw_database(harness.config) as db:
        stems = " ".join(r[0] for r in db.execute("SELECT stems FROM recall_facts"))
    assert MARKER.lower() in stems
    verified = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=A
    )
    assert verified.ok
    assert not verified.erased


async def test_a_ciphertext_swapped_between_rows_opens_nowhere_and_breaks_the_chain(
    harness: Harness,
) -> None:
    await harness.append(question("first question"))
    second = (await harness.append(question("second question"))).episode
    with raw_database(harness.config) as db:
        db.without_guards()
        (a, b) = db.execute("SELECT sealed FROM episodes ORDER BY seq")
        db.execute("UPDATE episodes SET sealed = ? WHERE seq = 1", bytes(b[0]))
        db.execute("UPDATE episodes SET sealed = ? WHERE seq = 2", bytes(a[0]))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.list_all()
    assert err.value.code() == grpc.StatusCode.DATA_LOSS
    assert "altered or moved" in (err.value.details() or "")
    verified = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id="s1", subject_id="biology"), metadata=A
    )
    assert not verified.ok
    assert verified.first_break.seq == 1
    assert "edited" in verified.first_break.reason
    assert second.seq == 2
