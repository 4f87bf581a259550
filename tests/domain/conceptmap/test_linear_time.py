"""The concept map's readers and detectors run in time linear in their input (issue 12).

Markdown block parsing, inline markup, heading names, teaching detection and the offline extractor
are timed on adversarial shapes drawn by hypothesis at n and 16 n characters, as in
`tests.domain.text.test_linear_time` (see `tests.helpers.timing` for the bounds).
"""

from __future__ import annotations

from tests.helpers.linear_time import linear_time_tests
from tests.helpers.timing import EntryPoint
from tutor_memory.domain.conceptmap.blocks import parse_blocks
from tutor_memory.domain.conceptmap.extract import OfflineExtractor
from tutor_memory.domain.conceptmap.headings import rejection_reason
from tutor_memory.domain.conceptmap.markup import strip_markup
from tutor_memory.domain.conceptmap.teaching import detect_teaching, is_question
from tutor_memory.domain.files.document import Document, DocumentKind, Page


def _extract(kind: DocumentKind, linear_seconds_per_million: float) -> EntryPoint:
    # One page of any length: read_document bounds Markdown and text pages, a PDF's pages are
    # whatever the file holds.
    def run(text: str) -> object:
        return OfflineExtractor().extract(Document(kind, (Page(1, text, ("Cells",)),)))

    return EntryPoint(run, 128, linear_seconds_per_million)


ENTRY_POINTS = {
    "blocks.parse_blocks (Markdown)": EntryPoint(
        lambda text: list(parse_blocks(text, markdown=True)), 512, 1.2
    ),
    "blocks.parse_blocks (plain)": EntryPoint(
        lambda text: list(parse_blocks(text, markdown=False)), 512, 1.3
    ),
    "markup.strip_markup": EntryPoint(strip_markup, 512, 1.2),
    "headings.rejection_reason": EntryPoint(rejection_reason, 512, 1.3),
    "teaching.detect_teaching": EntryPoint(detect_teaching, 256, 3.0),
    "teaching.is_question": EntryPoint(is_question, 256, 1.6),
    "extract.OfflineExtractor (Markdown page)": _extract("markdown", 11.0),
    "extract.OfflineExtractor (PDF page)": _extract("pdf", 9.0),
}


(
    test_cost_grows_linearly_on_known_shapes,
    test_cost_grows_linearly_on_drawn_shapes,
    test_the_issue_shapes_stay_under_the_ceiling,
) = linear_time_tests(ENTRY_POINTS)
