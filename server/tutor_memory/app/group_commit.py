"""Group commit: the plain episode writes that wait for the writer thread at the same moment go
through it as one transaction.

Under load the one writer thread was what appends queued behind (bench/bench_load.py, mixed run,
at commit fa59af0: each append's job ran ~9 ms on a GIL shared with the block threads, for ~1 ms
of its own work, and waited a median 350 ms for the jobs ahead of it). The store writes a batch
of episodes with one statement per table, so a group of N appends costs about what one did: N
writes share one BEGIN, one statement per table and one COMMIT (one fsync).

Semantics are those of committing the writes one after another in the order they arrived: a write
is acknowledged only after the transaction that holds it committed; two writes of one client key
in one group are stored once, the second as a duplicate (or a conflict), exactly as in turn. If
the group's transaction fails, nothing of it was written, and each write is then committed alone,
so that one write's failure is never another's.
"""

from __future__ import annotations

import contextvars
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Generic, TypeVar

# Most episodes one group commits: a transaction holds the writer thread, so a group never makes
# the writes behind it wait longer than a whole import chunk would (app/ingest.py, INGEST_CHUNK).
MAX_GROUP_EPISODES = 128

B = TypeVar("B")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class _Waiting(Generic[B, R]):
    batch: B
    size: int
    done: Future[R]
    # The submitting call's context (its deadline: store.deadlines): the group's transaction runs
    # in its first write's, and a write committed alone after a failed group in its own.
    context: contextvars.Context


class GroupCommit(Generic[B, R]):
    """Thread-safe. `commit(batches)` runs one transaction over several batches and returns each
    batch's result (or raises, having written nothing); `after(batches, results)` runs once the
    transaction committed (the caches follow the commit). Both run on `lane`."""

    def __init__(
        self,
        lane: Executor,
        commit: Callable[[Sequence[B]], list[R]],
        after: Callable[[Sequence[B], Sequence[R]], None],
        max_size: int = MAX_GROUP_EPISODES,
    ) -> None:
        self._lane = lane
        self._commit = commit
        self._after = after
        self._max_size = max_size
        self._lock = threading.Lock()
        self._waiting: deque[_Waiting[B, R]] = deque()
        self._scheduled = False

    def submit(self, batch: B, size: int) -> Future[R]:
        """`batch`'s result once it committed; `size` counts its episodes."""
        waiting = _Waiting(batch, size, Future[R](), contextvars.copy_context())
        with self._lock:
            self._waiting.append(waiting)
            schedule = not self._scheduled
            self._scheduled = True
        if schedule:
            self._schedule()
        return waiting.done

    def _schedule(self) -> None:
        try:
            self._lane.submit(self._flush)
        except RuntimeError as exc:
            # The lane stopped (the server is shutting down): what waits would never run.
            self._fail_waiting(exc)

    def _fail_waiting(self, exc: BaseException) -> None:
        with self._lock:
            waiting = list(self._waiting)
            self._waiting.clear()
            self._scheduled = False
        for w in waiting:
            if w.done.set_running_or_notify_cancel():
                w.done.set_exception(exc)

    def waiting(self) -> int:
        """Writes submitted and not yet taken into a transaction."""
        with self._lock:
            return len(self._waiting)

    def _take(self) -> list[_Waiting[B, R]]:
        """The next group: the oldest writes, up to `max_size` episodes (at least one write)."""
        with self._lock:
            group = [self._waiting.popleft()]
            size = group[0].size
            while self._waiting and size + self._waiting[0].size <= self._max_size:
                size += self._waiting[0].size
                group.append(self._waiting.popleft())
            more = bool(self._waiting)
            self._scheduled = more
        if more:
            # What did not fit goes next, behind whatever else the lane already holds.
            self._schedule()
        return group

    def _flush(self) -> None:
        group = self._take()
        live = [w for w in group if w.done.set_running_or_notify_cancel()]
        if not live:
            return
        try:
            results = live[0].context.run(self._commit, [w.batch for w in live])
        except BaseException as exc:
            if len(live) == 1:
                live[0].done.set_exception(exc)
                return
            self._one_by_one(live)
            return
        self._finish(live, results)

    def _one_by_one(self, group: list[_Waiting[B, R]]) -> None:
        """After a failed group: each write in its own transaction, in order."""
        for waiting in group:
            try:
                (result,) = waiting.context.run(self._commit, [waiting.batch])
            except BaseException as exc:
                waiting.done.set_exception(exc)
            else:
                self._finish([waiting], [result])

    def _finish(self, group: list[_Waiting[B, R]], results: Sequence[R]) -> None:
        try:
            self._after([w.batch for w in group], results)
        except BaseException as exc:
            # Committed, but the caches did not follow: the callers hear of it as before grouping
            # (a retry with the same client key is then a duplicate).
            for waiting in group:
                waiting.done.set_exception(exc)
            return
        for waiting, result in zip(group, results, strict=True):
            waiting.done.set_result(result)
