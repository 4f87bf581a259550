"""The time window a query names, so that recall can act inside it first (SPEC R2.5, R7.1).

Windows are calendar periods in the student's time zone, converted to UTC microseconds with an
exclusive end. Choices a caller should know:

- Weeks run Monday to Sunday (ISO 8601) in every language, including Arabic, where many countries
  start the week on Saturday or Sunday: one rule everywhere keeps "last week" predictable.
  "last week" is the previous Monday-to-Sunday week; "this week" is Monday of this week up to now.
- A period still running at `now` ("today", "this month", the current month named by name) ends
  just after `now` (`now_us + 1`, so that `now` itself is inside), and its label says "so far".
- A month without a year is the most recent such month that has started by `now`; with a year it
  is that month, provided it has started and lies within `RECORD_HORIZON_YEARS` of now. Older or
  future dated months are subject matter ("the Bastille fell in July 1789"), not a period of the
  student's record, and name no window.
- The first expression in the query wins; the matched words (normalised) are in `expression`.
- Month names that are also ordinary words (see `tutor_memory.domain.lang`) count only after a month
  preposition or before a year: "in May", "May 2025", never "may I ask".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from tutor_memory.domain import lang
from tutor_memory.domain.lang import LanguageData
from tutor_memory.domain.text.phrases import Phrase, PhraseIndex, compile_phrase
from tutor_memory.domain.text.words import clitics, stop_words, words

# How far back a dated month may lie and still be read as a period of the student's record rather
# than a date of the subject. Generous beside any tutoring history; it exists so that history
# lessons ("what happened in July 1789?") don't turn into an empty "no record" window.
RECORD_HORIZON_YEARS = 10

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND = timedelta(microseconds=1)
_DAYS_PER_WEEK = 7
_YEAR_DIGITS = 4


@dataclass(frozen=True, slots=True)
class TimeWindow:
    start_us: int
    end_us: int  # exclusive, UTC microseconds
    label: str  # e.g. "July 2026", "last week (2026-11-16 to 2026-11-22)"
    expression: str  # the matched words


@dataclass(frozen=True, slots=True)
class _Rules:
    """One language's month grammar, compiled (see `tutor_memory.domain.lang` for the fields)."""

    glued: tuple[str, ...]  # every clitic that may be glued to a word
    glued_prepositions: frozenset[str]  # the clitics that mean "in"
    prepositions: tuple[Phrase, ...]
    year_links: tuple[Phrase, ...]
    year: re.Pattern[str]


@dataclass(frozen=True, slots=True)
class _MonthName:
    month: int
    needs_context: bool
    rules: _Rules


@dataclass(frozen=True, slots=True)
class _Lexicon:
    relative: PhraseIndex[str]
    months: PhraseIndex[_MonthName]
    false_friends: PhraseIndex[None]


def _rules(data: LanguageData) -> _Rules:
    conjunctions = clitics(data, prepositions=False)
    glued = clitics(data, prepositions=True)
    suffixes = "|".join(re.escape(w) for s in data.year_suffixes for w in words(s))
    return _Rules(
        glued=glued,
        glued_prepositions=frozenset(glued) - frozenset(conjunctions),
        prepositions=tuple(compile_phrase(p) for p in data.month_prepositions),
        year_links=tuple(compile_phrase(p) for p in data.year_links),
        year=re.compile(rf"(\d{{{_YEAR_DIGITS}}})(?:{suffixes})?"),
    )


@functools.cache
def _lexicon() -> _Lexicon:
    languages = lang.all_languages()
    ambiguous = {" ".join(words(m)) for d in languages for m in d.ambiguous_months}
    # A month name that is a function word somewhere ("mai": Italian "never") is ambiguous too.
    ambiguous |= stop_words()
    relative: list[tuple[Phrase, str, tuple[str, ...]]] = []
    months: list[tuple[Phrase, _MonthName, tuple[str, ...]]] = []
    false_friends: list[tuple[Phrase, None, tuple[str, ...]]] = []
    for data in languages:
        rules = _rules(data)
        for key, phrases in data.relative.items():
            relative += [(compile_phrase(p), key, rules.glued) for p in phrases]
        for number, names in enumerate(data.months, start=1):
            for name in names:
                needs_context = " ".join(words(name)) in ambiguous
                # An ambiguous name glued to a clitic is another word (Arabic باب "door" is ب+آب).
                glued = () if needs_context else rules.glued
                months.append(
                    (compile_phrase(name), _MonthName(number, needs_context, rules), glued)
                )
        false_friends += [(compile_phrase(p), None, rules.glued) for p in data.time_false_friends]
    return _Lexicon(PhraseIndex(relative), PhraseIndex(months), PhraseIndex(false_friends))


def _ends_at(tokens: Sequence[str], end: int, phrase: Phrase, glued: tuple[str, ...]) -> int | None:
    """Start of `phrase` (plain words) if it ends right before `end`, else None."""
    items = phrase.items
    start = end - len(items)
    if start < 0 or any(tokens[start + k] != items[k] for k in range(1, len(items))):
        return None
    first = tokens[start]
    if first == phrase.first or any(first == p + phrase.first for p in glued):
        return start
    return None


def _starts_at(tokens: Sequence[str], start: int, phrase: Phrase) -> int | None:
    """End of `phrase` (plain words) if it starts at `start`, else None."""
    end = start + len(phrase.items)
    return end if tuple(tokens[start:end]) == phrase.items else None


@dataclass(frozen=True, slots=True)
class _Found:
    start: int
    end: int
    relative: str | None = None
    month: int = 0
    year: int | None = None


