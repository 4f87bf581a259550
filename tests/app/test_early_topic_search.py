"""A question the labelled examples may make a record question about a topic ("can you remind me
about respiration exercises?") has its topic's words searched while the model embeds it, beside
the question as asked, so that nothing is left to search after the wait; the block is the one the
topic's search after the wait would give."""

from __future__ import annotations

import random
from concurrent.futures import Future
from typing import Any

import numpy as np
import numpy.typing as npt

from bench import bench_block
from tests.app.test_block_paths import NOW_US, shape
from tests.helpers.harness import Harness
from tutor_memory.app.blocks import BlockBuilder
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.block import BlockRequest, Mode
from tutor_memory.domain.recall.record_intent import open_to_examples
from tutor_memory.domain.recall.record_mode import is_record_question, record_topic

QUERY = "Can you remind me about respiration exercises?"
EPISODES = 600

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


def searched_words(builder: BlockBuilder, monkeypatch: Any) -> list[str]:
    searched: list[str] = []
    search = builder._text_matches

    def recording(table: Any, snap: Any, words: str) -> Any:
        searched.append(words)
        return search(table, snap, words)

    monkeypatch.setattr(builder, "_text_matches", recording)
    return searched


async def test_a_topic_the_examples_may_ask_about_is_searched_before_the_wait(
    harness: Harness, monkeypatch: Any
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
    early = builder.build(req, StillEmbedding(vector))
    assert early.record_mode
    assert searched == [QUERY, topic]
    # Each searched once, before the wait for the embedding, which is timed after them.
    stages = [stage for stage, _ in early.timings]
    assert stages.count("text") == 1
    assert stages.index("text") < stages.index("record_intent")

    # With the embedding already there, the topic is searched after the decision instead: the
    # same block.
    searched.clear()
    late = builder.build(req, done)
    assert searched == [QUERY, topic]
    assert stages != [stage for stage, _ in late.timings]
    assert shape(late) == shape(early)
