"""Reading a course file's bytes into a Document of numbered pages (SPEC R3.1).

Format. The bytes decide first: a file that starts with the PDF signature (`%PDF-`) is read as a
PDF whatever it is called. Otherwise a media type of PDF or Markdown decides; then the file name's
extension (`.pdf`; `.md`, `.markdown`, `.mdown`, `.mkd`; `.txt`, `.text`), so a Markdown file sent
as `text/plain` or `application/octet-stream` is still read as Markdown; then `text/plain`. Anything
else is rejected as an unsupported format.

Pages. A page is what citations and provenance name, so each format gets a rule a reader of the
file can follow:

- PDF: the PDF's own pages, numbered as in the PDF (the first page is 1), with the text pypdf
  extracts from each. A page with no text (a figure) keeps its number and has empty text.
- Markdown: one page per top-level section. A section starts at each `#` or `##` heading (ATX
  headings; `###` and deeper stay inside their section, and nothing inside a fenced code block is
  a heading). Text before the first heading is a page of its own. A heading with nothing under it
  but another heading joins the page that follows it. A section longer than `MAX_PAGE_CHARS` is
  cut at paragraph boundaries (never inside a fenced code block) into consecutive pages. A page
  keeps its Markdown markup, and `headings` is the path of headings above its first line,
  outermost first, e.g. `("Cells", "Osmosis")`.
- Plain text: consecutive chunks of at most `TEXT_PAGE_CHARS` characters, cut at paragraph
  boundaries, or at sentence boundaries inside a paragraph too long for one page; a title line
  (short, one line, no closing punctuation) that would end a page opens the next one instead.

Pages are numbered 1, 2, 3, ... in file order. Title: the PDF's metadata title, or the first `#`
heading of a Markdown file, else "".

Text files must be UTF-8 (a byte-order mark is allowed). Line endings are normalised to `\n`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.files.chunking import (
    FENCE,
    chunk,
    closes_fence,
    split_at_spaces,
    split_markdown_blocks,
    split_paragraphs,
)
from tutor_memory.domain.files.document import Document, DocumentKind, Page
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.limits import (
    MAX_FILE_BYTES,
    MAX_FILE_TEXT_CHARS,
    MAX_LINE_CHARS,
    MAX_MARKDOWN_NESTING,
    MAX_PAGES,
)
from tutor_memory.domain.text.sentences import sentence_pieces

__all__ = ["MAX_FILE_BYTES", "MAX_PAGES", "Document", "atx_heading", "detect_kind", "read_document"]

# Longest Markdown page, in characters, before a section is cut at paragraph boundaries.
MAX_PAGE_CHARS = 6_000

# Target size of a plain-text page, in characters (about one printed page).
TEXT_PAGE_CHARS = 3_000

_PDF_SIGNATURE = b"%PDF-"
_UTF8_BOM = b"\xef\xbb\xbf"

_PDF_MEDIA_TYPES = frozenset({"application/pdf", "application/x-pdf"})
_MARKDOWN_MEDIA_TYPES = frozenset({"text/markdown", "text/x-markdown"})
_TEXT_MEDIA_TYPES = frozenset({"text/plain"})
_PDF_EXTENSIONS = frozenset({".pdf"})
_MARKDOWN_EXTENSIONS = frozenset({".md", ".markdown", ".mdown", ".mkd"})
_TEXT_EXTENSIONS = frozenset({".txt", ".text"})

# The Markdown heading levels that start a new page (`#` and `##`).
_PAGE_HEADING_LEVEL = 2
_MAX_HEADING_LEVEL = 6

# Most spaces before the `#` of an ATX heading (CommonMark: four would make it indented code).
_MAX_HEADING_INDENT = 3
_BLANKS = " \t"


def read_document(
    content: bytes, filename: str, media_type: str, budget: WorkBudget | None = None
) -> Document:
    """Read a PDF, Markdown or plain-text file into pages; raise FileRejected if it cannot be.

    `budget` is checked between pages (PDF) and between steps (text), so that a read whose call
    has gone away, or that takes longer than one request may, stops.
    """
    budget = budget or unlimited()
    if not content:
        raise FileRejected("the file is empty")
    if len(content) > MAX_FILE_BYTES:
        raise FileRejected(
            f"the file is {len(content):,} bytes; the limit is {MAX_FILE_BYTES:,} bytes "
            f"({MAX_FILE_BYTES // (1024 * 1024)} MiB)"
        )
    kind = detect_kind(content, filename, media_type)
    if kind == "pdf":
        # Imported here: pypdf (and the Pillow it loads) took 160 ms of every start-up's imports
        # (python -X importtime), and only a PDF needs it.
        from tutor_memory.domain.files.pdf import read_pdf

        document = read_pdf(content, budget)
    elif kind == "markdown":
        text = _decode(content)
        _check_lines(text, markdown=True)
        budget.check()
        document = _read_markdown(text)
    else:
        text = _decode(content)
        _check_lines(text, markdown=False)
        budget.check()
        document = _read_text(text)
    if len(document.pages) > MAX_PAGES:
        raise FileRejected(
            f"the file has {len(document.pages):,} pages; the limit is {MAX_PAGES:,} pages"
        )
    return document


def detect_kind(content: bytes, filename: str, media_type: str) -> DocumentKind:
    """Which reader applies, by the order the module docstring states."""
    mime = media_type.split(";", 1)[0].strip().lower()
    extension = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
    if content.startswith(_PDF_SIGNATURE) or mime in _PDF_MEDIA_TYPES:
        return "pdf"
    if mime in _MARKDOWN_MEDIA_TYPES or extension in _MARKDOWN_EXTENSIONS:
        return "markdown"
    if extension in _PDF_EXTENSIONS:
        return "pdf"
    if mime in _TEXT_MEDIA_TYPES or extension in _TEXT_EXTENSIONS:
        return "text"
    raise FileRejected(
        f"unsupported format (media type {media_type or 'not given'!r}, file name {filename!r}); "
        "send a PDF, a Markdown file or a plain-text file"
    )


def _decode(content: bytes) -> str:
    """The file as text: UTF-8, with or without a byte-order mark, line endings normalised."""
    body_start = len(_UTF8_BOM) if content.startswith(_UTF8_BOM) else 0
    try:
        text = content[body_start:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = body_start + exc.start
        raise FileRejected(
            f"the file is not valid UTF-8 text: byte 0x{content[offset]:02x} at offset {offset} "
            "cannot be decoded; save it as UTF-8"
        ) from None
    if len(text) > MAX_FILE_TEXT_CHARS:
        raise FileRejected(
            f"the file holds {len(text):,} characters of text; the limit is "
            f"{MAX_FILE_TEXT_CHARS:,} characters"
        )
    nul = text.find("\x00")
    if nul >= 0:
        raise FileRejected(
            f"the file contains a NUL character (character {nul}): it is binary, not text"
        )
    # A form feed is a page break in old text files; a paragraph break keeps that boundary.
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")


def _check_lines(text: str, *, markdown: bool) -> None:
    """Refuse text whose lines no course file has: a line longer than MAX_LINE_CHARS; in
    Markdown, block quotes and list items nested deeper than MAX_MARKDOWN_NESTING, or a code fence
    that never closes (the rest of the file would be read as code, its headings lost)."""
    fence: str | None = None
    fence_line = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if len(line) > MAX_LINE_CHARS:
            raise FileRejected(
                f"line {number:,} is {len(line):,} characters long; the limit is "
                f"{MAX_LINE_CHARS:,} characters per line"
            )
        if not markdown:
            continue
        opened = FENCE.match(line)
        if fence is None and opened:
            fence, fence_line = opened.group(1), number
            continue
        if fence is not None:
            if opened and closes_fence(opened.group(1), fence):
                fence = None
            continue
        depth = container_depth(line)
        if depth > MAX_MARKDOWN_NESTING:
            raise FileRejected(
                f"line {number:,} nests block quotes and list items {depth} levels deep; the "
                f"limit is {MAX_MARKDOWN_NESTING} levels"
            )
    if fence is not None:
        raise FileRejected(
            f"the code fence {fence!r} opened at line {fence_line:,} never closes: the rest of "
            "the file would be read as code; close it"
        )


_BULLETS = "-*+"
_MAX_ORDERED_DIGITS = 9
# A thematic break ("- - -", "* * *") looks like nested bullets but is a line of its own.
_BREAK_MARKS = frozenset("-*_ \t")


def container_depth(line: str) -> int:
    """How many block quotes and list items open at the start of a Markdown line (">", "-", "*",
    "+", "1." or "1)", each after at most 3 spaces and followed by a blank)."""
    stripped = line.strip()
    if stripped and set(stripped) <= _BREAK_MARKS:
        return 0
    depth = pos = 0
    length = len(line)
    while True:
        indent = pos
        while pos < length and pos - indent < _MAX_HEADING_INDENT and line[pos] == " ":
            pos += 1
        if pos >= length:
            return depth
        char = line[pos]
        if char == ">" or (char in _BULLETS and pos + 1 < length and line[pos + 1] in _BLANKS):
            pos += 1
        elif char.isdigit():
            end = pos
            while end < length and end - pos < _MAX_ORDERED_DIGITS and line[end].isdigit():
                end += 1
            if end + 1 < length and line[end] in ".)" and line[end + 1] in _BLANKS:
                pos = end + 1
            else:
                return depth
        else:
            return depth
        depth += 1
        if pos < length and line[pos] in _BLANKS:
            pos += 1


def _read_text(text: str) -> Document:
    chunks = chunk(text, TEXT_PAGE_CHARS, (split_paragraphs, sentence_pieces, split_at_spaces))
    if not chunks:
        raise FileRejected("the file contains no text")
    pages = tuple(Page(number=i, text=c) for i, c in enumerate(chunks, start=1))
    return Document(kind="text", pages=pages)


def atx_heading(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading line, or None: up to 3 spaces, 1-6 `#`, then nothing but
    blanks, or blanks and the title; an optional closing run of `#` (after a blank, or making up
    the whole title) is not part of the title.

    A scanner rather than a pattern: the pattern this replaces backtracked quadratically on a long
    line with blanks inside its title.
    """
    indent = len(line) - len(line.lstrip(" "))
    if indent > _MAX_HEADING_INDENT:
        return None
    after_marks = len(line) - len(line[indent:].lstrip("#"))
    level = after_marks - indent
    if not 0 < level <= _MAX_HEADING_LEVEL:
        return None
    rest = line[after_marks:]
    if rest and rest[0] not in _BLANKS:
        return None  # "#hashtag" is not a heading
    title = rest.strip(_BLANKS)
    bare = title.rstrip("#")
    if len(bare) < len(title) and (not bare or bare[-1] in _BLANKS):
        title = bare.rstrip(_BLANKS)
    return level, title.strip()


