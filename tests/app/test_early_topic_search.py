"""A question the labelled examples may make a record question about a topic ("how far did I get
with respiration?") has its topic's words searched while the model embeds it, beside
the question as asked, when the model is expected to run for longer than such a search: then
nothing is left to search after the wait. Otherwise the topic is searched after the decision.
Either way the block is the same."""

from __future__ import annotations

import random
from concurrent.futures import Future
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from bench import bench_block
from tests.app.test_block_paths import NOW_US, shape
from tests.helpers.harness import Harness
from tutor_memory.app.blocks import BlockBuilder
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.block import Block, BlockRequest, Mode
from tutor_memory.domain.recall.record_intent import open_to_examples
from tutor_memory.domain.recall.record_mode import is_record_question, record_topic

QUERY = "How far did I get with respiration?"
EPISODES = 600
# What the builder expects one call of the model to take, in the two cases: far longer than any
# search here, and nothing (the model expected done before a search ends).
MODEL_RUNS_LONG_S = 10.0
MODEL_DONE_S = 0.0

Vector = npt.NDArray[np.float32]


class StillEmbedding(Future[Vector]):
    """An embedding that is not done until the build waits for it: the model is still running
    while the build searches the text."""

    def __init__(self, vector: Vector) -> None:
        super().__init__()
        self._vector = vector

    def result(self, timeout: float | None = None) -> Vector:
        if not self.done():
            self.set_result(self._vector)
        return super().result(timeout)


def searched_words(builder: BlockBuilder, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    searched: list[str] = []
    search = builder._text_matches

    def recording(table: Any, snap: Any, words: str) -> Any:
        searched.append(words)
        return search(table, snap, words)

    monkeypatch.setattr(builder, "_text_matches", recording)
    return searched


def stages(block: Block) -> list[str]:
    return [stage for stage, _ in block.timings]


async def test_a_topic_the_examples_may_ask_about_is_searched_before_the_wait_if_the_model_runs_on(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    reply = await harness.ingest(
        bench_block.history(EPISODES, random.Random(bench_block.SEED)), per_message=64
    )
    assert reply.inserted == EPISODES
    builder = harness.app.services.blocks.builder
    req = BlockRequest(
        ChainKey("tenant-a", "bench", "science"), QUERY, 750, NOW_US, "Europe/Rome", Mode.FULL
    )
    # The case this pins: no rule decides, the examples do, and the question names a topic.
    assert not is_record_question(QUERY)
    assert open_to_examples(QUERY)
    topic = record_topic(QUERY)
    assert topic is not None
    done = builder.start_embedding(req)
    assert done is not None
    vector = done.result()
    searched = searched_words(builder, monkeypatch)

    monkeypatch.setattr(builder._queries, "typical_seconds", MODEL_RUNS_LONG_S)
    early = builder.build(req, StillEmbedding(vector))
    assert early.record_mode
    # Each searched once, before the wait for the embedding, which is timed after them.
    assert searched == [QUERY, topic]
    assert stages(early).count("text") == 1
    assert stages(early).index("text") < stages(early).index("record_intent")

    # The model expected done before a search ends: the topic waits for the decision.
    searched.clear()
    monkeypatch.setattr(builder._queries, "typical_seconds", MODEL_DONE_S)
    after_the_wait = builder.build(req, StillEmbedding(vector))
    assert searched == [QUERY, topic]
    assert stages(after_the_wait).count("text") == 2
    assert shape(after_the_wait) == shape(early)

    # The embedding already there: the same, whatever the model was expected to take.
    searched.clear()
    monkeypatch.setattr(builder._queries, "typical_seconds", MODEL_RUNS_LONG_S)
    late = builder.build(req, done)
    assert searched == [QUERY, topic]
    assert stages(late).count("text") == 2
    assert shape(late) == shape(early)
