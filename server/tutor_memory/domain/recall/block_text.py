"""The memory block's wording (SPEC R6.5, R7.1), one place for every fixed line of it.

The shape follows the design document's example block: a header, the record-question line when
it applies, what the tutor believes, the earlier work (oldest first, with dates and collapsed
counts), the subject map, how to use it, and an end marker.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from tutor_memory.domain.episodes import Kind

HEADER = "===== YOUR MEMORY OF THIS STUDENT AND SUBJECT ====="
FOOTER = "===== END OF MEMORY ====="
RECORD_TITLE = "THE STUDENT IS ASKING ABOUT THEIR OWN RECORD"
RECORD_LINE = (
    "THE STUDENT IS ASKING ABOUT THEIR OWN RECORD. Answer from the beliefs and the earlier work "
    "listed here; the conversation below is the record."
)
EARLIER_WORK_TITLE = "EARLIER WORK WITH THIS STUDENT (oldest first)"
NOTHING_YET = "- nothing recorded yet with this student in this subject"
HOW_TO_USE_TITLE = "HOW TO USE THIS"
HOW_TO_USE = (
    "HOW TO USE THIS: it is your own memory of past work with this student, not their material. "
    'When you rely on it, say when it happened ("in July we..."). Never claim a memory that is '
    "not listed here."
)

# How each kind of episode is introduced in a line of earlier work.
KIND_PHRASES: dict[Kind, str] = {
    Kind.QUESTION: "you were asked",
    Kind.ANSWER: "you answered",
    Kind.CHECK: "check",
    Kind.QUIZ: "quiz",
    Kind.FILE: "a file arrived",
    Kind.TAUGHT: "the student taught you",
    Kind.CONSOLIDATION: "summary of the day",
}

# A date as the block shows it. The token count of a line is taken with the widest form, so a
# line's real count never exceeds the one recall packed it by.
DATE_FORMAT = "%d %b %Y"
_WIDEST_DATE = "28 Sep 2026"


def no_record_line(label: str) -> str:
    return (
        f"THERE IS NO RECORD OF ANY WORK WITH THIS STUDENT IN {label.upper()}. Say so plainly; "
        "do not describe any session from that period."
    )


def repeats_suffix(repeats: int) -> str:
    return f" (and {repeats - 1} more times like it)" if repeats > 1 else ""


def memory_line(kind: Kind, summary: str, date: str, repeats: int = 1) -> str:
    return f"- {date} · {KIND_PHRASES[kind]}: {summary}{repeats_suffix(repeats)}"


def sizing_line(kind: Kind, summary: str) -> str:
    """The line whose token count recall packs by: the widest date, no repeat suffix (the
    suffix is paid for by the final check of the whole block)."""
    return memory_line(kind, summary, _WIDEST_DATE)


def format_date(occurred_at_us: int, tz: ZoneInfo) -> str:
    return datetime.fromtimestamp(occurred_at_us / 1_000_000, tz=tz).strftime(DATE_FORMAT)
