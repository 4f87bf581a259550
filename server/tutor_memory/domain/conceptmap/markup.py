"""Markdown inline markup: what it emphasises, and the plain text under it."""

from __future__ import annotations

import re

# Inline markup whose content is kept: images and links keep their text, emphasis and code spans
# keep their content. Emphasis with underscores only counts at word edges (snake_case is a word).
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_STRONG = re.compile(r"\*\*(.+?)\*\*|(?<!\w)__(.+?)__(?!\w)")
_EMPHASIS = re.compile(
    r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])|(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)"
)
_CODE = re.compile(r"`+([^`]*)`+")
_HTML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_HEADING_MARKS = re.compile(r"^\s{0,3}#{1,6}\s+|\s+#+\s*$")
_SPACES = re.compile(r"\s+")


def strong_spans(text: str) -> list[str]:
    """The contents of `**bold**` / `__bold__` spans of `text`, in order, markup removed."""
    return [strip_markup(a or b) for a, b in _STRONG.findall(text)]


def strip_markup(text: str) -> str:
    """`text` without Markdown inline markup and heading marks, spacing collapsed."""
    text = _HEADING_MARKS.sub(" ", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    text = _HTML_TAG.sub(" ", text)
    text = _STRONG.sub(lambda m: m.group(1) or m.group(2), text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)
    return _SPACES.sub(" ", text).strip()
