"""Time as the ledger stores it: integer microseconds since the Unix epoch, UTC."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now_us() -> int:
    return time.time_ns() // 1_000


def us_to_datetime(us: int) -> datetime:
    """A stored time as an aware UTC datetime."""
    return datetime.fromtimestamp(us / 1_000_000, tz=UTC)
