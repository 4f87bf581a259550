"""The rows a block shows are read from the store once and kept (app/shown_rows.py): the same
rows whether kept or read, only the rows not yet kept are read, nothing is kept past an erasure
(not even what a read that raced it got), and the kept rows stay within their bound. Then a block
built twice shows the same memories, the second time without reading them."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from bench import bench_block
from tests.helpers.harness import Harness
from tutor_memory.app.shown_rows import ShownRows
from tutor_memory.domain.episodes import ChainKey, Kind
from tutor_memory.domain.recall.block import BlockRequest, Mode
from tutor_memory.domain.records import MemoryRow

CHAIN = ChainKey("t", "ada", "biology")
OTHER = ChainKey("t", "bob", "biology")


class CountingRows:
    """A store's `memory_rows` over a fixed table of rows per chain, recording every read."""

    def __init__(self, rows: dict[ChainKey, dict[int, MemoryRow]]) -> None:
        self.rows = rows
        self.reads: list[tuple[ChainKey, list[int]]] = []
        self.during_read: Callable[[], None] | None = None

    def memory_rows(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, MemoryRow]:
        self.reads.append((chain, list(ids)))
        if self.during_read is not None:
            self.during_read()
        held = self.rows.get(chain, {})
        return {i: held[i] for i in ids if i in held}


def row(episode_id: int, summary: str = "") -> MemoryRow:
    return MemoryRow(
        episode_id, episode_id, Kind.QUESTION, summary or f"row {episode_id}", episode_id * 1_000
    )


def store_of(chain: ChainKey, ids: range) -> CountingRows:
    return CountingRows({chain: {i: row(i) for i in ids}})


def test_rows_are_read_once_and_then_served_as_read() -> None:
    store = store_of(CHAIN, range(1, 11))
    shown = ShownRows(store)  # type: ignore[arg-type]
    first = shown.memory_rows(CHAIN, [1, 2, 3])
    again = shown.memory_rows(CHAIN, [3, 2, 1])
    assert first == again == {i: row(i) for i in (1, 2, 3)}
    assert store.reads == [(CHAIN, [1, 2, 3])]


def test_only_the_rows_not_kept_are_read() -> None:
    store = store_of(CHAIN, range(1, 11))
    shown = ShownRows(store)  # type: ignore[arg-type]
    shown.memory_rows(CHAIN, [1, 2])
    rows = shown.memory_rows(CHAIN, [2, 5, 1, 7])
    assert rows == {i: row(i) for i in (1, 2, 5, 7)}
    assert store.reads == [(CHAIN, [1, 2]), (CHAIN, [5, 7])]


def test_rows_are_kept_per_chain_and_ids_outside_the_chain_are_left_out() -> None:
    store = CountingRows({CHAIN: {1: row(1, "ada's")}, OTHER: {2: row(2, "bob's")}})
    shown = ShownRows(store)  # type: ignore[arg-type]
    assert shown.memory_rows(CHAIN, [1, 2]) == {1: row(1, "ada's")}
    # Id 2 was asked of the wrong chain: not kept, so the right chain reads it.
    assert shown.memory_rows(OTHER, [2, 1]) == {2: row(2, "bob's")}
    assert store.reads == [(CHAIN, [1, 2]), (OTHER, [2, 1])]
    assert len(shown) == 2


def test_forget_drops_every_kept_row() -> None:
    store = CountingRows({CHAIN: {1: row(1)}, OTHER: {2: row(2)}})
    shown = ShownRows(store)  # type: ignore[arg-type]
    shown.memory_rows(CHAIN, [1])
    shown.memory_rows(OTHER, [2])
    shown.forget(CHAIN)
    assert len(shown) == 0
    # Erased since: the store has nothing more of the chain, and neither has the cache.
    store.rows[CHAIN] = {}
    assert shown.memory_rows(CHAIN, [1]) == {}
    assert shown.memory_rows(OTHER, [2]) == {2: row(2)}


def test_a_read_that_raced_an_erasure_keeps_nothing() -> None:
    store = store_of(CHAIN, range(1, 4))
    shown = ShownRows(store)  # type: ignore[arg-type]
    # The erasure lands after the store answered this read's query, before the rows are kept.
    store.during_read = lambda: shown.forget(CHAIN)
    assert shown.memory_rows(CHAIN, [1, 2]) == {1: row(1), 2: row(2)}
    store.during_read = None
    assert len(shown) == 0
    shown.memory_rows(CHAIN, [1, 2])
    assert store.reads[-1] == (CHAIN, [1, 2])


def test_the_least_recently_shown_rows_leave_first_at_the_bound() -> None:
    store = store_of(CHAIN, range(1, 20))
    shown = ShownRows(store, size=3)  # type: ignore[arg-type]
    shown.memory_rows(CHAIN, [1, 2, 3])
    shown.memory_rows(CHAIN, [1])  # 1 is the most recently shown now
    shown.memory_rows(CHAIN, [4])  # 2 leaves
    assert len(shown) == 3
    store.reads.clear()
    shown.memory_rows(CHAIN, [1, 3, 4])
    assert store.reads == []
    shown.memory_rows(CHAIN, [2])
    assert store.reads == [(CHAIN, [2])]


async def test_a_block_built_again_shows_the_same_memories_without_reading_them(
    harness: Harness,
) -> None:
    rng = random.Random(bench_block.SEED)
    reply = await harness.ingest(bench_block.history(300, rng), per_message=64)
    assert reply.inserted == 300
    builder = harness.app.services.blocks.builder
    chain = ChainKey("tenant-a", "bench", "science")
    now_us = int(bench_block.NOW.timestamp() * 1_000_000)
    req = BlockRequest(chain, "Explain osmosis to me", 1_500, now_us, "Europe/Rome", Mode.FULL)
    builder.shown_rows.forget(chain)
    first = builder.build(req)
    assert first.memories
    kept = len(builder.shown_rows)
    assert kept >= len(first.memories)
    second = builder.build(req)
    assert [m.line for m in second.memories] == [m.line for m in first.memories]
    assert [m.date for m in second.memories] == [m.date for m in first.memories]
    assert second.text == first.text
    assert len(builder.shown_rows) == kept
