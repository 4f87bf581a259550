"""The rows a block shows, kept once read: a student's consecutive turns show many of the same
memories (the recent conversation, the topic being worked on), and reading a row from the store
costs a lookup, the opening of its sealed words (AES-GCM, domain/sealing.py) and a JSON decode:
with the dates' formatting, most of a block's fetch stage (in process at 10k, bench_block's mix
on a slow host: fetch median 3.0-3.6 ms with every row read, 1.1 ms with them kept).

A row (kind, summary, date, cited files) never changes once written: the ledger is append-only,
so a kept row is never stale. The one exception is erasure: a student's words must not outlive
their data key in memory, so `forget` drops every kept row (the change hook calls it for an erased
chain, on this node and, through the head check of app/sync.py, on the others), and a read that
raced an erasure does not keep what it read.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.records import MemoryRow
from tutor_memory.store.lru import LruCache
from tutor_memory.store.protocols import EpisodeReads

# Rows kept, over all chains: enough for the memories the recent turns of several hundred students
# showed (a block shows up to a few dozen). 13.4 MiB for rows with 120-character summaries (about
# 430 bytes a row, measured with tracemalloc); summaries are at most 500 characters
# (MAX_SUMMARY_CHARS), so under 80 MB even if every one were at that limit in a 4-byte script.
SHOWN_ROWS_KEPT = 32_768


class ShownRows:
    """`EpisodeReads.memory_rows`, with the rows read before kept (least recently used leave)."""

    def __init__(self, episodes: EpisodeReads, size: int = SHOWN_ROWS_KEPT) -> None:
        self._episodes = episodes
        # The most rows kept.
        self.limit = size
        self._kept: LruCache[tuple[ChainKey, int], MemoryRow] = LruCache(size)
        # Bumped by every `forget`: a read begun before it keeps nothing.
        self._generation = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def memory_rows(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, MemoryRow]:
        """The rows of `ids` in `chain` (ids not in the chain are left out, as the store does)."""
        with self._lock:
            generation = self._generation
        found = self._kept.get_many([(chain, i) for i in ids])
        rows = {i: row for i, row in zip(ids, found, strict=True) if row is not None}
        missing = [i for i, row in zip(ids, found, strict=True) if row is None]
        if missing:
            read = self._episodes.memory_rows(chain, missing)
            rows.update(read)
            with self._lock:
                if generation == self._generation:
                    self._kept.put_many([((chain, i), row) for i, row in read.items()])
        return rows

    def forget(self, chain: ChainKey) -> None:
        """A student was erased: every kept row goes (the rows are not indexed by chain, and an
        erasure is rare enough that the others are read again)."""
        with self._lock:
            self._generation += 1
            self._kept.clear()
