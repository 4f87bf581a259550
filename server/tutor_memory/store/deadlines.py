"""The deadline of the call a store operation serves, for the waits inside the store (a connection
from a pool): the api sets it when a call starts (`api.interceptors`), and the thread pools carry
it to the thread that runs the operation (`app.executors`). Monotonic clock seconds; None when
the caller gave no deadline."""

from __future__ import annotations

import time
from contextvars import ContextVar

CALL_DEADLINE: ContextVar[float | None] = ContextVar("call_deadline", default=None)

# Seconds kept before the caller's deadline when a wait inside the store gives up, so that the
# store's own status (RESOURCE_EXHAUSTED, UNAVAILABLE) reaches the caller before its deadline
# does: a pool's wait ends up to ~60 ms late on a loaded 2-core machine, and the reply still has
# to travel.
ANSWER_MARGIN_SECONDS = 0.2


def seconds_left(default: float) -> float:
    """How long a wait inside the store may last for this call: up to just before its deadline,
    or `default` for a call without one."""
    deadline = CALL_DEADLINE.get()
    if deadline is None:
        return default
    return max(0.0, deadline - time.monotonic() - ANSWER_MARGIN_SECONDS)
