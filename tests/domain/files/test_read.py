"""Reading course files into pages: formats, page rules, and every way a file is rejected."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

from tests.fixtures.biology.make_pdf import FIXTURE_DIR, build_pdf, transport_pdf
from tutor_memory.domain.files import read
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.files.read import detect_kind, read_document


def _encrypt(pdf: bytes, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.encrypt(user_password=user_password, owner_password="owner", algorithm="AES-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _rejection(content: bytes, filename: str, media_type: str = "") -> str:
    with pytest.raises(FileRejected) as caught:
        read_document(content, filename, media_type)
    return caught.value.reason


# --- PDF -------------------------------------------------------------------------------------


def test_pdf_pages_are_the_pdfs_pages_numbered_from_one() -> None:
    document = read_document(
        build_pdf(["Osmosis is the diffusion of water.", "Diffusion spreads particles."]),
        "ch3.pdf",
        "application/pdf",
    )
    assert document.kind == "pdf"
    assert [page.number for page in document.pages] == [1, 2]
    assert "Osmosis is the diffusion of water." in document.pages[0].text
    assert "Diffusion spreads particles." in document.pages[1].text


def test_pdf_title_comes_from_its_metadata() -> None:
    document = read_document(build_pdf(["Some text."], title="Transport"), "x.pdf", "")
    assert document.title == "Transport"


def test_pdf_page_without_text_keeps_its_number() -> None:
    document = read_document(build_pdf(["First page.", "", "Third page."]), "x.pdf", "")
    assert [(page.number, bool(page.text)) for page in document.pages] == [
        (1, True),
        (2, False),
        (3, True),
    ]


def test_encrypted_pdf_is_rejected_even_with_an_empty_password() -> None:
    locked = _encrypt(build_pdf(["Secret osmosis notes."]), user_password="")
    assert "encrypted" in _rejection(locked, "locked.pdf", "application/pdf")


def test_password_protected_pdf_is_rejected_as_encrypted() -> None:
    locked = _encrypt(build_pdf(["Secret osmosis notes."]), user_password="hunter2")
    assert "encrypted" in _rejection(locked, "locked.pdf", "application/pdf")


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"%PDF-1.7\nthis is not a pdf body at all", id="garbage-after-signature"),
        pytest.param(b"\x00\x01\x02 binary noise", id="noise-declared-as-pdf"),
    ],
)
def test_corrupt_pdf_is_rejected_as_unreadable(content: bytes) -> None:
    assert "cannot be read" in _rejection(content, "broken.pdf", "application/pdf")


def test_truncated_pdf_is_rejected_as_unreadable() -> None:
    whole = build_pdf(["Page one text.", "Page two text."])
    assert "cannot be read" in _rejection(whole[: len(whole) // 2], "cut.pdf", "application/pdf")


def test_scanned_pdf_without_text_is_rejected_and_says_why() -> None:
    pdf = FPDF()
    pdf.add_page()
    pdf.rect(10, 10, 80, 120, style="F")  # a page that is only a picture
    reason = _rejection(bytes(pdf.output()), "scan.pdf", "application/pdf")
    assert "no extractable text" in reason
    assert "scanned" in reason


def test_pdf_with_more_than_max_pages_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "MAX_PAGES", 2)
    reason = _rejection(build_pdf(["a.", "b.", "c."]), "long.pdf", "application/pdf")
    assert "3 pages" in reason
    assert "limit is 2" in reason


# --- limits and formats --------------------------------------------------------------------------


def test_empty_file_is_rejected() -> None:
    assert "empty" in _rejection(b"", "notes.txt", "text/plain")


def test_file_over_the_byte_limit_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "MAX_FILE_BYTES", 10)
    reason = _rejection(b"x" * 11, "notes.txt", "text/plain")
    assert "11 bytes" in reason
    assert "limit is 10 bytes" in reason


def test_byte_limit_is_25_mib() -> None:
    assert read.MAX_FILE_BYTES == 25 * 1024 * 1024


def test_unknown_format_is_rejected_naming_what_was_sent() -> None:
    reason = _rejection(b"\x89PNG\r\n", "diagram.png", "image/png")
    assert "unsupported format" in reason
    assert "image/png" in reason
    assert "diagram.png" in reason


@pytest.mark.parametrize(
    ("content", "filename", "media_type", "kind"),
    [
        pytest.param(b"# T", "notes.md", "text/plain", "markdown", id="md-sent-as-text-plain"),
        pytest.param(b"# T", "notes.markdown", "", "markdown", id="markdown-extension"),
        pytest.param(b"# T", "notes", "text/markdown; charset=utf-8", "markdown", id="md-type"),
        pytest.param(b"hi", "notes.TXT", "application/octet-stream", "text", id="txt-octets"),
        pytest.param(b"hi", "notes", "text/plain", "text", id="text-plain-type"),
        pytest.param(b"%PDF-1.7", "notes.txt", "text/plain", "pdf", id="pdf-signature-wins"),
        pytest.param(b"x", "C:\\course\\ch3.pdf", "", "pdf", id="windows-path-pdf-extension"),
    ],
)
def test_format_is_detected_from_bytes_media_type_and_extension(
    content: bytes, filename: str, media_type: str, kind: str
) -> None:
    assert detect_kind(content, filename, media_type) == kind


# --- text encodings ------------------------------------------------------------------------------


def test_invalid_utf8_is_rejected_naming_the_byte_offset() -> None:
    reason = _rejection(b"Osmosis \xff water", "notes.txt", "text/plain")
    assert "not valid UTF-8" in reason
    assert "offset 8" in reason
    assert "0xff" in reason


def test_invalid_utf8_offset_counts_the_byte_order_mark() -> None:
    reason = _rejection(b"\xef\xbb\xbfab\xfe", "notes.md", "text/markdown")
    assert "offset 5" in reason


def test_byte_order_mark_is_accepted_and_dropped() -> None:
    document = read_document(b"\xef\xbb\xbf# Cells\n\nText.", "notes.md", "")
    assert document.title == "Cells"
    assert document.pages[0].text.startswith("# Cells")


def test_latin1_text_is_rejected_not_guessed() -> None:
    assert "not valid UTF-8" in _rejection("Ósmosis".encode("latin-1"), "n.txt", "text/plain")


def test_text_with_nul_bytes_is_rejected_as_binary() -> None:
    assert "binary" in _rejection(b"abc\x00def", "n.txt", "text/plain")


def test_windows_line_endings_are_normalised() -> None:
    document = read_document(b"One.\r\n\r\nTwo.\rThree.", "n.txt", "text/plain")
    assert document.pages[0].text == "One.\n\nTwo.\nThree."


def test_whitespace_only_text_is_rejected() -> None:
    assert "no text" in _rejection(b" \n\n\t ", "n.txt", "text/plain")


# --- Markdown ------------------------------------------------------------------------------------


_CHAPTER = """# Cell Biology

