"""Which concepts of a file enter the map (SPEC R3.1, R3.2, R5.1): a caller's own extraction is
checked exactly like the built-in extractor's; section headings are rejected one by one, and
numbering and markup are the file's furniture, not part of a concept's name."""

from __future__ import annotations

from collections.abc import Sequence

from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.extract import MAX_CONCEPTS_PER_FILE
from tutor_memory.domain.conceptmap.headings import clean_name, rejection_reason
from tutor_memory.domain.episodes import MAX_CONCEPT_CHARS
from tutor_memory.domain.errors import InvalidArgument

# What a caller-supplied concept may carry (the extractor's own output stays within these too).
MAX_CONCEPT_SUMMARY_CHARS = 500
MAX_CONCEPT_DEFINITION_CHARS = 1_000
MAX_BUILDS_ON = 16


def validate_caller_concepts(
    concepts: Sequence[ExtractedConcept], pages: int
) -> tuple[list[ExtractedConcept], list[tuple[str, str]]]:
    """The caller's concepts checked exactly as the built-in extractor's: malformed ones are an
    INVALID_ARGUMENT naming the field; section headings are rejected one by one (R3.2)."""
    if len(concepts) > MAX_CONCEPTS_PER_FILE:
        raise InvalidArgument(
            "concepts", f"{len(concepts)} given, at most {MAX_CONCEPTS_PER_FILE} per file"
        )
    for i, c in enumerate(concepts):
        field = f"concepts[{i}]"
        if not c.name.strip():
            raise InvalidArgument(f"{field}.name", "required")
        if len(c.name) > MAX_CONCEPT_CHARS:
            raise InvalidArgument(f"{field}.name", f"longer than {MAX_CONCEPT_CHARS} characters")
        if len(c.summary) > MAX_CONCEPT_SUMMARY_CHARS:
            raise InvalidArgument(
                f"{field}.summary", f"longer than {MAX_CONCEPT_SUMMARY_CHARS} characters"
            )
        if len(c.definition) > MAX_CONCEPT_DEFINITION_CHARS:
            raise InvalidArgument(
                f"{field}.definition", f"longer than {MAX_CONCEPT_DEFINITION_CHARS} characters"
            )
        if len(c.builds_on) > MAX_BUILDS_ON:
            raise InvalidArgument(f"{field}.builds_on", f"more than {MAX_BUILDS_ON} names")
        for j, name in enumerate(c.builds_on):
            if not name.strip() or len(name) > MAX_CONCEPT_CHARS:
                raise InvalidArgument(
                    f"{field}.builds_on[{j}]", f"must be 1 to {MAX_CONCEPT_CHARS} characters"
                )
        for j, page in enumerate(c.pages):
            if not 1 <= page <= pages:
                raise InvalidArgument(
                    f"{field}.pages[{j}]", f"page {page} is not in the file (1 to {pages})"
                )
    return screen(concepts)


def screen(
    concepts: Sequence[ExtractedConcept],
) -> tuple[list[ExtractedConcept], list[tuple[str, str]]]:
    """Splits concepts into accepted ones and (name, reason) rejections by the heading validator;
    a name seen twice in one file is kept once."""
    accepted: list[ExtractedConcept] = []
    rejected: list[tuple[str, str]] = []
    seen: set[str] = set()
    for c in concepts:
        name = " ".join(c.name.split())
        reason = rejection_reason(name)
        if reason is not None:
            rejected.append((name, reason))
            continue
        # "2.1 Osmosis" is the concept Osmosis: numbering and markup are the file's furniture.
        name = clean_name(name) or name
        if name.casefold() in seen:
            continue
        seen.add(name.casefold())
        accepted.append(
            ExtractedConcept(name, c.summary.strip(), c.definition.strip(), c.builds_on, c.pages)
        )
    return accepted, rejected
