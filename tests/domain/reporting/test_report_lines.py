"""R7.5, R8.5: report sentences that never invent, and the working set's order."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from tutor_memory.domain.beliefs.calibration import calibrate
from tutor_memory.domain.beliefs.rules import Claim
from tutor_memory.domain.reporting.report_lines import (
    REVIEW_AFTER,
    WORKING_SET_SIZE,
    BeliefState,
    ReportFacts,
    report_lines,
    working_set,
)

NOW = datetime(2026, 11, 25, 12, tzinfo=UTC)
US = timedelta(microseconds=1)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

EMPTY = ReportFacts(
    checks=0,
    checks_right=0,
    checks_wrong=0,
    checks_linked=0,
    spoken_topics=0,
    belief_lines=(),
    needing_reconfirmation=0,
    unanswered=0,
    unanswered_examples=(),
    calibration=calibrate([]),
    working_set=(),
    map_concepts=0,
)

# The algebra student of the design document: many checks, none linked to the map.
ALGEBRA = replace(
    EMPTY,
    checks=32,
    checks_right=20,
    checks_wrong=12,
    spoken_topics=5,
    calibration=calibrate([(0.7, True)] * 3),
    map_concepts=16,
)


def test_checks_that_link_to_nothing_are_reported_as_recorded_not_as_absent() -> None:
    lines = report_lines(ALGEBRA)
    assert lines[0] == (
        "32 checks are recorded, but none could yet be linked to a concept in the map."
    )
    assert "No check is recorded." not in lines
    assert not any("no checks yet" in line.lower() for line in lines)
    assert (
        "No belief about the student is held yet, since no check could be linked to a concept."
        in lines
    )
    assert "Outcomes: 20 right, 12 wrong." in lines
    assert (
        "5 of them had a topic that reads as spoken expression rather than a concept: kept as "
        "evidence, never turned into a belief." in lines
    )


def test_no_check_is_said_only_when_there_is_none() -> None:
    lines = report_lines(EMPTY)
    assert lines[0] == "No check is recorded."
    assert "No belief about the student is held yet, since no check is recorded." in lines
    assert "The subject map holds no concept yet." in lines
    assert "No answer has been traced to its sources yet." not in lines
    assert "No question is recorded as one the files could not answer." in lines
    assert "The working set is empty: no belief calls for work yet." in lines


def test_linked_checks_are_counted_as_all_or_some() -> None:
    all_linked = report_lines(replace(ALGEBRA, checks_linked=32, spoken_topics=0))
    assert all_linked[0] == "32 checks are recorded, all linked to a concept in the map."
    some = report_lines(replace(ALGEBRA, checks_linked=9))
    assert some[0] == "32 checks are recorded; 9 of them could be linked to a concept in the map."
    one = report_lines(replace(EMPTY, checks=1, checks_right=1, checks_linked=1))
    assert one[0] == "1 check is recorded, linked to a concept in the map."


def test_beliefs_are_listed_with_the_ones_needing_reconfirmation_counted() -> None:
    facts = replace(
        ALGEBRA,
        checks_linked=20,
        belief_lines=(
            "- struggles with osmosis (0.74)",
            "- understands cytoplasm (0.61) [decayed: reconfirm]",
        ),
        needing_reconfirmation=1,
    )
    lines = report_lines(facts)
    start = lines.index("Current beliefs about the student (from their checks; confidence 0-1):")
    assert lines[start + 1 : start + 3] == list(facts.belief_lines)
    assert lines[start + 3] == (
        "1 belief went 45 days without a check, decayed and needs a check to reconfirm it "
        "(marked [decayed: reconfirm])."
    )


def test_unanswered_questions_are_counted_and_quoted_with_a_few_examples() -> None:
    facts = replace(
        ALGEBRA,
        answers_graded=12,
        unanswered=4,
        unanswered_examples=(
            "What is a ribosome?",
            "Who was Mendel?",
            "Why is the sky blue?",
            "What is DNA?",
        ),
    )
    lines = report_lines(facts)
    start = lines.index(
        "4 of 12 traced answers were not fully answered from the files or the memory, for example:"
    )
    assert lines[start + 1 : start + 4] == [
        "- What is a ribosome?",
        "- Who was Mendel?",
        "- Why is the sky blue?",
    ]
    assert "- What is DNA?" not in lines


def test_answers_are_described_only_as_far_as_they_were_traced() -> None:
    assert "No answer has been traced to its sources yet." in report_lines(
        replace(EMPTY, answers_graded=0)
    )
    assert "All 7 traced answers were answered from the files or the memory." in report_lines(
        replace(EMPTY, answers_graded=7)
    )
    assert "1 question was not fully answered from the files or the memory." in report_lines(
        replace(EMPTY, unanswered=1)
    )


def test_calibration_and_working_set_close_the_report() -> None:
    lines = report_lines(replace(ALGEBRA, working_set=("osmosis", "diffusion")))
    assert lines[-2] == (
        "Calibration: 3 checks carry a prediction; at least 5 are needed before calibration "
        "means anything: treat confidence as a ranking, not a probability."
    )
    assert lines[-1] == "Working set (most pressing first): osmosis, diffusion."
    assert "The subject map holds 16 concepts." in lines


# ---------------------------------------------------------------- working set


def belief(
    concept: str, claim: Claim, confidence: float, days_ago: float, flagged: bool = False
) -> BeliefState:
    evidence_at = NOW - timedelta(days=days_ago)
    return BeliefState(concept, claim.value, confidence, flagged, (evidence_at - EPOCH) // US)


def test_working_set_puts_struggles_first_then_reconfirmation_then_reviews() -> None:
    beliefs = [
        belief("cytoplasm", Claim.UNDERSTANDS, 0.9, days_ago=2),  # fresh: not in the set
        belief("ribosome", Claim.UNDERSTANDS, 0.8, days_ago=REVIEW_AFTER.days + 1),
        belief("nucleus", Claim.UNDERSTANDS, 0.68, days_ago=60, flagged=True),
        belief("osmosis", Claim.STRUGGLES_WITH, 0.61, days_ago=1),
        belief("diffusion", Claim.STRUGGLES_WITH, 0.82, days_ago=3),
        belief("mitosis", Claim.UNDERSTANDS, 0.7, days_ago=90, flagged=True),
    ]
    assert working_set(beliefs, NOW) == ["diffusion", "osmosis", "mitosis", "nucleus", "ribosome"]


def test_equal_struggles_go_newest_evidence_first_then_by_name() -> None:
    beliefs = [
        belief("b", Claim.STRUGGLES_WITH, 0.7, days_ago=5),
        belief("a", Claim.STRUGGLES_WITH, 0.7, days_ago=5),
        belief("c", Claim.STRUGGLES_WITH, 0.7, days_ago=1),
    ]
    assert working_set(beliefs, NOW) == ["c", "a", "b"]


def test_working_set_is_small() -> None:
    beliefs = [belief(f"gap {i}", Claim.STRUGGLES_WITH, 0.5 + i / 100, 1) for i in range(12)]
    chosen = working_set(beliefs, NOW)
    assert len(chosen) == WORKING_SET_SIZE
    assert chosen[0] == "gap 11"


def test_no_belief_gives_an_empty_working_set() -> None:
    assert working_set([], NOW) == []
