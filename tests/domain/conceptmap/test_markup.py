"""Markdown inline markup: the linear scanners give what the patterns they replaced gave.

The patterns below are the ones `tutor_memory.domain.conceptmap.markup` used before (quadratic on
unclosed marks and long blank runs); on short texts drawn from the characters that matter they
are the reference.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.conceptmap.markup import strip_markup, strong_spans

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


def _reference_strong_spans(text: str) -> list[str]:
    return [_reference_strip(a or b) for a, b in _STRONG.findall(text)]


def _reference_strip(text: str) -> str:
    text = _HEADING_MARKS.sub(" ", text)
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _CODE.sub(r"\1", text)
    text = _HTML_TAG.sub(" ", text)
    text = _STRONG.sub(lambda m: m.group(1) or m.group(2), text)
    text = _EMPHASIS.sub(lambda m: m.group(1) or m.group(2), text)
    return _SPACES.sub(" ", text).strip()


# Every character some rule looks at, plus letters, a digit, blanks and a line break.
MARKUP_TEXT = st.text(alphabet="*_#![]()`<>/ \t\naB1-", max_size=40)


@settings(max_examples=3000, deadline=None)
@given(MARKUP_TEXT)
def test_strip_markup_agrees_with_the_patterns_it_replaced(text: str) -> None:
    assert strip_markup(text) == _reference_strip(text)


@settings(max_examples=3000, deadline=None)
@given(MARKUP_TEXT)
def test_strong_spans_agree_with_the_pattern_they_replaced(text: str) -> None:
    assert strong_spans(text) == _reference_strong_spans(text)


def test_markup_examples() -> None:
    assert strip_markup("## **Osmosis** and [diffusion](http://x) ![fig](a.png) `code` ##") == (
        "Osmosis and diffusion fig code"
    )
    assert strip_markup("<b>snake_case</b> stays, _this_ goes, *and this*") == (
        "snake_case stays, this goes, and this"
    )
    assert strong_spans("**Osmosis** is __passive__ but __not_this") == ["Osmosis", "passive"]
