"""What sealing episodes' words costs (issue 16): sealing one chat turn as it is appended, opening
the rows one block shows, and opening the concepts of a chain's rows when it is loaded into
memory without a snapshot. Compare with bench_ingest's per-episode cost and bench_block's
latency (bench/results/ingest.json, block.json)."""

from __future__ import annotations

from typing import Any

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.sealing import DataKey, Words, episode_ad
from tutor_memory.store import codec

CHAIN = ChainKey("school", "student-1", "biology")
# A LoCoMo chat turn is 124 characters on average; its summary and text are both stored.
TURN = (
    "Caroline: I went to the LGBTQ support group yesterday and it was so powerful, "
    "the stories there really moved me."
)
WORDS = Words(TURN, TURN, ("support group",), "")
# About how many rows a FULL block at 1,500 tokens shows (bench_block's median is 15-20).
BLOCK_ROWS = 20
# Rows of a chain loaded from the store without a snapshot, in one benchmark round.
LOADED_ROWS = 10_000


def test_seal_one_turn(benchmark: Any) -> None:
    key, _raw = DataKey.generate()
    benchmark.group = "sealing"
    sealed = benchmark(lambda: key.seal(episode_ad(CHAIN, 1, "question"), WORDS))
    assert key.open(episode_ad(CHAIN, 1, "question"), sealed) == WORDS


def test_open_the_rows_of_one_block(benchmark: Any) -> None:
    key, _raw = DataKey.generate()
    rows = [
        (episode_ad(CHAIN, seq, "question"), key.seal(episode_ad(CHAIN, seq, "question"), WORDS))
        for seq in range(1, BLOCK_ROWS + 1)
    ]
    benchmark.group = "sealing"
    opened = benchmark(lambda: [key.open(ad, sealed) for ad, sealed in rows])
    assert opened == [WORDS] * BLOCK_ROWS


def test_open_the_concepts_of_a_loaded_chain(benchmark: Any) -> None:
    key, _raw = DataKey.generate()
    # Recall rows as the stores read them: kind and concepts column at 3 and 4, seq and sealed
    # words last (store/codec.py recall_concepts).
    rows = [
        (seq, 0, 0.5, "question", "[]", seq, key.seal(episode_ad(CHAIN, seq, "question"), WORDS))
        for seq in range(1, LOADED_ROWS + 1)
    ]
    benchmark.group = "sealing"
    benchmark.extra_info.update(rows=LOADED_ROWS)
    concepts = benchmark.pedantic(
        codec.recall_concepts, args=(rows, CHAIN, lambda: key), rounds=5, iterations=1
    )
    assert concepts == [WORDS.concepts] * LOADED_ROWS
