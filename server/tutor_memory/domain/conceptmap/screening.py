"""Which concepts of a file enter the map (SPEC R3.1, R3.2, R5.1): a caller's own extraction is
checked exactly like the built-in extractor's; section headings are rejected one by one, and
numbering and markup are the file's furniture, not part of a concept's name."""

from __future__ import annotations

from collections.abc import Sequence

from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.extract import MAX_CONCEPTS_PER_FILE
from tutor_memory.domain.conceptmap.headings import clean_name, rejection_reason
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import MAX_CONCEPT_CHARS, check_line, check_text

# What a caller-supplied concept may carry (the extractor's own output stays within these too).
MAX_CONCEPT_SUMMARY_CHARS = 500
MAX_CONCEPT_DEFINITION_CHARS = 1_000
MAX_BUILDS_ON = 16
# Pages one concept may list: more than any real extraction names for one idea.
MAX_CONCEPT_PAGES = 200


def check_caller_concepts(concepts: Sequence[ExtractedConcept]) -> None:
    """The shape of a caller's extraction, checked before the file is read: malformed concepts
    are an INVALID_ARGUMENT naming the field."""
    if len(concepts) > MAX_CONCEPTS_PER_FILE:
        raise InvalidArgument(
            "concepts", f"{len(concepts)} given, at most {MAX_CONCEPTS_PER_FILE} per file"
        )
    for i, c in enumerate(concepts):
        field = f"concepts[{i}]"
        check_line(f"{field}.name", c.name, MAX_CONCEPT_CHARS, required=True)
        check_line(f"{field}.summary", c.summary, MAX_CONCEPT_SUMMARY_CHARS, required=False)
        check_text(f"{field}.definition", c.definition, MAX_CONCEPT_DEFINITION_CHARS)
        if len(c.builds_on) > MAX_BUILDS_ON:
            raise InvalidArgument(f"{field}.builds_on", f"more than {MAX_BUILDS_ON} names")
        for j, name in enumerate(c.builds_on):
            check_line(f"{field}.builds_on[{j}]", name, MAX_CONCEPT_CHARS, required=True)
        if len(c.pages) > MAX_CONCEPT_PAGES:
            raise InvalidArgument(f"{field}.pages", f"more than {MAX_CONCEPT_PAGES} pages")


def validate_caller_concepts(
    concepts: Sequence[ExtractedConcept], pages: int
) -> tuple[list[ExtractedConcept], list[tuple[str, str]]]:
    """The caller's concepts checked exactly as the built-in extractor's (their shape by
    check_caller_concepts, their pages against the file's); section headings are rejected one by
    one (R3.2)."""
    check_caller_concepts(concepts)
    for i, c in enumerate(concepts):
        for j, page in enumerate(c.pages):
            if not 1 <= page <= pages:
                raise InvalidArgument(
                    f"concepts[{i}].pages[{j}]", f"page {page} is not in the file (1 to {pages})"
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
