"""The concept map's lines in the memory block (SPEC R3.6, R4.1).

The header states what its percentage is about, because a readiness number that can be read as
the student's mastery will be read that way. A concept's line is
`- Name: summary [taught: note] (builds on: A, B)`; a line longer than LINE_MAX_CHARS is shortened,
cutting at a word and marking the cut with an ellipsis: the name first keeps up to NAME_MAX_CHARS,
the prerequisites keep up to a third of the line, and what remains is shared between the taught
note and the summary (half each, or more for one when the other needs less).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

HEADER_TEMPLATE = (
    "SUBJECT MAP ({count}; the files explain {percent}% of it, this is about the material, "
    "NOT the student's mastery):"
)

# Longest line of one concept, in characters (about 60 tokens), so that a map of a dozen
# concepts stays a small part of a turn's budget.
LINE_MAX_CHARS = 240

# Longest concept name kept whole on a line.
NAME_MAX_CHARS = 80

# Below this many characters a summary or note is dropped rather than shown as a stub.
_MIN_CLIP_CHARS = 12

ELLIPSIS = "…"


def header(count: int, subject_readiness: float) -> str:
    concepts = "1 concept" if count == 1 else f"{count} concepts"
    return HEADER_TEMPLATE.format(count=concepts, percent=percent(subject_readiness))


def percent(readiness: float) -> int:
    """A readiness in [0, 1] as a whole percentage, halves rounded up."""
    return math.floor(readiness * 100 + 0.5)


def concept_line(
    name: str, summary: str, taught: Sequence[str], prerequisites: Sequence[str]
) -> str:
    head = "- " + clip(name, NAME_MAX_CHARS)
    builds = _builds_on([clip(p, NAME_MAX_CHARS) for p in prerequisites], LINE_MAX_CHARS // 3)
    note = "; ".join(taught)
    summary_open, note_open, note_close = ": ", " [taught: ", "]"
    room = LINE_MAX_CHARS - len(head) - len(builds)
    summary_room, note_room = _share(
        room,
        len(summary_open) + len(summary) if summary else 0,
        len(note_open) + len(note) + len(note_close) if note else 0,
    )
    summary_part = _framed(summary_open, summary, "", summary_room)
    note_part = _framed(note_open, note, note_close, note_room)
    return head + summary_part + note_part + builds


def _framed(opening: str, text: str, closing: str, room: int) -> str:
    """`opening + text + closing` within `room` characters, the text clipped; "" if it can't fit."""
    allowed = room - len(opening) - len(closing)
    if not text or allowed < min(len(text), _MIN_CLIP_CHARS):
        return ""
    return opening + clip(text, allowed) + closing


def _share(room: int, first_need: int, second_need: int) -> tuple[int, int]:
    """Split `room` between two parts: each gets what it needs if both fit, else half at least."""
    if first_need + second_need <= room:
        return first_need, second_need
    half = room // 2
    if first_need <= half:
        return first_need, room - first_need
    if second_need <= half:
        return room - second_need, second_need
    return room - half, half


def _builds_on(prerequisites: Sequence[str], limit: int) -> str:
    if not prerequisites:
        return ""
    shown: list[str] = []
    for index, name in enumerate(prerequisites):
        more = index + 1 < len(prerequisites)
        candidate = [*shown, name]
        text = f" (builds on: {', '.join(candidate)}{', ' + ELLIPSIS if more else ''})"
        if len(text) > limit and shown:
            return f" (builds on: {', '.join(shown)}, {ELLIPSIS})"
        shown = candidate
    return f" (builds on: {', '.join(shown)})"


def clip(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters at a word boundary, marked with an ellipsis."""
    if len(text) <= limit:
        return text
    if limit <= len(ELLIPSIS):
        return ELLIPSIS[:limit]
    cut = text[: limit - len(ELLIPSIS)]
    space = cut.rfind(" ")
    # Cutting at the word boundary must not throw away most of the room (one very long word).
    if space > len(cut) // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + ELLIPSIS
