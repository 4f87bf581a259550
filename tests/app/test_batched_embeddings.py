"""Texts embedded one at a time from concurrent calls (the turns' queries, single writes): one
vector per text, batched while the model is busy, errors to every waiting call."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
import pytest

from tutor_memory.app.batched_embeddings import TYPICAL_WEIGHT, BatchedEmbeddings
from tutor_memory.models.embedder import UseOnnxEmbedder


class GatedEmbedder:
    """Embeds each text as [len(text), 0, ...]; its first call waits for `release`."""

    dim = 4
    model_id = "gated"

    def __init__(self) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.batches: list[list[str]] = []
        self.fail = False

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.batches.append(list(texts))
        self.started.set()
        self.release.wait(5)
        if self.fail:
            raise RuntimeError("model failed")
        out = np.zeros((len(texts), self.dim), np.float32)
        out[:, 0] = [len(t) for t in texts]
        return out


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(1) as executor:
        yield executor


def test_queries_that_arrive_while_the_model_runs_go_through_it_together(
    pool: ThreadPoolExecutor,
) -> None:
    model = GatedEmbedder()
    queries = BatchedEmbeddings(model, pool, max_batch=3)
    first = queries.submit("a")
    assert model.started.wait(5)
    later = [queries.submit("b" * n) for n in range(1, 6)]
    model.release.set()
    assert first.result(5)[0] == 1
    assert [f.result(5)[0] for f in later] == [1, 2, 3, 4, 5]
    assert model.batches == [["a"], ["b", "bb", "bbb"], ["bbbb", "bbbbb"]]


def test_a_failed_batch_fails_each_of_its_queries_and_the_next_batch_runs(
    pool: ThreadPoolExecutor,
) -> None:
    model = GatedEmbedder()
    queries = BatchedEmbeddings(model, pool)
    model.fail = True
    failing = queries.submit("x")
    assert model.started.wait(5)
    also_failing = queries.submit("y")
    model.release.set()
    with pytest.raises(RuntimeError, match="model failed"):
        failing.result(5)
    with pytest.raises(RuntimeError, match="model failed"):
        also_failing.result(5)
    model.fail = False
    assert queries.submit("zz").result(5)[0] == 2


def test_a_query_alone_gets_the_vector_the_model_gives_it(
    pool: ThreadPoolExecutor, embedder: UseOnnxEmbedder
) -> None:
    got = BatchedEmbeddings(embedder, pool).submit("What is osmosis?").result(5)
    assert np.array_equal(got, embedder.embed(["What is osmosis?"])[0])


def test_a_text_whose_caller_went_away_is_skipped_and_the_batcher_keeps_serving(
    pool: ThreadPoolExecutor,
) -> None:
    model = GatedEmbedder()
    texts = BatchedEmbeddings(model, pool)
    first = texts.submit("a")
    assert model.started.wait(5)
    abandoned = texts.submit("bb")
    kept = texts.submit("ccc")
    # What asyncio.wrap_future does when the awaiting call is cancelled.
    assert abandoned.cancel()
    model.release.set()
    assert first.result(5)[0] == 1
    assert kept.result(5)[0] == 3
    assert model.batches == [["a"], ["ccc"]]
    assert texts.submit("dddd").result(5)[0] == 4


class SlowEmbedder:
    """Takes at least `seconds` per call (a sleep never returns early)."""

    dim = 4
    model_id = "slow"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        time.sleep(self.seconds)
        return np.ones((len(texts), self.dim), np.float32)


def test_the_typical_call_of_the_model_follows_its_recent_calls(pool: ThreadPoolExecutor) -> None:
    seconds = 0.02
    queries = BatchedEmbeddings(SlowEmbedder(seconds), pool)
    assert queries.typical_seconds == 0.0
    queries.submit("a").result(5)
    assert queries.typical_seconds >= TYPICAL_WEIGHT * seconds
    calls = 30
    for _ in range(calls - 1):
        queries.submit("a").result(5)
    # After n calls of at least `seconds`, the smoothed figure is at least 1 - (1 - w)^n of it.
    assert queries.typical_seconds >= seconds * (1 - (1 - TYPICAL_WEIGHT) ** calls)
