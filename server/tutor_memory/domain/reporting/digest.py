"""The day compressed into one consolidation note (SPEC R8.1): deterministic, no model call.

The note holds the counts by kind, the checks right and wrong, the topics touched and the
HEADLINES most salient episodes (salience first, then the newest, then the highest id, so equal
inputs always give byte-identical notes). Consolidation episodes in the input are ignored: a
note never summarises its own kind, so running the cycle twice cannot fold a note into the next.
A window with nothing else in it writes nothing.
"""

from __future__ import annotations

import calendar
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from tutor_memory.domain.clock import us_to_datetime
from tutor_memory.domain.episodes import Kind, StoredEpisode
from tutor_memory.domain.limits import MAX_SUMMARY_CHARS
from tutor_memory.domain.recall.block_text import DATE_FORMAT, KIND_PHRASES
from tutor_memory.domain.text.normalise import normalise

# The note's one-line summary stays this short (well within an episode's MAX_SUMMARY_CHARS): it
# is what recall shows for the note, beside other memories of one line.
NOTE_SUMMARY_CHARS = min(200, MAX_SUMMARY_CHARS)

# R8.1: the five most salient episodes of the day are named in the note.
HEADLINES = 5

# A headline quotes at most this much of its episode's summary: the note is a digest, and the
# episode itself stays one lookup away.
HEADLINE_CHARS = 160

ELLIPSIS = "…"

# How a follow-up note of a day's late arrivals begins ("Late additions to day of 03 Mar 2026").
LATE_PREFIX = "Late additions to "

# How each kind is counted in the note ("3 questions"), singular then plural, in the order the
# note lists them.
_KIND_NOUNS: dict[Kind, tuple[str, str]] = {
    Kind.QUESTION: ("question", "questions"),
    Kind.ANSWER: ("answer", "answers"),
    Kind.CHECK: ("check", "checks"),
    Kind.QUIZ: ("quiz", "quizzes"),
    Kind.FILE: ("file", "files"),
    Kind.TAUGHT: ("thing taught", "things taught"),
}


@dataclass(frozen=True, slots=True)
class DayEpisode:
    """One episode of the window, as the note needs it.

    `kind` is an episode kind's value ("question", "check", ...). `check_right` is the outcome of
    a check (None for other kinds); `topic` is a check's topic as recorded.
    """

    episode_id: int
    kind: str
    summary: str
    salience: float
    occurred_at: datetime
    concepts: tuple[str, ...]
    check_right: bool | None
    topic: str | None


@dataclass(frozen=True, slots=True)
class ConsolidationNote:
    # One line, at most NOTE_SUMMARY_CHARS: "Day of 03 Mar 2026: 14 episodes, 5 checks (3 right,
    # 2 wrong); topics: osmosis".
    summary: str
    text: str
    # Concept names the day's episodes touched, sorted (case- and accent-insensitively).
    concepts: tuple[str, ...]
    # The episodes the note summarises, by id.
    episode_ids: tuple[int, ...]


def _count(n: int, singular: str, plural: str) -> str:
    return f"{n} {singular if n == 1 else plural}"


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(ELLIPSIS)].rstrip() + ELLIPSIS


def _sorted_names(names: set[str]) -> tuple[str, ...]:
    return tuple(sorted(names, key=lambda n: (normalise(n), n)))


def _distinct(names: Sequence[str]) -> tuple[str, ...]:
    """`names` without repeats that differ only in case, accents or spacing; the first spelling
    in sorted order is kept."""
    kept: dict[str, str] = {}
    for name in _sorted_names(set(names)):
        kept.setdefault(normalise(name), name)
    return tuple(kept.values())


def _window_label(start: datetime, end: datetime, tz: ZoneInfo) -> str:
    first = start.astimezone(tz)
    last = (end - timedelta(microseconds=1)).astimezone(tz)
    if first.date() == last.date():
        return f"Day of {first.strftime(DATE_FORMAT)}"
    fmt = f"{DATE_FORMAT} %H:%M"
    return f"From {first.strftime(fmt)} to {end.astimezone(tz).strftime(fmt)}"


def _checks_phrase(right: int, wrong: int, unknown: int) -> str:
    total = right + wrong + unknown
    if total == 0:
        return "no check"
    outcomes = f"{right} right, {wrong} wrong"
    if unknown:
        outcomes += f", {unknown} without an outcome"
    return f"{_count(total, 'check', 'checks')} ({outcomes})"


