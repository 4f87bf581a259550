"""A concept as an extractor returns it (SPEC R3.1), before validation and merging."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ExtractedConcept:
    """One concept of one file, from the built-in extractor or from the caller's own model.

    `builds_on` names other concepts of the same extraction; a name that is not among them is a
    prerequisite the file assumes without explaining (R3.4). `pages` are the 1-based pages of the
    file that explain the concept; empty when the extractor could not tell.
    """

    name: str
    summary: str
    definition: str
    builds_on: tuple[str, ...] = ()
    pages: tuple[int, ...] = ()
