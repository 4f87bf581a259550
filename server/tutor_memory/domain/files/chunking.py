"""Cutting text into pieces no longer than a limit, at the most natural boundary that fits.

A text is cut at paragraph boundaries first; a paragraph that alone exceeds the limit is cut at
sentence boundaries; a sentence that alone exceeds it, between words; a word that alone exceeds it
(a URL, a base64 blob), at the limit. Neighbouring pieces are then packed greedily, in order, up to
the limit, so a chunk is as full as the boundaries allow, except that a chunk does not end with a
title line (a short single line without closing punctuation) that could open the next chunk: a
heading stays with the text it introduces.

Sentence boundaries are punctuation-based and language-neutral: one or more of `. ! ? …` (and the
CJK and Arabic full stop and question marks) followed by optional closing quotes or brackets and
whitespace. An abbreviation ("e.g. ", "Dr. ") therefore counts as a boundary; that can only make a
chunk end a little early, never lose or reorder text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

# Sentence-ending punctuation (escaped: ellipsis, ideographic full stop, fullwidth ! and ?, Arabic
# question mark) and the closing quotes or brackets that may follow it (escaped: curly double and
# single quotes, closing guillemet).
_TERMINAL = ".!?\u2026\u3002\uff01\uff1f\u061f"
_CLOSING = "\"')\\]\u201d\u2019\u00bb"
# The end of a sentence inside a text, and at the end of a line.
_SENTENCE_END = re.compile(f"[{_TERMINAL}]+[{_CLOSING}]*\\s+")
_ENDS_SENTENCE = re.compile(f"[{_TERMINAL}]+[{_CLOSING}]*$")

# Punctuation that ends a clause: a line ending in one continues into the next.
_CLAUSE_END = frozenset(",;:")

# Longest line that can be a heading, in characters.
HEADING_MAX_CHARS = 80

# A paragraph break: a line holding nothing but whitespace.
_BLANK_LINE = re.compile(r"\n[ \t]*\n\s*")

# A run of whitespace followed by the next word.
_WORD_GAP = re.compile(r"\s+")

# A line that opens or closes a fenced Markdown code block (``` or ~~~, up to 3 spaces indented).
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")

Splitter = Callable[[str], list[str]]


def _split_after(text: str, boundary: re.Pattern[str]) -> list[str]:
    """Cut `text` after every match of `boundary`; the pieces concatenate back to `text`."""
    pieces: list[str] = []
    start = 0
    for match in boundary.finditer(text):
        if match.end() < len(text):
            pieces.append(text[start : match.end()])
            start = match.end()
    pieces.append(text[start:])
    return [piece for piece in pieces if piece]


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`, each keeping its trailing whitespace."""
    return _split_after(text, _SENTENCE_END)


def split_words(text: str) -> list[str]:
    """Words of `text`, each keeping its trailing whitespace."""
    return _split_after(text, _WORD_GAP)


def split_paragraphs(text: str) -> list[str]:
    """Paragraphs of plain text (separated by blank lines), each keeping its trailing break."""
    return _split_after(text, _BLANK_LINE)


def split_markdown_blocks(text: str) -> list[str]:
    """Paragraphs of Markdown: like `split_paragraphs`, but a fenced code block is never cut.

    Blank lines inside a ``` or ~~~ fence belong to the code, not to the prose around it.
    """
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


def closes_fence(marker: str, opening: str) -> bool:
    """A fence closes with the same character, at least as long as the one that opened it."""
    return marker[0] == opening[0] and len(marker) >= len(opening)


def looks_like_heading(piece: str) -> bool:
    """A short single line with no closing punctuation: a title, which belongs with what follows."""
    line = piece.strip()
    return (
        0 < len(line) <= HEADING_MAX_CHARS
        and "\n" not in line
        and not _ENDS_SENTENCE.search(line)
        and line[-1] not in _CLAUSE_END
    )


def chunk(text: str, limit: int, splitters: Sequence[Splitter]) -> list[str]:
    """Cut `text` into stripped, non-empty chunks of at most `limit` characters.

    `splitters` are the boundaries to try, coarsest first (e.g. paragraphs, sentences, words);
    below the last one a piece is cut at exactly `limit` characters. A chunk never ends with a
    heading-like piece (see `looks_like_heading`) when that piece can open the next chunk instead.
    """
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    return [c for c in (p.strip() for p in _pack(_pieces(text, limit, splitters), limit)) if c]


def _pieces(text: str, limit: int, splitters: Sequence[Splitter]) -> list[str]:
    """`text` cut into pieces that each fit within `limit` once stripped, in order."""
    if len(text.strip()) <= limit:
        return [text]
    if not splitters:
        return [text[i : i + limit] for i in range(0, len(text), limit)]
    out: list[str] = []
    for unit in splitters[0](text):
        out.extend(_pieces(unit, limit, splitters[1:]))
    return out


def _pack(pieces: list[str], limit: int) -> list[str]:
    """Join consecutive pieces while the stripped result stays within `limit`."""
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
