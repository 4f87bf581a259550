"""What a course file becomes once read: numbered pages of text, whatever the format was."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DocumentKind = Literal["pdf", "markdown", "text"]


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a file: a PDF page, a Markdown section, or a fixed-size chunk of plain text.

    `number` is 1-based and is what citations and provenance name. `text` is the page as the file
    has it (Markdown keeps its markup, so the extractor can read headings and bold terms).
    `headings` is the path of headings above the page's text, outermost first (Markdown only).
    """

    number: int
    text: str
    headings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Document:
    kind: DocumentKind
    pages: tuple[Page, ...]
    # The file's own title when it states one (PDF metadata, a Markdown top heading), else "".
    title: str = ""
