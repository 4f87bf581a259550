"""The one writer thread, with two lanes: what a caller waits on (an append, a belief, a file)
goes first; bulk work (an import's chunks, the embedding queue's vectors) takes the thread only
when no such write waits.

SQLite allows one writer, and one thread keeps each chain's links in the order writes were made,
so every write runs on this thread. A FIFO put an AppendEpisode behind every chunk an import had
queued (a second or more on a busy machine); with two lanes it waits at most for the one bulk job
already running, and a long bulk job gives way between its transactions (`give_way`).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

_Job = tuple[Future[Any], Callable[[], Any]]


class WriterThread:
    """One thread serving two lanes: `urgent` and `bulk`, each an Executor."""

    def __init__(self, name: str = "writer") -> None:
        self._lanes: tuple[deque[_Job], deque[_Job]] = (deque(), deque())
        self._cond = threading.Condition()
        self._closed = False
        self.urgent: Executor = _Lane(self, 0)
        self.bulk: Executor = _Lane(self, 1)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _submit(self, lane: int, fn: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        with self._cond:
            if self._closed:
                raise RuntimeError("cannot schedule new writes after shutdown")
            self._lanes[lane].append((future, fn))
            self._cond.notify()
        return future

    def _next(self) -> _Job | None:
        with self._cond:
            while True:
                for lane in self._lanes:
                    if lane:
                        return lane.popleft()
                if self._closed:
                    return None
                self._cond.wait()

    def _run(self) -> None:
        while (job := self._next()) is not None:
            _execute(job)

    def urgent_waiting(self) -> bool:
        """Whether a write a caller waits on is queued."""
        with self._cond:
            return bool(self._lanes[0])

    def give_way(self) -> None:
        """Runs the urgent lane's queued jobs now, on this writer's thread, from inside a bulk
        job that is between two of its transactions: a caller's write then waits for one part
        of a long bulk job, not for all of it. Only the writer's own thread may call it (it is
        the one thread that writes)."""
        if threading.current_thread() is not self._thread:
            raise RuntimeError("give_way() runs only on the writer thread, inside a bulk job")
        while True:
            with self._cond:
                if not self._lanes[0]:
                    return
                job = self._lanes[0].popleft()
            _execute(job)

    def shutdown(self) -> None:
        """Runs what both lanes hold, then stops the thread."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        if threading.current_thread() is not self._thread:
            self._thread.join()


def _execute(job: _Job) -> None:
    future, fn = job
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn()
    except BaseException as exc:
        future.set_exception(exc)
    else:
        future.set_result(result)


class _Lane(Executor):
    def __init__(self, writer: WriterThread, lane: int) -> None:
        self._writer = writer
        self._lane = lane

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        return self._writer._submit(self._lane, lambda: fn(*args, **kwargs))

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._writer.shutdown()
