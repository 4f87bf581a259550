"""Keeping a server's in-memory caches of a chain (the held chains' vector indexes and recall
tables of app/resident.py, and everything the change hook drops) in step with a store that other
server processes write too.

Every episode reaches the held chains through here: the ones this process commits
(`add_committed`, from the ledger right after the commit) and the ones another process committed
(`refresh`, before a read that uses the caches). A chain's episodes are passed on in seq order
under the chain's lock, and the held chain keeps each episode once (app/resident.py skips ids it
holds), so the two paths never race.

`refresh` costs one indexed lookup of the chain's head in the store (`Store.chain_head`); only
when the head moved does it read the missing episodes, hand them (with their stored embeddings) to
the held chain if this node holds it, and report what they changed through the change hook
(`app.changes`), as their writer did on its own node, so the derived caches (map, beliefs,
passages) that depend on it drop the chain. A chain this node has not read since it started is
not caught up but adopted at the head: nothing of it is cached yet, and its first load reads the
store (app/resident.py calls `before_load` first, so writes of other nodes during the load are
caught up after it).

Another node embeds its imports after acknowledging them (app/embedding_queue.py); no head moves
when it stores those vectors, so a refresh of a held chain with episodes still lacking a vector
looks their vectors up in the store, at most once every `VECTOR_RECHECK_SECONDS` per chain.

A node follows at most `CHAINS_FOLLOWED` chains besides those its memory holds (the least
recently read leave first), so a long-running node of a large deployment does not keep every
chain it ever read. A chain that leaves has its derived caches dropped at that moment (what it
may change unseen from then on, `UNSEEN`), so its next read adopts the head with nothing stale
cached; the held chains (app/resident.py) never leave, since their tables must be caught up from
the seq they hold.

It is on for PostgreSQL (several nodes share one database) and can be turned on for a SQLite file
that several processes write (`--sync`); a lone process needs none of it, since every write it
sees is its own.

Read-your-writes across nodes: an episode acknowledged by node A was committed before A answered,
so the head that node B reads before its next block includes it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tutor_memory.app.changes import Change, ChangeHub
from tutor_memory.app.resident import ResidentChains
from tutor_memory.domain.episodes import ChainKey, Kind, StoredEpisode
from tutor_memory.domain.recall.facts import RecallFacts, recall_facts, recall_row
from tutor_memory.domain.tokens import TokenCounter
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
# How often a refresh of a held chain whose episodes still lack a vector looks those vectors up
# (another node's embedding queue stores them without moving the head): at most one lookup a
# second per chain keeps the cost off the blocks, and a second is well under the queue's own lag.
VECTOR_RECHECK_SECONDS = 1.0
# The most episode ids one such lookup asks for (the oldest first); the rest wait for the next.
VECTOR_RECHECK_IDS = 4_096
# Chains a node follows besides the ones its memory holds: about 256 bytes each besides the chain
# key (65,536 took 16.0 MiB, measured in-process with tracemalloc), so 16 MiB at this bound.
# A chain that left costs its next read a reload of its derived caches (map, beliefs, passages).
CHAINS_FOLLOWED = 65_536
# What a chain no longer followed may have changed unseen: everything a derived cache depends
# on but an erasure (which the head reports whether followed or not).
UNSEEN = (
    Change.EPISODES
    | Change.CHECKS
    | Change.CONFIRMATIONS
    | Change.TEACHING
    | Change.BELIEFS
    | Change.FILES
)


def changes_of(episodes: Sequence[StoredEpisode]) -> Change:
    """What a run of new episodes changed, for the caches derived from the chain."""
    what = Change.EPISODES
    for ep in episodes:
        what |= CHANGES_BY_KIND.get(ep.kind, Change.NOTHING)
    return what


@dataclass(slots=True, eq=False)
class _Followed:
    """What this node knows of one chain; its lock guards that and what the caches hold of it."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    # The last seq this node's caches account for (None: the chain not read here yet).
    held: int | None = None
    # The chain head's beliefs mark last seen.
    beliefs: tuple[int, int] | None = None
    # When the held chain's missing vectors were last looked up (monotonic seconds).
    vectors_checked: float = 0.0
    # Left (chosen to leave, its lock is held until then): a thread that waited for the lock of
    # a record that left starts over with a new one.
    gone: bool = False


