"""One whole block build without gRPC (BlockBuilder.build, the query embedding included), on
bench_block's chain: its mixed FULL queries in turn, and a subject question alone, the second time
its memories are shown (their rows and dates kept: app/shown_rows.py) and the first (read from the
store)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import pytest

from bench.hot_path.conftest import RANKED_QUERIES, SIZES, OpenChain
from tutor_memory.domain.recall.block import Block, BlockRequest
from tutor_memory.domain.recall.block_text import format_date


@pytest.mark.parametrize("size", list(SIZES))
def test_build_block_mixed_queries(
    benchmark: Any, open_chain: Callable[[str], OpenChain], size: str
) -> None:
    chain = open_chain(size)
    builder = chain.services.blocks.builder
    turns = itertools.cycle(chain.mixed)
    benchmark.group = f"block build {size}"
    benchmark.extra_info.update(episodes=chain.episodes, queries="bench_block mix")
    # Fixed rounds: the mix's blocks differ tenfold in cost, so every query must come round.
    block: Block = benchmark.pedantic(
        lambda: builder.build(next(turns)), rounds=2 * len(chain.mixed), warmup_rounds=10
    )
    assert block.tokens_used <= chain.mixed[0].budget_tokens


def benchmark_subject_question(
    benchmark: Any, chain: OpenChain, size: str, forget_shown: bool
) -> None:
    """The subject question built 100 rounds; with `forget_shown`, its rows and dates are read
    again every round (nothing kept from the round before)."""
    builder = chain.services.blocks.builder
    template = chain.mixed[0]
    req = BlockRequest(
        template.chain, RANKED_QUERIES["subject"], template.budget_tokens, template.now_us,
        template.time_zone, template.mode,
    )  # fmt: skip

    def forget() -> None:
        builder.shown_rows.forget(req.chain)
        format_date.cache_clear()

    benchmark.group = f"block build {size}"
    benchmark.extra_info.update(episodes=chain.episodes, queries=RANKED_QUERIES["subject"])
    if forget_shown:
        benchmark.extra_info.update(rows="read from the store")
    block: Block = benchmark.pedantic(
        builder.build, (req,), setup=forget if forget_shown else None, rounds=100, warmup_rounds=10
    )
    assert block.memories
    assert block.tokens_used <= req.budget_tokens


@pytest.mark.parametrize("size", list(SIZES))
def test_build_block_subject_question(
    benchmark: Any, open_chain: Callable[[str], OpenChain], size: str
) -> None:
    benchmark_subject_question(benchmark, open_chain(size), size, forget_shown=False)


@pytest.mark.parametrize("size", list(SIZES))
def test_build_block_subject_question_rows_read_from_the_store(
    benchmark: Any, open_chain: Callable[[str], OpenChain], size: str
) -> None:
    benchmark_subject_question(benchmark, open_chain(size), size, forget_shown=True)
