"""The work budget (issue 12): the caller's deadline, the server's cap and cancellation each stop
work with their own status."""

from __future__ import annotations

import pytest

from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.errors import DeadlineExceeded, ResourceExhausted


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_work_goes_on_until_the_deadline_then_stops_with_deadline_exceeded() -> None:
    clock = Clock()
    budget = WorkBudget("content: reading the file", deadline=105.0, clock=clock)
    clock.now = 105.0
    budget.check()
    clock.now = 105.1
    with pytest.raises(DeadlineExceeded, match=r"^content: reading the file: the call's deadline"):
        budget.check()


def test_the_servers_cap_stops_work_with_resource_exhausted_naming_the_cap() -> None:
    clock = Clock()
    budget = WorkBudget("answer: tracing it", cap_seconds=10, clock=clock)
    clock.now = 110.0
    budget.check()
    clock.now = 110.5
    with pytest.raises(ResourceExhausted, match=r"more than 10 s of work"):
        budget.check()


def test_the_earlier_of_deadline_and_cap_stops_the_work() -> None:
    clock = Clock()
    budget = WorkBudget("w", deadline=200.0, cap_seconds=10, clock=clock)
    clock.now = 111.0
    with pytest.raises(ResourceExhausted):
        budget.check()


def test_a_cancelled_budget_stops_at_once_whatever_the_clock() -> None:
    budget = WorkBudget("w", deadline=None, cap_seconds=None)
    budget.check()
    budget.cancel()
    with pytest.raises(DeadlineExceeded, match="cancelled"):
        budget.check()


def test_an_unlimited_budget_never_stops() -> None:
    unlimited().check()
