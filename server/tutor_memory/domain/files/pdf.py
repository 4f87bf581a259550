"""Reading a PDF course file with pypdf: its own pages, numbered as in the PDF, and its metadata
title (the rules of domain/files/read.py), within limits that refuse hostile PDFs (page trees
listing one page many times, streams that inflate far beyond their size) while they are read.

A module of its own so that only a PDF imports pypdf (domain/files/read.py imports it when it
reads one).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

from pypdf import PageObject, PdfReader, apply_configuration
from pypdf.errors import LimitReachedError
from pypdf.generic import ArrayObject, IndirectObject, StreamObject

from tutor_memory.domain.budget import WorkBudget
from tutor_memory.domain.files.document import Document, Page
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.limits import (
    MAX_FILE_BYTES,
    MAX_FILE_TEXT_CHARS,
    MAX_PAGES,
    MAX_PDF_ARRAY_ITEMS,
    MAX_PDF_CONTENT_BYTES,
    MAX_PDF_FORMS_PER_PAGE,
    MAX_PDF_PAGE_TREE_DEPTH,
    MAX_PDF_STREAM_BYTES,
    MIN_PDF_CONTENT_BYTES,
    PDF_CONTENT_RATIO,
)

# Keys a PDF page dictionary holds at most in practice (Type, Parent, MediaBox, Contents,
# Resources, Annots, Rotate, CropBox, Group, StructParents, Tabs, ...), with room to spare.
_PDF_PAGE_KEYS = 64


@contextmanager
def _pdf_limits() -> Iterator[None]:
    """pypdf's own limits, set to what a course file needs, for the reads of this thread (pypdf
    keeps its configuration in a context variable, so other threads keep theirs)."""
    stream_bytes = MAX_PDF_STREAM_BYTES
    with apply_configuration(
        maximum_declared_stream_length=MAX_FILE_BYTES,
        array_based_stream_maximum_output_length=stream_bytes,
        jbig2_maximum_output_length=stream_bytes,
        lzw_maximum_output_length=stream_bytes,
        run_length_maximum_output_length=stream_bytes,
        zlib_maximum_output_length=stream_bytes,
        brotli_maximum_output_length=stream_bytes,
        image_maximum_buffer_size=stream_bytes,
        page_tree_maximum_depth=MAX_PDF_PAGE_TREE_DEPTH,
        # Nodes of the page tree, and the page dictionary entries copied while flattening it
        # (a page listed twice is copied twice): room for the page limit and then some, so that
        # a tree listing one page a hundred thousand times is refused while it is read.
        page_tree_maximum_entries=MAX_PAGES * 2,
        page_tree_maximum_page_entries=MAX_PAGES * _PDF_PAGE_KEYS,
        xform_maximum_invocations_per_extraction=MAX_PDF_FORMS_PER_PAGE,
        array_maximum_element_count=MAX_PDF_ARRAY_ITEMS,
    ):
        yield


_WHOLE_PDF = "the PDF"


def _pdf_failure(exc: BaseException, where: str) -> FileRejected:
    """The refusal for an exception pypdf raised while reading `where`: a limit says which one,
    anything else means the file is damaged."""
    # "page 3 of the PDF: …"; the file as a whole needs no prefix ("the PDF's page tree …").
    lead = "" if where == _WHOLE_PDF else f"{where}: "
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, RecursionError):
            return FileRejected(
                f"{lead}the PDF nests its objects (arrays, dictionaries) deeper than a reader "
                "can follow"
            )
        if isinstance(cause, LimitReachedError):
            message = str(cause)
            if "decompress" in message.lower() or "output length" in message.lower():
                return FileRejected(
                    f"{lead}a stream of the PDF decompresses to more than "
                    f"{MAX_PDF_STREAM_BYTES:,} bytes ({message})"
                )
            if "page tree depth" in message.lower():
                return FileRejected(
                    f"{lead}the PDF's page tree is too deep (more than "
                    f"{MAX_PDF_PAGE_TREE_DEPTH} levels)"
                )
            if "page" in message.lower():
                return FileRejected(
                    f"{lead}the PDF's page tree lists more than {MAX_PAGES * 2:,} pages; "
                    f"the limit is {MAX_PAGES:,} pages ({message})"
                )
            return FileRejected(f"{lead}the PDF exceeds a reading limit ({message})")
        cause = cause.__cause__ or cause.__context__
    return FileRejected(f"{where} cannot be read (corrupt or truncated): {exc}")


def read_pdf(content: bytes, budget: WorkBudget) -> Document:
    """The PDF's pages and title (see domain/files/read.py), within pypdf's limits set for
    course files; raises FileRejected naming why a PDF cannot be read."""
    with _pdf_limits():
        return _read_pdf_within_limits(content, budget)


def _read_pdf_within_limits(content: bytes, budget: WorkBudget) -> Document:
    # pypdf signals malformed input with many exception types (its own, but also ValueError,
    # KeyError, struct errors, ...), so any failure while parsing means "not a readable PDF".
    try:
        reader = PdfReader(io.BytesIO(content), strict=False)
        encrypted = reader.is_encrypted
        page_count = 0 if encrypted else len(reader.pages)
    except Exception as exc:
        raise _pdf_failure(exc, _WHOLE_PDF) from exc
    if encrypted:
        raise FileRejected("the PDF is encrypted; send a copy without a password or encryption")
    if page_count == 0:
        raise FileRejected("the PDF has no pages (corrupt or truncated)")
    if page_count > MAX_PAGES:
        raise FileRejected(f"the PDF has {page_count:,} pages; the limit is {MAX_PAGES:,} pages")
    _check_content_bytes(reader, len(content), budget)
    pages: list[Page] = []
    text_chars = 0
    for index, pdf_page in enumerate(reader.pages):
        budget.check()
        try:
            raw = pdf_page.extract_text()
        except Exception as exc:
            raise _pdf_failure(exc, f"page {index + 1} of the PDF") from exc
        text = raw.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n").strip()
        text_chars += len(text)
        if text_chars > MAX_FILE_TEXT_CHARS:
            raise FileRejected(
                f"the PDF holds more than {MAX_FILE_TEXT_CHARS:,} characters of text (the limit) "
                f"by page {index + 1}"
            )
        pages.append(Page(number=index + 1, text=text))
    if not any(page.text for page in pages):
        raise FileRejected(
            "the PDF has no extractable text: its pages look like scanned images; "
            "run OCR on it or send the text"
        )
    return Document(kind="pdf", pages=tuple(pages), title=_pdf_title(reader))


def content_budget(file_bytes: int) -> int:
    """The most content bytes the pages of a PDF of `file_bytes` may draw (see limits)."""
    return min(MAX_PDF_CONTENT_BYTES, max(MIN_PDF_CONTENT_BYTES, PDF_CONTENT_RATIO * file_bytes))


def _check_content_bytes(reader: PdfReader, file_bytes: int, budget: WorkBudget) -> None:
    """Refuse a PDF whose pages draw more content than its size allows, before any text is read:
    each page's content streams are inflated (once per stream, within pypdf's per-stream limit)
    and counted once per page that draws them."""
    allowed = content_budget(file_bytes)
    sizes: dict[int, int] = {}
    drawn = 0
    for index, page in enumerate(reader.pages):
        budget.check()
        try:
            drawn += _page_content_bytes(page, sizes)
        except Exception as exc:
            raise _pdf_failure(exc, f"page {index + 1} of the PDF") from exc
        if drawn > allowed:
            raise FileRejected(
                f"the PDF's pages draw more than {allowed:,} bytes of content by page "
                f"{index + 1}, from a file of {file_bytes:,} bytes (the limit is "
                f"{PDF_CONTENT_RATIO} times the file's size, at least {MIN_PDF_CONTENT_BYTES:,} "
                f"and at most {MAX_PDF_CONTENT_BYTES:,} bytes): its pages repeat the same "
                "content, or its streams inflate far beyond a course file's"
            )


def _page_content_bytes(page: PageObject, sizes: dict[int, int]) -> int:
    """The inflated size of a page's content streams; `sizes` remembers each stream's size by
    object number, so a stream drawn by many pages is inflated once."""
    contents = page.raw_get("/Contents") if "/Contents" in page else None
    refs = list(contents) if isinstance(contents, ArrayObject) else [contents]
    total = 0
    for ref in refs:
        if ref is None:
            continue
        key = ref.idnum if isinstance(ref, IndirectObject) else None
        if key is not None and key in sizes:
            total += sizes[key]
            continue
        stream = ref.get_object()
        size = len(stream.get_data()) if isinstance(stream, StreamObject) else 0
        if key is not None:
            sizes[key] = size
        total += size
    return total


def _pdf_title(reader: PdfReader) -> str:
    # A broken info dictionary costs the title, not the file.
    try:
        metadata = reader.metadata
        title = metadata.title if metadata is not None else None
    except Exception:
        return ""
    return " ".join(title.split()) if isinstance(title, str) else ""
