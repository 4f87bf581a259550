"""Reading a course file and cutting it into passages run in time linear in the file (issue 12).

`read_document` on plain text and on Markdown, Markdown stripping, passages and chunking are timed
on adversarial shapes drawn by hypothesis at n and 16 n characters, as in
`tests.domain.text.test_linear_time` (see `tests.helpers.timing` for the bounds).
"""

from __future__ import annotations

from tests.helpers.linear_time import linear_time_tests
from tests.helpers.timing import EntryPoint
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.files.passages import passages, strip_markdown
from tutor_memory.domain.files.read import read_document


def _read(filename: str, media_type: str, linear_seconds_per_million: float) -> EntryPoint:
    def run(text: str) -> object:
        try:
            return read_document(text.encode(), filename, media_type)
        except FileRejected:
            return None  # blank text, or over the page limit: refusing is an answer too

    return EntryPoint(run, 512, linear_seconds_per_million)


def _passages(text: str) -> object:
    try:
        return passages(read_document(text.encode(), "notes.md", "text/markdown"))
    except FileRejected:
        return None


ENTRY_POINTS = {
    "read.read_document (text)": _read("notes.txt", "text/plain", 0.6),
    "read.read_document (Markdown)": _read("notes.md", "text/markdown", 0.6),
    "passages.strip_markdown": EntryPoint(strip_markdown, 512, 0.3),
    "passages.passages (Markdown)": EntryPoint(_passages, 256, 1.1),
}


(
    test_cost_grows_linearly_on_known_shapes,
    test_cost_grows_linearly_on_drawn_shapes,
    test_the_issue_shapes_stay_under_the_ceiling,
) = linear_time_tests(ENTRY_POINTS)
