"""A page cut into headings and blocks of running text, for the offline extractor.

Markdown: `#` headings, list items and paragraphs (soft-wrapped lines joined); fenced code and
tables are skipped. PDF and plain text have no markup: lines are joined into paragraphs, a line
that looks like a glossary entry ("Osmosis: the diffusion of water") starts a block of its own, and
a short unpunctuated line followed by a capitalised one is taken as a heading ("soft": it gives
structure but is not proposed as a concept, since page headers and running titles look the same).
Words hyphenated across a line break are joined.

Every step is linear in the length of the page: headings are read by a scanner (the pattern it
replaces was cubic on a long heading line with blanks in it), the patterns that remain either match
at the start of a line only and read one run of each kind, or are bounded, and a paragraph is joined
piece by piece instead of being re-read at each line.
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

# Most white-space characters before a heading's `#`, and most `#` of a heading.
_MAX_HEADING_INDENT = 3
_MAX_HEADING_LEVEL = 6
# A thematic break ("---", "* * *"): at least this many of one of its characters.
_RULE_CHARS = "-*_"
_MIN_RULE_MARKS = 3

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_TABLE_ROW = re.compile(r"^\s*\|")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+\u2022\u25e6\u25aa\u2023]|\d+[.)])\s+(.*)$")
# Bounded: the term is at most 61 characters, so each line is read a fixed number of times.
_GLOSSARY_START = re.compile(
    r"^\s*(?:\*\*|__)?[^\W\d_][^:\u2013\u2014]{0,60}?(?:\*\*|__)?\s*(?::|\s[-\u2013\u2014]\s)"
    r"\s*(?P<rest>\S.*)$"
)
# What a line ends with when it ends a sentence or a clause (closing quotes and brackets too).
_LINE_END_MARKS = frozenset('.!?:;,\u061f\u061b\u060c)]"\u201d')
_STARTS_CAPITAL_OR_UNCASED = re.compile(r"^\s*[\"'(\u201c]?(?=[^\W\d_])(?![a-z\u00df-\u00ff])")


@dataclass(frozen=True, slots=True)
class Block:
    """A heading (with its level, 1 = top; `soft` for headings guessed in unmarked text) or a
    block of running text (a paragraph or a list item), markup kept."""

    kind: Literal["heading", "text"]
    text: str
    level: int = 0
    soft: bool = False


def _is_letter(char: str) -> bool:
    # A letter as regular expressions see one ([^\W\d_]): alphanumeric but not a decimal digit.
    return char.isalnum() and not char.isdecimal()


def _ends_line(line: str) -> bool:
    """Whether `line` ends a sentence or a clause (trailing white space aside)."""
    return line.rstrip()[-1:] in _LINE_END_MARKS


def atx_heading(line: str) -> tuple[int, str] | None:
    """(level, title) of a Markdown `#` heading line, or None.

    Up to 3 white-space characters, 1-6 `#`, white space, then the title: everything up to a
    closing run of white space, `#` and white space (the title keeps at least one character).
    """
    indent = len(line) - len(line.lstrip())
    if indent > _MAX_HEADING_INDENT:
        return None
    marks_end = len(line) - len(line[indent:].lstrip("#"))
    level = marks_end - indent
    if not 0 < level <= _MAX_HEADING_LEVEL:
        return None
    title_start = len(line) - len(line[marks_end:].lstrip())
    if title_start == marks_end:
        return None  # "#hashtag"
    if title_start == len(line):
        # Nothing but white space after the marks: the title is the last of it, when the space
        # before it is not left empty (the pattern this follows needs both).
        return (level, line[-1]) if title_start - marks_end > 1 else None
    closing = len(line.rstrip())
    closing = len(line[:closing].rstrip("#"))
    closing = len(line[:closing].rstrip())
    return level, line[title_start : max(title_start + 1, closing)]


def _is_rule(line: str) -> bool:
    """Whether `line` is a thematic break: three or more of one of - * _, white space between."""
    body = line.lstrip()
    if len(line) - len(body) > _MAX_HEADING_INDENT or not body or body[0] not in _RULE_CHARS:
        return False
    marks = body.count(body[0])
    return marks >= _MIN_RULE_MARKS and not body.replace(body[0], "").strip()


def _join(lines: list[str]) -> str:
    """The lines of a paragraph as one line; a word hyphenated across a line break is joined."""
    parts: list[str] = []
    length = 0
    tail = ""  # the last two characters joined so far
    for line in lines:
        line = line.strip()
        if len(tail) == 2 and tail[1] == "-" and _is_letter(tail[0]) and line[:1].islower():
            parts[-1] = parts[-1][:-1]
            parts.append(line)
            length += len(line) - 1
            tail = (tail[0] + line[-2:])[-2:]
        elif length:
            parts += (" ", line)
            length += 1 + len(line)
            tail = (tail + " " + line[-2:])[-2:]
        else:
            parts, length, tail = [line], len(line), line[-2:]
    return "".join(parts)


def _is_glossary_line(line: str) -> bool:
    entry = _GLOSSARY_START.match(line)
    return entry is not None and len(entry.group("rest").split()) >= MIN_GLOSSARY_LINE_WORDS


def _is_soft_heading(line: str, next_line: str | None, after_break: bool) -> bool:
    words = line.split()
    return (
        after_break
        and next_line is not None
        and 0 < len(words) <= MAX_SOFT_HEADING_WORDS
        and not _ends_line(line)
        and any(c.isalpha() for c in line)
        and bool(_STARTS_CAPITAL_OR_UNCASED.match(next_line))
    )


def parse_blocks(text: str, *, markdown: bool) -> Iterator[Block]:
    """The headings and text blocks of one page, in order."""
    lines = text.splitlines()
    paragraph: list[str] = []
    in_fence = False
    # The next line with text after each line (None after the last one), found in one pass.
    next_lines: list[str | None] = [None] * len(lines)
    following: str | None = None
    for index in range(len(lines) - 1, -1, -1):
        next_lines[index] = following
        if lines[index].strip():
            following = lines[index]

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
        if not line.strip() or _is_rule(line) or (markdown and _TABLE_ROW.match(line)):
            yield from flush()
            continue
        heading = atx_heading(line) if markdown else None
        if heading:
            yield from flush()
            level, title = heading
            yield Block("heading", title, level=level)
            continue
        # A glossary entry or a heading starts a line only where the line before ended a sentence:
        # otherwise it is a wrapped line of running text.
        after_break = not paragraph or _ends_line(paragraph[-1])
        item = _LIST_ITEM.match(line)
        if item or (after_break and _is_glossary_line(line)):
            yield from flush()
            paragraph.append(item.group(1) if item else line)
            continue
        if not markdown and _is_soft_heading(line, next_lines[index], after_break):
            yield from flush()
            yield Block("heading", line.strip(), level=1, soft=True)
            continue
        paragraph.append(line)
    yield from flush()
