"""The per-chain vector cache: exact while small, an HNSW graph once a chain is large."""

from __future__ import annotations

import threading
from typing import Any

import faiss
import numpy as np
import numpy.typing as npt
import pytest

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.index import vectors as vectors_module
from tutor_memory.index.vectors import VectorIndex

DIM = 16
A = ChainKey("t", "a", "bio")
B = ChainKey("t", "b", "bio")


def _unit(n: int, seed: int) -> npt.NDArray[np.float32]:
    v = np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)
    unit: npt.NDArray[np.float32] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return unit


def test_each_chain_searches_only_its_own_vectors() -> None:
    index = VectorIndex(DIM)
    va, vb = _unit(5, 1), _unit(5, 2)
    index.add(A, np.arange(5, dtype=np.int64), va)
    index.add(B, np.arange(100, 105, dtype=np.int64), vb)
    ids = index.neighbours(A, vb[0], 10, centre=False).ids
    assert set(ids.tolist()) <= set(range(5))
    found = index.neighbours(B, vb[3], 1, centre=False)
    ids, scores = found.ids, found.similarities
    assert ids.tolist() == [103]
    assert scores[0] > 0.999


def test_large_chain_moves_to_a_graph_and_keeps_every_vector() -> None:
    index = VectorIndex(DIM, hnsw_min_vectors=300)
    vectors = _unit(400, 3)
    index.add(A, np.arange(250, dtype=np.int64), vectors[:250])
    assert not index.uses_graph(A)
    index.add(A, np.arange(250, 320, dtype=np.int64), vectors[250:320])
    # Added while the graph may still be building: must not be lost in the swap.
    index.add(A, np.arange(320, 400, dtype=np.int64), vectors[320:])
    index.wait_for_conversions()
    assert index.uses_graph(A)
    assert index.count(A) == 400
    for i in (0, 260, 399):
        ids = index.neighbours(A, vectors[i], 1, centre=False).ids
        assert ids.tolist() == [i]


def test_rebuild_builds_the_graph_for_large_chains() -> None:
    from tutor_memory.domain.records import ChainVectors

    stored = [
        ChainVectors(A, np.arange(500, dtype=np.int64), _unit(500, 4)),
        ChainVectors(B, np.arange(500, 510, dtype=np.int64), _unit(10, 5)),
    ]
    index = VectorIndex(DIM, hnsw_min_vectors=300)
    assert index.rebuild(stored) == 510
    assert index.uses_graph(A)
    assert not index.uses_graph(B)


def test_a_graph_built_in_steps_keeps_vectors_added_between_its_steps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(vectors_module, "CONVERT_STEP", 16)
    index = VectorIndex(DIM, hnsw_min_vectors=300)
    vectors = _unit(600, 6)
    index.add(A, np.arange(300, dtype=np.int64), vectors[:300])
    for start in range(300, 600, 10):
        index.add(A, np.arange(start, start + 10, dtype=np.int64), vectors[start : start + 10])
    index.wait_for_conversions()
    assert index.uses_graph(A)
    assert index.count(A) == 600
    for i in range(0, 600, 37):
        ids = index.neighbours(A, vectors[i], 1, centre=False).ids
        assert ids.tolist() == [i]


def test_a_flat_index_put_back_from_a_snapshot_moves_to_a_graph_with_every_vector() -> None:
    vectors = _unit(400, 8)
    flat = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
    flat.add_with_ids(vectors, np.arange(1000, 1400, dtype=np.int64))
    index = VectorIndex(DIM, hnsw_min_vectors=300)
    index.put(A, flat, graph=False)
    index.wait_for_conversions()
    assert index.uses_graph(A)
    assert index.count(A) == 400
    ids = index.neighbours(A, vectors[123], 1, centre=False).ids
    assert ids.tolist() == [1123]


def test_a_graph_build_stops_when_its_chain_is_removed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors_module, "CONVERT_STEP", 16)
    index = VectorIndex(DIM, hnsw_min_vectors=300)
    removed = threading.Event()
    real_contents = vectors_module._contents
    steps: list[int] = []

    def contents_then_remove(*args: Any) -> Any:
        steps.append(1)
        found = real_contents(*args)
        if not removed.is_set():
            index.remove(A)  # the chain leaves while its graph is built
            removed.set()
        return found

    monkeypatch.setattr(vectors_module, "_contents", contents_then_remove)
    index.add(A, np.arange(400, dtype=np.int64), _unit(400, 9))
    index.wait_for_conversions()
    assert removed.is_set()
    assert not index.held(A)
    # The build copied its first step of vectors, then let the removed chain go (25 steps in all).
    assert len(steps) == 1
    # Added again, the chain starts afresh (a flat index, then its own graph).
    index.add(A, np.arange(10, dtype=np.int64), _unit(10, 10))
    assert index.count(A) == 10


