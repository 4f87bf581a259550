"""Markdown inline markup that wraps visible text, unwrapped in linear time.

Two readers strip Markdown, each with its own rules: the concept map (`conceptmap.markup`) and the
passages of a file (`files.passages`). What they share lives here: images and links, and a scanner
for text between a pair of marks (`**strong**`, `*emphasis*`, `~~struck~~`) whose conditions on the
opening and the closing mark each reader gives.

Why scanners and not patterns: a pattern such as `\\*\\*(.+?)\\*\\*` with a condition on its closing
mark reads to the end of the line from every opening mark that has no valid closing one, so a line
of unclosed marks ("__a " repeated) costs the square of its length. Here the next valid closing mark
comes from `NextMark`, which reads each stretch of the text once however many opening marks ask.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence


class NextMark:
    """The first place at or after a position where `mark` occurs and `accept` holds.

    Meant for positions asked in increasing order (as a left-to-right scan asks): then every
    occurrence of `mark` is found and tested at most once in all. An earlier position is answered
    correctly too, by searching again.
    """

    __slots__ = ("_accept", "_asked", "_found", "_mark", "_text")

    def __init__(self, text: str, mark: str, accept: Callable[[int], bool] | None = None) -> None:
        self._text, self._mark, self._accept = text, mark, accept
        self._asked: int | None = None  # the last position asked about
        self._found = -1  # its answer

    def at_or_after(self, start: int) -> int:
        """The index found, or -1 when there is none."""
        asked = self._asked
        if asked is not None and asked <= start and (self._found < 0 or start <= self._found):
            return self._found  # nothing between the last question and its answer qualifies
        found = self._text.find(self._mark, start)
        while found >= 0 and self._accept is not None and not self._accept(found):
            found = self._text.find(self._mark, found + 1)
        self._asked, self._found = start, found
        return found


def is_word_char(char: str) -> bool:
    """A word character as regular expressions see one (\\w): alphanumeric or the underscore."""
    return char.isalnum() or char == "_"


def _bracketed(text: str, opening: str, *, empty_allowed: bool) -> str:
    closing_bracket, closing_paren = NextMark(text, "]"), NextMark(text, ")")
    out: list[str] = []
    kept = pos = 0
    while (start := text.find(opening, pos)) >= 0:
        inside = start + len(opening)
        bracket = closing_bracket.at_or_after(inside)
        if bracket < 0:
            break  # no later opening can close either
        if text.startswith("(", bracket + 1) and (empty_allowed or bracket > inside):
            paren = closing_paren.at_or_after(bracket + 2)
            if paren < 0:
                break
            out += (text[kept:start], text[inside:bracket])
            kept = pos = paren + 1
        else:
            pos = start + 1
    out.append(text[kept:])
    return "".join(out)


def unwrap_images(text: str) -> str:
    """Each image `![alt](target)` replaced by its alt text (which may be empty); the target runs
    to the first `)` and may span lines."""
    return _bracketed(text, "![", empty_allowed=True)


def unwrap_links(text: str) -> str:
    """Each link `[text](target)` replaced by its text (not empty); as for images otherwise."""
    return _bracketed(text, "[", empty_allowed=False)


def unwrap_pairs(
    text: str,
    marks: Sequence[str],
    *,
    opens: Callable[[str, int], bool],
    closes: Callable[[str, int], bool],
    contents: list[str] | None = None,
) -> str:
    """`text` with each `mark…mark` replaced by what is between, leftmost first, never nested.

    A pair is an opening mark at i with `opens(mark, i)`, then at least one character on the same
    line, then the nearest same mark at q with `closes(mark, q)`. `marks` are tried in order at
    each position. With `contents`, the content of every pair is also appended to it.
    """
    opening = re.compile("|".join(re.escape(mark) for mark in marks))
    newline = NextMark(text, "\n")
    closing = {mark: NextMark(text, mark, functools.partial(closes, mark)) for mark in marks}
    out: list[str] = []
    kept = pos = 0
    while (found := opening.search(text, pos)) is not None:
        start, mark = found.start(), found.group()
        pos = start + 1
        if not opens(mark, start):
            continue
        inside = start + len(mark)
        close = closing[mark].at_or_after(inside + 1)
        line_end = newline.at_or_after(inside)
        if close < 0 or 0 <= line_end < close:
            continue
        content = text[inside:close]
        if contents is not None:
            contents.append(content)
        out += (text[kept:start], content)
        kept = pos = close + len(mark)
    out.append(text[kept:])
    return "".join(out)
