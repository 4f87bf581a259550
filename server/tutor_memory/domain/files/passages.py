"""Passages: a page's text made ready for search and grounding.

A passage belongs to exactly one page, so a search hit cites that page. Markdown markup is
stripped (heading marks, emphasis, list bullets, block quotes, code fences and backticks, link and
image syntax keep their visible text) and whitespace is collapsed to single spaces, in every
format. A page longer than `MAX_PASSAGE_CHARS` becomes several passages of the same page, cut at
sentence boundaries (between words only inside a sentence longer than a passage). Empty passages
are dropped.

Stripping is linear in the length of the page: the line-start rules are patterns that read one run
of each kind at the start of a line, and the rules that pair marks (headings with closing `#`s,
code spans, strong, struck text, images, links) are scanners, since the patterns they replace were
quadratic on long lines of unclosed marks or blanks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tutor_memory.domain.files.chunking import chunk, split_at_spaces
from tutor_memory.domain.files.document import Document
from tutor_memory.domain.text.markdown import unwrap_images, unwrap_links, unwrap_pairs
from tutor_memory.domain.text.sentences import sentence_pieces

# Longest passage, in characters: a few sentences, small enough that one embedding represents it
# and that several fit in a prompt's budget beside the memory block.
MAX_PASSAGE_CHARS = 1_200


@dataclass(frozen=True, slots=True)
class PassageText:
    page: int
    text: str


# Line-start markup, as (pattern, replacement): each matches at the start of a line and reads a
# run of each kind once, so it cannot backtrack further than the line's first few runs.
_LINE_MARKUP: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^ {0,3}(?:`{3,}|~{3,}).*$", re.MULTILINE), ""),  # code fence lines
    (re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$", re.MULTILINE), ""),  # thematic breaks
)
_QUOTE_AND_LIST_MARKUP: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE), ""),  # block quotes
    (re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+", re.MULTILINE), ""),  # list bullets
)
# Emphasis with `*` and with `_` (only at word edges, so snake_case identifiers survive): the
# inside cannot hold the mark, so an attempt reads up to the next mark only.
_EMPHASIS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\*(?=\S)([^*]+?)(?<=\S)\*"), r"\1"),
    (re.compile(r"(?<!\w)_(?=\S)([^_]+?)(?<=\S)_(?!\w)"), r"\1"),
)

# An ATX heading's marks: at most this many spaces before them, at most this many `#`.
_MAX_HEADING_INDENT = 3
_MAX_HEADING_LEVEL = 6
_BLANKS = " \t"
_BACKTICKS = re.compile(r"`+")


def passages(document: Document) -> list[PassageText]:
    """The document's passages, in page order; see the module docstring for the rules."""
    out: list[PassageText] = []
    for page in document.pages:
        text = strip_markdown(page.text) if document.kind == "markdown" else page.text
        flat = " ".join(text.split())
        out.extend(
            PassageText(page=page.number, text=piece)
            for piece in chunk(flat, MAX_PASSAGE_CHARS, (sentence_pieces, split_at_spaces))
        )
    return out


def strip_markdown(text: str) -> str:
    """`text` without Markdown markup, its visible words in place (line structure kept).

    In order: code fence lines and thematic breaks go; a heading keeps its title; block quote
    marks and list bullets go; images keep their alt text and links their text; code spans,
    strong and struck text, then emphasis keep what they hold.
    """
    for pattern, replacement in _LINE_MARKUP:
        text = pattern.sub(replacement, text)
    text = "\n".join(_heading_title(line) for line in text.split("\n"))
    for pattern, replacement in _QUOTE_AND_LIST_MARKUP:
        text = pattern.sub(replacement, text)
    text = _code_spans(unwrap_links(unwrap_images(text)))
    text = _tight_pairs(_tight_pairs(text, ("**", "__")), ("~~",))
    for pattern, replacement in _EMPHASIS:
        text = pattern.sub(replacement, text)
    return text


def _heading_title(line: str) -> str:
    """The title of an ATX heading line (up to 3 spaces, 1-6 `#`, a blank or the end, the title,
    optionally blanks and a closing run of `#`), or the line itself when it is not one."""
    indent = len(line) - len(line.lstrip(" "))
    marks_end = len(line) - len(line[indent:].lstrip("#"))
    if indent > _MAX_HEADING_INDENT or not 0 < marks_end - indent <= _MAX_HEADING_LEVEL:
        return line
    if marks_end < len(line) and line[marks_end] not in _BLANKS:
        return line
    start = len(line) - len(line[marks_end:].lstrip(_BLANKS))
    blanks_at_end = len(line.rstrip(_BLANKS))
    closing = len(line[:blanks_at_end].rstrip("#"))
    before_closing = len(line[:closing].rstrip(_BLANKS))
    if closing < blanks_at_end and before_closing < closing and start < closing:
        return line[start : max(start, before_closing)]
    return line[start : max(start, blanks_at_end)]


def _code_spans(text: str) -> str:
    """Each code span (a run of backticks, at least one other character, a run of backticks)
    replaced by what it holds."""
    out: list[str] = []
    kept = pos = 0
    while (start := text.find("`", pos)) >= 0:
        inside = _BACKTICKS.match(text, start)
        assert inside is not None  # there is a backtick at `start`
        close = text.find("`", inside.end())
        if close < 0:
            break  # no span can close after this
        end = _BACKTICKS.match(text, close)
        assert end is not None
        out += (text[kept:start], text[inside.end() : close])
        kept = pos = end.end()
    out.append(text[kept:])
    return "".join(out)


def _tight_pairs(text: str, marks: tuple[str, ...]) -> str:
    """Each `mark…mark` (on one line, no white space just inside either mark) replaced by what it
    holds."""

    def opens(mark: str, i: int) -> bool:
        inside = i + len(mark)
        return inside < len(text) and not text[inside].isspace()

    def closes(mark: str, q: int) -> bool:
        return not text[q - 1].isspace()

    return unwrap_pairs(text, marks, opens=opens, closes=closes)
