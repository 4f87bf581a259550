"""Time as the ledger stores it: integer microseconds since the Unix epoch, UTC."""

from __future__ import annotations

import time


def now_us() -> int:
    return time.time_ns() // 1_000
