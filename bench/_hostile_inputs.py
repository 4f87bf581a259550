"""Hostile inputs of the largest allowed sizes: texts of shapes that make backtracking patterns
and per-token work blow up, and files whose cost is far out of proportion to their bytes.

Every input here is within the documented limits (README, "Limits"); the sizes are the caller's
to choose (the benchmark passes the limits, its quick mode smaller sizes).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject
from tests.fixtures.biology.make_pdf import FIXTURE_DIR, build_pdf

# The course the benchmark's server is given; also the body of the unclosed-fence Markdown file.
COURSE_MD = FIXTURE_DIR / "cells.md"

# Arabic with full tashkeel (every letter vowelled): "water molecules cross the cell membrane by
# osmosis. osmosis is the diffusion of water across a membrane."
_ARABIC = (
    "تَنْتَقِلُ جُزَيْئَاتُ الْمَاءِ عَبْرَ الْغِشَاءِ الْخَلَوِيِّ بِالْخَاصِّيَّةِ الْأُسْمُوزِيَّةِ. "
    "الْخَاصِّيَّةُ الْأُسْمُوزِيَّةُ هِيَ انْتِشَارُ الْمَاءِ عَبْرَ غِشَاءٍ. "
)
_ALPHABET = "abcdefghijklmnopqrstuvwxyz"


def _cycle(unit: str, chars: int) -> str:
    return (unit * (chars // len(unit) + 1))[:chars]


@dataclass(frozen=True, slots=True)
class TextShape:
    name: str
    description: str
    # The text of this shape with exactly `chars` characters.
    make: Callable[[int], str]

    def within(self, max_bytes: int) -> str:
        """The longest text of this shape whose UTF-8 encoding fits in `max_bytes`."""
        low, high = 0, max_bytes  # every character is at least one byte
        while low < high:
            mid = (low + high + 1) // 2
            if len(self.make(mid).encode("utf-8")) <= max_bytes:
                low = mid
            else:
                high = mid - 1
        return self.make(low)


DOTS_THEN_LETTER = TextShape(
    "dots_then_letter", "dots, then one letter", lambda n: "." * max(n - 1, 0) + "a"[: min(n, 1)]
)
A_DOT_SPACE = TextShape("a_dot_space", 'repeated "a. "', lambda n: _cycle("a. ", n))
SINGLE_WORD = TextShape(
    "single_word", "one word (letters, no space)", lambda n: _cycle(_ALPHABET, n)
)
ARABIC_TASHKEEL = TextShape(
    "arabic_tashkeel", "Arabic sentences with full tashkeel", lambda n: _cycle(_ARABIC, n)
)
ALTERNATING = TextShape("alternating", 'alternating ".a"', lambda n: _cycle(".a", n))
ONLY_DOTS = TextShape("only_dots", "dots only", lambda n: "." * n)

TEXT_SHAPES = (DOTS_THEN_LETTER, A_DOT_SPACE, SINGLE_WORD, ARABIC_TASHKEEL, ALTERNATING)


@cache
def pdf_sharing_one_stream(pages: int) -> bytes:
    """A PDF of `pages` pages that all draw the same content stream (a page of course text):
    small on disk, while a reader extracts the page's text once per page."""
    text = COURSE_MD.read_text(encoding="utf-8").replace("#", "").replace("*", "")
    single = PdfReader(io.BytesIO(build_pdf([text[:2_400]])))
    writer = PdfWriter()
    first = writer.add_page(single.pages[0])
    contents, resources = first.raw_get("/Contents"), first.raw_get("/Resources")
    width, height = float(first.mediabox.width), float(first.mediabox.height)
    for _ in range(pages - 1):
        page = writer.add_blank_page(width, height)
        # The same indirect objects: one stream in the file, referenced by every page.
        page[NameObject("/Contents")] = contents
        page[NameObject("/Resources")] = resources
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@cache
def markdown_unclosed_fence(size: int) -> bytes:
    """A Markdown course of `size` bytes whose first code fence never closes: a title, then
    "```", then the course's own Markdown (headings, definitions, bold terms) over and over."""
    head = (
        "# Cells, collected notes\n\nOsmosis is the diffusion of water across a membrane.\n\n```\n"
    )
    body = COURSE_MD.read_text(encoding="utf-8")
    return (head + _cycle(body, size - len(head.encode("utf-8")))).encode("utf-8")


@cache
def text_a_dot_space(size: int) -> bytes:
    """Plain text of `size` bytes: "a. a. a. ...", a sentence boundary every three bytes."""
    return A_DOT_SPACE.make(size).encode("ascii")


@cache
def markdown_heading_line(size: int) -> bytes:
    """One Markdown heading line of `size` bytes: "# a", a run of spaces, then "b" (a run of one
    character inside a heading's title)."""
    return ("# a" + " " * (size - 4) + "b").encode("ascii")
