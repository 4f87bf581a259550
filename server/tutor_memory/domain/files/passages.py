"""Passages: a page's text made ready for search and grounding.

A passage belongs to exactly one page, so a search hit cites that page. Markdown markup is
stripped (heading marks, emphasis, list bullets, block quotes, code fences and backticks, link and
image syntax keep their visible text) and whitespace is collapsed to single spaces, in every
format. A page longer than `MAX_PASSAGE_CHARS` becomes several passages of the same page, cut at
sentence boundaries (between words only inside a sentence longer than a passage). Empty passages
are dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tutor_memory.domain.files.chunking import chunk, split_sentences, split_words
from tutor_memory.domain.files.document import Document

# Longest passage, in characters: a few sentences, small enough that one embedding represents it
# and that several fit in a prompt's budget beside the memory block.
MAX_PASSAGE_CHARS = 1_200


@dataclass(frozen=True, slots=True)
class PassageText:
    page: int
    text: str


# Markdown markup as (pattern, replacement), applied in order. Links and images come before
# emphasis so that `[**term**](url)` keeps `term`; line-start marks are matched per line.
_MARKDOWN_MARKUP: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^ {0,3}(?:`{3,}|~{3,}).*$", re.MULTILINE), ""),  # code fence lines
    (re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$", re.MULTILINE), ""),  # thematic breaks
    (re.compile(r"^ {0,3}#{1,6}(?=[ \t]|$)[ \t]*(.*?)(?:[ \t]+#+)?[ \t]*$", re.MULTILINE), r"\1"),
    (re.compile(r"^[ \t]*(?:>[ \t]?)+", re.MULTILINE), ""),  # block quotes
    (re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+", re.MULTILINE), ""),  # list bullets
    (re.compile(r"!\[([^\]]*)\]\([^)]*\)"), r"\1"),  # images keep their alt text
    (re.compile(r"\[([^\]]+)\]\([^)]*\)"), r"\1"),  # links keep their text
    (re.compile(r"`+([^`]+?)`+"), r"\1"),  # inline code
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # strong
    (re.compile(r"~~(?=\S)(.+?)(?<=\S)~~"), r"\1"),  # strikethrough
    (re.compile(r"\*(?=\S)([^*]+?)(?<=\S)\*"), r"\1"),  # emphasis with *
    # Emphasis with _ only at word edges, so snake_case identifiers survive.
    (re.compile(r"(?<!\w)_(?=\S)([^_]+?)(?<=\S)_(?!\w)"), r"\1"),
)


def passages(document: Document) -> list[PassageText]:
    """The document's passages, in page order; see the module docstring for the rules."""
    out: list[PassageText] = []
    for page in document.pages:
        text = strip_markdown(page.text) if document.kind == "markdown" else page.text
        flat = " ".join(text.split())
        out.extend(
            PassageText(page=page.number, text=piece)
            for piece in chunk(flat, MAX_PASSAGE_CHARS, (split_sentences, split_words))
        )
    return out


def strip_markdown(text: str) -> str:
    """`text` without Markdown markup, its visible words in place (line structure kept)."""
    for pattern, replacement in _MARKDOWN_MARKUP:
        text = pattern.sub(replacement, text)
    return text
