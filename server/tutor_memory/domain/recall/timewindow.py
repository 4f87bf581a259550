"""The time window a query names, so that recall can act inside it first (SPEC R2.5, R7.1).

Reading the words is the date library's job (`tutor_memory.domain.recall.timewords`: dateparser
turns every supported language into one English vocabulary, "vor drei Tagen" -> "3 day ago").
This module gives those words calendar meaning, which the library does not: its answers are
instants ("last week" = now minus seven days), while recall needs the period a student means.

Windows are calendar periods in the student's time zone, converted to UTC microseconds with an
exclusive end. The forms and what they mean:

- "today", "yesterday", "N days ago": that local day.
- "this / last week", "N weeks ago", "the week before last": a Monday-to-Sunday week (ISO 8601) in
  every language, including Arabic, where many countries start the week on Saturday or Sunday: one
  rule everywhere keeps "last week" predictable. "last fortnight": the two weeks before this one.
- "this / last month", "N months ago"; "this / last year", "N years ago": calendar months and years.
- "the last N days / weeks / months" ("in the past 10 days"): from the start of the day N units
  back up to now (a rolling span, not a calendar one).
- A weekday ("on Monday", "last Friday"): its most recent day before today; a bare one ("on
  Monday") only in a query that speaks of the past (`tense.speaks_of_past`), since "I have a test on
  Monday" means the next one.
- "the weekend", "last weekend": the most recent Saturday and Sunday that have started.
- A month without a year: the most recent such month that has started by `now`; with a year, that
  month. A day and a month ("on 3 March", "le 12 mars"): that day, last year's if it is still to
  come. A caller reading a statement may ask (`coming`) that a month or day still to come this
  year be last year's only in a query that speaks of the past, as a bare weekday is: "the exam is
  in June", asked in March, means the coming June; a query of nothing but the month ("and in
  June?") keeps last year's. A bare year ("in 2025"): that year. A dated period older than
  `RECORD_HORIZON_YEARS` or still to come is subject matter ("the Bastille fell in July 1789"),
  not the student's record: no window.
- "the start of the month / week / year", naming none: the current one so far (a day of it is
  no more precise than that).
- "since X": from the start of X up to now ("since the start of the year": of the current one).
  A range, "between 3 and 10 May", "from 3 to 10 May", "from the 3rd to the 10th", "between March
  and May", "von März bis Mai": from the first day to the end of the last (a range of months
  that passes New Year starts in the year before).
- Counted from a date: "the week before 3 May", "two weeks before August 11", "the Sunday
  before October 25", "the weekend before", "three days after 12 March", "la settimana prima del
  3 maggio", "zwei Wochen nach dem 3. Mai": from the start of the span to the date's day, or from
  that day to the end of the span after it. The date's own day is inside: what happened in the
  days before a date is often told on it ("last week I…"), and a window that holds it costs one
  day. A month as the date is not inside ("the week before March": the last seven days of
  February). "before 3 May", "after 3 May" name no span: from `RECORD_HORIZON_YEARS` back up to
  the date, or from the date up to now; "until 3 May", "until March": up to the end of that day
  or month.
- A season or a feast ("over the summer", "before Christmas", "since Easter", "l'estate scorsa",
  "in den Osterferien", "في رمضان"): the days `calendar_names` gives it, in the student's
  hemisphere; counted from, a feast is its own day ("before Easter" reaches Easter Sunday).
- The current school term or school year ("since the start of term", "this semester", "da
  inizio quadrimestre", "depuis la rentrée", "seit Beginn des Schuljahres", "من أول الترم"): the
  last TERM_MONTHS or SCHOOL_YEAR_MONTHS up to now, since the student's school calendar is
  unknown (see there). A past term ("last semester") names none: its bounds would be a guess.
- A period still running at `now` ends just after `now` (`now_us + 1`, so that `now` itself is
  inside), and its label says "so far". The first expression in the query wins; its English
  reading is in `expression`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from tutor_memory.domain.clock import time_zone
from tutor_memory.domain.recall.calendar_names import NAMED, occurrence, southern
from tutor_memory.domain.recall.tense import speaks_of_past
from tutor_memory.domain.recall.timewords import (
    AFTER,
    AGO,
    BEFORE,
    MONTHS,
    RANGE_WORD,
    SCHOOL_TERM,
    SCHOOL_YEAR,
    START,
    UNITS,
    UNTIL,
    WEEKDAYS,
    english_readings,
)

# How far back a dated period may lie and still be read as a period of the student's record rather
# than a date of the subject. Generous beside any tutoring history; it exists so that history
# lessons ("what happened in July 1789?") don't turn into an empty "no record" window.
RECORD_HORIZON_YEARS = 10
# Most calendar units a relative expression may reach back ("400 days ago" is a date of the
# subject, or a typo, rather than a period a student means).
MAX_UNITS_BACK = 120
# Words "since X" may skip before X ("since the start of February").
SINCE_GAP = 3
# Other words "between" may pass before each of its two days.
BETWEEN_GAP = 2

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND = timedelta(microseconds=1)
_DAYS_PER_WEEK = 7
_DAYS_PER_MONTH = 31
_SATURDAY = 5
_LAST = frozenset({"last", "past"})
# Words that may open a range of weekdays: "between", and "since" as Italian "da" and Portuguese
# "desde" read ("da lunedì a mercoledì").
_RANGE_OPENERS = frozenset({"between", "since"})
# "weekend" as the readings write it, and its plural, which the date library leaves as it is.
_WEEKENDS = frozenset({"weekend", "weekends"})
_THIS = "this"
# Units whose current one "since the start of the …" names (a fortnight has no agreed start).
_CURRENT_UNITS = frozenset({"day", "week", "month", "year"})
# How far back the current school term and school year reach. The student's school calendar is
# unknown (it differs by country, region and school: a year starts from January to September, a
# term lasts two to six months), but no term, semester or half-year is longer than TERM_MONTHS
# and no school year than SCHOOL_YEAR_MONTHS, so that many months back always hold the start of
# the one the student means: the window is at most a few months wider than theirs, never
# narrower (time is a filter: a narrower one would hide what they asked about).
TERM_MONTHS = 6
SCHOOL_YEAR_MONTHS = 12
# The reading's words for the current school term or year; English "term" only after "the start
# of" (see timewords.SCHOOL_TERM).
_SCHOOL = frozenset({SCHOOL_TERM, SCHOOL_YEAR})
_SCHOOL_AFTER_START = _SCHOOL | {"term"}


@dataclass(frozen=True, slots=True)
class TimeWindow:
    start_us: int
    end_us: int  # exclusive, UTC microseconds
    label: str  # e.g. "July 2026", "last week (2026-11-16 to 2026-11-22)"
    expression: str  # the English reading of the matched words


@dataclass(frozen=True, slots=True)
class _Period:
    first: date
    after: date  # the day after the last day
    label: str
    show_days: bool = False  # the label lists its first and last day
    # Counted back from today up to now ("this term"): "since" it names the same days.
    running: bool = False
    # Counted from, inside either way as a day is (a half term's band: `calendar_names`).
    inclusive: bool = False


def _midnight_us(day: date, zone: ZoneInfo) -> int:
    return (datetime.combine(day, time(), tzinfo=zone) - _EPOCH) // _ONE_MICROSECOND


def _add_months(first: date, months: int) -> date:
    index = first.year * 12 + first.month - 1 + months
    return date(index // 12, index % 12 + 1, 1)


def _month_label(day: date) -> str:
    return f"{MONTHS[day.month - 1].capitalize()} {day.year}"


def _number(token: str) -> int | None:
    return int(token) if token.isdigit() and len(token) <= 3 else None


def _units_back(n: int, unit: str, today: date) -> _Period | None:
    """The calendar `unit` n units before the current one (n = 0: the current one)."""
    if n > MAX_UNITS_BACK:
        return None
    if unit == "day":
        day = today - timedelta(days=n)
        name = {0: "today", 1: "yesterday"}.get(n, f"{n} days ago")
        return _Period(day, day + timedelta(days=1), f"{name} ({day.isoformat()})")
    if unit in ("week", "fortnight"):
        weeks = 2 if unit == "fortnight" else 1
        monday = today - timedelta(days=today.weekday())
        first = monday - timedelta(days=_DAYS_PER_WEEK * n * weeks)
        after = first + timedelta(days=_DAYS_PER_WEEK * weeks) if n else monday + timedelta(7)
        name = {0: f"this {unit}", 1: f"last {unit}"}.get(n, f"{n} {unit}s ago")
        return _Period(first, after, name, show_days=True)
    this_month = date(today.year, today.month, 1)
    if unit == "month":
        first = _add_months(this_month, -n)
        name = {0: "this month", 1: "last month"}.get(n, f"{n} months ago")
        return _Period(first, _add_months(first, 1), f"{name} ({_month_label(first)})")
    if unit == "year":
        year = today.year - n
        name = {0: "this year", 1: "last year"}.get(n, f"{n} years ago")
        return _Period(date(year, 1, 1), date(year + 1, 1, 1), f"{name} ({year})")
    return None


def _rolling(n: int, unit: str, today: date) -> _Period | None:
    """The last n units up to today ("in the past 10 days")."""
    days = {"day": 1, "week": _DAYS_PER_WEEK, "fortnight": 2 * _DAYS_PER_WEEK}.get(unit)
    if n == 0 or n > MAX_UNITS_BACK:
        return None
    if days is not None:
        first = today - timedelta(days=days * n)
    elif unit == "month":
        first = _add_months(date(today.year, today.month, 1), -n)
        first = first.replace(day=min(today.day, 28))
    elif unit == "year":
        first = date(today.year - n, 1, 1)
    else:
        return None
    return _Period(first, today + timedelta(days=1), f"the last {n} {unit}s", show_days=True)


def _school(word: str, today: date) -> _Period:
    """The current school term or year so far (`word`: one of _SCHOOL_AFTER_START), read as the
    last TERM_MONTHS or SCHOOL_YEAR_MONTHS (see there)."""
    year = word == SCHOOL_YEAR
    months = SCHOOL_YEAR_MONTHS if year else TERM_MONTHS
    name = "this school year" if year else "this term"
    first = _shift(today, -months, "month")
    label = f"{name}, read as the last {months} months"
    return _Period(first, today + timedelta(days=1), label, show_days=True, running=True)


def _weekday(name: str, today: date) -> _Period:
    back = (today.weekday() - WEEKDAYS.index(name) - 1) % _DAYS_PER_WEEK + 1
    day = today - timedelta(days=back)
    return _Period(day, day + timedelta(days=1), f"{name.capitalize()} ({day.isoformat()})")


def _weekdays(first: str, last: str, today: date) -> _Period:
    """From weekday `first` to weekday `last`: the most recent such span that ended before
    today ("between Monday and Wednesday", asked on a Friday: this week's)."""
    end = _weekday(last, today).first
    start = end - timedelta(days=(end.weekday() - WEEKDAYS.index(first)) % _DAYS_PER_WEEK)
    label = (
        f"{first.capitalize()} to {last.capitalize()} ({start.isoformat()} to {end.isoformat()})"
    )
    return _Period(start, end + timedelta(days=1), label)


def _weekend(today: date, back_weeks: int = 0) -> _Period:
    """The most recent weekend started by `today`, or the one `back_weeks` weeks before it."""
    back = (today.weekday() - _SATURDAY) % _DAYS_PER_WEEK + _DAYS_PER_WEEK * back_weeks
    saturday = today - timedelta(days=back)
    labels = {0: "the weekend", 1: "the weekend before last"}
    label = labels.get(back_weeks, f"{back_weeks + 1} weekends ago")
    return _Period(saturday, saturday + timedelta(days=2), label, show_days=True)


def _shift(day: date, n: int, unit: str) -> date:
    """`day` moved by n of the UNITS (n < 0: back); a month or year shift keeps the day of the
    month where it exists, else the month's last day (31 March - 1 month = 28 or 29 February)."""
    days = {"day": 1, "week": _DAYS_PER_WEEK, "fortnight": 2 * _DAYS_PER_WEEK}.get(unit)
    if days is not None:
        return day + timedelta(days=days * n)
    first = _add_months(date(day.year, day.month, 1), n if unit == "month" else 12 * n)
    last = (_add_months(first, 1) - timedelta(days=1)).day
    return first.replace(day=min(day.day, last))


@dataclass(frozen=True, slots=True)
class _Span:
    """What "before" or "after" a date spans: n units, a weekday, the weekend, or nothing (the
    whole record on that side of the date)."""

    unit: str | None = None  # a UNITS word, a weekday, "weekend", or None
    n: int = 1

    def words(self) -> str:
        if self.unit is None:
            return ""
        if self.unit in WEEKDAYS:
            return f"{self.unit.capitalize()} "
        return f"the {self.unit} " if self.n == 1 else f"{self.n} {self.unit}s "


def _counted_from(anchor: _Period, span: _Span, side: str, today: date) -> _Period | None:
    """The period `span` names on `side` of `anchor` (BEFORE, AFTER or UNTIL: see the module
    docstring)."""
    a_day = anchor.after - anchor.first == timedelta(days=1) or anchor.inclusive
    unit = span.unit
    before = side != AFTER
    if before:
        after = anchor.after if a_day or side == UNTIL else anchor.first
        if unit is None:
            first = date(today.year - RECORD_HORIZON_YEARS, 1, 1)
        elif unit in WEEKDAYS:
            # The last such day before the date, as a bare weekday is the last before today.
            first = _weekday(unit, anchor.first).first
        elif unit == "weekend":
            # The last weekend over by the date: the one started two days before it at the latest.
            first = _weekend(anchor.first - timedelta(days=2)).first
        else:
            first = _shift(anchor.first, -span.n, unit)
    else:
        first = anchor.first if a_day else anchor.after
        last = anchor.after - timedelta(days=1)
        if unit is None:
            after = today + timedelta(days=1)
        elif unit in WEEKDAYS:
            ahead = (WEEKDAYS.index(unit) - last.weekday() - 1) % _DAYS_PER_WEEK + 1
            after = last + timedelta(days=ahead + 1)
        elif unit == "weekend":
            saturday = anchor.after + timedelta(
                days=(_SATURDAY - anchor.after.weekday()) % _DAYS_PER_WEEK
            )
            after = saturday + timedelta(days=2)
        else:
            after = _shift(anchor.after, span.n, unit)
    if not _recorded(first, today) or first >= after:
        return None
    if unit is None:
        # The whole record on one side: its far end is no day the student named.
        if side == UNTIL:
            word = "until"
        else:
            word = ("up to" if before else "from") if a_day else ("before" if before else "after")
        return _Period(first, after, f"{word} {anchor.label}")
    label = f"{span.words()}{'before' if before else 'after'} {anchor.label}"
    return _Period(first, after, label, show_days=True)


def _ahead_this_year(word: str, today: date, south: bool) -> bool:
    """Whether this year's occurrence of the season or feast `word` is still to come."""
    return occurrence(word, date(today.year, 12, 31), south=south, year=today.year) is not None


def _recorded(first: date, today: date) -> bool:
    return today.year - RECORD_HORIZON_YEARS <= first.year and first <= today


def _month(month: int, year: int | None, today: date) -> _Period | None:
    if year is None:
        year = today.year if month <= today.month else today.year - 1
    first = date(year, month, 1)
    if not _recorded(first, today):
        return None
    return _Period(first, _add_months(first, 1), _month_label(first))


def _day(day: int, month: int, year: int | None, today: date) -> _Period | None:
    try:
        found = date(year or today.year, month, day)
        if year is None and found > today:
            found = date(today.year - 1, month, day)
    except ValueError:
        return None
    if not _recorded(found, today):
        return None
    return _Period(found, found + timedelta(days=1), found.isoformat())


def _year(token: str, today: date) -> _Period | None:
    year = int(token)
    if not _recorded(date(year, 1, 1), today):
        return None
    return _Period(date(year, 1, 1), date(year + 1, 1, 1), str(year))


class _Reader:
    """One English reading, parsed from a position: each method returns the period found there
    and the position after it, or None."""

    def __init__(
        self,
        tokens: Sequence[str],
        today: date,
        past: Callable[[], bool],
        *,
        coming: bool,
        south: Callable[[], bool] = lambda: False,
    ) -> None:
        self.t = tokens
        self.today = today
        # Whether the student's time zone lies south of the equator (asked only for a season).
        self.south = south
        # Whether the query speaks of the past (asked only for a bare weekday, see named_day, and
        # with `coming` for a month or day still to come this year, see dated).
        self.past = past
        self.coming = coming

    def at(self, i: int) -> str:
        return self.t[i] if 0 <= i < len(self.t) else ""

    def year_at(self, i: int) -> int | None:
        word = self.at(i)
        return int(word) if len(word) == 4 and word.isdigit() else None

    def month_at(self, i: int) -> int | None:
        return MONTHS.index(self.at(i)) + 1 if self.at(i) in MONTHS else None

    def day_at(self, i: int) -> int | None:
        n = _number(self.at(i))
        return n if n is not None and 1 <= n <= _DAYS_PER_MONTH else None

    def dated(self, i: int) -> tuple[_Period | None, int] | None:
        """ "3 march [2025]", "march 3 [2025]", "march [of|year] [2025]"."""
        day, month = self.day_at(i), self.month_at(i + 1)
        if day is not None and month is not None:
            year = self.year_at(i + 2)
            return self._past_day(day, month, year), i + (3 if year else 2)
        month = self.month_at(i)
        if month is None:
            return None
        j = i + 1 + (self.at(i + 1) in ("of", "year"))
        year = self.year_at(j)
        if year is None and self.day_at(i + 1) is not None:
            year = self.year_at(i + 2)
            return self._past_day(int(self.at(i + 1)), month, year), i + (3 if year else 2)
        if year is None and self.coming and month > self.today.month and not self.past():
            return None, i + 1  # still to come this year: the coming one ("the exam is in June")
        return _month(month, year, self.today), (j + 1 if year else i + 1)

    def _past_day(self, day: int, month: int, year: int | None) -> _Period | None:
        """A day and month; with `coming`, one still to come this year is last year's only in a
        query that speaks of the past."""
        to_come = (month, day) > (self.today.month, self.today.day)
        if year is None and self.coming and to_come and not self.past():
            return None
        return _day(day, month, year, self.today)

    def anchored(self, j: int) -> bool:
        """Whether what follows an "ago" at j is a date ("two weeks before August 11"): then
        the expression counts from that date, not from now, and is no period of its own."""
        return self.month_at(j + 1) is not None or self.day_at(j + 1) is not None

    def relative(self, i: int) -> tuple[_Period | None, int] | None:
        """ "N unit ago", "ago N unit", "unit ago" (one), "unit ago last" (two), "last unit",
        "unit last", "this unit", "last N units" (rolling)."""
        word = self.at(i)
        n = _number(word)
        if n is not None:
            j = i + 1
            while (more := _number(self.at(j))) is not None:  # "a few days": "1 3 day"
                n, j = more, j + 1
            unit = self.at(j)
            if unit in _WEEKENDS and self.at(j + 1) == AGO and n >= 1:  # "two weekends ago"
                return _weekend(self.today, n - 1), j + 2
            if unit in UNITS and self.at(j + 1) == AGO:
                if self.anchored(j + 1):
                    return None, j + 2
                if self.at(j + 2) in _LAST:
                    return _units_back(n + 1, unit, self.today), j + 3
                return _units_back(n, unit, self.today), j + 2
            return None
        if word == AGO:
            if self.at(i + 1) in _LAST and self.at(i + 2) in UNITS:  # "vorletzte Woche"
                return _units_back(2, self.at(i + 2), self.today), i + 3
            if self.at(i + 1) in _LAST and self.at(i + 2) in _WEEKENDS:  # "vorletztes Wochenende"
                return _weekend(self.today, 1), i + 3
            if self.at(i + 1) in UNITS:
                return _units_back(1, self.at(i + 1), self.today), i + 2
            j, n = i + 1, None
            while (more := _number(self.at(j))) is not None:
                n, j = more, j + 1
            if n is not None and self.at(j) in UNITS:
                return _units_back(n, self.at(j), self.today), j + 1
            return None
        if word == "day" and self.day_at(i + 1) is not None and self.month_at(i + 2) is None:
            # "on the 12th", "dia 12": that day of this month, or of the last if still to come.
            day = int(self.at(i + 1))
            month = date(self.today.year, self.today.month, 1)
            if day > self.today.day:
                month = _add_months(month, -1)
            return _day(day, month.month, month.year, self.today), i + 2
        if word in UNITS:
            if self.at(i + 1) == AGO and self.anchored(i + 1):
                return None, i + 2
            if self.at(i + 1) == AGO:
                n = 2 if self.at(i + 2) in _LAST else 1
                return _units_back(n, word, self.today), i + (3 if n == 2 else 2)
            if self.at(i + 1) in _LAST:
                return _units_back(1, word, self.today), i + 2
            if self.at(i + 1) == _THIS:
                return _units_back(0, word, self.today), i + 2
            return None
        if word in _SCHOOL and self.at(i + 1) == _THIS:  # "الترم الحالي", the current term
            return _school(word, self.today), i + 2
        if word in _LAST or word == _THIS:
            nxt = self.at(i + 1)
            if word == _THIS and nxt in _SCHOOL:  # "this semester", "dieses Halbjahr"
                return _school(nxt, self.today), i + 2
            n = _number(nxt)
            if word in _LAST and n is not None and self.at(i + 2) in UNITS:
                return _rolling(n, self.at(i + 2), self.today), i + 3
            if nxt in UNITS:
                return _units_back(0 if word == _THIS else 1, nxt, self.today), i + 2
        return None

    def named_day(self, i: int, *, qualified: bool = False) -> tuple[_Period | None, int] | None:
        word = self.at(i)
        if word in _LAST or word == _THIS:
            found = self.named_day(i + 1, qualified=True)
            return (found[0], found[1]) if found else None
        if word in WEEKDAYS:
            end = i + 1 + (self.at(i + 1) in _LAST)
            if not qualified and end == i + 1 and not self.past():
                # A bare weekday is the next one as often as the last: "I have a test on
                # Monday", "lunedì ho la verifica". It is the record's only in a query that
                # speaks of the past ("what did we do on Monday").
                return None, end
            return _weekday(word, self.today), end
        if word == "weekend":
            if self.at(i + 1) == AGO and self.at(i + 2) in _LAST:  # "the weekend before last"
                return _weekend(self.today, 1), i + 3
            return _weekend(self.today), i + 1
        return None

    def weekday_range(self, i: int) -> tuple[_Period | None, int] | None:
        """ "monday to wednesday", "between monday and wednesday", "da lunedì a mercoledì", "last
        monday and tuesday": two weekdays, the range link between them read "to" (`timewords`),
        or none where the library drops it ("between", French "à"). Bare, as a bare weekday, it
        is the record's only in a query that speaks of the past."""
        qualified = self.at(i) in _LAST  # "last Monday and Tuesday": past whatever the tense
        j = i + 1 if qualified or self.at(i) in _RANGE_OPENERS else i
        first = self.at(j)
        if first not in WEEKDAYS:
            return None
        k = j + 1 + (self.at(j + 1) == RANGE_WORD)
        last = self.at(k)
        if last not in WEEKDAYS or last == first:
            return None
        if not qualified and not self.past():
            return None, k + 1
        return _weekdays(first, last, self.today), k + 1

    def span(self, i: int) -> tuple[_Span, int] | None:
        """The span before a BEFORE or AFTER at i: "[last] <weekday>", "[last] weekend", "N
        unit", "unit", or none (the BEFORE or AFTER itself); with the position of that word."""
        j = i + (self.at(i) in _LAST or self.at(i) == _THIS)
        word = self.at(j)
        if word in (BEFORE, AFTER):
            return (_Span(), j) if j == i else None
        if word in WEEKDAYS or word == "weekend" or word in UNITS:
            return _Span(word), j + 1
        n = _number(word)
        if n is None or n == 0 or n > MAX_UNITS_BACK:
            return None
        j += 1
        while (more := _number(self.at(j))) is not None:  # "a few days": "1 3 day"
            n, j = more, j + 1
        return (_Span(self.at(j), n), j + 1) if self.at(j) in UNITS else None

    def named(self, i: int, *, anchor: bool = False) -> tuple[_Period | None, int] | None:
        """A season or a feast (`calendar_names`): "[last|this] <name> [last|this] [of] [year]".
        As the `anchor` of a before, after or until word, a feast is its own day ("before
        Easter" reaches Easter Sunday) and a season its span."""
        which = "last" if self.at(i) in _LAST else "this" if self.at(i) == _THIS else None
        j = i + (which is not None)
        word = self.at(j)
        if word not in NAMED:
            return None
        end = j + 1
        if which is None and (self.at(end) in _LAST or self.at(end) == _THIS):
            which = "last" if self.at(end) in _LAST else "this"  # "l'estate scorsa"
            end += 1
        k = end + (self.at(end) in ("of", "year"))
        year = self.year_at(k)
        if year is not None:
            end = k + 1
        south = self.south()
        if which is None and year is None and self.coming and not self.past():
            # Still to come this year, in a clause that does not speak of the past: the coming
            # one ("my Easter holidays start on Friday", asked in March), as a month is.
            coming = occurrence(word, self.today, south=south, year=self.today.year)
            if coming is None and _ahead_this_year(word, self.today, south):
                return None, end
        found = occurrence(word, self.today, south=south, which=which, year=year)
        if found is None and which == "this" and self.past():
            # "this summer" in a question of the past, asked before this year's: the last one.
            found = occurrence(word, self.today, south=south)
        if found is None or not _recorded(found.first, self.today):
            return None, end
        if anchor and found.day is not None:
            return _Period(found.day, found.day + timedelta(days=1), found.label), end
        return _Period(
            found.first, found.after, found.label, show_days=True, inclusive=found.inclusive
        ), end

    def counted_from_date(self, i: int) -> tuple[_Period | None, int] | None:
        """A period counted from a date ("week beforedate 3 may", "afterdate march 2023",
        "untildate march")."""
        found = (_Span(), i) if self.at(i) == UNTIL else self.span(i)
        if found is None or self.at(found[1]) not in (BEFORE, AFTER, UNTIL):
            return None
        span, j = found
        k = self._skip_words(j + 1)
        dated = self.dated(k) or self.named(k, anchor=True)
        if dated is None:
            return None
        anchor, end = dated
        if anchor is None:
            return None, end
        return _counted_from(anchor, span, self.at(j), self.today), end

    def start_of(self, i: int) -> tuple[_Period | None, int] | None:
        """ "start (of the) month / week / year" naming no month, week or year: the current one so
        far ("at the start of the month you struggled", "all'inizio del mese", "au début du
        mois", "no começo desta semana" reads "start this week", which `relative` reads)."""
        return self.current_unit(i) if self.at(i) == START else None

    def simple(self, i: int) -> tuple[_Period | None, int] | None:
        for read in (self.named, self.relative, self.named_day, self.dated, self.start_of):
            found = read(i)
            if found is not None:
                return found
        year = self.year_at(i)
        if year is not None:
            return _year(self.at(i), self.today), i + 1
        return None

    def since(self, i: int, gap: int = SINCE_GAP) -> tuple[_Period | None, int] | None:
        """ "since X" (and "ago X" when X is no unit: Arabic منذ is both)."""
        for j in range(i + 1, min(i + 2 + gap, len(self.t))):
            # "dal 3 al 10 maggio" reads "since 3 to 10 may": a range, not "since" one end.
            ranged = self.range_from(j, joined=True)
            if ranged is not None:
                return ranged
            # "since Monday" looks back whatever the tense: the last Monday, not a bare one.
            weekday = self.named_day(j, qualified=True) if self.at(j) in WEEKDAYS else None
            found = self.school_at(j) or weekday or self.simple(j)
            if found is None:
                continue
            period, end = found
            if period is None or period.running:
                return period, end
            return _Period(period.first, self.today + timedelta(days=1),
                           f"since {period.label}", show_days=True), end  # fmt: skip
        return None

    def school_at(self, i: int) -> tuple[_Period, int] | None:
        """The current school term or year named alone at i, after "since" ("since the semester
        started", "depuis le trimestre"): so far."""
        return (_school(self.at(i), self.today), i + 1) if self.at(i) in _SCHOOL else None

    def current_unit(self, i: int) -> tuple[_Period, int] | None:
        """The current year, month, week or day, or school term or year (`_school`), named by its
        unit alone a few words after "the start of" at i: the words between are whatever the
        library leaves of "of the" ("dell'", "de", "do", "de l'"), at most SINCE_GAP. A number
        next to the unit makes it something else ("since the start of year 7", a school year),
        and "last" or "this" another period, read where it stands ("the start of last week").
        Without "the start of", a unit names no current one: "since the day we met" is no
        period."""
        for j in range(i + 1, min(i + 2 + SINCE_GAP, len(self.t))):
            word = self.at(j)
            if _number(word) is not None or word in _LAST or word == _THIS:
                return None
            if word in _CURRENT_UNITS or word in _SCHOOL_AFTER_START:
                if _number(self.at(j + 1)) is not None or self.at(j + 1) in (AGO, *_LAST):
                    return None
                if word in _SCHOOL_AFTER_START:
                    return _school(word, self.today), j + 1
                current = _units_back(0, word, self.today)
                return (current, j + 1) if current is not None else None
        return None

    def _skip_words(self, j: int) -> int:
        """The next position at or after j that holds a number or a month name, passing at most
        BETWEEN_GAP other words (articles the library leaves: "tra *il* 3 e *il* 10 maggio")."""
        for k in range(j, min(j + BETWEEN_GAP + 1, len(self.t))):
            if _number(self.at(k)) is not None or self.month_at(k) is not None:
                return k
            if self.at(k) in NAMED or (self.at(k) in _LAST and self.at(k + 1) in NAMED):
                return k
        return j

    def between(self, i: int) -> tuple[_Period | None, int] | None:
        """ "between 3 and 10 may [2025]", "between 3 may and 10 june", "between may 3 and may 10
        [2025]", "between march and may"."""
        return self.range_from(self._skip_words(i + 1), joined=False)

    def range_start(self, j: int) -> tuple[int | None, int | None, int] | None:
        """The first end of a range at j: (day, month, position after it), either possibly None
        but not both: "3", "3 may", "may 3", "may" ("day 3" for "the 3rd")."""
        if self.at(j) == "day" and self.day_at(j + 1) is not None:
            j += 1
        day, month = self.day_at(j), self.month_at(j + 1)
        if day is not None:
            return (day, month, j + 2) if month is not None else (day, None, j + 1)
        month = self.month_at(j)
        if month is None:
            return None
        day = self.day_at(j + 1)
        return (day, month, j + 2) if day is not None else (None, month, j + 1)

    def range_from(self, j: int, *, joined: bool) -> tuple[_Period | None, int] | None:
        """A range whose first end is at j: "3 to 10 may", "may 3 to may 10", "march to may"
        (`joined`: the two ends have "to" between them; after "between" the library drops the
        "and", and other words may come between)."""
        start = self.range_start(j)
        if start is None:
            return None
        first_day, first_month, after = start
        if joined:
            if self.at(after) != RANGE_WORD:
                return None
            after += 1
        # "to the 10th" (read "to day 10"): that day of this month, or of the last.
        if self.at(after) == "day" and self.month_at(after + 2) is None:
            second = self.simple(after)
        else:
            second = self.dated(self._skip_words(after))
        if second is None or second[0] is None:
            return None
        last = second[0]
        year = last.first.year
        if first_month is not None and first_month > last.first.month:
            year -= 1  # "from November to February": the November before
        try:
            first = date(year, first_month or last.first.month, first_day or 1)
        except ValueError:
            return None
        if first > last.first:
            return None
        if first_day is None and last.first.day == 1 and last.after.day == 1:
            # Whole months at both ends: labelled by their names.
            label = f"{_month_label(first)} to {last.label}"
        else:
            label = f"{first.isoformat()} to {(last.after - timedelta(days=1)).isoformat()}"
        return _Period(first, last.after, label), second[1]

    def _ago_as_since(self, i: int) -> bool:
        """Arabic منذ, which the library reads "ago", means "since" before a month or a day."""
        nxt = self.at(i + 1)
        return self.at(i) == AGO and nxt not in UNITS and nxt not in _LAST and _number(nxt) is None

    def full_date(self, i: int) -> tuple[_Period | None, int] | None:
        """A day with its month at i ("23 january [2022]", "may 23 [2023]"), or None."""
        if (self.day_at(i) is None or self.month_at(i + 1) is None) and (
            self.month_at(i) is None or self.day_at(i + 1) is None
        ):
            return None
        return self.dated(i)

    def first(self) -> tuple[_Period, int, int] | None:
        """The first period the reading names: (period, start, end). A period counted from today
        ("last Friday", "last week", "the weekend") gives way to a full date later in the same
        reading ("last Friday, on 23 January"; "the Sunday before October 25"): such a period is
        counted from that date, which this reader does not do, and the date is the nearer
        reading of the two."""
        relative = self._first_from(0)
        if relative is None or self.full_date(relative[1]) is not None:
            return relative
        if {BEFORE, AFTER, UNTIL}.intersection(self.t[relative[1] : relative[2]]):
            return relative
        _, start, end = relative
        if self.relative(start) is None and self.named_day(start) is None:
            return relative
        for k in range(end, len(self.t)):
            found = self.full_date(k)
            if found is not None and found[0] is not None:
                return found[0], k, found[1]
        return relative

    def _first_from(self, i: int) -> tuple[_Period, int, int] | None:
        while i < len(self.t):
            word = self.t[i]
            if (found := self.weekday_range(i)) is not None:
                pass
            elif word == "since":
                found = self.since(i)
            elif self._ago_as_since(i):
                found = self.since(i, gap=0)
            elif word == "between":
                found = self.between(i)
            else:
                found = (
                    self.counted_from_date(i) or self.range_from(i, joined=True) or self.simple(i)
                )
            if found is not None and found[0] is not None:
                return found[0], i, found[1]
            # An expression that names no record period ("October 2023" still to come, "July
            # 1789") is read whole: its year is not read again as a year of its own.
            i = max(i + 1, found[1]) if found is not None else i + 1
        return None


def parse_time_window(
    query: str,
    now_us: int,
    tz: str,
    *,
    past: Callable[[], bool] | None = None,
    coming: bool = False,
) -> TimeWindow | None:
    """The calendar period `query` names, in time zone `tz`, as a UTC window; None if it names none.

    `past` says whether the query speaks of the past (`tense.speaks_of_past`, asked only for a
    bare weekday); by default the query's own words decide, and a caller reading one clause of a
    message passes the message's. With `coming`, a month or day still to come this year names no
    period unless the query speaks of the past (see the module docstring).

    Raises ValueError if `tz` is not a known IANA time zone.
    """
    zone = time_zone(tz)
    try:
        today = (_EPOCH + timedelta(microseconds=now_us)).astimezone(zone).date()
        if past is None:
            past = functools.cache(functools.partial(speaks_of_past, query))
        south = functools.cache(functools.partial(southern, zone.key))
        for reading in english_readings(query):
            found = _Reader(reading, today, past, coming=coming, south=south).first()
            if found is not None:
                period, start, end = found
                return _window(period, " ".join(reading[start:end]), now_us, today, zone)
    except (OverflowError, ValueError):
        # A period at the calendar's edge (this month in December 9999, today in year 10000 in
        # the student's zone) cannot be written as dates: it names no window.
        return None
    return None


def _window(
    period: _Period, expression: str, now_us: int, today: date, zone: ZoneInfo
) -> TimeWindow:
    start_us, end_us = _midnight_us(period.first, zone), _midnight_us(period.after, zone)
    last = period.after - timedelta(days=1)
    so_far = start_us <= now_us < end_us
    if so_far:
        end_us, last = now_us + 1, today
    label = period.label
    if period.show_days:
        label = f"{label} ({period.first.isoformat()} to {last.isoformat()})"
    if so_far:
        label = f"{label[:-1]}, so far)" if label.endswith(")") else f"{label} (so far)"
    return TimeWindow(start_us, end_us, label, expression)
