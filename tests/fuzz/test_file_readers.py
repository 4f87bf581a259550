"""The course-file readers, fuzzed (issue 12): any bytes under any name and media type become a
Document of numbered pages or a FileRejected naming the reason, never another exception; the
pages then become passages within their size, and the built-in extractor names concepts of
pages that exist.

PDFs are fuzzed by mutating real ones (cut short, bytes overwritten, hostile text spliced in),
since random bytes alone never get past pypdf's first check.
"""

from __future__ import annotations

import functools
import io

from hypothesis import given
from hypothesis import strategies as st
from pypdf import PdfWriter
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from tests.fixtures.biology.make_pdf import build_pdf
from tests.helpers.fuzz import fuzz_settings, hostile_text
from tutor_memory.domain.conceptmap.extract import OfflineExtractor
from tutor_memory.domain.conceptmap.screening import screen
from tutor_memory.domain.files.document import Document
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.files.passages import MAX_PASSAGE_CHARS, passages
from tutor_memory.domain.files.read import MAX_PAGES, read_document

NAMES = ("notes.md", "notes.txt", "book.pdf", "upload", "a.markdown", "")
MEDIA_TYPES = ("text/markdown", "text/plain", "application/pdf", "", "application/octet-stream")

COURSE_PAGES = (
    "# Cells\n\nOsmosis is the diffusion of water across a membrane.",
    "Diffusion: the movement of particles from high to low concentration.",
)


@functools.cache
def _seed_pdfs() -> tuple[bytes, ...]:
    """Real PDFs to mutate: one written by fpdf2, and one by pypdf with a compressed stream."""
    writer = PdfWriter()
    page = writer.add_blank_page(200, 200)
    font = DictionaryObject(
        {
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject("/Helvetica"),
        }
    )
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
    )
    stream = DecodedStreamObject()
    stream.set_data(b"BT /F1 12 Tf 10 100 Td (Osmosis moves water.) Tj ET")
    page[NameObject("/Contents")] = writer._add_object(stream.flate_encode())
    out = io.BytesIO()
    writer.write(out)
    return build_pdf(list(COURSE_PAGES), title="Cells"), out.getvalue()


@st.composite
def mutated_pdfs(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(_seed_pdfs())))
    for _ in range(draw(st.integers(1, 6))):
        choice = draw(st.integers(0, 2))
        at = draw(st.integers(0, len(data)))
        if choice == 0:
            del data[at:]
            data += b"%PDF-" if not data else b""
        elif choice == 1:
            data[at : at + 8] = draw(st.binary(min_size=1, max_size=8))
        else:
            data[at:at] = draw(hostile_text).encode("utf-8", "surrogatepass")[:200]
    return bytes(data)


def assert_well_formed(document: Document) -> None:
    assert 1 <= len(document.pages) <= MAX_PAGES
    assert [p.number for p in document.pages] == list(range(1, len(document.pages) + 1))
    numbers = {p.number for p in document.pages}
    for passage in passages(document):
        assert passage.page in numbers
        assert passage.text
        assert len(passage.text) <= MAX_PASSAGE_CHARS
    accepted, rejected = screen(OfflineExtractor().extract(document))
    for concept in accepted:
        assert concept.name.strip()
        assert set(concept.pages) <= numbers
    assert all(reason for _, reason in rejected)


def read_or_refuse(content: bytes, name: str, media_type: str) -> Document | None:
    try:
        first = read_document(content, name, media_type)
    except FileRejected as exc:
        refused = exc
    else:
        assert read_document(content, name, media_type) == first
        return first
    assert refused.reason
    assert refused.field == "file"
    return None


@fuzz_settings
@given(st.binary(max_size=2_000), st.sampled_from(NAMES), st.sampled_from(MEDIA_TYPES))
def test_any_bytes_are_read_or_refused_with_a_reason(
    content: bytes, name: str, media_type: str
) -> None:
    document = read_or_refuse(content, name, media_type)
    if document is not None:
        assert_well_formed(document)


@fuzz_settings
@given(
    st.lists(hostile_text, min_size=1, max_size=8).map("\n".join),
    st.sampled_from(["notes.md", "notes.txt"]),
)
def test_any_text_file_becomes_pages_passages_and_concepts(text: str, name: str) -> None:
    document = read_or_refuse(text.encode("utf-8", "surrogatepass"), name, "")
    if document is not None:
        assert document.kind == ("markdown" if name.endswith(".md") else "text")
        assert all(page.text.strip() for page in document.pages)
        assert_well_formed(document)


@fuzz_settings
@given(mutated_pdfs())
def test_a_damaged_pdf_is_read_or_refused_with_a_reason(content: bytes) -> None:
    document = read_or_refuse(content, "book.pdf", "application/pdf")
    if document is not None:
        assert document.kind == "pdf"
        assert_well_formed(document)


def test_the_seed_pdfs_are_read() -> None:
    # The mutations start from PDFs that read: a seed pypdf refused would fuzz nothing.
    for seed in _seed_pdfs():
        document = read_document(seed, "book.pdf", "application/pdf")
        assert "Osmosis" in " ".join(p.text for p in document.pages)
