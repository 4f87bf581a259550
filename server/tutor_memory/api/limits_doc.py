"""The limits of every request field, as the README lists them: built from the constants that
enforce them, so the table cannot drift from the code (`tests/api/test_limits_doc.py` checks the
README against it).

`python -m tutor_memory.api.limits_doc README.md` rewrites the table between the README's
`<!-- limits:begin -->` and `<!-- limits:end -->` markers.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tutor_memory.api.convert.beliefs import MAX_CHECK_PART_BYTES
from tutor_memory.api.convert.episodes import MAX_PAGE_SIZE
from tutor_memory.app.ingest import MAX_BATCH_ITEMS
from tutor_memory.app.nightly import MAX_CITATION_BATCH
from tutor_memory.domain import limits as L
from tutor_memory.domain.conceptmap.screening import (
    MAX_BUILDS_ON,
    MAX_CONCEPT_DEFINITION_CHARS,
    MAX_CONCEPT_PAGES,
    MAX_CONCEPT_SUMMARY_CHARS,
)
from tutor_memory.domain.episodes import MAX_CONCEPTS, MAX_EVIDENCE
from tutor_memory.domain.files.search import MAX_PASSAGES
from tutor_memory.domain.recall.candidates import MAX_MEMORIES

BEGIN = "<!-- limits:begin -->"
END = "<!-- limits:end -->"

_ID = (
    f"1 to {L.MAX_ID_CHARS} characters; no control, invisible, bidirectional or separator "
    "characters, no space at either end"
)
_TIME = "1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z"
_MIB = 1024 * 1024


def rows() -> list[tuple[str, str]]:
    """(field, limit) for every field a caller sets, in the order of the proto's messages."""
    return [
        ("student_id, subject_id (every request)", _ID),
        ("NewEpisode.summary", f"one line, at most {L.MAX_SUMMARY_CHARS:,} characters"),
        (
            "NewEpisode.text, TeachRequest.text",
            f"at most {L.MAX_TEXT_BYTES:,} bytes of UTF-8, no NUL",
        ),
        (
            "NewEpisode.concepts",
            f"at most {MAX_CONCEPTS}, each one line of at most {L.MAX_CONCEPT_CHARS} characters",
        ),
        ("NewEpisode.evidence", f"at most {MAX_EVIDENCE} items"),
        ("NewEpisode.client_key", f"one line, at most {L.MAX_CLIENT_KEY_CHARS} characters"),
        (
            "NewEpisode.occurred_at and every other timestamp",
            f"{_TIME}; a time of the past at most {L.MAX_CLOCK_SKEW_US // 1_000_000} s ahead "
            "of the server's clock",
        ),
        ("IngestEpisodes items per call", f"at most {MAX_BATCH_ITEMS:,}"),
        ("ListEpisodesRequest.page_size", f"at most {MAX_PAGE_SIZE:,}"),
        ("ListEpisodesRequest.page_token", f"at most {L.MAX_PAGE_TOKEN_CHARS} characters"),
        (
            "VerifyChainRequest.checkpoint",
            f"payload at most {L.MAX_CHECKPOINT_PAYLOAD_BYTES:,} bytes; hashes "
            f"{L.HASH_BYTES}, signature {L.SIGNATURE_BYTES}, public key {L.PUBLIC_KEY_BYTES} bytes",
        ),
        (
            "BuildBlockRequest.query, SearchPassagesRequest.query",
            f"at most {L.MAX_QUERY_CHARS:,} characters",
        ),
        ("BuildBlockRequest.budget_tokens", f"1 to {L.MAX_BUDGET_TOKENS:,}"),
        (
            "BuildBlockRequest.time_zone, ConsolidateRequest.time_zone",
            f"an IANA name of at most {L.MAX_TIME_ZONE_CHARS} characters",
        ),
        ("AnnotateAnswerRequest.block_id", f"at most {L.MAX_BLOCK_ID_CHARS:,} characters"),
        (
            "AnnotateAnswerRequest.memory_ids",
            f"at most {MAX_MEMORIES}, each one the named block showed",
        ),
        ("IngestFileRequest.file_id", f"as an id, at most {L.MAX_FILE_ID_CHARS} characters"),
        ("IngestFileRequest.filename", f"one line, at most {L.MAX_FILENAME_CHARS} characters"),
        ("IngestFileRequest.media_type", f"one line, at most {L.MAX_MEDIA_TYPE_CHARS} characters"),
        (
            "IngestFileRequest.content",
            f"at most {L.MAX_FILE_BYTES // _MIB} MiB; at most {L.MAX_PAGES:,} pages and "
            f"{L.MAX_FILE_TEXT_CHARS:,} characters of text; lines of at most "
            f"{L.MAX_LINE_CHARS:,} characters; Markdown nested at most "
            f"{L.MAX_MARKDOWN_NESTING} levels, every code fence closed",
        ),
        (
            "IngestFileRequest.content (PDF)",
            f"page tree at most {L.MAX_PDF_PAGE_TREE_DEPTH} levels deep; arrays of at most "
            f"{L.MAX_PDF_ARRAY_ITEMS:,} items; a stream inflates to at most "
            f"{L.MAX_PDF_STREAM_BYTES // _MIB} MiB; the pages draw at most "
            f"{L.PDF_CONTENT_RATIO} times the file's size of content (at least "
            f"{L.MIN_PDF_CONTENT_BYTES // _MIB} MiB, at most {L.MAX_PDF_CONTENT_BYTES // _MIB} "
            f"MiB); at most {L.MAX_PDF_FORMS_PER_PAGE:,} forms drawn per page",
        ),
        (
            "IngestFileRequest.concepts",
            f"each name judged as a concept name; summary at most {MAX_CONCEPT_SUMMARY_CHARS} "
            f"and definition {MAX_CONCEPT_DEFINITION_CHARS:,} characters; at most "
            f"{MAX_BUILDS_ON} builds_on and {MAX_CONCEPT_PAGES} pages",
        ),
        ("SearchPassagesRequest.limit", f"at most {MAX_PASSAGES}"),
        ("RecordCheckRequest.topic", f"one line, at most {L.MAX_TOPIC_CHARS} characters"),
        (
            "RecordCheckRequest.evaluation, .student_answer",
            f"at most {MAX_CHECK_PART_BYTES:,} bytes each, no NUL",
        ),
        ("GetBeliefHistoryRequest.concept", f"one line, at most {L.MAX_CONCEPT_CHARS} characters"),
        ("ConsolidateRequest.citation_batch", f"at most {MAX_CITATION_BATCH:,}"),
        (
            "work of one request",
            f"a file's reading, extraction and embedding at most {L.FILE_WORK_SECONDS} s, an "
            f"answer's grounding at most {L.TEXT_WORK_SECONDS} s (RESOURCE_EXHAUSTED); the "
            "caller's deadline stops it sooner (DEADLINE_EXCEEDED)",
        ),
    ]


def markdown_table() -> str:
    lines = ["| field | limit |", "|---|---|"]
    lines += [f"| `{field}` | {limit} |" for field, limit in rows()]
    return "\n".join(lines)


def with_table(readme: str) -> str:
    """`readme` with the text between the markers replaced by the current table."""
    head, begin, rest = readme.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"the README has no {BEGIN} … {END} block")
    return f"{head}{BEGIN}\n{markdown_table()}\n{END}{tail}"


def main(argv: list[str]) -> None:
    path = Path(argv[0] if argv else "README.md")
    path.write_text(with_table(path.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
