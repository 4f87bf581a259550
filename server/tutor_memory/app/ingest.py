"""IngestEpisodes (SPEC R10.2): a stream of items, each for any chain, embedded and committed in
chunks, in stream order, with back-pressure. Every item carries a client key, so a retried batch
never duplicates; a bad item is rejected with its reason and does not stop the batch.
"""

from __future__ import annotations

import asyncio
import enum
from collections import deque
from collections.abc import AsyncIterable, Sequence
from dataclasses import dataclass

from tutor_memory.app.beliefs import BeliefKeeper
from tutor_memory.app.executors import EMBED_THREADS
from tutor_memory.app.ledger import Ledger, PreparedBatch
from tutor_memory.app.telemetry import Telemetry
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode
from tutor_memory.domain.errors import ResourceExhausted
from tutor_memory.store.protocols import AppendOutcome, AppendStatus

# Items of one stream embedded and committed together. Large enough to amortise a transaction and
# an embedding batch, small enough to keep every core busy: one chunk per embed thread is embedded
# while the chunk before them is written.
INGEST_CHUNK = 256
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
        """Every item's result, in stream order (index = position in the stream)."""
        results: list[ItemResult] = []
        chunk: list[tuple[int, NewEpisode]] = []
        # Chunks being embedded, oldest first, and the one chunk being written. Chunks are written
        # in stream order, so a chain's episodes take their seq in the order they were sent.
        embedding: deque[tuple[list[int], asyncio.Task[PreparedBatch]]] = deque()
        writing: asyncio.Task[None] | None = None
        count = 0
        # Chains that received checks: their beliefs are brought up to date after the stream.
        checked: set[ChainKey] = set()

        async def write(indices: list[int], prepared: PreparedBatch) -> None:
            outcomes = await self._ledger.write(prepared, deadline=deadline)
            results.extend(item_result(i, o) for i, o in zip(indices, outcomes, strict=True))
            checked.update(
                o.episode.chain
                for o in outcomes
                if o.status is AppendStatus.INSERTED and o.episode.kind is Kind.CHECK
            )

        async def write_oldest() -> None:
            nonlocal writing
            indices, embedded = embedding.popleft()
            prepared = await embedded
            if writing is not None:
                await writing
            writing = asyncio.create_task(write(indices, prepared))

        def start_embedding() -> None:
            indices, episodes = [i for i, _ in chunk], [e for _, e in chunk]
            embedding.append((indices, asyncio.create_task(self._ledger.embed(episodes))))

        try:
            async for item in items:
                if count >= MAX_BATCH_ITEMS:
                    raise ResourceExhausted(
                        f"more than {MAX_BATCH_ITEMS} items in one IngestEpisodes call; "
                        "earlier chunks may be stored: resend the rest (or all, keys make it "
                        "safe) in smaller calls"
                    )
                if isinstance(item, Rejected):
                    results.append(
                        ItemResult(count, item.client_key, ItemStatus.REJECTED, reason=item.reason)
                    )
                else:
                    chunk.append((count, item))
                count += 1
                if len(chunk) >= INGEST_CHUNK:
                    start_embedding()
                    chunk = []
                    # Back-pressure: stop reading the stream while enough work is in flight.
                    if len(embedding) >= EMBED_THREADS:
                        await write_oldest()
            if chunk:
                start_embedding()
            while embedding:
                await write_oldest()
            if writing is not None:
                await writing
            for chain in sorted(checked, key=lambda c: (c.student, c.subject)):
                await self._beliefs.refresh(chain)
        finally:
            for _, task in embedding:
                task.cancel()
            if writing is not None and not writing.done():
                writing.cancel()
        self._telemetry.ingest_items({s.value: n for s, n in counts(results).items()})
        return sorted(results, key=lambda r: r.index)


def counts(results: Sequence[ItemResult]) -> dict[ItemStatus, int]:
    """How many items ended in each status."""
    out = dict.fromkeys(ItemStatus, 0)
    for r in results:
        out[r.status] += 1
    return out
