"""The page reader of the concept map: same blocks as the patterns it replaced, in linear time.

`_reference_blocks` is the reader as it was before (its heading pattern was cubic on a long
heading line with blanks inside, its paragraph joining quadratic in the number of lines); on short
pages drawn from the characters that matter it is the reference.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.conceptmap.blocks import (
    MAX_SOFT_HEADING_WORDS,
    MIN_GLOSSARY_LINE_WORDS,
    Block,
    atx_heading,
    parse_blocks,
)

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


def _reference_blocks(text: str, *, markdown: bool) -> Iterator[Block]:
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


# Heading and list marks, fences, rules, glossary separators, punctuation, letters of both cases,
# a digit, blanks and line breaks.
PAGE = st.text(alphabet='#`~-*_|:.("\u2013 \tAaBb1\n', max_size=60)


@settings(max_examples=3000, deadline=None)
@given(PAGE, st.booleans())
def test_blocks_agree_with_the_reader_they_replaced(text: str, markdown: bool) -> None:
    assert list(parse_blocks(text, markdown=markdown)) == list(
        _reference_blocks(text, markdown=markdown)
    )


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="# \t\u00a0Ab", max_size=20))
def test_headings_agree_with_the_pattern_they_replaced(line: str) -> None:
    match = _ATX_HEADING.match(line)
    expected = (len(match.group(1)), match.group(2)) if match else None
    assert atx_heading(line) == expected


def test_a_hyphenated_word_is_joined_across_lines() -> None:
    blocks = list(
        parse_blocks("Osmosis is the diffu-\nsion of water\nacross mem-\nbranes.", markdown=False)
    )
    assert blocks == [Block("text", "Osmosis is the diffusion of water across membranes.")]
