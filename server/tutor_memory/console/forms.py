"""What a page's query string asks for, checked the way the API checks the same fields: a bad
value becomes a message on the page (and a 400), never an exception page."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from tutor_memory.domain.episodes import ChainKey, Kind
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import (
    MAX_BUDGET_TOKENS,
    MAX_PAGE_TOKEN_CHARS,
    MAX_QUERY_CHARS,
    check_identifier,
    check_time,
)
from tutor_memory.domain.recall.block import BlockRequest, Mode, zone

# The inspector's budget when the form names none: a typical turn's memory budget.
DEFAULT_BUDGET = 400
_MODES = {m.value: m for m in Mode}
_KINDS = {k.value: k for k in Kind}


def chain_of(tenant: str, student: str, subject: str) -> ChainKey:
    return ChainKey(
        tenant, check_identifier("student", student), check_identifier("subject", subject)
    )


def kinds_of(values: list[str]) -> tuple[Kind, ...]:
    """The episode kinds the timeline is filtered to (none: every kind)."""
    kinds = []
    for v in values:
        if not v:
            continue
        if v not in _KINDS:
            raise InvalidArgument("kind", f"unknown kind {v[:40]!r}")
        kinds.append(_KINDS[v])
    return tuple(kinds)


# The timeline's orders: the value in the query string -> whether the latest episodes come first.
TIMELINE_ORDERS = {"oldest": False, "newest": True}


def newest_first(value: str) -> bool:
    """Whether the timeline lists the latest episodes first ("newest"; "" or "oldest": not)."""
    if not value:
        return False
    if value not in TIMELINE_ORDERS:
        raise InvalidArgument("order", f"must be one of {', '.join(TIMELINE_ORDERS)}")
    return TIMELINE_ORDERS[value]


def day_start_us(field: str, value: str, tz: ZoneInfo, *, plus_days: int = 0) -> int | None:
    """The start of a YYYY-MM-DD day in time zone `tz`, in µs (empty: no bound)."""
    if not value:
        return None
    try:
        day = date.fromisoformat(value)
    except ValueError as exc:
        raise InvalidArgument(field, "must be a date, YYYY-MM-DD") from exc
    try:
        day += timedelta(days=plus_days)
    except OverflowError:
        return None  # the end of the calendar bounds nothing
    moment = datetime.combine(day, time(), tz)
    return check_time(field, int(moment.timestamp()) * 1_000_000)


def encode_position(occurred_at_us: int, seq: int) -> str:
    """A timeline page's place: an episode shown (the last for the next page, the first for the
    previous one), as the store's (occurred_at, seq)."""
    return base64.urlsafe_b64encode(f"{occurred_at_us}:{seq}".encode()).decode().rstrip("=")


def decode_position(value: str, field: str = "after") -> tuple[int, int] | None:
    """The place `encode_position` wrote; `field` names the query parameter it came in."""
    if not value:
        return None
    if len(value) > MAX_PAGE_TOKEN_CHARS:
        raise InvalidArgument(field, "malformed page position")
    try:
        raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)).decode()
        occurred, seq = raw.split(":")
        return int(occurred), int(seq)
    except (ValueError, UnicodeError) as exc:
        raise InvalidArgument(field, "malformed page position") from exc


@dataclass(frozen=True, slots=True)
class InspectorForm:
    query: str = ""
    budget: str = str(DEFAULT_BUDGET)
    time_zone: str = "UTC"
    mode: str = Mode.FULL.value
    now: str = ""
    run: bool = False

    def request(self, chain: ChainKey, now_us: int) -> BlockRequest:
        """The BuildBlock request this form describes, checked as the RPC checks it."""
        if len(self.query) > MAX_QUERY_CHARS:
            raise InvalidArgument("query", f"longer than {MAX_QUERY_CHARS} characters")
        try:
            budget = int(self.budget)
        except ValueError as exc:
            raise InvalidArgument("budget", "must be a whole number of tokens") from exc
        if not 1 <= budget <= MAX_BUDGET_TOKENS:
            raise InvalidArgument("budget", f"must be from 1 to {MAX_BUDGET_TOKENS}")
        mode = _MODES.get(self.mode)
        if mode is None:
            raise InvalidArgument("mode", f"unknown mode {self.mode[:40]!r}")
        zone(self.time_zone)
        return BlockRequest(
            chain=chain,
            query=self.query,
            budget_tokens=budget,
            now_us=self._now_us(now_us),
            time_zone=self.time_zone or "UTC",
            mode=mode,
        )

    def _now_us(self, default: int) -> int:
        if not self.now:
            return default
        try:
            moment = datetime.fromisoformat(self.now)
        except ValueError as exc:
            raise InvalidArgument("now", "must be a date and time, YYYY-MM-DDTHH:MM") from exc
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return check_time("now", int(moment.timestamp() * 1_000_000))
