"""The memory block's wording (SPEC R6.5, R7.1), one place for every fixed line of it.

The shape follows the design document's example block: a header, the record-question line when
it applies, what the tutor believes, the earlier work (oldest first, with dates and collapsed
counts), the subject map, how to use it, and an end marker.
"""

from __future__ import annotations

import functools
from datetime import datetime
from zoneinfo import ZoneInfo

from tutor_memory.domain.episodes import Kind

HEADER = "=== YOUR MEMORY OF THIS STUDENT ==="
FOOTER = "=== END OF MEMORY ==="
RECORD_TITLE = "THE STUDENT IS ASKING ABOUT THEIR OWN RECORD"
RECORD_LINE = (
    "THE STUDENT IS ASKING ABOUT THEIR OWN RECORD: answer from the beliefs and the earlier work "
    "below."
)
EARLIER_WORK_TITLE = "EARLIER WORK WITH THIS STUDENT (oldest first)"
NOTHING_YET = "- nothing recorded yet"
HOW_TO_USE_TITLE = "HOW TO USE THIS"
HOW_TO_USE = (
    'HOW TO USE THIS: say when a memory happened ("on 3 May we..."); never claim one not listed.'
)

# Who a line of earlier work is about, by the kind of episode: the student said it, you (the
# tutor) said it, or what the record holds. Short, because every line pays for it.
KIND_PHRASES: dict[Kind, str] = {
    Kind.QUESTION: "student",
    Kind.ANSWER: "you",
    Kind.CHECK: "check",
    Kind.QUIZ: "quiz",
    Kind.FILE: "file",
    Kind.TAUGHT: "the student taught you",
    Kind.CONSOLIDATION: "digest of the day",
}

# A date as the block shows it: one line per day, heading the memories of that day.
DATE_FORMAT = "%d %b %Y"
# Dates kept formatted, by (instant, zone): consecutive turns show many of the same memories, and
# converting an instant to a zone's calendar costs a few microseconds a row. A date is no secret
# of its student (the instant is stored in the clear), so erasure need not drop them.
DATES_KEPT = 32_768


def no_record_line(label: str) -> str:
    return (
        f"THERE IS NO RECORD OF ANY WORK WITH THIS STUDENT IN {label.upper()}. Say so plainly; "
        "do not describe any session from that period."
    )


def repeats_suffix(repeats: int) -> str:
    return f" ({repeats} times)" if repeats > 1 else ""


def memory_line(kind: Kind, summary: str, repeats: int = 1) -> str:
    """A memory as earlier work shows it, under the line of its day."""
    return f"- {KIND_PHRASES[kind]}: {summary}{repeats_suffix(repeats)}"


def day_line(date: str) -> str:
    """The line that dates the memories under it."""
    return f"{date}:"


def sizing_line(kind: Kind, summary: str) -> str:
    """The line whose token count recall packs by: no repeat suffix (the suffix, and the day
    lines, are paid for when the whole block is counted)."""
    return memory_line(kind, summary)


@functools.lru_cache(maxsize=DATES_KEPT)
def format_date(occurred_at_us: int, tz: ZoneInfo) -> str:
    return datetime.fromtimestamp(occurred_at_us / 1_000_000, tz=tz).strftime(DATE_FORMAT)
