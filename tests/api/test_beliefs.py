"""Beliefs through the real server (SPEC R5): checks routed to concepts, rows never rewritten,
history, re-derivation, and the block's belief section."""

from __future__ import annotations

import asyncio
import itertools
import threading
from datetime import datetime, timedelta
from typing import Any

import grpc
import pytest

from tests.helpers.course import STUDENT, SUBJECT, T0, at, check, give_course, history
from tests.helpers.harness import A, Harness
from tutor_memory.domain.episodes import ChainKey, StoredEpisode
from tutor_memory.domain.errors import DeadlineExceeded
from tutor_memory_client._proto import memory_pb2 as pb


async def test_a_check_on_a_concept_by_name_makes_a_belief(harness: Harness) -> None:
    await give_course(harness)
    reply = await check(harness, "osmosis", False, T0 + timedelta(hours=1))
    assert reply.routing == pb.TOPIC_ROUTING_NAME
    assert reply.concept == "Osmosis"
    assert reply.belief.claim == pb.CLAIM_STRUGGLES_WITH
    assert 0 < reply.belief.confidence <= 0.95
    assert list(reply.belief.supporting_episode_ids) == [reply.episode.episode_id]
    assert reply.episode.kind == pb.EPISODE_KIND_CHECK
    assert reply.episode.salience == pytest.approx(0.70)


async def test_a_phrase_topic_routes_through_the_evaluation_text(harness: Harness) -> None:
    await give_course(harness)
    reply = await check(
        harness,
        "the second exercise",
        True,
        T0 + timedelta(hours=1),
        evaluation="Correctly explained how mitochondria release energy.",
    )
    assert reply.routing == pb.TOPIC_ROUTING_EVALUATION
    assert reply.concept == "Mitochondria"
    assert reply.belief.claim == pb.CLAIM_UNDERSTANDS


@pytest.mark.parametrize("topic", ["ask me the questions", "bueno ahora explícame todos los pasos"])
async def test_spoken_expression_topics_are_kept_as_evidence_never_as_beliefs(
    harness: Harness, topic: str
) -> None:
    await give_course(harness)
    reply = await check(harness, topic, False, T0 + timedelta(hours=1))
    assert reply.routing == pb.TOPIC_ROUTING_SPOKEN_EXPRESSION
    assert not reply.HasField("belief")
    assert reply.episode.check.topic == topic
    assert await history(harness) == []


async def test_a_belief_changed_three_times_keeps_four_rows_and_one_current(
    harness: Harness,
) -> None:
    await give_course(harness)
    outcomes = [True, False, False, True]
    for i, right in enumerate(outcomes):
        await check(harness, "Osmosis", right, T0 + timedelta(days=i + 1))
    (osmosis,) = await history(harness, "osmosis")
    rows = list(osmosis.rows)
    assert len(rows) == 4
    current = [r for r in rows if r.superseded_by == 0]
    assert [r.belief_id for r in current] == [rows[-1].belief_id]
    for old, new in itertools.pairwise(rows):
        assert old.superseded_by == new.belief_id
    assert len(osmosis.changes) == 3
    # The first row is exactly as it was written: a claim is never updated into another.
    assert rows[0].claim == pb.CLAIM_UNDERSTANDS


async def test_a_retried_check_with_its_key_writes_nothing_new(harness: Harness) -> None:
    await give_course(harness)
    first = await check(harness, "Osmosis", False, T0 + timedelta(hours=1), key="k1")
    again = await check(harness, "Osmosis", False, T0 + timedelta(hours=1), key="k1")
    assert again.duplicate
    assert again.episode.episode_id == first.episode.episode_id
    (osmosis,) = await history(harness, "Osmosis")
    assert len(osmosis.rows) == 1


