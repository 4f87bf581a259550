"""The nightly cycle through the real server (SPEC R8, R7.4, R7.5): consolidation episodes,
idempotence, decay at day 44 vs 46, citation checks and their note in the block, reports."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta

import grpc
import pytest

from tests.helpers.course import STUDENT, SUBJECT, T0, at, check, give_course, history
from tests.helpers.harness import A, Harness
from tutor_memory.domain.annotations import AnnotationKind
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.honesty.citations import CitationStatus
from tutor_memory_client._proto import memory_pb2 as pb

CHAIN = ChainKey("tenant-a", STUDENT, SUBJECT)
CITATION = AnnotationKind.CITATION


async def consolidate(h: Harness, now: datetime, **kw: object) -> pb.ConsolidateReply:
    reply: pb.ConsolidateReply = await h.stub.Consolidate(
        pb.ConsolidateRequest(now=at(now), **kw),  # type: ignore[arg-type]
        metadata=A,
    )
    return reply


def _midnight_after(moment: datetime) -> datetime:
    """The end of the (UTC) day that holds `moment`."""
    return datetime(moment.year, moment.month, moment.day, tzinfo=UTC) + timedelta(days=1)


async def ask(h: Harness, text: str, when: datetime) -> pb.Episode:
    ep = pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_QUESTION,
        summary=text,
        text=text,
        occurred_at=at(when),
    )
    reply = await h.append(ep)
    return reply.episode


async def test_a_day_becomes_one_consolidation_episode_and_a_second_run_writes_nothing(
    harness: Harness,
) -> None:
    day = datetime(2026, 3, 2, tzinfo=UTC)
    await give_course(harness, day + timedelta(hours=8))
    await ask(harness, "What is osmosis?", day + timedelta(hours=9))
    await check(harness, "Osmosis", False, day + timedelta(hours=10))
    await check(harness, "Diffusion", True, day + timedelta(hours=11))

    first = await consolidate(harness, day + timedelta(days=1))
    assert (first.chains_active, first.consolidation_episodes) == (1, 1)
    episodes = await harness.list_all()
    digests = [e for e in episodes if e.kind == pb.EPISODE_KIND_CONSOLIDATION]
    assert len(digests) == 1
    assert "2 checks (1 right, 1 wrong)" in digests[0].summary

    report = await harness.stub.GetReport(
        pb.GetReportRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert "The nightly cycle last composed the working set and self-model on" in report.text
    # Struggles first; an understanding last checked months before today comes next.
    assert list(report.working_set) == ["Osmosis", "Diffusion"]

    again = await consolidate(harness, day + timedelta(days=1))
    assert again.consolidation_episodes == 0
    assert again.chains_already_done == 1
    assert len(await harness.list_all()) == len(episodes)

    # The next day holds only the digest: a quiet day writes nothing, and never a digest of it.
    quiet = await consolidate(harness, day + timedelta(days=2))
    assert quiet.chains_active == 0
    assert len(await harness.list_all()) == len(episodes)


async def test_a_belief_decays_after_45_untouched_days_not_before(harness: Harness) -> None:
    await give_course(harness)
    last = T0 + timedelta(days=1)
    await check(harness, "Osmosis", True, last)

    # Decay is judged at the end of each digested day, on the evidence clock: the end of the
    # day 44 days after the check is 44.6 days after it, the end of day 46 is 46.6 days after.
    day44 = last + timedelta(days=44)
    await ask(harness, "hello again", day44)
    no = await consolidate(harness, _midnight_after(day44))
    assert no.beliefs_decayed == 0

    day46 = last + timedelta(days=46)
    await ask(harness, "and again", day46)
    yes = await consolidate(harness, _midnight_after(day46))
    assert yes.beliefs_decayed == 1
    (osmosis,) = await history(harness, "Osmosis")
    old, new = osmosis.rows
    assert abs(new.confidence - old.confidence * 0.85) < 1e-3
    assert new.needs_reconfirmation
    assert not old.needs_reconfirmation
    assert old.superseded_by == new.belief_id
    assert new.line.endswith("[decayed: reconfirm]")


async def test_a_replaced_file_turns_holds_into_changed_and_the_note_reaches_the_block(
    harness: Harness,
) -> None:
    course = await give_course(harness, T0)
    answer = pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_ANSWER,
        summary="Osmosis moves water across the membrane, as the chapter on cells says.",
        text="Osmosis moves water across the membrane.",
        occurred_at=at(T0 + timedelta(hours=1)),
        evidence=[pb.Evidence(file_id="cells.md", page=1, file_fingerprint=course.fingerprint)],
    )
    cited = (await harness.append(answer)).episode
    chat = await ask(harness, "Thanks, that helps with osmosis", T0 + timedelta(hours=2))

    await consolidate(harness, T0 + timedelta(days=1))
    store = harness.app.services.store
    verdict = json.loads(store.annotations(CHAIN, cited.episode_id, CITATION)[-1].body)
    assert verdict["status"] == CitationStatus.HOLDS.value
    talk = json.loads(store.annotations(CHAIN, chat.episode_id, CITATION)[-1].body)
    assert talk["status"] == CitationStatus.UNVERIFIABLE.value

    await harness.stub.IngestFile(
        pb.IngestFileRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            file_id="cells.md",
            filename="cells.md",
            content=b"# Cells\n\nOsmosis is now explained differently in this edition.\n",
            occurred_at=at(T0 + timedelta(days=1, hours=3)),
        ),
        metadata=A,
    )
    second = await consolidate(harness, T0 + timedelta(days=2))
    assert second.citations_changed >= 1
    verdict = json.loads(store.annotations(CHAIN, cited.episode_id, CITATION)[-1].body)
    assert verdict["status"] == CitationStatus.CHANGED_REPLACED.value

    block = await harness.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            query="how does osmosis move water across the membrane?",
            budget_tokens=1500,
            now=at(T0 + timedelta(days=3)),
        ),
        metadata=A,
    )
    line = next(m.line for m in block.memories if m.episode_id == cited.episode_id)
    assert line.endswith("[note: the file cited here has since been replaced or removed]")
    other = [m.line for m in block.memories if m.episode_id != cited.episode_id]
    assert all("[note:" not in text for text in other if "- file:" not in text)


async def test_the_report_never_says_no_checks_when_checks_exist(harness: Harness) -> None:
    for i in range(3):
        await check(harness, "photosynthesis", i % 2 == 0, T0 + timedelta(hours=i))
    report = await harness.stub.GetReport(
        pb.GetReportRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert (report.checks, report.checks_right, report.checks_wrong) == (3, 2, 1)
    assert report.checks_linked == 0
    assert "3 checks are recorded, but none could yet be linked to a concept in the map" in (
        report.text
    )
    assert not report.calibration.calibrated
    assert "The nightly cycle has not run for this student and subject yet." in report.text


async def test_consolidate_refuses_a_window_that_ends_in_the_future(harness: Harness) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await consolidate(harness, datetime.now(tz=UTC) + timedelta(days=2))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (err.value.details() or "").startswith("now:")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.Consolidate(pb.ConsolidateRequest(subject_id="biology"), metadata=A)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (err.value.details() or "").startswith("student_id:")


async def _digests(h: Harness) -> list[pb.Episode]:
    return [e for e in await h.list_all() if e.kind == pb.EPISODE_KIND_CONSOLIDATION]


async def test_a_retry_with_a_later_now_writes_no_second_digest(harness: Harness) -> None:
    """The documented cron line passes no fixed end: each retry has a later `now`."""
    day = datetime(2026, 3, 2, tzinfo=UTC)
    await ask(harness, "What is osmosis?", day + timedelta(hours=9))
    first = await consolidate(harness, day + timedelta(days=1, minutes=1))
    assert first.consolidation_episodes == 1
    for minutes in (7, 65, 600):
        again = await consolidate(harness, day + timedelta(days=1, minutes=minutes))
        assert (again.consolidation_episodes, again.chains_already_done) == (0, 1)
    assert len(await _digests(harness)) == 1


async def test_every_ended_day_is_digested_once_and_an_open_day_waits(harness: Harness) -> None:
    day = datetime(2026, 3, 2, tzinfo=UTC)
    for d in range(3):
        await ask(harness, f"question of day {d}", day + timedelta(days=d, hours=10))
    # The third day has not ended: only the first two are digested.
    reply = await consolidate(harness, day + timedelta(days=2, hours=12))
    assert reply.consolidation_episodes == 2
    reply = await consolidate(harness, day + timedelta(days=3))
    assert reply.consolidation_episodes == 1
    summaries = sorted(e.summary for e in await _digests(harness))
    assert [s.split(":")[0] for s in summaries] == [
        "Day of 02 Mar 2026",
        "Day of 03 Mar 2026",
        "Day of 04 Mar 2026",
    ]


async def test_late_arrivals_get_one_follow_up_digest(harness: Harness) -> None:
    day = datetime(2026, 3, 2, tzinfo=UTC)
    await ask(harness, "What is osmosis?", day + timedelta(hours=9))
    await consolidate(harness, day + timedelta(days=1))
    # Recorded after the day was digested, but it happened that day.
    await ask(harness, "And diffusion?", day + timedelta(hours=15))
    late = await consolidate(harness, day + timedelta(days=1, hours=2))
    assert late.consolidation_episodes == 1
    again = await consolidate(harness, day + timedelta(days=1, hours=3))
    assert again.consolidation_episodes == 0
    digests = await _digests(harness)
    assert len(digests) == 2
    follow_up = digests[-1]
    assert follow_up.summary.startswith("Late additions to day of 02 Mar 2026: 1 episode")
    assert "And diffusion?" in follow_up.text
    assert "What is osmosis?" not in follow_up.text


async def test_a_chains_status_lists_the_runs_that_wrote_newest_first(harness: Harness) -> None:
    day = datetime(2026, 3, 2, tzinfo=UTC)
    await ask(harness, "What is osmosis?", day + timedelta(hours=9))
    await ask(harness, "What is diffusion?", day + timedelta(days=1, hours=9))
    await consolidate(harness, day + timedelta(days=2))
    await ask(harness, "And a membrane?", day + timedelta(hours=15))  # late, for day one
    await consolidate(harness, day + timedelta(days=2, hours=2))
    await consolidate(harness, day + timedelta(days=2, hours=3))  # nothing left: no trace

    status = await harness.app.services.nightly.status(CHAIN)
    runs = status.runs()
    assert len(runs) == 2
    late, first = runs
    assert late.done_at_us > first.done_at_us
    day_one = int(day.timestamp() * 1_000_000)
    assert [(d.digest.day_start_us, d.digest.episodes) for d in late.digests] == [(day_one, 1)]
    assert [(d.digest.day_start_us, d.digest.episodes) for d in first.digests] == [
        (day_one + 86_400_000_000, 1),
        (day_one, 1),
    ]
    assert first.episodes == 2
    # Each row names the digest episode it wrote.
    digests = {e.episode_id for e in await _digests(harness)}
    assert {d.digest.episode_id for run in runs for d in run.digests} == digests


async def test_concurrent_runs_write_each_digest_once_and_never_fail(harness: Harness) -> None:
    day = datetime(2026, 3, 2, tzinfo=UTC)
    for d in range(4):
        await check(harness, "Osmosis", d % 2 == 0, day + timedelta(days=d, hours=9))
    now = day + timedelta(days=4)
    replies = await asyncio.gather(*(consolidate(harness, now) for _ in range(4)))
    assert sum(r.consolidation_episodes for r in replies) == 4
    digests = await _digests(harness)
    assert sorted(d.summary[:18] for d in digests) == [f"Day of 0{d} Mar 2026" for d in range(2, 6)]
    verified = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert verified.ok


async def test_a_replayed_history_decays_twice_like_a_live_one(harness: Harness) -> None:
    """Every time the decay rule compares is on the evidence clock: a second decay is due 45
    days of evidence after the first, whenever the server wrote the rows."""
    await give_course(harness)
    last = T0 + timedelta(days=1)
    await check(harness, "Osmosis", True, last)
    for days in (46, 92):
        await ask(harness, "still there?", last + timedelta(days=days))
        reply = await consolidate(harness, _midnight_after(last + timedelta(days=days)))
        assert reply.beliefs_decayed == 1
    (osmosis,) = await history(harness, "Osmosis")
    assert len(osmosis.rows) == 3
    assert [r.needs_reconfirmation for r in osmosis.rows] == [False, True, True]


async def test_a_digest_never_fills_an_empty_period(harness: Harness) -> None:
    """A digest is written at the last moment of its (UTC) day, which in New York is the
    evening of that date: a day on which nothing happened there."""
    day = datetime(2026, 3, 3, tzinfo=UTC)
    # 02:00 UTC on 3 March is 21:00 on 2 March in New York.
    await ask(harness, "What is osmosis?", day + timedelta(hours=2))
    await consolidate(harness, day + timedelta(days=1))
    (digest,) = await _digests(harness)
    block = await harness.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            query="what did we do yesterday?",
            budget_tokens=800,
            # Noon of 4 March in New York: yesterday there is 3 March.
            now=at(day + timedelta(days=1, hours=17)),
            time_zone="America/New_York",
        ),
        metadata=A,
    )
    assert block.no_record
    assert digest.episode_id not in [m.episode_id for m in block.memories]


async def test_a_removed_file_is_changed_removed_through_the_real_cycle(harness: Harness) -> None:
    course = await give_course(harness, T0)
    answer = pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_ANSWER,
        summary="Osmosis moves water, as the chapter on cells says.",
        occurred_at=at(T0 + timedelta(hours=1)),
        evidence=[pb.Evidence(file_id="cells.md", page=1, file_fingerprint=course.fingerprint)],
    )
    cited = (await harness.append(answer)).episode
    await harness.stub.RemoveFile(
        pb.RemoveFileRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            file_id="cells.md",
            occurred_at=at(T0 + timedelta(hours=2)),
        ),
        metadata=A,
    )
    reply = await consolidate(harness, T0 + timedelta(days=1))
    assert reply.citations_changed >= 1
    store = harness.app.services.store
    verdict = json.loads(store.annotations(CHAIN, cited.episode_id, CITATION)[-1].body)
    assert verdict["status"] == CitationStatus.CHANGED_REMOVED.value
    assert verdict["detail"] == "cells.md was removed"
