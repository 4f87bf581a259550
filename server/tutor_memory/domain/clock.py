"""Time as the ledger stores it: integer microseconds since the Unix epoch, UTC."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def now_us() -> int:
    return time.time_ns() // 1_000


def us_to_datetime(us: int) -> datetime:
    """A stored time as an aware UTC datetime."""
    return datetime.fromtimestamp(us / 1_000_000, tz=UTC)


def time_zone(name: str) -> ZoneInfo:
    """The IANA time zone `name`; ValueError naming it if there is none. The name is looked up as
    a file of the zone database, so a name too long for a file name (OSError) names none either,
    like an unknown or malformed one."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValueError(
            f"unknown time zone {name!r}: expected an IANA name such as 'Europe/Rome'"
        ) from exc
