"""R7.4: a cited file holds, changed (replaced or removed), or the memory is unverifiable."""

from __future__ import annotations

from tutor_memory.domain.honesty.citations import BLOCK_NOTE, CitationStatus, verify_citations

OLD = "a" * 64
NEW = "b" * 64
OTHER = "c" * 64


def test_a_conversation_memory_is_unverifiable_never_holds() -> None:
    verdict = verify_citations([], {"bio-1": OLD})
    assert verdict.status is CitationStatus.UNVERIFIABLE
    assert not verdict.status.changed
    assert "cites no file" in verdict.detail


def test_an_unchanged_file_holds_and_is_named() -> None:
    verdict = verify_citations([("bio-1", OLD)], {"bio-1": OLD, "chem-2": OTHER})
    assert verdict.status is CitationStatus.HOLDS
    assert verdict.detail == "the cited file is unchanged: bio-1"


def test_a_file_cited_on_two_pages_is_judged_once() -> None:
    cited = [("bio-1", OLD), ("bio-1", OLD), ("chem-2", OTHER)]
    verdict = verify_citations(cited, {"bio-1": OLD, "chem-2": OTHER})
    assert verdict.status is CitationStatus.HOLDS
    assert verdict.detail == "all 2 cited files are unchanged: bio-1, chem-2"


def test_a_file_with_a_new_current_version_was_replaced() -> None:
    verdict = verify_citations([("bio-1", OLD), ("chem-2", OTHER)], {"bio-1": NEW, "chem-2": OTHER})
    assert verdict.status is CitationStatus.CHANGED_REPLACED
    assert verdict.status.changed
    assert verdict.detail == "bio-1 was replaced"


def test_a_file_without_a_current_version_was_removed() -> None:
    assert verify_citations([("bio-1", OLD)], {"bio-1": None}).status is (
        CitationStatus.CHANGED_REMOVED
    )
    verdict = verify_citations([("bio-1", OLD)], {})
    assert verdict.status is CitationStatus.CHANGED_REMOVED
    assert verdict.detail == "bio-1 was removed"


def test_removed_wins_over_replaced_and_both_are_named() -> None:
    verdict = verify_citations(
        [("bio-1", OLD), ("chem-2", OLD), ("phys-3", OLD)], {"bio-1": NEW, "chem-2": NEW}
    )
    assert verdict.status is CitationStatus.CHANGED_REMOVED
    assert verdict.detail == "bio-1, chem-2 were replaced; phys-3 was removed"


def test_the_block_note_is_the_specified_text() -> None:
    assert BLOCK_NOTE == "[note: the file cited here has since been replaced or removed]"