## Introduction

Cells are small.

## Osmosis

**Osmosis** is the diffusion of water.

### In plants

Plant cells become firm.

```
## not a heading inside a code block
```

## Diffusion
Diffusion spreads particles.
"""


def test_markdown_has_one_page_per_top_level_section() -> None:
    document = read_document(_CHAPTER.encode(), "cells.md", "text/markdown")
    assert document.kind == "markdown"
    assert [page.headings for page in document.pages] == [
        ("Cell Biology", "Introduction"),
        ("Cell Biology", "Osmosis"),
        ("Cell Biology", "Diffusion"),
    ]
    assert [page.number for page in document.pages] == [1, 2, 3]


def test_markdown_keeps_markup_and_deeper_headings_inside_the_section() -> None:
    osmosis = read_document(_CHAPTER.encode(), "cells.md", "").pages[1]
    assert osmosis.text.startswith("## Osmosis")
    assert "**Osmosis**" in osmosis.text
    assert "### In plants" in osmosis.text
    assert "## not a heading inside a code block" in osmosis.text


def test_markdown_title_is_the_first_top_heading() -> None:
    assert read_document(_CHAPTER.encode(), "cells.md", "").title == "Cell Biology"


def test_markdown_heading_with_nothing_under_it_joins_the_next_page() -> None:
    first = read_document(_CHAPTER.encode(), "cells.md", "").pages[0]
    assert first.text.startswith("# Cell Biology\n\n## Introduction")


def test_markdown_text_before_the_first_heading_is_its_own_page() -> None:
    document = read_document(b"Read this first.\n\n## Osmosis\n\nWater moves.", "a.md", "")
    assert [(page.text, page.headings) for page in document.pages] == [
        ("Read this first.", ()),
        ("## Osmosis\n\nWater moves.", ("Osmosis",)),
    ]
    assert document.title == ""


def test_markdown_heading_needs_a_space_after_the_hashes() -> None:
    document = read_document(b"#hashtag is not a heading\n\nText.", "a.md", "")
    assert len(document.pages) == 1
    assert document.pages[0].headings == ()


def test_markdown_closing_hashes_are_not_part_of_the_heading() -> None:
    document = read_document(b"## Osmosis ##\n\nWater.", "a.md", "")
    assert document.pages[0].headings == ("Osmosis",)


def test_long_markdown_section_is_split_at_paragraphs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "MAX_PAGE_CHARS", 60)
    paragraphs = [f"Paragraph {i} is about osmosis and water." for i in range(4)]
    text = "## Osmosis\n\n" + "\n\n".join(paragraphs[:2]) + "\n\n### Plants\n\n"
    text += "\n\n".join(paragraphs[2:])
    document = read_document(text.encode(), "a.md", "")
    assert len(document.pages) > 1
    assert all(len(page.text) <= 60 for page in document.pages)
    # Every paragraph survives whole, on exactly one page.
    for paragraph in paragraphs:
        assert sum(paragraph in page.text for page in document.pages) == 1
    # A page after the ### heading carries it in its heading path.
    assert document.pages[-1].headings == ("Osmosis", "Plants")
    assert document.pages[0].headings == ("Osmosis",)


# --- plain text ----------------------------------------------------------------------------------


def test_plain_text_is_cut_into_pages_at_paragraph_boundaries() -> None:
    paragraphs = [f"Paragraph {i}. " + "Water moves by osmosis. " * 20 for i in range(12)]
    document = read_document("\n\n".join(paragraphs).encode(), "n.txt", "text/plain")
    assert document.kind == "text"
    assert len(document.pages) > 1
    assert all(len(page.text) <= read.TEXT_PAGE_CHARS for page in document.pages)
    for paragraph in paragraphs:
        assert sum(paragraph.strip() in page.text for page in document.pages) == 1


def test_plain_text_paragraph_longer_than_a_page_is_cut_at_sentences(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(read, "TEXT_PAGE_CHARS", 50)
    sentences = [f"Sentence number {i} is here." for i in range(6)]
    document = read_document(" ".join(sentences).encode(), "n.txt", "text/plain")
    assert all(page.text.endswith(".") for page in document.pages)
    assert " ".join(page.text for page in document.pages) == " ".join(sentences)


def test_plain_text_title_line_opens_the_next_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "TEXT_PAGE_CHARS", 60)
    text = "Osmosis is the diffusion of water.\n\nGlossary\n\nOsmosis: water moving in."
    pages = read_document(text.encode(), "n.txt", "text/plain").pages
    assert [page.text for page in pages] == [
        "Osmosis is the diffusion of water.",
        "Glossary\n\nOsmosis: water moving in.",
    ]


def test_text_with_more_pages_than_the_limit_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(read, "TEXT_PAGE_CHARS", 10)
    monkeypatch.setattr(read, "MAX_PAGES", 2)
    assert "limit is 2" in _rejection(b"Aaaa bbbb.\n\nCccc dddd.\n\nEeee ffff.", "n.txt", "")


# --- the biology fixture course ------------------------------------------------------------------


def _expected_files() -> dict[str, dict[str, object]]:
    data = json.loads((FIXTURE_DIR / "EXPECTED.json").read_text(encoding="utf-8"))
    files: dict[str, dict[str, object]] = data["files"]
    return files


@pytest.mark.parametrize("name", ["cells.md", "organelles.txt", "transport.pdf"])
def test_biology_course_files_read_as_the_fixture_expects(name: str) -> None:
    expected = _expected_files()[name]
    content = transport_pdf() if name == "transport.pdf" else Path(FIXTURE_DIR, name).read_bytes()
    document = read_document(content, name, str(expected["media_type"]))
    assert document.kind == expected["kind"]
    assert len(document.pages) == expected["pages"]
    assert document.title == expected["title"]
