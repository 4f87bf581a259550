"""IngestEpisodes and ImportEpisodes (SPEC R10.2): a stream of items, each for any chain,
committed in chunks, in stream order, with back-pressure. Every item carries a client key, so a
retried batch never duplicates; a bad item is rejected with its reason and does not stop the batch.

An item is acknowledged once committed with its recall facts: durable, listed, recalled by its
words and by recency. Its embedding follows from the embedding queue (app/embedding_queue.py), so
the embedder does not set the pace of an import. IngestEpisodes answers once at the end;
ImportEpisodes acknowledges every chunk as it commits, so an interrupted import resends only what
was not acknowledged.
"""

from __future__ import annotations

import asyncio
import enum
from collections import deque
from collections.abc import AsyncIterable, Awaitable, Callable, Sequence
from dataclasses import dataclass

from tutor_memory.app.beliefs import BeliefKeeper
from tutor_memory.app.ledger import Ledger, PreparedBatch
from tutor_memory.app.telemetry import Telemetry
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode
from tutor_memory.domain.errors import ResourceExhausted
from tutor_memory.store.protocols import AppendOutcome, AppendStatus

# Items of one stream committed together (and acknowledged together by ImportEpisodes). Large
# enough to amortise a transaction (a few statements and one fsync); an AppendEpisode that arrives
# meanwhile waits only for a slice of it (bulk writes give way: app/writer_thread.py, and
# app/ledger.py BULK_SLICE_EPISODES).
INGEST_CHUNK = 128
# Chunks of one stream prepared ahead of the one being written: one is prepared while the one
# before it commits; more would only hold memory, since preparing uses one thread.
CHUNKS_IN_FLIGHT = 2
# Items one IngestEpisodes call may carry; the reply lists every item, so a larger batch is sent
# as several calls.
MAX_BATCH_ITEMS = 100_000


class ItemStatus(enum.Enum):
    INSERTED = "inserted"
    DUPLICATE = "duplicate"
    REJECTED = "rejected"


@dataclass(frozen=True, slots=True)
class Rejected:
    """An item that failed validation before it reached the ledger."""

    client_key: str
    reason: str


@dataclass(frozen=True, slots=True)
class ItemResult:
    index: int
    client_key: str
    status: ItemStatus
    episode_id: int = 0
    reason: str = ""


def item_result(index: int, outcome: AppendOutcome) -> ItemResult:
    key = outcome.episode.client_key
    if outcome.status is AppendStatus.CONFLICT:
        return ItemResult(index, key, ItemStatus.REJECTED, reason=outcome.reason)
    status = (
        ItemStatus.INSERTED if outcome.status is AppendStatus.INSERTED else ItemStatus.DUPLICATE
    )
    return ItemResult(index, key, status, episode_id=outcome.episode.episode_id)


ChunkListener = Callable[[list[ItemResult]], Awaitable[None]]


class BatchIngest:
    def __init__(
        self, ledger: Ledger, beliefs: BeliefKeeper, telemetry: Telemetry | None = None
    ) -> None:
        self._ledger = ledger
        self._beliefs = beliefs
        self._telemetry = telemetry or Telemetry()

    async def ingest(
        self, items: AsyncIterable[NewEpisode | Rejected], *, deadline: float | None
    ) -> list[ItemResult]:
        """Every item's result, in stream order (index = position in the stream), once the
        stream ended and everything is committed (IngestEpisodes)."""
        results: list[ItemResult] = []

        async def keep(chunk: list[ItemResult]) -> None:
            results.extend(chunk)

        await self.run(items, keep, deadline=deadline, max_items=MAX_BATCH_ITEMS)
        return sorted(results, key=lambda r: r.index)

    async def run(
        self,
        items: AsyncIterable[NewEpisode | Rejected],
        committed: ChunkListener,
        *,
        deadline: float | None,
        max_items: int | None = None,
    ) -> None:
        """Commits the stream chunk by chunk and calls `committed` with the results of each
        chunk once it is committed (with the rejected items received before it), in stream
        order. ImportEpisodes acknowledges each chunk with it; an interrupted stream keeps every
        chunk acknowledged so far."""
        chunk: list[tuple[int, NewEpisode]] = []
        rejected: list[ItemResult] = []
        # Chunks being prepared (recall facts), oldest first, and the one chunk being written.
        # Chunks are written in stream order, so a chain's episodes take their seq in the order
        # they were sent.
        preparing: deque[tuple[list[int], asyncio.Task[PreparedBatch]]] = deque()
        writing: asyncio.Task[None] | None = None
        count = 0
        # Chains that received checks: their beliefs are brought up to date after the stream.
        checked: set[ChainKey] = set()

        async def write(
            indices: list[int], prepared: PreparedBatch, early: list[ItemResult]
        ) -> None:
            outcomes = await self._ledger.write(prepared, deadline=deadline, bulk=True)
            checked.update(
                o.episode.chain
                for o in outcomes
                if o.status is AppendStatus.INSERTED and o.episode.kind is Kind.CHECK
            )
            done = early + [item_result(i, o) for i, o in zip(indices, outcomes, strict=True)]
            done.sort(key=lambda r: r.index)
            self._telemetry.ingest_items({s.value: n for s, n in counts(done).items()})
            await committed(done)

        async def write_oldest() -> None:
            nonlocal writing, rejected
            indices, task = preparing.popleft()
            prepared = await task
            await self._ledger.vector_lag_room()
            if writing is not None:
                await writing
            early, rejected = rejected, []
            writing = asyncio.create_task(write(indices, prepared, early))

        def start_preparing() -> None:
            indices, episodes = [i for i, _ in chunk], [e for _, e in chunk]
            task = asyncio.create_task(self._ledger.prepare_unembedded(episodes, imported=count))
            preparing.append((indices, task))

        try:
            async for item in items:
                if max_items is not None and count >= max_items:
                    raise ResourceExhausted(
                        f"more than {max_items} items in one IngestEpisodes call; "
                        "earlier chunks may be stored: resend the rest (or all, keys make it "
                        "safe) in smaller calls, or use ImportEpisodes"
                    )
                if isinstance(item, Rejected):
                    rejected.append(
                        ItemResult(count, item.client_key, ItemStatus.REJECTED, reason=item.reason)
                    )
                else:
                    chunk.append((count, item))
                count += 1
                if len(chunk) >= INGEST_CHUNK:
                    start_preparing()
                    chunk = []
                    # Back-pressure: stop reading the stream while enough work is in flight.
                    if len(preparing) >= CHUNKS_IN_FLIGHT:
                        await write_oldest()
            if chunk:
                start_preparing()
            while preparing:
                await write_oldest()
            if writing is not None:
                await writing
            if rejected:
                self._telemetry.ingest_items({s.value: n for s, n in counts(rejected).items()})
                await committed(rejected)
        finally:
            for _, task in preparing:
                task.cancel()
            if writing is not None and not writing.done():
                # A chunk handed to the writer commits whatever happens to the stream; waiting
                # for it keeps the beliefs below in step with what is stored.
                await asyncio.shield(asyncio.wait([writing]))
            # Even for a broken stream: the chunks committed so far may hold checks.
            for chain in sorted(checked, key=lambda c: (c.student, c.subject)):
                await self._beliefs.refresh(chain)


def counts(results: Sequence[ItemResult]) -> dict[ItemStatus, int]:
    """How many items ended in each status."""
    out = dict.fromkeys(ItemStatus, 0)
    for r in results:
        out[r.status] += 1
    return out
