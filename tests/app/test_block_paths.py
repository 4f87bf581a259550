"""The block is the same whether the Rust core or its pure-Python twin ranks it: the twin is the
path that explains a block (BuildBlock's `explain`, the console), so it must not drift from the
one that serves."""

from __future__ import annotations

import random

from bench import bench_block
from tests.helpers.harness import Harness
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.block import Block, BlockRequest, Mode

EPISODES = 1_500
QUERIES = 40
NOW_US = int(bench_block.NOW.timestamp() * 1_000_000)


def shape(block: Block) -> tuple[object, ...]:
    """Everything a block shows, but its id (issued fresh per build) and its timings."""
    return (
        block.text,
        block.sections,
        [
            (
                m.episode.episode_id,
                m.repeats,
                m.repeated_ids,
                m.score,
                m.line,
                m.tokens,
                m.row_tokens,
            )
            for m in block.memories
        ],
        block.tokens_used,
        block.record_mode,
        block.window,
        block.no_record,
    )


async def test_an_explained_block_is_the_block_the_rust_core_builds(harness: Harness) -> None:
    rng = random.Random(bench_block.SEED)
    reply = await harness.ingest(bench_block.history(EPISODES, rng), per_message=64)
    assert reply.inserted == EPISODES
    builder = harness.app.services.blocks.builder
    chain = ChainKey("tenant-a", "bench", "science")
    with_memories = 0
    for budget, query in zip(
        [150, 300, 750, 1500] * QUERIES, bench_block.queries(rng)[:QUERIES], strict=False
    ):
        req = BlockRequest(chain, query, budget, NOW_US, "Europe/Rome", Mode.FULL)
        # One embedding for both, so that only the ranking differs.
        embedding = builder.start_embedding(req)
        rust_block = builder.build(req, embedding)
        python_block = builder.build(req, embedding, explain=True)
        assert python_block.explanation is not None
        assert shape(python_block) == shape(rust_block), query
        with_memories += bool(rust_block.memories)
    # The comparison is of real blocks, not of empty ones (a budget of 150 may hold none).
    assert with_memories >= QUERIES // 2