def _summary(label: str, episodes: int, checks: str, topics: Sequence[str]) -> str:
    head = f"{label}: {_count(episodes, 'episode', 'episodes')}, {checks}"
    for shown in range(len(topics), 0, -1):
        rest = len(topics) - shown
        more = f" and {rest} more" if rest else ""
        line = f"{head}; topics: {', '.join(topics[:shown])}{more}"
        if len(line) <= NOTE_SUMMARY_CHARS:
            return line
    return _clip(head, NOTE_SUMMARY_CHARS)


def consolidation_note(
    episodes: Sequence[DayEpisode],
    window_start: datetime,
    window_end: datetime,
    tz_name: str = "UTC",
    *,
    follow_up: bool = False,
) -> ConsolidationNote | None:
    """The note for the episodes that happened in [window_start, window_end), or None for a
    quiet window. Times must be time-zone aware; the note gives dates and times in `tz_name`
    (IANA). `follow_up` marks a note of episodes that arrived after the day was digested.
    Raises ValueError for an unknown kind."""
    tz = ZoneInfo(tz_name)
    day = [
        e
        for e in episodes
        if Kind(e.kind) is not Kind.CONSOLIDATION and window_start <= e.occurred_at < window_end
    ]
    if not day:
        return None

    kinds = Counter(Kind(e.kind) for e in day)
    checks = [e for e in day if Kind(e.kind) is Kind.CHECK]
    right = sum(1 for e in checks if e.check_right is True)
    wrong = sum(1 for e in checks if e.check_right is False)
    checks_phrase = _checks_phrase(right, wrong, len(checks) - right - wrong)
    concepts = _distinct([c for e in day for c in e.concepts])
    topics = _distinct([*concepts, *(e.topic for e in checks if e.topic)])
    label = _window_label(window_start, window_end, tz)
    if follow_up:
        label = f"{LATE_PREFIX}{label[0].lower()}{label[1:]}"

    by_kind = ", ".join(_count(kinds[k], *nouns) for k, nouns in _KIND_NOUNS.items() if kinds[k])
    salient = sorted(day, key=lambda e: (e.salience, e.occurred_at, e.episode_id), reverse=True)
    headlines = [
        f"- {e.occurred_at.astimezone(tz):%H:%M} · {KIND_PHRASES[Kind(e.kind)]}: "
        f"{_clip(e.summary, HEADLINE_CHARS)}"
        for e in salient[:HEADLINES]
    ]
    lines = [
        f"{label} ({tz_name}): {_count(len(day), 'episode', 'episodes')}.",
        f"By kind: {by_kind}.",
        f"Checks: {checks_phrase}.",
        f"Topics: {', '.join(topics)}." if topics else "Topics: none recorded.",
        "Most salient:",
        *headlines,
    ]
    return ConsolidationNote(
        summary=_summary(label, len(day), checks_phrase, topics),
        text="\n".join(lines),
        concepts=concepts,
        episode_ids=tuple(sorted(e.episode_id for e in day)),
    )


def day_episode(ep: StoredEpisode) -> DayEpisode:
    return DayEpisode(
        episode_id=ep.episode_id,
        kind=ep.kind.value,
        summary=ep.summary,
        salience=ep.salience,
        occurred_at=us_to_datetime(ep.occurred_at_us),
        concepts=ep.concepts,
        check_right=(ep.check.outcome.value == "right") if ep.check else None,
        topic=ep.check.topic if ep.check else None,
    )


def local_day(occurred_at_us: int, zone: ZoneInfo) -> tuple[int, int]:
    """[start, end) in µs of the calendar day in `zone` that holds the instant; 23 or 25 hours
    long around a daylight-saving change."""
    local = us_to_datetime(occurred_at_us).astimezone(zone)
    start = datetime(local.year, local.month, local.day, tzinfo=zone)
    following = start.date() + timedelta(days=1)
    end = datetime(following.year, following.month, following.day, tzinfo=zone)
    return _us(start), _us(end)


def _us(moment: datetime) -> int:
    return calendar.timegm(moment.utctimetuple()) * 1_000_000 + moment.microsecond
