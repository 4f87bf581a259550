"""BuildBlock's explain (issue 17): the explained block is the block the caller gets without it,
and every candidate of the turn comes back with the sets that found it and what became of it."""

from __future__ import annotations

import pytest

from tests.helpers.course import SUBJECT, at
from tests.helpers.harness import A, Harness
from tests.helpers.seeded import END, STUDENT, seed
from tutor_memory_client._proto import memory_pb2 as pb

# (query, budget, mode): an ordinary question, a period, a record question, no query, a budget
# so small that packing drops candidates, recent turns only, no memory at all.
TURNS = [
    ("How does osmosis work?", 400, pb.BLOCK_MODE_FULL),
    ("what did we do last week?", 600, pb.BLOCK_MODE_FULL),
    ("how am I doing?", 500, pb.BLOCK_MODE_FULL),
    ("", 300, pb.BLOCK_MODE_FULL),
    ("Is osmosis a kind of diffusion?", 120, pb.BLOCK_MODE_EPISODES),
    ("mitochondria", 250, pb.BLOCK_MODE_WINDOW),
    ("osmosis", 200, pb.BLOCK_MODE_NONE),
]


def _request(query: str, budget: int, mode: pb.BlockMode, explain: bool) -> pb.BuildBlockRequest:
    return pb.BuildBlockRequest(
        student_id=STUDENT,
        subject_id=SUBJECT,
        query=query,
        budget_tokens=budget,
        now=at(END),
        time_zone="Europe/Rome",
        mode=mode,
        explain=explain,
    )


def _without_volatile(reply: pb.BuildBlockReply) -> pb.BuildBlockReply:
    """The reply less what differs between any two builds (the id's nonce, the timings) and
    the explanation itself."""
    copy = pb.BuildBlockReply()
    copy.CopyFrom(reply)
    for name in (
        "block_id",
        "timings",
        "candidates",
        "candidates_considered",
        "lexical_weight",
        "dense_weight",
    ):
        copy.ClearField(name)
    return copy


@pytest.fixture
async def seeded(harness: Harness) -> Harness:
    await seed(harness)
    return harness


async def test_the_explained_block_is_the_block(seeded: Harness) -> None:
    for query, budget, mode in TURNS:
        plain = await seeded.stub.BuildBlock(_request(query, budget, mode, False), metadata=A)
        explained = await seeded.stub.BuildBlock(_request(query, budget, mode, True), metadata=A)
        assert not plain.dropped
        assert not explained.dropped
        assert _without_volatile(explained) == _without_volatile(plain), query
        assert not plain.candidates
        assert plain.candidates_considered == 0
        assert (plain.lexical_weight, plain.dense_weight) == (0.0, 0.0)
        if mode == pb.BLOCK_MODE_FULL and query:
            assert min(explained.lexical_weight, explained.dense_weight) >= 0
            assert max(explained.lexical_weight, explained.dense_weight) == 1.0


async def test_every_shown_memory_is_a_shown_candidate_in_rank_order(seeded: Harness) -> None:
    for query, budget, mode in TURNS:
        reply = await seeded.stub.BuildBlock(_request(query, budget, mode, True), metadata=A)
        shown = [c for c in reply.candidates if c.outcome == pb.CANDIDATE_OUTCOME_SHOWN]
        assert sorted(c.episode_id for c in shown) == sorted(m.episode_id for m in reply.memories)
        assert [c.rank for c in shown] == sorted(c.rank for c in shown)
        assert reply.candidates_considered >= len(reply.candidates)
        for c in reply.candidates:
            assert c.found_by, c
            assert c.summary
            assert c.kind != pb.EPISODE_KIND_UNSPECIFIED
        if mode == pb.BLOCK_MODE_NONE:
            assert not reply.candidates
        if mode == pb.BLOCK_MODE_WINDOW:
            assert {s for c in reply.candidates for s in c.found_by} == {
                pb.CANDIDATE_SOURCE_LAST_TURNS
            }


async def test_reasons_name_the_sets_and_the_step_that_dropped(seeded: Harness) -> None:
    reply = await seeded.stub.BuildBlock(
        _request("Is osmosis a kind of diffusion?", 120, pb.BLOCK_MODE_EPISODES, True), metadata=A
    )
    by_outcome: dict[int, list[pb.CandidateReason]] = {}
    for c in reply.candidates:
        by_outcome.setdefault(c.outcome, []).append(c)
    # The note said three times is shown once; its copies collapse into it.
    collapsed = by_outcome[pb.CANDIDATE_OUTCOME_COLLAPSE]
    shown_ids = {m.episode_id for m in reply.memories}
    assert any(c.collapsed_into in shown_ids for c in collapsed)
    # A small budget leaves matching candidates out; non-matches are filtered.
    assert pb.CANDIDATE_OUTCOME_BUDGET in by_outcome
    assert pb.CANDIDATE_OUTCOME_FILTER in by_outcome
    assert all(not c.matched for c in by_outcome[pb.CANDIDATE_OUTCOME_FILTER])
    sources = {s for c in reply.candidates for s in c.found_by}
    assert {
        pb.CANDIDATE_SOURCE_RECENT,
        pb.CANDIDATE_SOURCE_LEXICAL,
        pb.CANDIDATE_SOURCE_DENSE,
    } <= sources
    # The score is the documented weighted sum of its parts.
    for c in reply.candidates:
        assert c.score == pytest.approx(
            0.55 * c.relevance + 0.30 * c.salience + 0.15 * c.recency, abs=1e-5
        )


async def test_a_period_drops_what_lies_outside_it(seeded: Harness) -> None:
    reply = await seeded.stub.BuildBlock(
        _request("what did we do last week?", 600, pb.BLOCK_MODE_FULL, True), metadata=A
    )
    assert reply.HasField("time_window")
    start = reply.time_window.start.ToDatetime()
    end = reply.time_window.end.ToDatetime()
    for c in reply.candidates:
        inside = start <= c.occurred_at.ToDatetime() < end
        if c.outcome == pb.CANDIDATE_OUTCOME_WINDOW:
            assert not inside
        if c.outcome == pb.CANDIDATE_OUTCOME_SHOWN:
            assert inside
    assert any(c.outcome == pb.CANDIDATE_OUTCOME_WINDOW for c in reply.candidates)
    assert any(pb.CANDIDATE_SOURCE_PERIOD in c.found_by for c in reply.candidates)
