"""Hostile course files, made at test time (issue 12): PDFs and Markdown whose cost is far out of
proportion to their bytes. Each is within the 25 MiB file limit; none is ever committed.

PDFs are written object by object (`raw_pdf`), so that a test can build what no PDF library
would: a page tree thousands of levels deep, an array nested past any parser's stack, one page
object listed a hundred thousand times, a content stream that inflates a thousandfold.
"""

from __future__ import annotations

import functools
import io
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pypdf import PdfReader, PdfWriter
from pypdf.generic import NameObject

from tests.fixtures.biology.make_pdf import FIXTURE_DIR, build_pdf

COURSE_TEXT = (FIXTURE_DIR / "cells.md").read_text(encoding="utf-8")

# A page's font: a core font, so that no font program is embedded.
_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def raw_pdf(objects: Sequence[bytes], root: int = 1) -> bytes:
    """A PDF of `objects` (object i + 1 is objects[i], its body without `obj`/`endobj`), with a
    correct cross-reference table and `root` as the catalog."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root %d 0 R >>\n" % (len(objects) + 1, root))
    out.write(b"startxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def _stream(data: bytes) -> bytes:
    body = zlib.compress(data, 9)
    return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body + b"\nendstream"


def _text_ops(text: str) -> bytes:
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"BT /F1 11 Tf 50 780 Td (" + escaped.encode("latin-1", "replace") + b") Tj ET"


def _page(contents: int, extra: bytes = b"") -> bytes:
    return (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents %d 0 R "
        b"/Resources << /Font << /F1 4 0 R >> >>%s >>" % (contents, extra)
    )


@functools.cache
def pdf_sharing_one_stream(pages: int) -> bytes:
    """`pages` pages that all draw the same content stream (a page of course text): a small file
    whose text is the same page again and again."""
    single = PdfReader(io.BytesIO(build_pdf([COURSE_TEXT.replace("#", "")[:2_400]])))
    writer = PdfWriter()
    first = writer.add_page(single.pages[0])
    contents, resources = first.raw_get("/Contents"), first.raw_get("/Resources")
    width, height = float(first.mediabox.width), float(first.mediabox.height)
    for _ in range(pages - 1):
        page = writer.add_blank_page(width, height)
        page[NameObject("/Contents")] = contents
        page[NameObject("/Resources")] = resources
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


@functools.cache
def pdf_one_page_listed(times: int) -> bytes:
    """One page object listed `times` times in the page tree: a huge page count in a small file."""
    kids = b" ".join([b"3 0 R"] * times)
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count %d /Kids [%s] >>" % (times, kids),
            _page(5),
            _FONT,
            _stream(_text_ops("Osmosis is the diffusion of water across a membrane.")),
        ]
    )


@functools.cache
def pdf_deep_page_tree(depth: int) -> bytes:
    """A page tree `depth` levels deep, one page at the bottom."""
    # Objects: 1 catalog, 2 the root Pages, 3 the page, 4 the font, 5 its content, then the
    # intermediate Pages nodes 6 .. depth + 4, each the only kid of the one before.
    first_inner = 6
    inner = list(range(first_inner, first_inner + depth - 1))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Count 1 /Kids [%d 0 R] >>" % (inner[0] if inner else 3),
        _page(5).replace(b"/Parent 2 0 R", b"/Parent %d 0 R" % (inner[-1] if inner else 2)),
        _FONT,
        _stream(_text_ops("Osmosis is the diffusion of water.")),
    ]
    for i in range(len(inner)):
        parent = inner[i - 1] if i else 2
        kid = inner[i + 1] if i + 1 < len(inner) else 3
        objects.append(b"<< /Type /Pages /Parent %d 0 R /Count 1 /Kids [%d 0 R] >>" % (parent, kid))
    return raw_pdf(objects)


@functools.cache
def pdf_deep_array(depth: int) -> bytes:
    """A page whose dictionary holds an array nested `depth` levels deep."""
    nested = b"[" * depth + b"1" + b"]" * depth
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count 1 /Kids [3 0 R] >>",
            _page(5, b" /Nested " + nested),
            _FONT,
            _stream(_text_ops("Osmosis is the diffusion of water.")),
        ]
    )


@functools.cache
def pdf_zip_bomb(inflated_bytes: int) -> bytes:
    """One page whose content stream inflates to `inflated_bytes` (blanks after a line of text):
    a few hundred kilobytes in the file."""
    ops = _text_ops("Osmosis is the diffusion of water.")
    # Compressed a megabyte at a time: the inflated stream is never held in the test's memory.
    deflate = zlib.compressobj(9)
    parts = [deflate.compress(ops)]
    blanks, left = b" " * (1 << 20), inflated_bytes - len(ops)
    while left > 0:
        parts.append(deflate.compress(blanks[: min(left, len(blanks))]))
        left -= len(blanks)
    body = b"".join([*parts, deflate.flush()])
    stream = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(body) + body + b"\nendstream"
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count 1 /Kids [3 0 R] >>",
            _page(5),
            _FONT,
            stream,
        ]
    )


@functools.cache
def pdf_long_text_line(chars: int) -> bytes:
    """One page showing one string of `chars` letters: a single line of text, megabytes long."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Count 1 /Kids [3 0 R] >>",
            _page(5),
            _FONT,
            _stream(_text_ops("osmosis " * (chars // 8))),
        ]
    )


@functools.cache
def markdown_long_line(chars: int) -> bytes:
    """A heading, then one line of `chars` characters of words."""
    return ("# Cells\n\n" + ("osmosis moves water " * (chars // 20 + 1))[:chars]).encode()


@functools.cache
def markdown_deep_nesting(depth: int) -> bytes:
    """Block quotes and list items nested `depth` deep, on every line of a short course."""
    prefix = "> - " * (depth // 2)
    lines = [prefix + line for line in COURSE_TEXT.splitlines()]
    return ("# Cells\n\n" + "\n".join(lines)).encode()


@functools.cache
def markdown_unclosed_fence(chars: int) -> bytes:
    """A title, then a code fence that never closes, then the course over and over."""
    head = "# Cells\n\nOsmosis is the diffusion of water.\n\n```\n"
    body = (COURSE_TEXT * (chars // len(COURSE_TEXT) + 1))[: max(chars - len(head), 0)]
    return (head + body).encode()


@dataclass(frozen=True, slots=True)
class HostileFile:
    name: str
    filename: str
    media_type: str
    # Builds the file's bytes (cached: the corpus is listed at collection, built when used).
    make: Callable[[], bytes]
    # Words the refusal must contain: it names the reason.
    reason: str


def hostile_corpus() -> list[HostileFile]:
    """The corpus of issue 12, each file with the words its refusal must hold."""
    pdf, md = "application/pdf", "text/markdown"
    return [
        HostileFile(
            "2,000 pages sharing one content stream",
            "shared.pdf",
            pdf,
            functools.partial(pdf_sharing_one_stream, 2_000),
            "repeat the same content",
        ),
        HostileFile(
            "one page listed 200,000 times",
            "listed.pdf",
            pdf,
            functools.partial(pdf_one_page_listed, 200_000),
            "limit",
        ),
        HostileFile(
            "a page tree 5,000 levels deep",
            "tree.pdf",
            pdf,
            functools.partial(pdf_deep_page_tree, 5_000),
            "too deep",
        ),
        HostileFile(
            "an array nested 50,000 levels deep",
            "nested.pdf",
            pdf,
            functools.partial(pdf_deep_array, 50_000),
            "nests its objects",
        ),
        HostileFile(
            "a content stream inflating to 1 GB",
            "bomb.pdf",
            pdf,
            functools.partial(pdf_zip_bomb, 1_000_000_000),
            "decompress",
        ),
        HostileFile(
            "one line of 12 million characters of text",
            "line.pdf",
            pdf,
            functools.partial(pdf_long_text_line, 12_000_000),
            "bytes of content",
        ),
        HostileFile(
            "a Markdown line of 20 million characters",
            "line.md",
            md,
            functools.partial(markdown_long_line, 20_000_000),
            "characters of text",
        ),
        HostileFile(
            "a Markdown line of 200,000 characters",
            "wide.md",
            md,
            functools.partial(markdown_long_line, 200_000),
            "characters per line",
        ),
        HostileFile(
            "Markdown nested 400 levels deep",
            "nested.md",
            md,
            functools.partial(markdown_deep_nesting, 400),
            "levels deep",
        ),
        HostileFile(
            "a Markdown code fence that never closes, 1 MB",
            "fence.md",
            md,
            functools.partial(markdown_unclosed_fence, 1_000_000),
            "never closes",
        ),
    ]
