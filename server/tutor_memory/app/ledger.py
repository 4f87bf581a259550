"""The episode log's write path, shared by every use case that writes: embed (or leave the
embedding to the queue), commit, then bring the in-memory caches (vector index, recall tables) up
to date and report the change.

Embedding runs on the embed pool (onnxruntime releases the GIL), every write on the one writer
thread (SQLite allows one writer; one thread also keeps each chain's links in order). A write is
acknowledged only after its transaction committed; the caches follow the commit. A batch import
commits without embeddings, and the embedding queue (app/embedding_queue.py) adds them after.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from tutor_memory.app.batched_embeddings import BatchedEmbeddings
from tutor_memory.app.changes import Change, ChangeHub
from tutor_memory.app.embedding_queue import MAX_VECTOR_LAG, EmbeddingQueue
from tutor_memory.app.executors import Executors
from tutor_memory.app.group_commit import GroupCommit
from tutor_memory.app.import_facts import ImportFacts
from tutor_memory.app.sync import ChainSync
from tutor_memory.domain.budget import WorkBudget
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode
from tutor_memory.domain.errors import DeadlineExceeded
from tutor_memory.domain.recall.facts import (
    RecallFacts,
    recall_facts,
)
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.protocols import (
    AppendOutcome,
    AppendStatus,
    EpisodeReads,
    PreparedEpisode,
    Store,
    StoreWriter,
)

T = TypeVar("T")

# Episodes of a bulk write (an import's chunk, app/ingest.py INGEST_CHUNK) written between two
# looks at the writer's urgent lane: when a write a caller waits on has arrived, what is written so
# far commits and that write goes next, so an AppendEpisode beside an import waits for this many
# of the import's episodes, not for its whole chunk (docs/DESIGN.md P12: a chunk's commit held the
# writer thread for a median 12-19 ms beside an import). Without such a write waiting, the whole
# chunk stays one transaction (one fsync).
BULK_SLICE_EPISODES = 32
# How often an import held back by the vector lag looks again (a wait on the queue's condition,
# bounded so that a cancelled import stops waiting soon).
LAG_POLL_SECONDS = 0.5


@dataclass(frozen=True, slots=True)
class PreparedBatch:
    """Episodes ready to write: validated, embedded, and what recall derives from them."""

    items: list[PreparedEpisode]
    facts: list[RecallFacts]


def _check_deadline(deadline: float | None) -> None:
    """A call whose caller has given up (`deadline`, event-loop time) writes nothing, rather than
    something the caller will never hear about."""
    if deadline is not None and asyncio.get_running_loop().time() > deadline:
        raise DeadlineExceeded("the deadline passed before the write; nothing was written")


def _changes_of(outcomes: Sequence[AppendOutcome]) -> dict[ChainKey, Change]:
    """What the inserted episodes changed, chain by chain."""
    changed: dict[ChainKey, Change] = {}
    for outcome in outcomes:
        if outcome.status is not AppendStatus.INSERTED:
            continue
        what = Change.EPISODES
        if outcome.episode.kind is Kind.CHECK:
            what |= Change.CHECKS
        elif outcome.episode.kind is Kind.TAUGHT:
            what |= Change.TEACHING
        chain = outcome.episode.chain
        changed[chain] = changed.get(chain, Change.EPISODES) | what
    return changed


class Ledger:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        sync: ChainSync,
        counter: TokenCounter,
        executors: Executors,
        changes: ChangeHub,
        queue: EmbeddingQueue,
        import_facts: ImportFacts,
    ) -> None:
        self._store = store
        self._import_facts = import_facts
        self._queue = queue
        self._embedder = embedder
        self._counter = counter
        self._executors = executors
        self._changes = changes
        # Every committed episode reaches the held chains' caches through it (app/sync.py,
        # then app/resident.py).
        self._sync = sync
        # Called on the writer thread after each commit with its outcomes (quota counts).
        self._commit_listeners: list[Callable[[Sequence[AppendOutcome]], None]] = []
        # The episodes of single writes, embedded with those of concurrent writes.
        self._texts = BatchedEmbeddings(embedder, executors.embed)
        self._group: GroupCommit[PreparedBatch, list[AppendOutcome]] = GroupCommit(
            executors.writer, self._commit_group, self._after_group
        )

    def close(self) -> None:
        """Stops the import process, if one runs (the pools are the executors' to stop)."""
        self._import_facts.close()

    def on_commit(self, listener: Callable[[Sequence[AppendOutcome]], None]) -> None:
        """Calls `listener(outcomes)` after every committed episode write."""
        self._commit_listeners.append(listener)

    @property
    def episodes(self) -> EpisodeReads:
        """The store's episode reads, for use cases that read the log (on a reader thread)."""
        return self._store

    # -- writes --------------------------------------------------------------------------------

    def prepare(
        self, episodes: Sequence[NewEpisode], budget: WorkBudget | None = None
    ) -> PreparedBatch:
        """Embeds the episodes and derives their recall facts (blocking: on an embed thread).
        `budget` bounds the text work of the facts (an answer's narration check reads every
        sentence); it is checked before the embedding too."""
        if budget is not None:
            budget.check()
        vectors = self._embedder.embed([ep.embedding_text() for ep in episodes])
        facts = recall_facts(episodes, self._counter, budget)
        return PreparedBatch(
            [PreparedEpisode(ep, vectors[i], facts[i]) for i, ep in enumerate(episodes)], facts
        )

    async def embed(
        self, episodes: Sequence[NewEpisode], budget: WorkBudget | None = None
    ) -> PreparedBatch:
        """As `prepare`, for a write a caller waits on: its texts are embedded on the embed pool
        together with those of concurrent writes, while its facts are derived on a text thread
        (`budget` bounds them)."""
        if budget is not None:
            budget.check()
        vectors = [self._texts.submit(ep.embedding_text()) for ep in episodes]
        pool = self._executors.text_pool(sum(len(ep.text) + len(ep.summary) for ep in episodes))
        if budget is None:
            facts = await self._executors.run(pool, recall_facts, episodes, self._counter)
        else:
            facts = await self._executors.run_within(
                pool, budget, recall_facts, episodes, self._counter, budget
            )
        got = [await asyncio.wrap_future(v) for v in vectors]
        return PreparedBatch(
            [PreparedEpisode(ep, got[i], facts[i]) for i, ep in enumerate(episodes)], facts
        )

    async def vector_lag_room(self) -> None:
        """Waits while the embedding queue holds `MAX_VECTOR_LAG` episodes or more: an import
        may run ahead of the embedder, but only so far."""
        while self._queue.pending() >= MAX_VECTOR_LAG:
            await asyncio.to_thread(self._queue.wait_below, MAX_VECTOR_LAG, LAG_POLL_SECONDS)

    async def prepare_unembedded(
        self, episodes: Sequence[NewEpisode], *, imported: int
    ) -> PreparedBatch:
        """As `embed`, but leaves the embedding to the queue: for a chunk of a batch import (of
        `imported` items so far), whose pace the embedder must not set. The facts are derived in
        the import process, else on the ingest thread (app/import_facts.py), apart from the
        embed pool that single writes wait on."""
        facts = await self._import_facts.derive(episodes, imported=imported)
        return PreparedBatch(
            [PreparedEpisode(ep, None, f) for ep, f in zip(episodes, facts, strict=True)], facts
        )

    async def write(
        self, prepared: PreparedBatch, *, deadline: float | None = None, bulk: bool = False
    ) -> list[AppendOutcome]:
        """Commits the items, then adds them to the caches. Writes a caller waits on that reach
        the writer thread together commit together, in one transaction (app/group_commit.py);
        `bulk` writes (an import's chunks) give way to them, before and while they run
        (`_commit_bulk`)."""
        _check_deadline(deadline)
        if bulk:
            return await self._executors.run(
                self._executors.bulk_writer, self._commit_bulk, prepared
            )
        return await asyncio.wrap_future(self._group.submit(prepared, len(prepared.items)))

    def _commit_bulk(self, prepared: PreparedBatch) -> list[AppendOutcome]:
        """A bulk write's episodes, on the writer thread, `BULK_SLICE_EPISODES` at a time: in
        one transaction while no write a caller waits on arrives; when one does, the part
        written so far commits and is brought into the caches, the waiting writes go
        (`WriterThread.give_way`), and the rest follows in a new transaction. Each part is
        committed before it is reported, so a failure leaves the parts before it stored (a
        retried import finds them by their client keys)."""
        items, writer = prepared.items, self._executors.writer_thread
        outcomes: list[AppendOutcome] = []
        start = 0
        while start < len(items):
            first = start
            with self._store.writing() as w:
                recorded_at_us = now_us()
                while start < len(items):
                    part = items[start : start + BULK_SLICE_EPISODES]
                    outcomes += w.append(
                        part, model_id=self._embedder.model_id, recorded_at_us=recorded_at_us
                    )
                    start += len(part)
                    if writer.urgent_waiting():
                        break
            self._committed(
                PreparedBatch(items[first:start], prepared.facts[first:start]),
                outcomes[first:start],
                Change.NOTHING,
            )
            if start < len(items):
                writer.give_way()
        return outcomes

    def writes_waiting(self) -> int:
        """Writes a caller waits on that wait for the writer thread (app/group_commit.py)."""
        return self._group.waiting()

    def _commit_group(self, batches: Sequence[PreparedBatch]) -> list[list[AppendOutcome]]:
        """The batches' episodes in one transaction (on the writer thread), as if appended one
        batch after another; each batch's outcomes."""
        items = [item for batch in batches for item in batch.items]
        with self._store.writing() as w:
            outcomes = w.append(items, model_id=self._embedder.model_id, recorded_at_us=now_us())
        split, start = [], 0
        for batch in batches:
            split.append(outcomes[start : start + len(batch.items)])
            start += len(batch.items)
        return split

    def _after_group(
        self, batches: Sequence[PreparedBatch], outcomes: Sequence[list[AppendOutcome]]
    ) -> None:
        merged = PreparedBatch(
            [item for batch in batches for item in batch.items],
            [fact for batch in batches for fact in batch.facts],
        )
        self._committed(merged, [o for batch in outcomes for o in batch], Change.NOTHING)

    async def write_with(
        self,
        prepared: PreparedBatch,
        then: Callable[[StoreWriter, list[AppendOutcome]], T],
        *,
        also: Change = Change.NOTHING,
        guard: Callable[[StoreWriter], None] | None = None,
        deadline: float | None = None,
    ) -> tuple[list[AppendOutcome], T]:
        """Commits the items and whatever `then` writes beside them (a file version, a belief)
        in ONE transaction, on the writer thread; `then` sees the outcomes, so it can refer to
        the new episodes' ids. `also` names what `then` changes besides episodes, reported for
        every chain that got an episode. `guard` runs first in the transaction: whatever it
        raises rolls the transaction back before anything is written.

        `deadline` (event-loop time) is checked before the commit: a call whose caller has given
        up writes nothing, rather than something the caller will never hear about.
        """
        _check_deadline(deadline)

        def commit() -> tuple[list[AppendOutcome], T]:
            with self._store.writing() as w:
                if guard is not None:
                    guard(w)
                outcomes = w.append(
                    prepared.items, model_id=self._embedder.model_id, recorded_at_us=now_us()
                )
                result = then(w, outcomes)
            self._committed(prepared, outcomes, also)
            return outcomes, result

        return await self._executors.run(self._executors.writer, commit)

    def _committed(
        self, prepared: PreparedBatch, outcomes: Sequence[AppendOutcome], also: Change
    ) -> None:
        """After a commit, on the writer thread (adding to a graph index costs real time, and
        the event loop must not wait on it): the caches, the commit listeners, the changes."""
        self._index_inserted(prepared, outcomes)
        for listener in self._commit_listeners:
            listener(outcomes)
        inserted = _changes_of(outcomes)
        for chain in dict.fromkeys(o.episode.chain for o in outcomes):
            what = inserted.get(chain, Change.NOTHING) | also
            if what:
                self._changes.changed(chain, what)

    async def in_transaction(
        self, chain: ChainKey, changes: Change, fn: Callable[[StoreWriter], T]
    ) -> T:
        """Runs `fn` in one write transaction on the writer thread (writes without episodes),
        then reports `changes` of `chain`."""

        def commit() -> T:
            with self._store.writing() as w:
                result = fn(w)
            if changes:
                self._changes.changed(chain, changes)
            return result

        return await self._executors.run(self._executors.writer, commit)

    def _index_inserted(self, prepared: PreparedBatch, outcomes: Sequence[AppendOutcome]) -> None:
        """Adds what was committed to the held chains' caches (app/resident.py), chain by chain,
        and queues the embeddings still to compute."""
        by_chain: dict[ChainKey, list[int]] = {}
        for i, outcome in enumerate(outcomes):
            if outcome.status is AppendStatus.INSERTED:
                by_chain.setdefault(outcome.episode.chain, []).append(i)
        later: list[tuple[ChainKey, int, str]] = []
        for chain, rows in by_chain.items():
            embedded = [i for i in rows if prepared.items[i].vector is not None]
            ids = np.asarray([outcomes[i].episode.episode_id for i in embedded], np.int64)
            vectors = (
                np.stack([prepared.items[i].vector for i in embedded])  # type: ignore[misc]
                if embedded
                else np.empty((0, self._embedder.dim), np.float32)
            )
            self._sync.add_committed(
                chain,
                [outcomes[i].episode for i in rows],
                [prepared.facts[i] for i in rows],
                ids,
                vectors,
            )
            later += [
                (chain, outcomes[i].episode.episode_id, prepared.items[i].episode.embedding_text())
                for i in rows
                if prepared.items[i].vector is None
            ]
        # After the tables: an episode is searchable by its words before its vector is queued.
        self._queue.enqueue(later)

    async def append(
        self,
        episode: NewEpisode,
        *,
        deadline: float | None = None,
        budget: WorkBudget | None = None,
    ) -> AppendOutcome:
        prepared = await self.embed([episode], budget)
        (outcome,) = await self.write(prepared, deadline=deadline)
        return outcome
