"""The text work of AppendEpisode, Teach and RecordCheck (teaching detection, an answer's narration
check, a check's topic routing) runs within the request's work budget (issue 12): past the
server's cap it stops with RESOURCE_EXHAUSTED naming the work, past the caller's deadline the
work stops at its next check of the budget, and either way nothing is stored. The budget itself
is pinned in `tests/domain/test_budget.py`, a file's budget in `test_work_budget.py`.

Where the work is quick (detecting a teaching phrase, routing a topic: linear scans of at most
64 KiB), the cap is made tiny so that its first check is past it: what these tests pin is that the
work consults the budget before writing anything.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable

import grpc
import pytest

from tests.helpers.harness import A, Harness
from tutor_memory.app.executors import LONG_TEXT_THREADS, TEXT_THREADS
from tutor_memory.domain import budget as budget_module
from tutor_memory.domain.budget import WorkBudget
from tutor_memory.domain.errors import DeadlineExceeded
from tutor_memory.domain.limits import MAX_TEXT_BYTES
from tutor_memory_client._proto import memory_pb2 as pb

STUDENT, SUBJECT = "s1", "biology"

# An answer of the largest allowed size whose every sentence has a recap verb and a number that
# could be a year: the narration check reads the time window of each of its 2,850 sentences, all
# different (a sentence that repeats is read once), seconds of CPU (2.7 s on the development
# machine).
SLOW_ANSWER = "".join(f"We saw {1000 + i % 900} on page {i // 900 + 1}. " for i in range(4_000))[
    :MAX_TEXT_BYTES
]
# A cap the slow answer always outlasts, one no work meets, and one it always meets.
SHORT_CAP_SECONDS = 0.3
TINY_CAP_SECONDS = 1e-9
LONG_CAP_SECONDS = 600.0
DEADLINE_SECONDS = 0.5


def answer(text: str) -> pb.AppendEpisodeRequest:
    return pb.AppendEpisodeRequest(
        episode=pb.NewEpisode(
            student_id=STUDENT,
            subject_id=SUBJECT,
            kind=pb.EPISODE_KIND_ANSWER,
            summary="A recap",
            text=text,
        )
    )


def cap_text_work(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    monkeypatch.setattr(budget_module, "TEXT_WORK_SECONDS", seconds)


def record_stops(monkeypatch: pytest.MonkeyPatch) -> list[Exception]:
    """The errors the budget's checks raise from now on, in the threads that do the work: the
    proof that a piece of work stopped at a check rather than ran to its end."""
    stops: list[Exception] = []
    check = WorkBudget.check

    def recording(self: WorkBudget) -> None:
        try:
            check(self)
        except Exception as exc:
            stops.append(exc)
            raise

    monkeypatch.setattr(WorkBudget, "check", recording)
    return stops


async def refused(call: Awaitable[object]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    return err.value


async def test_an_answer_whose_narration_check_outlasts_the_cap_is_refused_and_not_stored(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap_text_work(monkeypatch, SHORT_CAP_SECONDS)
    err = await refused(harness.stub.AppendEpisode(answer(SLOW_ANSWER), metadata=A))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "text: reading the episode: needs more than 0.3 s of work" in (err.details() or "")
    assert await harness.list_all(STUDENT, SUBJECT) == []


async def test_the_same_answer_within_the_cap_is_stored(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The control of the test above: the answer is one the server stores, given the time (a cap
    # no loaded machine reaches, so that the test pins the behaviour and not the speed).
    cap_text_work(monkeypatch, LONG_CAP_SECONDS)
    reply = await harness.stub.AppendEpisode(answer(SLOW_ANSWER), metadata=A)
    assert reply.episode.text == SLOW_ANSWER


async def test_an_answer_whose_deadline_passes_stops_its_work_and_stores_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    stopped = record_stops(monkeypatch)
    executors = harness.app.services.executors
    err = await refused(
        harness.stub.AppendEpisode(answer(SLOW_ANSWER), metadata=A, timeout=DEADLINE_SECONDS)
    )
    assert err.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    # Every thread of both text pools at once (an answer's facts, its narration check among them,
    # are derived on one of them, by the answer's length: Ledger.embed): the barriers open only
    # when the narration's thread is free, whether it stopped or finished; what it did is in
    # `stopped`.
    pools = ((executors.text, TEXT_THREADS), (executors.long_text, LONG_TEXT_THREADS))
    barriers = [(pool, threading.Barrier(threads), threads) for pool, threads in pools]
    await asyncio.wait_for(
        asyncio.gather(
            *(
                executors.run(pool, barrier.wait, 60)
                for pool, barrier, threads in barriers
                for _ in range(threads)
            )
        ),
        timeout=90,
    )
    assert any(isinstance(exc, DeadlineExceeded) for exc in stopped)
    assert await harness.list_all(STUDENT, SUBJECT) == []


async def test_teach_stops_at_the_cap_and_stores_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap_text_work(monkeypatch, TINY_CAP_SECONDS)
    request = pb.TeachRequest(
        student_id=STUDENT, subject_id=SUBJECT, text="Remember that osmosis is passive."
    )
    err = await refused(harness.stub.Teach(request, metadata=A))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (err.details() or "").startswith("text: looking for a teaching phrase: needs more")
    assert await harness.list_all(STUDENT, SUBJECT) == []


async def test_a_question_that_teaches_stops_at_the_cap_and_stores_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap_text_work(monkeypatch, TINY_CAP_SECONDS)
    episode = pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_QUESTION,
        summary="Remember that osmosis is passive.",
        text="Remember that osmosis is passive.",
    )
    err = await refused(
        harness.stub.AppendEpisode(pb.AppendEpisodeRequest(episode=episode), metadata=A)
    )
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (err.details() or "").startswith("text: reading the episode: needs more")
    assert await harness.list_all(STUDENT, SUBJECT) == []


async def test_record_check_stops_at_the_cap_and_stores_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap_text_work(monkeypatch, TINY_CAP_SECONDS)
    request = pb.RecordCheckRequest(
        student_id=STUDENT,
        subject_id=SUBJECT,
        topic="how water crosses a membrane",
        outcome=pb.CHECK_OUTCOME_RIGHT,
        evaluation="Explained osmosis well.",
    )
    err = await refused(harness.stub.RecordCheck(request, metadata=A))
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (err.details() or "").startswith("evaluation: routing the topic to a concept: needs")
    assert await harness.list_all(STUDENT, SUBJECT) == []


async def test_an_appended_check_stops_at_the_cap_and_stores_nothing(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    cap_text_work(monkeypatch, TINY_CAP_SECONDS)
    episode = pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_CHECK,
        summary="Check on osmosis",
        text="Explained osmosis well.",
        check=pb.CheckResult(outcome=pb.CHECK_OUTCOME_RIGHT, topic="osmosis"),
    )
    err = await refused(
        harness.stub.AppendEpisode(pb.AppendEpisodeRequest(episode=episode), metadata=A)
    )
    assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (err.details() or "").startswith("text: reading the episode: needs more")
    assert await harness.list_all(STUDENT, SUBJECT) == []