class ChainSync:
    """Thread-safe: one lock per chain guards what the caches hold of it."""

    def __init__(
        self,
        store: ChangeReads,
        resident: ResidentChains,
        counter: TokenCounter,
        changes: ChangeHub,
        model_id: str,
        *,
        check_store: bool,
        chains_followed: int = CHAINS_FOLLOWED,
    ) -> None:
        self._store = store
        self._resident = resident
        self._counter = counter
        self._changes = changes
        self._model_id = model_id
        # Whether other processes write the store: then reads check the chain's head first.
        self.check_store = check_store
        # The chains followed, least recently read first.
        self._followed: OrderedDict[ChainKey, _Followed] = OrderedDict()
        self._followed_lock = threading.Lock()
        self._size = chains_followed
        # Chains that left to stay within `chains_followed` since the server started.
        self.unfollowed = 0
        # Chains already brought up to date by the read running on this thread (see `fresh`).
        self._local = threading.local()
        if check_store:
            resident.before_load = self.before_load

    def followed(self) -> int:
        """Chains this node follows now."""
        with self._followed_lock:
            return len(self._followed)

    @contextmanager
    def _following(self, chain: ChainKey) -> Iterator[_Followed]:
        """The chain's record, its lock held (a new record if the chain is not followed)."""
        while True:
            with self._followed_lock:
                record = self._followed.get(chain)
                if record is None:
                    record = self._followed[chain] = _Followed()
                    leaving = self._choose_leaving(chain)
                else:
                    self._followed.move_to_end(chain)
                    leaving = []
            self._unfollow(leaving)
            record.lock.acquire()
            if not record.gone:
                break
            record.lock.release()
        try:
            yield record
        finally:
            record.lock.release()

    def _choose_leaving(self, new: ChainKey) -> list[tuple[ChainKey, _Followed]]:
        """The least recently read chains that leave to keep the bound (`_followed_lock` is
        held): neither one in use (its lock taken) nor one the memory holds. Their locks are
        taken here and released by `_unfollow`."""
        excess = len(self._followed) - self._size
        leaving: list[tuple[ChainKey, _Followed]] = []
        kept: list[ChainKey] = []
        for chain, record in self._followed.items():
            if len(leaving) >= excess:
                break
            # A record whose lock is taken is in use, or chosen already by another thread.
            if chain == new or not record.lock.acquire(blocking=False):
                continue
            if self._resident.holds(chain):
                record.lock.release()
                kept.append(chain)
                continue
            leaving.append((chain, record))
        # Held chains go to the back, so the next choice does not walk past them again.
        for chain in kept:
            self._followed.move_to_end(chain)
        return leaving

    def _unfollow(self, leaving: list[tuple[ChainKey, _Followed]]) -> None:
        """Drops the derived caches of chains that leave, then the chains' records. A read of
        such a chain waits on its lock meanwhile, so none reads a stale cache after its head
        is adopted anew."""
        for chain, record in leaving:
            try:
                self._changes.changed(chain, UNSEEN)
            finally:
                with self._followed_lock:
                    if self._followed.get(chain) is record:
                        del self._followed[chain]
                    self.unfollowed += 1
                record.gone = True
                record.lock.release()

    # -- this process's own writes -------------------------------------------------------------

    def add_committed(
        self,
        chain: ChainKey,
        episodes: Sequence[StoredEpisode],
        facts: Sequence[RecallFacts],
        vector_ids: npt.NDArray[np.int64],
        vectors: npt.NDArray[np.float32],
    ) -> None:
        """Adds episodes this process just committed to one chain (in seq order, with their
        recall facts, and the embeddings of those that have one). If another process appended
        to the chain since this node last saw it, its episodes are read and added first, so a
        held chain always holds a prefix of the chain."""
        rows = [recall_row(ep, f) for ep, f in zip(episodes, facts, strict=True)]
        if not self.check_store or not episodes:
            self._resident.add_committed(chain, rows, vector_ids, vectors)
            return
        what = Change.NOTHING
        with self._following(chain) as record:
            held = record.held
            if held is not None and episodes[0].seq > held + 1:
                # Reads this commit's episodes too (they are in the store), in seq order; the
                # ones not embedded yet reach the index from the embedding queue.
                what = self._catch_up(chain, record, held)
            else:
                self._resident.add_committed(chain, rows, vector_ids, vectors)
                record.held = max(held or 0, episodes[-1].seq)
        if what:
            self._changes.changed(chain, what)

    # -- other processes' writes ---------------------------------------------------------------

    def before_load(self, chain: ChainKey) -> None:
        """Called before a chain is loaded from the store: a chain never read here is adopted at
        the head read now, so what other nodes commit during the load is caught up after it."""
        with self._following(chain) as record:
            if record.held is not None:
                return
        head = self._store.chain_head(chain)
        with self._following(chain) as record:
            if record.held is None:
                record.held = head.seq

    def refresh(self, chain: ChainKey) -> None:
        """Brings the caches of `chain` up to the store's head (a no-op unless `check_store`, and
        inside `fresh` for the same chain)."""
        if not self.check_store or chain in getattr(self._local, "chains", ()):
            return
        head = self._store.chain_head(chain)
        if head.erased:
            self._drop_erased(chain)
            return
        what = Change.NOTHING
        with self._following(chain) as record:
            if record.held is None:
                # Nothing of the chain is cached here yet: no cache to catch up or to drop.
                record.held = head.seq
                record.beliefs = head.beliefs
            else:
                if head.seq > record.held:
                    what |= self._catch_up(chain, record, record.held)
                if record.beliefs != head.beliefs:
                    record.beliefs = head.beliefs
                    what |= Change.BELIEFS
            self._recheck_vectors(chain, record)
        if what:
            self._changes.changed(chain, what)

    def _drop_erased(self, chain: ChainKey) -> None:
        """The chain's student was erased (by another process, or by this one, whose Eraser
        dropped the caches already): drops whatever the caches still hold of it, once (the held
        table, index and snapshot through ResidentChains.forget, subscribed to the change)."""
        with self._following(chain) as record:
            held = record.held is not None or self._resident.holds(chain)
            record.held = record.beliefs = None
        if held:
            self._changes.changed(chain, Change.ERASED)

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

    def _catch_up(self, chain: ChainKey, record: _Followed, held: int) -> Change:
        """Passes the chain's stored episodes after `held` on to the held chain, if this node
        holds it (the record's lock is held); returns what they changed."""
        new = self._store.episodes_since(chain, held)
        if not new:
            return Change.NOTHING
        if self._resident.holds(chain):
            ids, vectors = self._store.vectors_of(
                chain, self._model_id, [e.episode_id for e in new]
            )
            facts = recall_facts(new, self._counter)
            rows = [recall_row(e, f) for e, f in zip(new, facts, strict=True)]
            self._resident.add_committed(chain, rows, ids, vectors)
        record.held = new[-1].seq
        return changes_of(new)

    def _recheck_vectors(self, chain: ChainKey, record: _Followed) -> None:
        """Looks up stored vectors of the held chain's episodes that lack one (the record's lock
        is held), at most once every `VECTOR_RECHECK_SECONDS`."""
        now = time.monotonic()
        if now - record.vectors_checked < VECTOR_RECHECK_SECONDS:
            return
        missing = self._resident.missing_of(chain, VECTOR_RECHECK_IDS)
        if not missing:
            return
        record.vectors_checked = now
        ids, vectors = self._store.vectors_of(chain, self._model_id, missing)
        if len(ids):
            self._resident.add_vectors(chain, ids, vectors)
