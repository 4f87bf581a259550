"""Cutting text into pieces no longer than a limit, at the most natural boundary that fits.

A text is cut at paragraph boundaries first; a paragraph that alone exceeds the limit is cut at
sentence boundaries; a sentence that alone exceeds it, between words; a word that alone exceeds it
(a URL, a base64 blob), at the limit. Neighbouring pieces are then packed greedily, in order, up to
the limit, so a chunk is as full as the boundaries allow, except that a chunk does not end with a
title line (a short single line without closing punctuation) that could open the next chunk: a
heading stays with the text it introduces.

Sentence boundaries are those of `tutor_memory.domain.text.sentences` under its `LINES_JOINED`
rule (`sentence_pieces`): punctuation-based and language-neutral, with no abbreviation lexicon, so
an abbreviation ("e.g. ", "Dr. ") counts as a boundary; that can only make a chunk end a little
early, never lose or reorder text.

Every step is linear in the length of the text: the splitters scan once, and packing keeps the
stripped length of the chunk being built up to date piece by piece instead of re-joining it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tutor_memory.domain.text.sentences import ends_with_sentence_end

# Punctuation that ends a clause: a line ending in one continues into the next.
_CLAUSE_END = frozenset(",;:")

# Longest line that can be a heading, in characters.
HEADING_MAX_CHARS = 80

# A paragraph break: a line holding nothing but whitespace. Linear: an attempt starts only at a line
# break and reads the blanks after it, which no other attempt reads.
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


def split_at_spaces(text: str) -> list[str]:
    """`text` cut after every run of white space: its words, each keeping the white space after
    it (unlike `tutor_memory.domain.text.words.split_words`, which keeps letters only)."""
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
    # Whether `current` holds a line with text (tracked, not recomputed: a run of blank lines
    # would otherwise be rescanned at each of its lines).
    has_text = False
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        opened = FENCE.match(line)
        if fence is None and opened:
            fence = opened.group(1)
        elif fence is not None and opened and closes_fence(opened.group(1), fence):
            fence = None
        current.append(line)
        blank = not line.strip()
        has_text = has_text or not blank
        if fence is None and blank and has_text:
            blocks.append("".join(current))
            current, has_text = [], False
    if current:
        if blocks and not has_text:
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
        and not ends_with_sentence_end(line)
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


@dataclass(slots=True)
class _Stripped:
    """The length of a concatenation of pieces once stripped, kept up to date piece by piece."""

    chars: int = 0  # every character
    leading: int = 0  # white space before the first non-blank character (all of it while blank)
    trailing: int = 0  # white space after the last non-blank character
    blank: bool = True

    def length_with(self, piece: str) -> int:
        """The stripped length once `piece` is appended."""
        body = len(piece.strip())
        if not body:
            return 0 if self.blank else self.chars - self.leading - self.trailing
        if self.blank:
            return body
        return self.chars - self.leading + len(piece.rstrip())

    def add(self, piece: str) -> None:
        if not piece.strip():
            self.trailing += len(piece)
            if self.blank:
                self.leading += len(piece)
        else:
            if self.blank:
                self.leading += len(piece) - len(piece.lstrip())
                self.blank = False
            self.trailing = len(piece) - len(piece.rstrip())
        self.chars += len(piece)


def _pack(pieces: list[str], limit: int) -> list[str]:
    """Join consecutive pieces while the stripped result stays within `limit`."""
    chunks: list[str] = []
    current: list[str] = []
    size = _Stripped()
    for piece in pieces:
        if current and size.length_with(piece) > limit:
            carried: list[str] = []
            if (
                len(current) > 1
                and looks_like_heading(current[-1])
                and len((current[-1] + piece).strip()) <= limit
            ):
                carried = [current.pop()]
            chunks.append("".join(current))
            current, size = carried, _Stripped()
            for kept in carried:
                size.add(kept)
        current.append(piece)
        size.add(piece)
    if current:
        chunks.append("".join(current))
    return chunks
