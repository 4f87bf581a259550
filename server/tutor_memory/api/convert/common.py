"""Conversions every area shares: timestamps, chain identity, a caller's "when"."""

from __future__ import annotations

from google.protobuf.timestamp_pb2 import Timestamp

from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import ChainKey, check_identifier, check_occurred_at
from tutor_memory.domain.errors import InvalidArgument

# Largest Timestamp.seconds protobuf allows (9999-12-31T23:59:59Z).
MAX_TIMESTAMP_SECONDS = 253_402_300_799


def timestamp_to_us(field: str, ts: Timestamp) -> int:
    if not 0 <= ts.nanos < 1_000_000_000 or abs(ts.seconds) > MAX_TIMESTAMP_SECONDS:
        raise InvalidArgument(field, "not a valid timestamp")
    return ts.seconds * 1_000_000 + ts.nanos // 1_000


def us_to_timestamp(us: int) -> Timestamp:
    seconds, micros = divmod(us, 1_000_000)
    return Timestamp(seconds=seconds, nanos=micros * 1_000)


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
    return check_occurred_at(field, timestamp_to_us(field, ts), now), True
