"""Recall's levers (domain.recall.levers), which the LoCoMo ablation turns off one at a time: a
lever that is off really removes its candidate set (no candidate is found by it), and leaves
the other sets as they were."""

from __future__ import annotations

import random

import pytest

from bench import bench_block
from tests.helpers.harness import Harness
from tutor_memory.app.blocks import BlockBuilder
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.block import BlockRequest, Mode
from tutor_memory.domain.recall.explain import Source
from tutor_memory.domain.recall.levers import ALL_ON, Lever, RecallLevers

EPISODES = 400
NOW_US = int(bench_block.NOW.timestamp() * 1_000_000)
CHAIN = ChainKey("tenant-a", "bench", "science")
# The sets each lever owns.
SETS = {
    Lever.LEXICAL: {Source.LEXICAL},
    Lever.DENSE: {Source.DENSE},
    Lever.NEIGHBOURS: {Source.NEIGHBOUR},
    Lever.PERIOD: {Source.PERIOD},
    Lever.CONCEPTS: {Source.TAGGED, Source.CONCEPT},
}
# Questions that exercise every set: concept names (tagged, lexical, dense, neighbours) and a
# named month (period).
QUERIES = [
    f"Can you remind me about {bench_block.CONCEPTS[0]}?",
    f"Why does {bench_block.CONCEPTS[1]} matter?",
    "what did we cover in March?",
]


def sources_found(builder: BlockBuilder, levers: RecallLevers) -> set[Source]:
    """Every set that found a candidate, over QUERIES, with these levers."""
    builder.levers = levers
    found: set[Source] = set()
    for query in QUERIES:
        req = BlockRequest(CHAIN, query, 1_500, NOW_US, "UTC", Mode.FULL)
        block = builder.build(req, explain=True)
        assert block.explanation is not None
        for candidate in block.explanation.candidates:
            found.update(candidate.found_by)
    return found


@pytest.fixture
async def builder(harness: Harness) -> BlockBuilder:
    reply = await harness.ingest(bench_block.history(EPISODES, random.Random(7)), per_message=64)
    assert reply.inserted == EPISODES
    return harness.app.services.blocks.builder


async def test_every_lever_is_on_by_default_and_each_of_its_sets_finds_candidates(
    builder: BlockBuilder,
) -> None:
    assert builder.levers == ALL_ON
    found = sources_found(builder, ALL_ON)
    for lever, sets in SETS.items():
        # Concept routing by the map needs a subject map, which this history has none of.
        assert sets - {Source.CONCEPT} <= found, lever


@pytest.mark.parametrize("lever", list(SETS))
async def test_a_lever_turned_off_removes_its_set_and_leaves_the_others(
    builder: BlockBuilder, lever: Lever
) -> None:
    full = sources_found(builder, ALL_ON)
    without = sources_found(builder, RecallLevers.without([lever]))
    assert not without & SETS[lever]
    others = full - SETS[lever]
    if lever in (Lever.LEXICAL, Lever.DENSE):
        # The neighbours of its matches go with it; the other set's neighbours remain.
        assert others <= without | {Source.NEIGHBOUR}
    else:
        assert others <= without


async def test_without_the_period_a_named_month_gives_no_window(builder: BlockBuilder) -> None:
    req = BlockRequest(CHAIN, "what did we cover in March?", 1_500, NOW_US, "UTC", Mode.FULL)
    builder.levers = ALL_ON
    assert builder.build(req).window is not None
    builder.levers = RecallLevers.without([Lever.PERIOD])
    assert builder.build(req).window is None
