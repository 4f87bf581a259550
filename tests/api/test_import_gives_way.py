"""An import's chunk gives way to a write a caller waits on (app/ledger.py, BULK_SLICE_EPISODES):
what the chunk wrote so far commits, the waiting write goes, and the rest of the chunk follows in
a new transaction; with no such write, the chunk stays one transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any

import pytest

from tests.helpers.harness import A, Harness, question
from tutor_memory.app.ledger import BULK_SLICE_EPISODES
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.store.protocols import PreparedEpisode
from tutor_memory_client._proto import memory_pb2 as pb

IMPORTED = ChainKey("tenant-a", "importer", "biology")
# One server chunk (app/ingest.py, INGEST_CHUNK), three slices and a part of one.
CHUNK_EPISODES = 3 * BULK_SLICE_EPISODES + 4


class WatchedStore:
    """The server's store, counting write transactions and calling `on_append` with each
    append's items inside its transaction."""

    def __init__(self, store: Any, on_append: Callable[[Sequence[PreparedEpisode]], None]) -> None:
        self._store = store
        self._on_append = on_append
        self.transactions = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    @contextmanager
    def writing(self) -> Iterator[Any]:
        self.transactions += 1
        with self._store.writing() as writer:
            yield _WatchedWriter(writer, self._on_append)


class _WatchedWriter:
    def __init__(self, writer: Any, on_append: Callable[[Sequence[PreparedEpisode]], None]):
        self._writer = writer
        self._on_append = on_append

    def __getattr__(self, name: str) -> Any:
        return getattr(self._writer, name)

    def append(self, items: Sequence[PreparedEpisode], **kwargs: Any) -> Any:
        outcomes = self._writer.append(items, **kwargs)
        self._on_append(items)
        return outcomes


def chunk() -> list[Any]:
    return [
        question(f"Imported turn {i} about cell membranes.", student="importer", key=f"imp-{i}")
        for i in range(CHUNK_EPISODES)
    ]


def stored_count(harness: Harness, chain: ChainKey) -> int:
    store = harness.app.services.store
    return len(
        store.list_episodes(
            chain, occurred_from_us=None, occurred_to_us=None, after=None, limit=10_000
        )
    )


async def test_a_write_that_arrives_during_an_import_chunk_goes_before_the_rest_of_it(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = harness.app.services
    seen_by_urgent: list[Future[int]] = []

    def on_append(items: Sequence[PreparedEpisode]) -> None:
        # While the chunk's first slice is written (inside its transaction), a caller's write
        # arrives; here it only counts what of the import is committed when it runs.
        if not seen_by_urgent and items[0].episode.chain == IMPORTED:
            seen_by_urgent.append(services.executors.writer.submit(stored_count, harness, IMPORTED))

    watched = WatchedStore(services.store, on_append)
    monkeypatch.setattr(services.ledger, "_store", watched)
    reply = await harness.ingest(chunk(), per_message=CHUNK_EPISODES)
    assert reply.inserted == CHUNK_EPISODES
    # It ran after the first slice committed and before the rest of the chunk was written.
    assert seen_by_urgent[0].result(timeout=10) == BULK_SLICE_EPISODES
    assert watched.transactions == 2
    # Every episode of the chunk is stored, listed and in the caches: recalled by its words.
    assert len(await harness.list_all(student="importer")) == CHUNK_EPISODES
    block = await harness.stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id="importer", subject_id="biology", query="cell membranes", budget_tokens=300
        ),
        metadata=A,
    )
    assert "Imported turn" in block.text


async def test_an_import_chunk_with_no_write_waiting_is_one_transaction(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    services = harness.app.services
    watched = WatchedStore(services.store, lambda items: None)
    monkeypatch.setattr(services.ledger, "_store", watched)
    reply = await harness.ingest(chunk(), per_message=CHUNK_EPISODES)
    assert reply.inserted == CHUNK_EPISODES
    assert watched.transactions == 1
    assert stored_count(harness, IMPORTED) == CHUNK_EPISODES
