"""The episode ledger as the service sees it: append, batch ingest, list, verify, checkpoint.

Blocking work runs off the event loop: embedding on the embed threads (onnxruntime releases the
GIL), every write on ONE writer thread (SQLite allows one writer; one thread also keeps each
chain's links in order), reads on a small reader pool. A write is acknowledged only after its
transaction committed; the caches (FAISS index, recall tables) are updated after the commit.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import json
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from tutor_memory.domain.chain import Verification, verify_chain
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode, StoredEpisode
from tutor_memory.domain.errors import (
    DeadlineExceeded,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
)
from tutor_memory.domain.signing import ServerKey, SignedCheckpoint
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.index.recall_tables import RecallFacts, RecallTables, recall_facts, recall_row
from tutor_memory.index.vectors import VectorIndex
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.protocols import (
    AppendOutcome,
    AppendStatus,
    LedgerStore,
    PreparedEpisode,
    StoreWriter,
)

# Annotation kind for the memories shown to the tutor for the turn an answer closes (R7.2).
SHOWN_MEMORIES = "shown_memories"

# Threads that read the store at once (ListEpisodes, VerifyChain); SQLite in WAL mode lets readers
# run beside the writer.
READER_THREADS = 4
# Threads that embed at once; each onnxruntime call uses one core, and the machine has two.
EMBED_THREADS = 2

T = TypeVar("T")


class CheckpointStatus(enum.Enum):
    HOLDS = "holds"
    BAD_SIGNATURE = "bad_signature"
    REWRITTEN = "rewritten"
    TRUNCATED = "truncated"


@dataclass(frozen=True, slots=True)
class PreparedBatch:
    """Episodes ready to write: validated, embedded, and what recall derives from them."""

    items: list[PreparedEpisode]
    facts: list[RecallFacts]


@dataclass(frozen=True, slots=True)
class ChainReport:
    verification: Verification
    checkpoint_status: CheckpointStatus | None


class Ledger:
    def __init__(
        self,
        store: LedgerStore,
        embedder: Embedder,
        index: VectorIndex,
        key: ServerKey,
        counter: TokenCounter,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.index = index
        self.key = key
        self.counter = counter
        self.tables = RecallTables()
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="ledger-writer")
        self._readers = ThreadPoolExecutor(READER_THREADS, thread_name_prefix="ledger-reader")
        self._embedders = ThreadPoolExecutor(EMBED_THREADS, thread_name_prefix="embed")

    def rebuild_caches(self) -> tuple[int, int]:
        """Loads the vector index and the recall tables from the store (at start, before
        serving); returns (vectors, episodes) loaded."""
        vectors = self.index.rebuild(self.store.iter_vectors(self.embedder.model_id))
        episodes = 0
        for chain in self.store.chains():
            stored = list(self.store.iter_chain(chain))
            facts = recall_facts(stored, self.counter)
            self.tables.add(chain, (recall_row(ep, f) for ep, f in zip(stored, facts, strict=True)))
            episodes += len(stored)
        return vectors, episodes

    def close(self) -> None:
        for pool in (self._embedders, self._readers, self._writer):
            pool.shutdown(wait=True)
        self.store.close()

    async def _run(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(pool, fn)

    # -- writes --------------------------------------------------------------------------------

    def prepare(self, episodes: Sequence[NewEpisode]) -> PreparedBatch:
        vectors = self.embedder.embed([ep.embedding_text() for ep in episodes])
        facts = recall_facts(episodes, self.counter)
        return PreparedBatch(
            [PreparedEpisode(ep, vectors[i], facts[i].terms) for i, ep in enumerate(episodes)],
            facts,
        )

    async def embed(self, episodes: Sequence[NewEpisode]) -> PreparedBatch:
        """Embeds and derives recall facts on an embed thread."""
        return await self._run(self._embedders, functools.partial(self.prepare, episodes))

    async def write(
        self, prepared: PreparedBatch, *, deadline: float | None = None
    ) -> list[AppendOutcome]:
        """Commits the items in one transaction, then adds the new vectors to the index.

        `deadline` (event-loop time) is checked before the commit: a call whose caller has given
        up writes nothing, rather than something the caller will never hear about.
        """
        if deadline is not None and asyncio.get_running_loop().time() > deadline:
            raise DeadlineExceeded("the deadline passed before the write; nothing was written")

        def commit() -> list[AppendOutcome]:
            outcomes = self.store.append(
                prepared.items, model_id=self.embedder.model_id, recorded_at_us=now_us()
            )
            # On the writer thread too: adding to a graph index costs real time, and the event
            # loop must not wait on it.
            self._index_inserted(prepared, outcomes)
            return outcomes

        return await self._run(self._writer, commit)

    def _index_inserted(self, prepared: PreparedBatch, outcomes: Sequence[AppendOutcome]) -> None:
        """Adds what was committed to the caches (vector index, recall tables), chain by chain."""
        by_chain: dict[ChainKey, list[int]] = {}
        for i, outcome in enumerate(outcomes):
            if outcome.status is AppendStatus.INSERTED:
                by_chain.setdefault(outcome.episode.chain, []).append(i)
        for chain, rows in by_chain.items():
            ids = np.asarray([outcomes[i].episode.episode_id for i in rows], dtype=np.int64)
            self.index.add(chain, ids, np.stack([prepared.items[i].vector for i in rows]))
            self.tables.add(
                chain, (recall_row(outcomes[i].episode, prepared.facts[i]) for i in rows)
            )

    async def write_with(
        self,
        prepared: PreparedBatch,
        then: Callable[[StoreWriter, list[AppendOutcome]], T],
        *,
        deadline: float | None = None,
    ) -> tuple[list[AppendOutcome], T]:
        """Commits the items and whatever `then` writes beside them (a file version, a belief)
        in ONE transaction, on the writer thread; `then` sees the outcomes, so it can refer to
        the new episodes' ids. Caches are updated after the commit."""
        if deadline is not None and asyncio.get_running_loop().time() > deadline:
            raise DeadlineExceeded("the deadline passed before the write; nothing was written")

        def commit() -> tuple[list[AppendOutcome], T]:
            with self.store.writing() as w:
                outcomes = w.append(
                    prepared.items, model_id=self.embedder.model_id, recorded_at_us=now_us()
                )
                result = then(w, outcomes)
            self._index_inserted(prepared, outcomes)
            return outcomes, result

        return await self._run(self._writer, commit)

    async def in_transaction(self, fn: Callable[[StoreWriter], T]) -> T:
        """Runs `fn` in one write transaction on the writer thread (writes without episodes)."""

        def commit() -> T:
            with self.store.writing() as w:
                return fn(w)

        return await self._run(self._writer, commit)

    async def read(self, fn: Callable[[], T]) -> T:
        """Runs a blocking read on the reader pool."""
        return await self._run(self._readers, fn)

    async def on_embed_thread(self, fn: Callable[[], T]) -> T:
        """Runs embedding-heavy work (file passages, concept names) on the embed pool."""
        return await self._run(self._embedders, fn)

    async def append(self, episode: NewEpisode, *, deadline: float | None = None) -> AppendOutcome:
        prepared = await self.embed([episode])
        (outcome,) = await self.write(prepared, deadline=deadline)
        return outcome

    async def annotate_shown_memories(
        self, chain: ChainKey, answer_id: int, block_id: str, memory_ids: list[int]
    ) -> tuple[int, dict[int, StoredEpisode]]:
        """Saves which block and memories were shown for the turn an answer closes (R7.2).
        Returns the annotation's id and the episodes read to check the call: the answer and
        every memory, by id."""
        wanted = [answer_id, *memory_ids]
        found = await self._run(
            self._readers, functools.partial(self.store.episodes_by_id, chain, wanted)
        )
        answer = found.get(answer_id)
        if answer is None:
            raise NotFound(f"answer_episode_id: episode {answer_id} is not in this chain")
        if answer.kind is not Kind.ANSWER:
            raise InvalidArgument(
                "answer_episode_id", f"episode {answer_id} is a {answer.kind}, not an answer"
            )
        missing = [i for i in memory_ids if i not in found]
        if missing:
            raise NotFound(f"memory_ids: not in this chain: {missing}")
        body = json.dumps({"block_id": block_id, "memory_ids": memory_ids})
        annotation_id = await self._run(
            self._writer,
            functools.partial(
                self.store.annotate, chain, answer_id, SHOWN_MEMORIES, body, created_at_us=now_us()
            ),
        )
        return annotation_id, found

    # -- reads ---------------------------------------------------------------------------------

    async def list_episodes(
        self,
        chain: ChainKey,
        *,
        occurred_from_us: int | None,
        occurred_to_us: int | None,
        after: tuple[int, int] | None,
        limit: int,
    ) -> list[StoredEpisode]:
        return await self._run(
            self._readers,
            functools.partial(
                self.store.list_episodes,
                chain,
                occurred_from_us=occurred_from_us,
                occurred_to_us=occurred_to_us,
                after=after,
                limit=limit,
            ),
        )

    async def verify(
        self, chain: ChainKey, checkpoint: SignedCheckpoint | None = None
    ) -> ChainReport:
        stop_at = checkpoint.length if checkpoint is not None else None

        def walk() -> Verification:
            return verify_chain(self.store.iter_chain(chain), stop_at=stop_at)

        verification = await self._run(self._readers, walk)
        status = None
        if checkpoint is not None:
            status = self._checkpoint_status(chain, checkpoint, verification)
        return ChainReport(verification, status)

    def _checkpoint_status(
        self, chain: ChainKey, checkpoint: SignedCheckpoint, verification: Verification
    ) -> CheckpointStatus:
        if not self.key.is_authentic(checkpoint, chain):
            return CheckpointStatus.BAD_SIGNATURE
        if verification.length < checkpoint.length:
            return CheckpointStatus.TRUNCATED
        if verification.hash_at_stop != checkpoint.head_hash:
            return CheckpointStatus.REWRITTEN
        return CheckpointStatus.HOLDS

    async def checkpoint(self, chain: ChainKey) -> SignedCheckpoint:
        """Signs the chain head after verifying the whole chain: a broken chain is never signed."""
        report = await self.verify(chain)
        found = report.verification.first_break
        if found is not None:
            raise FailedPrecondition(
                f"the chain is broken at seq {found.seq} ({found.reason}); refusing to sign it"
            )
        v = report.verification
        return self.key.sign(chain, v.length, v.head_hash, now_us())
