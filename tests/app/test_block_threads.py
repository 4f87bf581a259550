"""Blocks are built one after the other on the block thread (app/executors.py: BLOCK_THREADS), and
a build abandoned at the cap never holds up the turns after it: while it runs on, the next builds
run on the spare thread, and once it ends they are back on the block thread."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import Future

import pytest

from tutor_memory.app.blocks import Blocks
from tutor_memory.app.executors import Executors
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.block import Block, BlockRequest, Mode

CAP_SECONDS = 0.2
SLOW = "a question whose block takes too long"


class RecordingBuilder:
    """Builds an empty block naming the thread that built it; a SLOW query's build waits for
    `release` first."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.slow_started = threading.Event()
        self.slow_ended = threading.Event()

    def start_embedding(self, req: BlockRequest) -> Future[object] | None:
        return None

    def build(self, req: BlockRequest, embedding: object, *, explain: bool) -> Block:
        if req.query == SLOW:
            self.slow_started.set()
            self.release.wait(10)
            self.slow_ended.set()
        return Block(threading.current_thread().name, [], [], "", 0, False, None, False)


def request(query: str) -> BlockRequest:
    return BlockRequest(ChainKey("t", "ada", "bio"), query, 500, 0, "UTC", Mode.FULL)


@pytest.fixture
def executors() -> Iterator[Executors]:
    made = Executors()
    yield made
    made.shutdown()


@pytest.fixture
def builder() -> Iterator[RecordingBuilder]:
    made = RecordingBuilder()
    yield made
    made.release.set()


async def built_on(blocks: Blocks, query: str) -> str:
    block = await blocks.build(request(query), None)
    assert block is not None
    return block.text


async def test_blocks_are_built_on_the_block_thread(
    executors: Executors, builder: RecordingBuilder
) -> None:
    blocks = Blocks(builder, executors, CAP_SECONDS)  # type: ignore[arg-type]
    threads = {await built_on(blocks, f"question {i}") for i in range(5)}
    assert len(threads) == 1
    assert threads.pop().startswith("block")


async def test_a_build_abandoned_at_the_cap_does_not_hold_up_the_next_turns(
    executors: Executors, builder: RecordingBuilder
) -> None:
    blocks = Blocks(builder, executors, CAP_SECONDS)  # type: ignore[arg-type]
    assert await blocks.build(request(SLOW), None) is None  # dropped at the cap
    assert builder.slow_started.is_set()
    assert not builder.slow_ended.is_set()
    # The abandoned build still runs on the block thread: the next turns are built at once,
    # well within the cap, on the spare thread.
    for i in range(3):
        thread = await asyncio.wait_for(built_on(blocks, f"question {i}"), CAP_SECONDS)
        assert thread.startswith("spare")
    builder.release.set()
    assert await asyncio.to_thread(builder.slow_ended.wait, 5)
    # Once it ended, builds are back on the block thread.
    await asyncio.sleep(0.05)
    assert (await built_on(blocks, "question after")).startswith("block")