def _month_match(
    tokens: Sequence[str], start: int, end: int, name: _MonthName, glued: str
) -> _Found | None:
    """The month expression at tokens[start:end] with its preposition and year; None if unsure."""
    rules = name.rules
    introduced = glued in rules.glued_prepositions
    first = start
    for prep in rules.prepositions:
        prep_start = _ends_at(tokens, start, prep, rules.glued)
        if prep_start is not None and prep_start < first:
            introduced, first = True, prep_start
    year: int | None = None
    # The year may follow directly ("May 2025") or after a link word ("julio de 2025").
    year_at = [end] + [
        e for link in rules.year_links if (e := _starts_at(tokens, end, link)) is not None
    ]
    for at in year_at:
        digits = rules.year.fullmatch(tokens[at]) if at < len(tokens) else None
        if digits:
            year, end = int(digits.group(1)), at + 1
            break
    if name.needs_context and not introduced and year is None:
        return None
    return _Found(first, end, month=name.month, year=year)


def _candidates(tokens: Sequence[str]) -> list[_Found]:
    """Every time expression in `tokens` no false friend overlaps, first (then longest) first."""
    lex = _lexicon()
    # Which tokens a false friend covers, counted up to each position (prefix sums over the
    # starts and ends of the false friends): whether an expression overlaps one is then two
    # look-ups, however many of each the text holds.
    starts_and_ends = [0] * (len(tokens) + 1)
    for friend in lex.false_friends.find_all(tokens):
        starts_and_ends[friend.start] += 1
        starts_and_ends[friend.end] -= 1
    covered = [0] * (len(tokens) + 1)
    depth = 0
    for i in range(len(tokens)):
        depth += starts_and_ends[i]
        covered[i + 1] = covered[i] + (depth > 0)
    found = [_Found(m.start, m.end, relative=m.payload) for m in lex.relative.find_all(tokens)]
    for m in lex.months.find_all(tokens):
        month = _month_match(tokens, m.start, m.end, m.payload, m.prefix)
        if month is not None:
            found.append(month)
    found = [f for f in found if covered[f.end] == covered[f.start]]
    return sorted(found, key=lambda f: (f.start, -f.end))


def _zone(tz: str) -> ZoneInfo:
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ValueError(
            f"unknown time zone {tz!r}: expected an IANA name such as 'Europe/Rome'"
        ) from exc


def _midnight_us(day: date, zone: ZoneInfo) -> int:
    return (datetime.combine(day, time(), tzinfo=zone) - _EPOCH) // _ONE_MICROSECOND


def _month_start(year: int, month: int) -> date:
    return date(year, month, 1)


def _next_month(day: date) -> date:
    return date(day.year + day.month // 12, day.month % 12 + 1, 1)


def _month_label(day: date) -> str:
    return f"{lang.load('en').months[day.month - 1][0].capitalize()} {day.year}"


def _period(found: _Found, today: date) -> tuple[date, date, str] | None:
    """First day, day after the last day, and label of the period named; None if not a record."""
    monday = today - timedelta(days=today.weekday())
    this_month = _month_start(today.year, today.month)
    match found.relative:
        case "yesterday":
            day = today - timedelta(days=1)
            return day, today, f"yesterday ({day.isoformat()})"
        case "today":
            return today, today + timedelta(days=1), f"today ({today.isoformat()})"
        case "this_week":
            return monday, monday + timedelta(days=_DAYS_PER_WEEK), "this week"
        case "last_week":
            return monday - timedelta(days=_DAYS_PER_WEEK), monday, "last week"
        case "this_month":
            return this_month, _next_month(this_month), f"this month ({_month_label(today)})"
        case "last_month":
            first = _month_start(
                *((today.year - 1, 12) if today.month == 1 else (today.year, today.month - 1))
            )
            return first, this_month, f"last month ({_month_label(first)})"
        case "this_year":
            return date(today.year, 1, 1), date(today.year + 1, 1, 1), f"this year ({today.year})"
        case "last_year":
            return (
                date(today.year - 1, 1, 1),
                date(today.year, 1, 1),
                f"last year ({today.year - 1})",
            )
    if found.year is None:
        year = today.year if found.month <= today.month else today.year - 1
    elif today.year - RECORD_HORIZON_YEARS <= found.year and (found.year, found.month) <= (
        today.year,
        today.month,
    ):
        year = found.year
    else:
        return None
    first = _month_start(year, found.month)
    return first, _next_month(first), _month_label(first)


def parse_time_window(query: str, now_us: int, tz: str) -> TimeWindow | None:
    """The calendar period `query` names, in time zone `tz`, as a UTC window; None if it names none.

    Raises ValueError if `tz` is not a known IANA time zone.
    """
    zone = _zone(tz)
    tokens = words(query)
    try:
        today = (_EPOCH + timedelta(microseconds=now_us)).astimezone(zone).date()
        for found in _candidates(tokens):
            period = _period(found, today)
            if period is not None:
                return _window(found, period, tokens, now_us, today, zone)
    except (OverflowError, ValueError):
        # A period at the calendar's edge (this month in December 9999, today in year 10000 in
        # the student's zone) cannot be written as dates: it names no window.
        return None
    return None


def _window(
    found: _Found,
    period: tuple[date, date, str],
    tokens: Sequence[str],
    now_us: int,
    today: date,
    zone: ZoneInfo,
) -> TimeWindow:
    first, after, label = period
    start_us, end_us = _midnight_us(first, zone), _midnight_us(after, zone)
    last = after - timedelta(days=1)
    so_far = start_us <= now_us < end_us
    if so_far:
        end_us, last = now_us + 1, today
    if found.relative in ("this_week", "last_week"):
        label = f"{label} ({first.isoformat()} to {last.isoformat()})"
    if so_far:
        label = f"{label[:-1]}, so far)" if label.endswith(")") else f"{label} (so far)"
    return TimeWindow(start_us, end_us, label, " ".join(tokens[found.start : found.end]))
