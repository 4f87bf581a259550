"""A page cut into headings and blocks of running text, for the offline extractor.

Markdown: `#` headings, list items and paragraphs (soft-wrapped lines joined); fenced code and
tables are skipped. PDF and plain text have no markup: lines are joined into paragraphs, a line
that looks like a glossary entry ("Osmosis: the diffusion of water") starts a block of its own, and
a short unpunctuated line followed by a capitalised one is taken as a heading ("soft": it gives
structure but is not proposed as a concept, since page headers and running titles look the same).
Words hyphenated across a line break are joined.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

# A soft heading (PDF, text) has at most this many words.
MAX_SOFT_HEADING_WORDS = 6

# A line starts a glossary entry only if its definition has this many words on the line itself
# ("Biology 101 - Unit 2" is a running header, not an entry).
MIN_GLOSSARY_LINE_WORDS = 3

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_ATX_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.+?)\s*#*\s*$")
_RULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_TABLE_ROW = re.compile(r"^\s*\|")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022\u25e6\u25aa\u2023]|\d+[.)])\s+(.*)$")
_GLOSSARY_START = re.compile(
    r"^\s*(?:\*\*|__)?[^\W\d_][^:\u2013\u2014]{0,60}?(?:\*\*|__)?\s*(?::|\s[-\u2013\u2014]\s)"
    r"\s*(?P<rest>\S.*)$"
)
_ENDS_SENTENCE = re.compile(r"[.!?:;,\u061f\u061b\u060c)\]\"\u201d]\s*$")
_HYPHENATED = re.compile(r"[^\W\d_]-$")
_STARTS_CAPITAL_OR_UNCASED = re.compile(r"^\s*[\"'(\u201c]?(?=[^\W\d_])(?![a-z\u00df-\u00ff])")


@dataclass(frozen=True, slots=True)
class Block:
    """A heading (with its level, 1 = top; `soft` for headings guessed in unmarked text) or a
    block of running text (a paragraph or a list item), markup kept."""

    kind: Literal["heading", "text"]
    text: str
    level: int = 0
    soft: bool = False


def _join(lines: list[str]) -> str:
    joined = ""
    for line in lines:
        line = line.strip()
        if _HYPHENATED.search(joined) and line[:1].islower():
            joined = joined[:-1] + line
        else:
            joined = f"{joined} {line}" if joined else line
    return joined


def _is_glossary_line(line: str) -> bool:
    entry = _GLOSSARY_START.match(line)
    return entry is not None and len(entry.group("rest").split()) >= MIN_GLOSSARY_LINE_WORDS


def _is_soft_heading(line: str, next_line: str | None, after_break: bool) -> bool:
    words = line.split()
    return (
        after_break
        and next_line is not None
        and 0 < len(words) <= MAX_SOFT_HEADING_WORDS
        and not _ENDS_SENTENCE.search(line)
        and any(c.isalpha() for c in line)
        and bool(_STARTS_CAPITAL_OR_UNCASED.match(next_line))
    )


def parse_blocks(text: str, *, markdown: bool) -> Iterator[Block]:
    """The headings and text blocks of one page, in order."""
    lines = text.splitlines()
    paragraph: list[str] = []
    in_fence = False

    def flush() -> Iterator[Block]:
        if paragraph:
            yield Block("text", _join(paragraph))
            paragraph.clear()

    for index, line in enumerate(lines):
        if markdown and _FENCE.match(line):
            yield from flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if not line.strip() or _RULE.match(line) or (markdown and _TABLE_ROW.match(line)):
            yield from flush()
            continue
        heading = _ATX_HEADING.match(line) if markdown else None
        if heading:
            yield from flush()
            yield Block("heading", heading.group(2), level=len(heading.group(1)))
            continue
        # A glossary entry or a heading starts a line only where the line before ended a sentence:
        # otherwise it is a wrapped line of running text.
        after_break = not paragraph or bool(_ENDS_SENTENCE.search(paragraph[-1]))
        item = _LIST_ITEM.match(line)
        if item or (after_break and _is_glossary_line(line)):
            yield from flush()
            paragraph.append(item.group(1) if item else line)
            continue
        if not markdown:
            next_line = next((n for n in lines[index + 1 :] if n.strip()), None)
            if _is_soft_heading(line, next_line, after_break):
                yield from flush()
                yield Block("heading", line.strip(), level=1, soft=True)
                continue
        paragraph.append(line)
    yield from flush()
