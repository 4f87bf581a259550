"""Sentences of a text, as spans of the original."""

from __future__ import annotations

import re

# A sentence ends at terminal punctuation (Latin, Arabic, ellipsis, full-width) followed by closing
# quotes or brackets and white space, or at a line break.
_BOUNDARY = re.compile(r"[.!?\u061f\u2026\uff01\uff1f]+[\"'\u201d\u2019\u00bb)\]]*(?:\s+|$)|\n+")

# A full stop after a single letter or an inner-dotted abbreviation ("e.g.", "i.e.", "A. thaliana")
# does not end a sentence.
_ABBREVIATION = re.compile(r"(?:^|[\s(])(?:[^\W\d_]|[^\W\d_]\.[^\W\d_])$")

TERMINAL_PUNCTUATION = ".!?;:,\u061f\u061b\u060c\u2026\uff01\uff1f"


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-blank sentence of `text`, terminal punctuation included."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        if match.group().startswith(".") and _ABBREVIATION.search(text, start, match.start()):
            continue
        end = match.start() + len(match.group().rstrip())
        if text[start:end].strip():
            spans.append((start, end))
        start = match.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return spans
