"""The limits of every request field, in one list built from the constants that enforce them: the
README's table and the `Limit:` comment of every request field of the proto (and so of every
generated client) are both written from it, so neither can drift from the code
(`tests/api/test_limits_doc.py` checks both, and fails naming any request field without a limit).

`python -m tutor_memory.api.limits_doc` rewrites the table between the README's
`<!-- limits:begin -->` and `<!-- limits:end -->` markers and the `Limit:` comments of
proto/tutor_memory/v1/memory.proto (then run `make proto`). A new request field needs a `Limit`
below naming it as "Message.field" (or "*.field" for a field every request message of that name
shares).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from tutor_memory.api.convert.beliefs import MAX_CHECK_PART_BYTES
from tutor_memory.api.convert.episodes import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from tutor_memory.api.proto_limits import with_limit_comments
from tutor_memory.app.config import DEFAULT_MAX_MESSAGE_BYTES
from tutor_memory.app.embedding_queue import MAX_VECTOR_LAG
from tutor_memory.app.ingest import MAX_BATCH_ITEMS
from tutor_memory.app.nightly import DEFAULT_CITATION_BATCH, MAX_CITATION_BATCH
from tutor_memory.domain import limits as L
from tutor_memory.domain.conceptmap.extract import MAX_CONCEPTS_PER_FILE
from tutor_memory.domain.conceptmap.screening import (
    MAX_BUILDS_ON,
    MAX_CONCEPT_DEFINITION_CHARS,
    MAX_CONCEPT_PAGES,
    MAX_CONCEPT_SUMMARY_CHARS,
)
from tutor_memory.domain.episodes import MAX_CONCEPTS, MAX_EVIDENCE
from tutor_memory.domain.files.search import DEFAULT_PASSAGES, MAX_PASSAGES
from tutor_memory.domain.recall.candidates import MAX_MEMORIES

BEGIN = "<!-- limits:begin -->"
END = "<!-- limits:end -->"
README = Path("README.md")
PROTO = Path("proto/tutor_memory/v1/memory.proto")


@dataclass(frozen=True, slots=True)
class Limit:
    """One row of the README's table, and the proto fields whose `Limit:` comment it is.

    `fields` names each as "Message.field"; "*.field" stands for that field of every request
    message that has no row of its own for it. A row without fields is the README's alone.
    """

    label: str
    limit: str
    fields: tuple[str, ...] = ()


_ID = (
    f"1 to {L.MAX_ID_CHARS} characters; no control, invisible, bidirectional or separator "
    "characters, no space at either end"
)
_RANGE = "1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z"
_PAST = (
    f"{_RANGE}, and not more than {L.MAX_CLOCK_SKEW_US // 1_000_000} s ahead of the server's "
    "clock; unset means now"
)
_MIB = 1024 * 1024
_ZONE = f"empty (UTC) or an IANA time zone name of at most {L.MAX_TIME_ZONE_CHARS} characters"
_ANY = "none (any value)"


def _one_line(chars: int, *, required: bool) -> str:
    lead = "required; one line" if required else "one line"
    return f"{lead} without control characters, at most {chars:,} characters"


def _text(limit_bytes: int, *, required: bool = False) -> str:
    lead = "required; at most" if required else "at most"
    return f"{lead} {limit_bytes:,} bytes of UTF-8, no NUL"


LIMITS: tuple[Limit, ...] = (
    Limit("student_id, subject_id (every request)", _ID, ("*.student_id", "*.subject_id")),
    Limit(
        "NewEpisode.kind",
        "required; any kind but EPISODE_KIND_CONSOLIDATION (the nightly cycle's own)",
        ("NewEpisode.kind",),
    ),
    Limit(
        "NewEpisode.summary", _one_line(L.MAX_SUMMARY_CHARS, required=True), ("NewEpisode.summary",)
    ),
    Limit("NewEpisode.text", _text(L.MAX_TEXT_BYTES), ("NewEpisode.text",)),
    Limit(
        "TeachRequest.text",
        f"{_text(L.MAX_TEXT_BYTES, required=True)}; a teaching phrase, and not a question",
        ("TeachRequest.text",),
    ),
    Limit(
        "NewEpisode.concepts",
        f"at most {MAX_CONCEPTS}, each one line of at most {L.MAX_CONCEPT_CHARS} characters, "
        "no two alike",
        ("NewEpisode.concepts",),
    ),
    Limit("NewEpisode.evidence", f"at most {MAX_EVIDENCE} items", ("NewEpisode.evidence",)),
    Limit(
        "Evidence.file_id, IngestFileRequest.file_id, RemoveFileRequest.file_id",
        f"as an id, at most {L.MAX_FILE_ID_CHARS} characters",
        ("Evidence.file_id", "IngestFileRequest.file_id", "RemoveFileRequest.file_id"),
    ),
    Limit("Evidence.page", "0 (the whole file) or a 1-based page", ("Evidence.page",)),
    Limit(
        "Evidence.file_fingerprint",
        "64 lowercase hex characters (the sha256 of the file's bytes)",
        ("Evidence.file_fingerprint",),
    ),
    Limit(
        "NewEpisode.check",
        "required for EPISODE_KIND_CHECK, refused on any other kind",
        ("NewEpisode.check",),
    ),
    Limit(
        "NewEpisode.quiz",
        "required for EPISODE_KIND_QUIZ, refused on any other kind",
        ("NewEpisode.quiz",),
    ),
    Limit(
        "CheckResult.outcome, RecordCheckRequest.outcome",
        "required: CHECK_OUTCOME_RIGHT or CHECK_OUTCOME_WRONG",
        ("CheckResult.outcome", "RecordCheckRequest.outcome"),
    ),
    Limit(
        "CheckResult.topic, RecordCheckRequest.topic",
        _one_line(L.MAX_TOPIC_CHARS, required=True),
        ("CheckResult.topic", "RecordCheckRequest.topic"),
    ),
    Limit(
        "CheckResult.predicted_mastery, RecordCheckRequest.predicted_mastery",
        "unset, or a number from 0 to 1",
        ("CheckResult.predicted_mastery", "RecordCheckRequest.predicted_mastery"),
    ),
    Limit("QuizResult.total", "at least 1", ("QuizResult.total",)),
    Limit("QuizResult.correct", "at most total", ("QuizResult.correct",)),
    Limit(
        "NewEpisode.client_key",
        f"{_one_line(L.MAX_CLIENT_KEY_CHARS, required=False)}; required in IngestEpisodes",
        ("NewEpisode.client_key",),
    ),
    Limit(
        "RecordCheckRequest.client_key",
        _one_line(L.MAX_CLIENT_KEY_CHARS, required=False),
        ("RecordCheckRequest.client_key",),
    ),
    Limit("NewEpisode.salience", "must be unset", ("NewEpisode.salience",)),
    Limit(
        "every occurred_at, ConsolidateRequest.now",
        _PAST,
        (
            "NewEpisode.occurred_at",
            "IngestFileRequest.occurred_at",
            "RemoveFileRequest.occurred_at",
            "TeachRequest.occurred_at",
            "RecordCheckRequest.occurred_at",
            "ConsolidateRequest.now",
        ),
    ),
    Limit(
        "BuildBlockRequest.now",
        f"{_RANGE}; unset means now",
        ("BuildBlockRequest.now",),
    ),
    Limit(
        "every other timestamp",
        _RANGE,
        (
            "ListEpisodesRequest.occurred_from",
            "ListEpisodesRequest.occurred_to",
            "SignedCheckpoint.created_at",
        ),
    ),
    Limit(
        "AppendEpisodeRequest.episode",
        "required (the limits of its fields are NewEpisode's)",
        ("AppendEpisodeRequest.episode",),
    ),
    Limit(
        "IngestEpisodesRequest.episodes",
        f"at most {MAX_BATCH_ITEMS:,} items per call (all messages of the stream), each message "
        f"at most {DEFAULT_MAX_MESSAGE_BYTES // _MIB} MiB (the server's --max-message-bytes)",
        ("IngestEpisodesRequest.episodes",),
    ),
    Limit(
        "ImportEpisodesRequest.episodes",
        f"no cap on items per call (each chunk is acknowledged as it commits); each message at "
        f"most {DEFAULT_MAX_MESSAGE_BYTES // _MIB} MiB (the server's --max-message-bytes); the "
        f"stream waits while {MAX_VECTOR_LAG:,} episodes wait for their embedding",
        ("ImportEpisodesRequest.episodes",),
    ),
    Limit(
        "ListEpisodesRequest.page_size",
        f"at most {MAX_PAGE_SIZE:,}; 0 means {DEFAULT_PAGE_SIZE}",
        ("ListEpisodesRequest.page_size",),
    ),
    Limit(
        "ListEpisodesRequest.page_token",
        f"empty, or a next_page_token as issued (at most {L.MAX_PAGE_TOKEN_CHARS} characters)",
        ("ListEpisodesRequest.page_token",),
    ),
    Limit(
        "VerifyChainRequest.checkpoint",
        "optional; a checkpoint as Checkpoint issued it",
        ("VerifyChainRequest.checkpoint",),
    ),
    Limit(
        "SignedCheckpoint.tenant, .student_id, .subject_id",
        "not read: the signed payload names the chain, and the request's ids must match it",
        ("SignedCheckpoint.tenant", "SignedCheckpoint.student_id", "SignedCheckpoint.subject_id"),
    ),
    Limit("SignedCheckpoint.length", "not negative", ("SignedCheckpoint.length",)),
    Limit(
        "SignedCheckpoint.head_hash",
        f"exactly {L.HASH_BYTES} bytes",
        ("SignedCheckpoint.head_hash",),
    ),
    Limit(
        "SignedCheckpoint.signed_payload",
        f"at most {L.MAX_CHECKPOINT_PAYLOAD_BYTES:,} bytes",
        ("SignedCheckpoint.signed_payload",),
    ),
    Limit(
        "SignedCheckpoint.signature",
        f"exactly {L.SIGNATURE_BYTES} bytes",
        ("SignedCheckpoint.signature",),
    ),
    Limit(
        "SignedCheckpoint.public_key",
        f"exactly {L.PUBLIC_KEY_BYTES} bytes",
        ("SignedCheckpoint.public_key",),
    ),
    Limit(
        "BuildBlockRequest.query",
        f"at most {L.MAX_QUERY_CHARS:,} characters; may be empty",
        ("BuildBlockRequest.query",),
    ),
    Limit(
        "SearchPassagesRequest.query",
        f"required; at most {L.MAX_QUERY_CHARS:,} characters",
        ("SearchPassagesRequest.query",),
    ),
    Limit(
        "BuildBlockRequest.budget_tokens",
        f"1 to {L.MAX_BUDGET_TOKENS:,}",
        ("BuildBlockRequest.budget_tokens",),
    ),
    Limit(
        "BuildBlockRequest.time_zone, ConsolidateRequest.time_zone",
        _ZONE,
        ("BuildBlockRequest.time_zone", "ConsolidateRequest.time_zone"),
    ),
    Limit("BuildBlockRequest.mode", "a BlockMode value", ("BuildBlockRequest.mode",)),
    Limit("BuildBlockRequest.explain", _ANY, ("BuildBlockRequest.explain",)),
    Limit(
        "ForgetStudentRequest.allow_plaintext_history",
        _ANY,
        ("ForgetStudentRequest.allow_plaintext_history",),
    ),
    Limit(
        "AnnotateAnswerRequest.answer_episode_id",
        "required: an answer episode of the chain",
        ("AnnotateAnswerRequest.answer_episode_id",),
    ),
    Limit(
        "AnnotateAnswerRequest.block_id",
        f"required; at most {L.MAX_BLOCK_ID_CHARS:,} characters, a block_id BuildBlock issued",
        ("AnnotateAnswerRequest.block_id",),
    ),
    Limit(
        "AnnotateAnswerRequest.memory_ids",
        f"at most {MAX_MEMORIES}, each one the named block showed",
        ("AnnotateAnswerRequest.memory_ids",),
    ),
    Limit(
        "IngestFileRequest.filename",
        _one_line(L.MAX_FILENAME_CHARS, required=False),
        ("IngestFileRequest.filename",),
    ),
    Limit(
        "IngestFileRequest.media_type",
        _one_line(L.MAX_MEDIA_TYPE_CHARS, required=False),
        ("IngestFileRequest.media_type",),
    ),
    Limit(
        "IngestFileRequest.content",
        f"at most {L.MAX_FILE_BYTES // _MIB} MiB; at most {L.MAX_PAGES:,} pages and "
        f"{L.MAX_FILE_TEXT_CHARS:,} characters of text; lines of at most "
        f"{L.MAX_LINE_CHARS:,} characters; Markdown nested at most "
        f"{L.MAX_MARKDOWN_NESTING} levels, every code fence closed",
        ("IngestFileRequest.content",),
    ),
    Limit(
        "IngestFileRequest.content (PDF)",
        f"a PDF's page tree at most {L.MAX_PDF_PAGE_TREE_DEPTH} levels deep; arrays of at most "
        f"{L.MAX_PDF_ARRAY_ITEMS:,} items; a stream inflates to at most "
        f"{L.MAX_PDF_STREAM_BYTES // _MIB} MiB; the pages draw at most "
        f"{L.PDF_CONTENT_RATIO} times the file's size of content (at least "
        f"{L.MIN_PDF_CONTENT_BYTES // _MIB} MiB, at most {L.MAX_PDF_CONTENT_BYTES // _MIB} "
        f"MiB); at most {L.MAX_PDF_FORMS_PER_PAGE:,} forms drawn per page",
        ("IngestFileRequest.content",),
    ),
    Limit(
        "IngestFileRequest.concepts",
        f"at most {MAX_CONCEPTS_PER_FILE}",
        ("IngestFileRequest.concepts",),
    ),
    Limit(
        "ConceptInput.name",
        f"{_one_line(L.MAX_CONCEPT_CHARS, required=True)}; judged as a concept name",
        ("ConceptInput.name",),
    ),
    Limit(
        "ConceptInput.builds_on",
        f"at most {MAX_BUILDS_ON}, each one line of at most {L.MAX_CONCEPT_CHARS} characters",
        ("ConceptInput.builds_on",),
    ),
    Limit(
        "ConceptInput.summary",
        _one_line(MAX_CONCEPT_SUMMARY_CHARS, required=False),
        ("ConceptInput.summary",),
    ),
    Limit(
        "ConceptInput.definition",
        _text(MAX_CONCEPT_DEFINITION_CHARS),
        ("ConceptInput.definition",),
    ),
    Limit(
        "ConceptInput.pages",
        f"at most {MAX_CONCEPT_PAGES}, each a page of the file",
        ("ConceptInput.pages",),
    ),
    Limit(
        "SearchPassagesRequest.limit",
        f"at most {MAX_PASSAGES}; 0 means {DEFAULT_PASSAGES}",
        ("SearchPassagesRequest.limit",),
    ),
    Limit(
        "RecordCheckRequest.evaluation, .student_answer",
        _text(MAX_CHECK_PART_BYTES),
        ("RecordCheckRequest.evaluation", "RecordCheckRequest.student_answer"),
    ),
    Limit(
        "GetBeliefHistoryRequest.concept",
        f"empty (every concept), or one line of at most {L.MAX_CONCEPT_CHARS} characters",
        ("GetBeliefHistoryRequest.concept",),
    ),
    Limit(
        "ConsolidateRequest.student_id, .subject_id",
        f"empty, or an id as in every request ({_ID}); subject_id only with student_id",
        ("ConsolidateRequest.student_id", "ConsolidateRequest.subject_id"),
    ),
    Limit(
        "ConsolidateRequest.window_hours",
        "none (ignored)",
        ("ConsolidateRequest.window_hours",),
    ),
    Limit(
        "ConsolidateRequest.citation_batch",
        f"at most {MAX_CITATION_BATCH:,}; 0 means {DEFAULT_CITATION_BATCH}",
        ("ConsolidateRequest.citation_batch",),
    ),
    Limit(
        "work of one request",
        f"a file's reading, extraction and embedding at most {L.FILE_WORK_SECONDS} s; the "
        f"text work of AppendEpisode, Teach, RecordCheck and AnnotateAnswer (detectors, topic "
        f"routing, grounding) at most {L.TEXT_WORK_SECONDS} s (RESOURCE_EXHAUSTED); the "
        "caller's deadline stops it sooner (DEADLINE_EXCEEDED), and nothing is stored",
    ),
)


# (field pattern, limit) pairs, as the proto's comments take them.
LIMITS_BY_PATTERN: tuple[tuple[str, str], ...] = tuple(
    (pattern, limit.limit) for limit in LIMITS for pattern in limit.fields
)


def rows() -> list[tuple[str, str]]:
    """(field, limit) for every row of the README's table, in the order of `LIMITS`."""
    return [(limit.label, limit.limit) for limit in LIMITS]


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


def with_proto_limits(proto: str) -> str:
    """`proto` (the text of memory.proto) with every request field's `Limit:` comment written
    from `LIMITS`; raises `proto_limits.UndocumentedFields` naming fields that have none."""
    return with_limit_comments(proto, PROTO.relative_to("proto").as_posix(), LIMITS_BY_PATTERN)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tutor_memory.api.limits_doc",
        description="Write the limits table into the README and the Limit: comments into the "
        "proto, from the constants that enforce them.",
    )
    parser.add_argument("readme", nargs="?", type=Path, default=README)
    parser.add_argument("--proto", type=Path, default=PROTO)
    args = parser.parse_args(argv)
    readme: Path = args.readme
    proto: Path = args.proto
    readme.write_text(with_table(readme.read_text(encoding="utf-8")), encoding="utf-8")
    proto.write_text(with_proto_limits(proto.read_text(encoding="utf-8")), encoding="utf-8")


if __name__ == "__main__":
    main()