async def test_rederive_retires_beliefs_replays_checks_and_touches_no_episode(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tutor_memory.app import beliefs as keeper
    from tutor_memory.domain.beliefs import rules

    await give_course(harness)
    await check(harness, "Osmosis", False, T0 + timedelta(days=1))
    await check(harness, "Diffusion", True, T0 + timedelta(days=2))
    before = await harness.list_all()
    verified = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )

    # A rule change: from today, every belief is held with half the confidence.
    def halved(checks: list[rules.CheckEvidence]) -> rules.Derived | None:
        derived = rules.derive(checks)
        if derived is None:
            return None
        return rules.Derived(
            derived.claim,
            round(derived.confidence / 2, 4),
            derived.supporting_ids,
            derived.reason,
            derived.evidence_at,
        )

    monkeypatch.setattr(keeper, "derive", halved)
    reply = await harness.stub.Rederive(
        pb.RederiveRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert (reply.retired, reply.derived, reply.checks_replayed) == (2, 2, 2)

    rows = [r for hist in await history(harness) for r in hist.rows]
    assert len(rows) == 4
    current = [r for r in rows if r.superseded_by == 0 and "re-derived" in r.reason]
    assert len(current) == 2
    old_rows = [r for r in rows if "re-derived" not in r.reason]
    for old in old_rows:
        new = next(r for r in current if r.concept == old.concept)
        assert new.confidence == pytest.approx(old.confidence / 2, abs=1e-3)
    after = await harness.list_all()
    assert [e.hash for e in after] == [e.hash for e in before]
    still = await harness.stub.VerifyChain(
        pb.VerifyChainRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert still.ok
    assert still.head_hash == verified.head_hash


async def test_the_block_shows_beliefs_before_earlier_work(harness: Harness) -> None:
    await give_course(harness)
    await check(harness, "Osmosis", False, T0 + timedelta(days=1))
    block = await harness.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=STUDENT,
            subject_id=SUBJECT,
            query="what did I get wrong so far?",
            budget_tokens=800,
            now=at(T0 + timedelta(days=2)),
        ),
        metadata=A,
    )
    titles = [s.title for s in block.sections]
    beliefs = next(s for s in block.sections if s.title.startswith("WHAT YOU CURRENTLY BELIEVE"))
    assert titles.index(beliefs.title) < titles.index(
        "EARLIER WORK WITH THIS STUDENT (oldest first)"
    )
    assert list(beliefs.concepts) == ["Osmosis"]
    assert beliefs.lines[0].startswith("- struggles with Osmosis (0.")
    assert block.tokens_used <= 800


