"""The episode ledger as the service sees it: append, batch ingest, list, verify, checkpoint.

Blocking work runs off the event loop: embedding on the embed threads (onnxruntime releases the
GIL), every write on ONE writer thread (SQLite allows one writer; one thread also keeps each
chain's links in order), reads on a small reader pool. A write is acknowledged only after its
transaction committed; the FAISS index is updated after the commit, as a cache.
"""

from __future__ import annotations

import asyncio
import enum
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from tutor_memory.chain import Verification, verify_chain
from tutor_memory.clock import now_us
from tutor_memory.embed import Embedder
from tutor_memory.episodes import ChainKey, NewEpisode, StoredEpisode
from tutor_memory.errors import DeadlineExceeded, FailedPrecondition
from tutor_memory.index import VectorIndex
from tutor_memory.signing import ServerKey, SignedCheckpoint
from tutor_memory.store.base import AppendOutcome, AppendStatus, LedgerStore, PreparedEpisode

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
class ChainReport:
    verification: Verification
    checkpoint_status: CheckpointStatus | None


class Ledger:
    def __init__(
        self, store: LedgerStore, embedder: Embedder, index: VectorIndex, key: ServerKey
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.index = index
        self.key = key
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="ledger-writer")
        self._readers = ThreadPoolExecutor(READER_THREADS, thread_name_prefix="ledger-reader")
        self._embedders = ThreadPoolExecutor(EMBED_THREADS, thread_name_prefix="embed")

    def rebuild_index(self) -> int:
        """Loads the vector cache from the store (at start, before serving)."""
        return self.index.rebuild(self.store, self.embedder.model_id)

    def close(self) -> None:
        for pool in (self._embedders, self._readers, self._writer):
            pool.shutdown(wait=True)
        self.store.close()

    async def _run(self, pool: ThreadPoolExecutor, fn: Callable[[], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(pool, fn)

    # -- writes --------------------------------------------------------------------------------

    async def embed(self, episodes: Sequence[NewEpisode]) -> list[PreparedEpisode]:
        texts = [ep.embedding_text() for ep in episodes]
        vectors = await self._run(self._embedders, functools.partial(self.embedder.embed, texts))
        return [PreparedEpisode(ep, vectors[i]) for i, ep in enumerate(episodes)]

    async def write(
        self, prepared: Sequence[PreparedEpisode], *, deadline: float | None = None
    ) -> list[AppendOutcome]:
        """Commits the items in one transaction, then adds the new vectors to the index.

        `deadline` (event-loop time) is checked before the commit: a call whose caller has given
        up writes nothing, rather than something the caller will never hear about.
        """
        if deadline is not None and asyncio.get_running_loop().time() > deadline:
            raise DeadlineExceeded("the deadline passed before the write; nothing was written")
        outcomes = await self._run(
            self._writer,
            functools.partial(
                self.store.append,
                prepared,
                model_id=self.embedder.model_id,
                recorded_at_us=now_us(),
            ),
        )
        self._index_inserted(prepared, outcomes)
        return outcomes

    def _index_inserted(
        self, prepared: Sequence[PreparedEpisode], outcomes: Sequence[AppendOutcome]
    ) -> None:
        by_chain: dict[ChainKey, tuple[list[int], list[int]]] = {}
        for i, outcome in enumerate(outcomes):
            if outcome.status is AppendStatus.INSERTED:
                ids, rows = by_chain.setdefault(outcome.episode.chain, ([], []))
                ids.append(outcome.episode.episode_id)
                rows.append(i)
        for chain, (ids, rows) in by_chain.items():
            vectors = np.stack([prepared[i].vector for i in rows])
            self.index.add(chain, np.asarray(ids, dtype=np.int64), vectors)

    async def append(self, episode: NewEpisode, *, deadline: float | None = None) -> AppendOutcome:
        prepared = await self.embed([episode])
        (outcome,) = await self.write(prepared, deadline=deadline)
        return outcome

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
