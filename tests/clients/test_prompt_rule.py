"""The Python client's prompt helper (SPEC R6.6). The cases every client shares run in
tests/conformance; these pin the rule's edges in Python alone."""

from __future__ import annotations

import pytest

from tutor_memory_client import PromptParts, compose_prompt, is_empty_assessment


def test_the_memory_block_comes_before_a_legacy_section_with_results() -> None:
    parts = PromptParts(instructions="", memory_block="MEMORY", legacy_assessment="Q1: 3/5")
    assert compose_prompt(parts) == "MEMORY\n\nQ1: 3/5"


def test_an_empty_legacy_section_is_dropped_only_when_a_memory_block_exists() -> None:
    legacy = "ASSESSMENT:\r\n- No quiz attempts recorded."
    with_block = PromptParts("", "MEMORY", legacy, ["Q"])
    without_block = PromptParts("", "", legacy, ["Q"])
    assert compose_prompt(with_block) == "MEMORY\n\nQ"
    assert compose_prompt(without_block) == f"{legacy.strip()}\n\nQ"


@pytest.mark.parametrize(
    ("section", "empty"),
    [
        ("No quiz attempts recorded", True),
        ("**Quizzes:** no quiz attempts recorded yet!", True),
        ("", False),
        ("ASSESSMENT:", False),
        ("No quiz attempts recorded. Prefers short ones", False),
        ("No quiz attempts recorded\nQuiz 2: 1/4", False),
    ],
)
def test_an_empty_assessment_needs_the_phrase_and_nothing_else(section: str, empty: bool) -> None:
    assert is_empty_assessment(section) is empty
