"""Markdown inline markup: what it emphasises, and the plain text under it.

Inline markup whose content is kept: images and links keep their text, emphasis and code spans keep
their content, HTML tags become a space, heading marks go. Emphasis with underscores only counts at
word edges (snake_case is a word). The rules, in the order they apply (each to the result of the
one before):

1. heading marks: up to 3 white-space characters, 1-6 `#` and white space at the start of the
   text; white space, a run of `#` and trailing white space at its end;
2. images `![alt](target)` -> alt; 3. links `[text](target)` -> text (not empty);
4. code spans: a run of backticks, anything but a backtick, a run of backticks -> the inside;
5. HTML tags `<name …>`, `</name>` -> a space;
6. strong `**x**` (x on one line), `__x__` (at word edges);
7. emphasis `*x*` and `_x_`: at word edges, x on one line, neither starting nor ending with white
   space;
8. white space collapsed, the result stripped.

Every rule is a scan in time linear in the length of the text (see `tutor_memory.domain.text.
markdown`); the patterns they replace were quadratic on unclosed marks ("__a " repeated, "<a"
repeated) and on long runs of blanks.
"""

from __future__ import annotations

import re

from tutor_memory.domain.text.markdown import (
    NextMark,
    is_word_char,
    unwrap_images,
    unwrap_links,
    unwrap_pairs,
)

_SPACES = re.compile(r"\s+")
# Linear as it stands: an attempt reads a run of backticks and then up to the next backtick, so
# only an attempt with no backtick after it fails, and only the last one can be that.
_CODE = re.compile(r"`+([^`]*)`+")

_MAX_HEADING_INDENT = 3
_MAX_HEADING_LEVEL = 6


def _heading_marks(text: str) -> str:
    """Rule 1: heading marks at the start and at the end of `text`, each replaced by a space."""
    prefix, body_start = "", 0
    indent = len(text) - len(text.lstrip())
    if indent <= _MAX_HEADING_INDENT:
        marks_end = len(text) - len(text[indent:].lstrip("#"))
        title_start = len(text) - len(text[marks_end:].lstrip())
        if 0 < marks_end - indent <= _MAX_HEADING_LEVEL and title_start > marks_end:
            prefix, body_start = " ", title_start
    # The closing marks: white space, `#`s, then nothing but white space.
    end = len(text.rstrip())
    hashes = len(text[:end].rstrip("#"))
    blanks_start = max(body_start, len(text[:hashes].rstrip()))
    if hashes < end and blanks_start < hashes:
        return prefix + text[body_start:blanks_start] + " "
    return prefix + text[body_start:]


def _html_tags(text: str) -> str:
    """Rule 5. Only text before the last `>` is searched: there every tag closes at the next `>`,
    after it none can."""
    cut = text.rfind(">") + 1
    tag_end = NextMark(text, ">")
    out: list[str] = []
    kept = pos = 0
    while (start := text.find("<", pos, cut)) >= 0:
        name = start + 2 if text.startswith("/", start + 1) else start + 1
        end = tag_end.at_or_after(name + 1)
        if name < len(text) and text[name].isascii() and text[name].isalpha() and end >= 0:
            out += (text[kept:start], " ")
            kept = pos = end + 1
        else:
            pos = start + 1
    out.append(text[kept:])
    return "".join(out)


def _strong(text: str, contents: list[str] | None = None) -> str:
    """Rule 6; with `contents`, also collects what each strong span holds."""

    def opens(mark: str, i: int) -> bool:
        return mark == "**" or i == 0 or not is_word_char(text[i - 1])

    def closes(mark: str, q: int) -> bool:
        return mark == "**" or q + 2 >= len(text) or not is_word_char(text[q + 2])

    return unwrap_pairs(text, ("**", "__"), opens=opens, closes=closes, contents=contents)


def _emphasis(text: str) -> str:
    """Rule 7: neither mark may touch a word character, nor a `*` touch another `*`."""

    def touches(mark: str, char: str) -> bool:
        return is_word_char(char) or (mark == "*" and char == "*")

    def opens(mark: str, i: int) -> bool:
        return (
            (i == 0 or not touches(mark, text[i - 1]))
            and i + 1 < len(text)
            and not text[i + 1].isspace()
        )

    def closes(mark: str, q: int) -> bool:
        return not text[q - 1].isspace() and (q + 1 == len(text) or not touches(mark, text[q + 1]))

    return unwrap_pairs(text, ("*", "_"), opens=opens, closes=closes)


def strong_spans(text: str) -> list[str]:
    """The contents of `**bold**` / `__bold__` spans of `text`, in order, markup removed."""
    contents: list[str] = []
    _strong(text, contents)
    return [strip_markup(content) for content in contents]


def strip_markup(text: str) -> str:
    """`text` without Markdown inline markup and heading marks, spacing collapsed."""
    text = _heading_marks(text)
    text = unwrap_links(unwrap_images(text))
    text = _CODE.sub(r"\1", text)
    text = _html_tags(text)
    text = _emphasis(_strong(text))
    return _SPACES.sub(" ", text).strip()