@dataclass(slots=True)
class _HeadingTracker:
    """The path of Markdown headings seen so far, and whether a code fence is open."""

    levels: list[str | None] = field(default_factory=lambda: [None] * _MAX_HEADING_LEVEL)
    fence: str | None = None
    title: str = ""

    def path(self) -> tuple[str, ...]:
        return tuple(title for title in self.levels if title is not None)

    def feed(self, line: str) -> int:
        """Take one line; return its heading level (1-6), or 0 when it is not a heading."""
        opened = FENCE.match(line)
        if self.fence is None and opened:
            self.fence = opened.group(1)
            return 0
        if self.fence is not None:
            if opened and closes_fence(opened.group(1), self.fence):
                self.fence = None
            return 0
        parsed = atx_heading(line)
        if parsed is None:
            return 0
        level, heading = parsed
        self.levels[level - 1] = heading
        for deeper in range(level, _MAX_HEADING_LEVEL):
            self.levels[deeper] = None
        if level == 1 and not self.title:
            self.title = heading
        return level


@dataclass(slots=True)
class _Section:
    # The heading at each level (1-6) where the section starts; None where there is none.
    levels: tuple[str | None, ...]
    lines: list[str] = field(default_factory=list)
    has_body: bool = False


def _read_markdown(text: str) -> Document:
    tracker = _HeadingTracker()
    sections: list[_Section] = [_Section(levels=tuple(tracker.levels))]
    for line in text.split("\n"):
        level = tracker.feed(line)
        if 0 < level <= _PAGE_HEADING_LEVEL:
            sections.append(_Section(levels=tuple(tracker.levels)))
        elif level == 0 and line.strip():
            sections[-1].has_body = True
        sections[-1].lines.append(line)

    pages: list[Page] = []
    pending: list[str] = []
    for section in sections:
        if not section.has_body:
            # A heading with nothing under it is read together with the section that follows.
            pending.extend(section.lines)
            continue
        body = "\n".join([*pending, *section.lines]).strip()
        pending = []
        pages.extend(_markdown_pages(body, section.levels, first_number=len(pages) + 1))
    if not pages:
        leftover = "\n".join(pending).strip()
        if not leftover:
            raise FileRejected("the file contains no text")
        pages.append(Page(number=1, text=leftover, headings=tracker.path()))
    return Document(kind="markdown", pages=tuple(pages), title=tracker.title)


def _markdown_pages(body: str, levels: tuple[str | None, ...], first_number: int) -> list[Page]:
    """One section as pages: itself, or its paragraphs packed into pages of MAX_PAGE_CHARS."""
    tracker = _HeadingTracker(levels=list(levels))
    if len(body) <= MAX_PAGE_CHARS:
        return [Page(number=first_number, text=body, headings=tracker.path())]
    parts = chunk(body, MAX_PAGE_CHARS, (split_markdown_blocks, sentence_pieces, split_at_spaces))
    # Headings below the section's own (### and deeper) move the path along as the parts go by.
    pages: list[Page] = []
    for offset, part in enumerate(parts):
        pages.append(Page(number=first_number + offset, text=part, headings=tracker.path()))
        for line in part.split("\n"):
            tracker.feed(line)
    return pages
