"""Whether a process of the machine has ended, for tests of the server's worker processes."""

from __future__ import annotations

import os
import time

# How often `ended` looks again.
POLL_SECONDS = 0.05


def ended(pid: int, within: float) -> bool:
    """True once process `pid` no longer exists; False if it still runs after `within` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(POLL_SECONDS)
