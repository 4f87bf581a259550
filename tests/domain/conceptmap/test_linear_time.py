"""The concept map's readers and detectors run in time linear in their input (issue 12).

Markdown block parsing, inline markup, heading names, teaching detection, the offline extractor,
canonical keys and the concept-name matcher (which every check's topic and every taught note go
through) are timed on adversarial shapes drawn by hypothesis at n and 16 n characters, as in
`tests.domain.text.test_linear_time` (see `tests.helpers.timing` for the bounds).
"""

from __future__ import annotations

from tests.helpers.linear_time import linear_time_tests
from tests.helpers.timing import EntryPoint
from tutor_memory.domain.conceptmap.blocks import parse_blocks
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.conceptmap.extract import OfflineExtractor
from tutor_memory.domain.conceptmap.headings import rejection_reason
from tutor_memory.domain.conceptmap.markup import strip_markup
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.conceptmap.teaching import detect_teaching, is_question
from tutor_memory.domain.files.document import Document, DocumentKind, Page


def _extract(kind: DocumentKind, linear_seconds_per_million: float) -> EntryPoint:
    # One page of any length: read_document bounds Markdown and text pages, a PDF's pages are
    # whatever the file holds.
    def run(text: str) -> object:
        return OfflineExtractor().extract(Document(kind, (Page(1, text, ("Cells",)),)))

    return EntryPoint(run, 128, linear_seconds_per_million)


# Names whose words the hostile shapes repeat (a one-word name, several names sharing a first
# word, names of punctuation), so that `find` meets a candidate at almost every word.
MATCHER = NameMatcher(["cell", "cell wall", "cell wall of a plant", "a a a", "* a", "July", "x"])


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
    "canonical.canonical_key": EntryPoint(canonical_key, 512, 0.4),
    "names.NameMatcher.find": EntryPoint(MATCHER.find, 512, 1.0),
}


(
    test_cost_grows_linearly_on_known_shapes,
    test_cost_grows_linearly_on_drawn_shapes,
    test_the_issue_shapes_stay_under_the_ceiling,
) = linear_time_tests(ENTRY_POINTS)