async def test_a_check_without_outcome_is_invalid_and_writes_nothing(harness: Harness) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await harness.stub.RecordCheck(
            pb.RecordCheckRequest(student_id=STUDENT, subject_id=SUBJECT, topic="osmosis"),
            metadata=A,
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "outcome" in (err.value.details() or "")
    assert await harness.list_all() == []


async def test_each_new_check_reads_only_the_checks_recorded_since_the_last(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No replay of the chain per check: routing and derivation advance check by check."""
    from tutor_memory.store.postgres.store import PostgresWriter
    from tutor_memory.store.sqlite.store import SqliteWriter

    await give_course(harness)
    read: list[int] = []
    writer = PostgresWriter if harness.config.store else SqliteWriter
    original = writer.checks_after

    def counting(self: object, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        found = original(self, chain, seq)  # type: ignore[arg-type]
        read.append(len(found))
        return found

    monkeypatch.setattr(writer, "checks_after", counting)
    for i in range(12):
        await check(harness, "Osmosis", i % 3 != 0, T0 + timedelta(hours=i))
    assert read[0] == 1
    assert read[1:] == [1] * 11
    # ...and the belief still stands on all of them: the eight right checks support it.
    (osmosis,) = await history(harness, "Osmosis")
    assert osmosis.rows[-1].claim == pb.CLAIM_UNDERSTANDS
    assert len(osmosis.rows[-1].supporting_episode_ids) == 8


async def test_rederive_replays_a_check_recorded_while_it_prepared(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The checks a re-derivation replays are read inside its transaction."""
    from tutor_memory.app.ledger import Ledger

    await give_course(harness)
    await check(harness, "Osmosis", False, T0)
    original = Ledger.in_transaction
    injected = False

    async def late_check_first(self: Ledger, *args: object, **kw: object) -> object:
        nonlocal injected
        if not injected:
            injected = True
            await check(harness, "Osmosis", True, T0 + timedelta(hours=1))
        return await original(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Ledger, "in_transaction", late_check_first)
    reply = await harness.stub.Rederive(
        pb.RederiveRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert reply.checks_replayed == 2


def check_episode(topic: str, right: bool, when: datetime, *, key: str) -> pb.NewEpisode:
    """A check as a batch import carries it."""
    outcome = pb.CHECK_OUTCOME_RIGHT if right else pb.CHECK_OUTCOME_WRONG
    return pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_CHECK,
        summary=f"Check on {topic}",
        check=pb.CheckResult(outcome=outcome, topic=topic),
        occurred_at=at(when),
        client_key=key,
    )


async def test_no_path_routes_the_whole_history_on_the_writer_thread(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Routing every check of a long history takes seconds; on the writer thread it would hold
    up every other chain's writes for as long. A check recorded when no routed groups are kept
    (after a restart, an eviction, a change of the map's names), the refresh after a batch
    import and a re-derivation all route the history before their transaction; the writer only
    routes the checks recorded since (the new check itself, or none)."""
    from tutor_memory.domain.beliefs import history as belief_history

    await give_course(harness)
    await harness.ingest(
        [
            check_episode("Osmosis", i % 2 == 0, T0 + timedelta(minutes=i), key=f"c{i}")
            for i in range(230)
        ]
    )  # a batch import of checks ends with a refresh of the chain's beliefs
    routed: list[tuple[str, int]] = []
    original = belief_history.CheckGroups.advanced

    def recording(self: Any, checks: Any, budget: Any = None) -> Any:
        routed.append((threading.current_thread().name, len(checks)))
        return original(self, checks, budget)

    monkeypatch.setattr(belief_history.CheckGroups, "advanced", recording)
    harness.app.services.beliefs.forget(ChainKey("tenant-a", STUDENT, SUBJECT))
    await check(harness, "Osmosis", True, T0 + timedelta(hours=8))
    on_writer, elsewhere = _split(routed)
    assert on_writer == [1]
    # All 230 checks, ROUTING_SLICE at a time, so other long texts get their turn between.
    assert elsewhere == [100, 100, 30]

    routed.clear()
    await harness.ingest([check_episode("Diffusion", True, T0 + timedelta(hours=9), key="d1")])
    reply = await harness.stub.Rederive(
        pb.RederiveRequest(student_id=STUDENT, subject_id=SUBJECT), metadata=A
    )
    assert reply.checks_replayed == 232
    on_writer, elsewhere = _split(routed)
    assert set(on_writer) == {0}
    # The refresh routed the one imported check; the re-derivation, all of them.
    assert elsewhere == [1, 100, 100, 32]


def _split(routed: list[tuple[str, int]]) -> tuple[list[int], list[int]]:
    """The sizes of the routings done on the writer thread, and of those done elsewhere."""
    on_writer = [n for thread, n in routed if thread == "writer"]
    return on_writer, [n for thread, n in routed if thread != "writer"]


async def test_a_rederive_past_its_deadline_writes_nothing(harness: Harness) -> None:
    await give_course(harness)
    for i in range(3):
        await check(harness, "Osmosis", False, T0 + timedelta(hours=i))
    before = await history(harness, "Osmosis")
    loop = asyncio.get_running_loop()
    chain = ChainKey("tenant-a", STUDENT, SUBJECT)
    with pytest.raises(DeadlineExceeded, match="rederive: routing the recorded checks"):
        await harness.app.services.beliefs.rederive(chain, deadline=loop.time() - 1)
    assert await history(harness, "Osmosis") == before


async def test_a_teaching_question_and_its_note_are_one_transaction_and_never_taught_twice(
    harness: Harness,
) -> None:
    question = pb.NewEpisode(
        student_id=STUDENT,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_QUESTION,
        summary="Remember that in our class we call the mitochondria the powerhouse of the cell",
        occurred_at=at(T0),
        client_key="turn-7",
    )
    await give_course(harness)
    first = await harness.append(question)
    again = await harness.append(question)
    assert again.duplicate
    episodes = await harness.list_all()
    taught = [e for e in episodes if e.kind == pb.EPISODE_KIND_TAUGHT]
    assert len(taught) == 1
    # One transaction: the same recorded time, consecutive links of the chain.
    assert taught[0].recorded_at == first.episode.recorded_at
    assert taught[0].seq == first.episode.seq + 1
    assert taught[0].client_key == "turn-7:taught"
