"""Conversions every area shares: timestamps, chain identity, a caller's "when"."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import (
    MAX_TIME_US,
    MIN_TIME_US,
    check_identifier,
    check_not_future,
    check_time,
)

# The range of Timestamp.seconds the documented range allows (checked before multiplying, so an
# absurd value never becomes a huge integer).
MIN_TIMESTAMP_SECONDS = MIN_TIME_US // 1_000_000
MAX_TIMESTAMP_SECONDS = MAX_TIME_US // 1_000_000


def timestamp_to_us(field: str, ts: Timestamp) -> int:
    """A caller's timestamp in µs, inside the documented range (1970 to 9999)."""
    if not 0 <= ts.nanos < 1_000_000_000:
        raise InvalidArgument(field, "not a valid timestamp (nanos must be 0 to 999999999)")
    if not MIN_TIMESTAMP_SECONDS <= ts.seconds <= MAX_TIMESTAMP_SECONDS:
        raise InvalidArgument(field, "outside 1970-01-01 to 9999-12-31")
    return check_time(field, ts.seconds * 1_000_000 + ts.nanos // 1_000)


def us_to_timestamp(us: int) -> Timestamp:
    ts = Timestamp()
    set_timestamp(ts, us)
    return ts


def set_timestamp(ts: Timestamp, us: int) -> None:
    """Sets `ts` (a field of a message being built) to the instant `us`, in place."""
    seconds, micros = divmod(us, 1_000_000)
    ts.seconds = seconds
    ts.nanos = micros * 1_000


def chain_of(tenant: str, student_id: str, subject_id: str) -> ChainKey:
    check_identifier("student_id", student_id)
    check_identifier("subject_id", subject_id)
    return ChainKey(tenant, student_id, subject_id)


def occurred_at(field: str, has: bool, ts: Timestamp) -> tuple[int, bool]:
    """(occurred_at in µs, whether the caller gave it); unset means now. The same limits as an
    appended episode's: not before 1970, not in the future."""
    now = now_us()
    if not has:
        return now, False
    return check_not_future(field, timestamp_to_us(field, ts), now), True
