"""Time as the ledger stores it: integer microseconds since the Unix epoch, UTC."""

from __future__ import annotations

import time
from datetime import UTC, datetime

MICROS_PER_SECOND = 1_000_000


def now_us() -> int:
    return time.time_ns() // 1_000


def us_to_iso(us: int) -> str:
    return datetime.fromtimestamp(us / MICROS_PER_SECOND, tz=UTC).isoformat(timespec="microseconds")
