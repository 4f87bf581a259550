"""A request's budget for CPU work: its caller's deadline, the server's own cap on one request's
work, and whether the call was cancelled, checked between units of work (a page, a sentence, a
batch of passages) so that work nobody waits for stops instead of grinding on.

A thread cannot be interrupted from outside; the work itself has to look. Each check costs a
clock read, so a loop may check at every unit. The use case that hands the work to a pool
creates the budget and cancels it when the call goes away (`tutor_memory.app.executors`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from tutor_memory.domain.errors import DeadlineExceeded, ResourceExhausted
from tutor_memory.domain.limits import TEXT_WORK_SECONDS

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class BudgetTerms:
    """A budget's limits as plain values, to carry it to another process: the monotonic clock is
    the system's, so the same deadline and cap hold there. Cancellation does not travel; the
    process that holds the original stops the other (app/file_reading.py)."""

    what: str
    deadline: float | None
    cap_seconds: float | None
    cap_at: float | None


class WorkBudget:
    """How long one request's work may go on (see the module docstring).

    `deadline` is the caller's, `cap_seconds` the server's own limit from the moment the budget is
    made; both on the `clock` (monotonic seconds, as the event loop's time). `what` names the work
    in the error a spent budget raises: "content: reading the file".
    """

    __slots__ = ("_cap_at", "_cap_seconds", "_clock", "_deadline", "_what", "cancelled")

    def __init__(
        self,
        what: str,
        *,
        deadline: float | None = None,
        cap_seconds: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._what = what
        self._deadline = deadline
        self._cap_seconds = cap_seconds
        self._clock = clock
        self._cap_at = None if cap_seconds is None else clock() + cap_seconds
        # Set from another thread (the event loop's) when the call is cancelled; a plain flag
        # suffices, since the worker only reads it.
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True

    def terms(self) -> BudgetTerms:
        """This budget's limits, for the same work in another process (`from_terms`)."""
        return BudgetTerms(self._what, self._deadline, self._cap_seconds, self._cap_at)

    @classmethod
    def from_terms(cls, terms: BudgetTerms) -> WorkBudget:
        """A budget with the limits of `terms`: the cap runs out when the original's does, not
        `cap_seconds` from now."""
        budget = cls(terms.what, deadline=terms.deadline)
        budget._cap_seconds, budget._cap_at = terms.cap_seconds, terms.cap_at
        return budget

    def check(self) -> None:
        """Raise if the work should stop: DEADLINE_EXCEEDED when the call was cancelled or its
        deadline passed, RESOURCE_EXHAUSTED when the server's cap on one request was spent."""
        if self.cancelled:
            raise DeadlineExceeded(f"{self._what}: the call was cancelled; its work was stopped")
        if self._deadline is None and self._cap_at is None:
            return
        now = self._clock()
        if self._deadline is not None and now > self._deadline:
            raise DeadlineExceeded(
                f"{self._what}: the call's deadline passed; its work was stopped and nothing "
                "was stored"
            )
        if self._cap_at is not None and now > self._cap_at:
            raise ResourceExhausted(
                f"{self._what}: needs more than {self._cap_seconds:g} s of work, the most one "
                "request may take; nothing was stored (send a smaller input)"
            )

    def each(self, items: Iterable[T]) -> Iterator[T]:
        """`items`, with the budget checked before each one (a loop over sentences, pages)."""
        for item in items:
            self.check()
            yield item


def text_work_budget(what: str, deadline: float | None) -> WorkBudget:
    """The budget of one request's text work (detectors, topic routing, grounding): the caller's
    `deadline` (monotonic seconds) and the server's TEXT_WORK_SECONDS. `what` names the field and
    the work in the error a spent budget raises ("text: looking for a teaching phrase")."""
    return WorkBudget(what, deadline=deadline, cap_seconds=TEXT_WORK_SECONDS)


def unlimited() -> WorkBudget:
    """A budget that never runs out (offline tools, tests of the logic alone)."""
    return WorkBudget("work")