def _with_shared_form(
    topics: npt.NDArray[np.float32], form: npt.NDArray[np.float32], weight: float
) -> npt.NDArray[np.float32]:
    v = topics + weight * form
    unit: npt.NDArray[np.float32] = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(
        np.float32
    )
    return unit


def test_recall_neighbours_are_found_about_the_chains_mean() -> None:
    # Every episode shares one strong direction (a question's form); the query shares it more
    # than the one episode that is about the same thing. Plain cosine ranks by the form.
    rng = np.random.default_rng(11)
    form = rng.standard_normal(DIM).astype(np.float32)
    topics = rng.standard_normal((vectors_module.CENTRE_MIN_VECTORS, DIM)).astype(np.float32)
    episodes = _with_shared_form(topics, form, 3.0)
    episodes[0] = _with_shared_form(topics[:1], form, 0.3)[0]  # the same topic, another form
    noise = rng.standard_normal((1, DIM)).astype(np.float32)
    query = _with_shared_form(topics[:1] + 0.3 * noise, form, 3.0)[0]
    index = VectorIndex(DIM)
    index.add(A, np.arange(len(episodes), dtype=np.int64), episodes)
    plain_ids = index.neighbours(A, query, 1, centre=False).ids
    assert plain_ids.tolist() != [0]
    found = index.neighbours(A, query, 5)
    assert found.centred
    assert found.ids[0] == 0
    assert np.all(np.diff(found.similarities) <= 0)


def test_a_small_chain_is_searched_by_plain_cosine() -> None:
    vectors = _unit(vectors_module.CENTRE_MIN_VECTORS - 1, 12)
    index = VectorIndex(DIM)
    index.add(A, np.arange(len(vectors), dtype=np.int64), vectors)
    found = index.neighbours(A, vectors[7], 3)
    plain = index.neighbours(A, vectors[7], 3, centre=False)
    assert not found.centred
    assert found.ids.tolist() == plain.ids.tolist()
    assert np.allclose(found.similarities, plain.similarities)


def test_the_chains_mean_is_the_same_however_its_vectors_arrived() -> None:
    vectors = _unit(500, 13)
    ids = np.arange(500, dtype=np.int64)
    from tutor_memory.domain.records import ChainVectors

    grown = VectorIndex(DIM, hnsw_min_vectors=300)
    for start in range(0, 500, 50):
        grown.add(A, ids[start : start + 50], vectors[start : start + 50])
    rebuilt = VectorIndex(DIM, hnsw_min_vectors=300)
    rebuilt.rebuild([ChainVectors(A, ids, vectors)])
    flat = faiss.IndexIDMap2(faiss.IndexFlatIP(DIM))
    flat.add_with_ids(vectors, ids)
    put_back = VectorIndex(DIM, hnsw_min_vectors=10_000)
    put_back.put(A, flat, graph=False)
    grown.wait_for_conversions()
    copied = rebuilt.copy_of(A)
    assert copied is not None
    assert copied[1]  # a graph
    graph_put_back = VectorIndex(DIM, hnsw_min_vectors=300)
    graph_put_back.put(A, *copied)
    query = _unit(1, 14)[0]
    expected = (vectors - vectors.mean(axis=0)) @ (query - vectors.mean(axis=0))
    for index in (grown, rebuilt, put_back, graph_put_back):
        found = index.neighbours(A, query, 1)
        assert found.centred
        assert found.ids.tolist() == [int(np.argmax(expected))]


def test_a_chain_whose_index_holds_no_vector_yet_has_no_neighbours() -> None:
    # A chain's entry exists for a moment before its first vectors are added to it; a block
    # asking then gets no neighbours, not an error from faiss.
    index = VectorIndex(DIM)
    index.put(A, faiss.IndexIDMap2(faiss.IndexFlatIP(DIM)), graph=False)
    plain = index.neighbours(A, _unit(1, 15)[0], 10, centre=False)
    found = index.neighbours(A, _unit(1, 15)[0], 10)
    assert (len(plain.ids), len(plain.similarities), len(found.ids)) == (0, 0, 0)
