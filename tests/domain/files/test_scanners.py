"""The file readers' scanners cut and strip exactly as the patterns and loops they replaced.

The references below are the code `tutor_memory.domain.files` used before: the Markdown heading
patterns of `read.py` (quadratic on a long line with blanks inside the title), chunking's packing
and Markdown block splitting (quadratic in the pieces of a chunk and in runs of blank lines), and
the Markdown stripping patterns of `passages.py` (quadratic on lines of unclosed marks). On short
texts drawn from the characters that matter they are the reference.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.files.chunking import (
    FENCE,
    chunk,
    closes_fence,
    looks_like_heading,
    split_at_spaces,
    split_markdown_blocks,
    split_paragraphs,
)
from tutor_memory.domain.files.passages import strip_markdown
from tutor_memory.domain.files.read import atx_heading
from tutor_memory.domain.text.sentences import sentence_pieces

# --------------------------------------------------------------------------- headings (read.py)

_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_ATX_CLOSING = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")


def _reference_heading(line: str) -> tuple[int, str] | None:
    match = _ATX_HEADING.match(line)
    if match is None:
        return None
    return len(match.group(1)), _ATX_CLOSING.sub("", match.group(2) or "").strip()


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="# \t\u00a0Ab", max_size=20))
def test_headings_agree_with_the_patterns_they_replaced(line: str) -> None:
    assert atx_heading(line) == _reference_heading(line)


def test_heading_examples() -> None:
    assert atx_heading("## Osmosis ##") == (2, "Osmosis")
    assert atx_heading("#hashtag") is None
    assert atx_heading("    # indented code") is None
    assert atx_heading("# C# ") == (1, "C#")


# --------------------------------------------------------------------------- chunking


def _reference_markdown_blocks(text: str) -> list[str]:
    blocks: list[str] = []
    current: list[str] = []
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None and opened and closes_fence(opened.group(1), fence):
            fence = None
        current.append(line)
        if fence is None and not line.strip() and any(part.strip() for part in current):
            blocks.append("".join(current))
            current = []
    if current:
        if blocks and not any(part.strip() for part in current):
            blocks[-1] += "".join(current)
        else:
            blocks.append("".join(current))
    return blocks


def _reference_pack(pieces: list[str], limit: int) -> list[str]:
    chunks: list[str] = []
    current: list[str] = []
    for piece in pieces:
        if current and len("".join([*current, piece]).strip()) > limit:
            carried: list[str] = []
            if (
                len(current) > 1
                and looks_like_heading(current[-1])
                and len((current[-1] + piece).strip()) <= limit
            ):
                carried = [current.pop()]
            chunks.append("".join(current))
            current = carried
        current.append(piece)
    if current:
        chunks.append("".join(current))
    return chunks


SPLITTERS = (split_paragraphs, sentence_pieces, split_at_spaces)


def _reference_pieces(text: str, limit: int, depth: int = 0) -> list[str]:
    if len(text.strip()) <= limit:
        return [text]
    if depth == len(SPLITTERS):
        return [text[i : i + limit] for i in range(0, len(text), limit)]
    return [p for unit in SPLITTERS[depth](text) for p in _reference_pieces(unit, limit, depth + 1)]


def _reference_chunk(text: str, limit: int) -> list[str]:
    return [
        c for c in (p.strip() for p in _reference_pack(_reference_pieces(text, limit), limit)) if c
    ]


CHUNK_TEXT = st.text(alphabet='ab A.!"  \t\n`~', max_size=80)


@settings(max_examples=3000, deadline=None)
@given(CHUNK_TEXT, st.integers(min_value=1, max_value=12))
def test_chunks_agree_with_the_packing_they_replaced(text: str, limit: int) -> None:
    assert chunk(text, limit, SPLITTERS) == _reference_chunk(text, limit)


@settings(max_examples=3000, deadline=None)
@given(CHUNK_TEXT)
def test_markdown_blocks_agree_with_the_splitter_they_replaced(text: str) -> None:
    assert split_markdown_blocks(text) == _reference_markdown_blocks(text)


# --------------------------------------------------------------------------- passages

_MARKDOWN_MARKUP: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^ {0,3}(?:`{3,}|~{3,}).*$", re.MULTILINE), ""),
    (re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$", re.MULTILINE), ""),
    (re.compile(r"^ {0,3}#{1,6}(?=[ \t]|$)[ \t]*(.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE), r"\1"),
    (re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE), ""),
    (re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+", re.MULTILINE), ""),
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),
    (re.compile(r"`+([^`]+?)`+"), r"\1"),
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),
    (re.compile(r"\*(?=\S)([^*]+?)(?<=\S)\*"), r"\1"),
    (re.compile(r"(?<!\w)_(?=\S)([^_]+?)(?<=\S)_(?!\w)"), r"\1"),
)


def _reference_strip(text: str) -> str:
    for pattern, replacement in _MARKDOWN_MARKUP:
        text = pattern.sub(replacement, text)
    return text


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet="*_#![]()`~>-1. \t\naB", max_size=40))
def test_markdown_stripping_agrees_with_the_patterns_it_replaced(text: str) -> None:
    assert strip_markdown(text) == _reference_strip(text)


def test_markdown_stripping_examples() -> None:
    text = "## Osmosis ##\n> - **water** ~~moves~~ `down` [its](x) ![gradient](y.png)\n---"
    assert strip_markdown(text) == "Osmosis\nwater moves down its gradient\n"
