"""Keeping a server's in-memory caches of a chain (vector index, recall tables, and everything the
change hook drops) in step with a store that other server processes write too.

Every episode reaches the caches through here: the ones this process commits (`add_committed`,
from the ledger right after the commit) and the ones another process committed (`refresh`, before
a read that uses the caches). A chain's episodes are added in seq order, each once, under the
chain's lock, so the two paths never race: whichever comes first adds an episode, and the other
skips it.

`refresh` costs one indexed lookup of the chain's head in the store (`Store.chain_head`); only
when the head moved does it read the missing episodes and their stored embeddings, add them, and
report what they changed through the change hook (`app.changes`), as their writer did on its own
node, so the derived caches (map, beliefs, passages) that depend on it drop the chain. It is on
for PostgreSQL (several nodes share one database) and can be turned on for a SQLite file that
several processes write (`--sync`); a lone process needs none of it, since every write it sees is
its own.

Read-your-writes across nodes: an episode acknowledged by node A was committed before A answered,
so the head that node B reads before its next block includes it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt

from tutor_memory.app.changes import Change, ChangeHub
from tutor_memory.domain.episodes import ChainKey, Kind, StoredEpisode
from tutor_memory.domain.recall.facts import RecallFacts, recall_facts, recall_row
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.index.recall_tables import RecallTables
from tutor_memory.index.vectors import VectorIndex
from tutor_memory.store.protocols import ChangeReads

# What episodes of each kind written elsewhere may have changed besides the episodes: the same
# changes their writer reported (app/ledger.py and the use cases' `also`). A check may confirm a
# concept on the map; a file episode records a file version added or removed. Beliefs changed
# with them, or without any episode, show in the chain head's beliefs mark.
CHANGES_BY_KIND: dict[Kind, Change] = {
    Kind.CHECK: Change.CHECKS | Change.CONFIRMATIONS,
    Kind.TAUGHT: Change.TEACHING,
    Kind.FILE: Change.FILES,
}


def changes_of(episodes: Sequence[StoredEpisode]) -> Change:
    """What a run of new episodes changed, for the caches derived from the chain."""
    what = Change.EPISODES
    for ep in episodes:
        what |= CHANGES_BY_KIND.get(ep.kind, Change.NOTHING)
    return what


class ChainSync:
    """Thread-safe: one lock per chain guards what the caches hold of it."""

    def __init__(
        self,
        store: ChangeReads,
        vectors: VectorIndex,
        tables: RecallTables,
        counter: TokenCounter,
        changes: ChangeHub,
        model_id: str,
        *,
        check_store: bool,
    ) -> None:
        self._store = store
        self._vectors = vectors
        self._tables = tables
        self._counter = counter
        self._changes = changes
        self._model_id = model_id
        # Whether other processes write the store: then reads check the chain's head first.
        self.check_store = check_store
        # The last seq the caches hold of each chain, and the beliefs mark last seen.
        self._held: dict[ChainKey, int] = {}
        self._beliefs: dict[ChainKey, tuple[int, int]] = {}
        self._locks: dict[ChainKey, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        # Chains already brought up to date by the read running on this thread (see `fresh`).
        self._local = threading.local()

    def _lock_of(self, chain: ChainKey) -> threading.Lock:
        lock = self._locks.get(chain)
        if lock is None:
            with self._locks_lock:
                lock = self._locks.setdefault(chain, threading.Lock())
        return lock

    # -- this process's own writes -------------------------------------------------------------

    def loaded(self, chain: ChainKey, seq: int) -> None:
        """The caches were filled with the chain up to `seq` (at start, before serving)."""
        with self._lock_of(chain):
            self._held[chain] = max(seq, self._held.get(chain, 0))

    def add_committed(
        self,
        chain: ChainKey,
        episodes: Sequence[StoredEpisode],
        vectors: npt.NDArray[np.float32],
        facts: Sequence[RecallFacts],
    ) -> None:
        """Adds episodes this process just committed to one chain (in seq order, with their
        embeddings and recall facts), skipping any a refresh added first. If another process
        appended to the chain since the caches last saw it, its episodes are read and added
        first, so the caches always hold a prefix of the chain."""
        what = Change.NOTHING
        with self._lock_of(chain):
            held = self._held.get(chain, 0)
            if episodes and episodes[0].seq > held + 1:
                # Reads this commit's episodes too (they are in the store), in seq order.
                what = self._catch_up(chain, held)
            else:
                keep = [i for i, ep in enumerate(episodes) if ep.seq > held]
                if keep:
                    ids = np.asarray([episodes[i].episode_id for i in keep], dtype=np.int64)
                    self._vectors.add(chain, ids, np.stack([vectors[i] for i in keep]))
                    self._tables.add(chain, (recall_row(episodes[i], facts[i]) for i in keep))
                    self._held[chain] = episodes[keep[-1]].seq
        if what:
            self._changes.changed(chain, what)

    # -- other processes' writes ---------------------------------------------------------------

    def refresh(self, chain: ChainKey) -> None:
        """Brings the caches of `chain` up to the store's head (a no-op unless `check_store`, and
        inside `fresh` for the same chain)."""
        if not self.check_store or chain in getattr(self._local, "chains", ()):
            return
        head = self._store.chain_head(chain)
        what = Change.NOTHING
        with self._lock_of(chain):
            if head.seq > self._held.get(chain, 0):
                what |= self._catch_up(chain, self._held.get(chain, 0))
            if self._beliefs.get(chain) != head.beliefs:
                self._beliefs[chain] = head.beliefs
                what |= Change.BELIEFS
        if what:
            self._changes.changed(chain, what)

    @contextmanager
    def fresh(self, chain: ChainKey) -> Iterator[None]:
        """Refreshes the chain once, then runs the block with further refreshes of it skipped on
        this thread: one read (a block) checks the head once, however many caches it reads."""
        self.refresh(chain)
        chains: set[ChainKey] | None = getattr(self._local, "chains", None)
        if chains is None:
            chains = self._local.chains = set()
        added = chain not in chains
        chains.add(chain)
        try:
            yield
        finally:
            if added:
                chains.discard(chain)

    def _catch_up(self, chain: ChainKey, held: int) -> Change:
        """Adds the chain's stored episodes after `held` (the chain's lock is held); returns what
        they changed."""
        new = self._store.episodes_since(chain, held)
        if not new:
            return Change.NOTHING
        ids, vectors = self._store.vectors_of(chain, self._model_id, [e.episode_id for e in new])
        if len(ids):
            self._vectors.add(chain, ids, vectors)
        facts = recall_facts(new, self._counter)
        self._tables.add(chain, (recall_row(e, f) for e, f in zip(new, facts, strict=True)))
        self._held[chain] = new[-1].seq
        return changes_of(new)
