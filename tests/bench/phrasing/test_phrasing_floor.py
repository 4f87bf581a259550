"""The intent detectors on the hand-written phrasing set must not fall below what they reached
(issue 13). Floors are the pooled figures reached on branch `recall2` minus FLOOR_MARGIN_POINTS,
so a change that loses a few items fails CI; one that gains raises nothing until someone raises
the floors. The set is never generated from the detectors' lists."""

from __future__ import annotations

import pytest
from bench.phrasing.evaluate import OVERALL, run

# Room for one or two items of the pooled set (~800 messages, ~430 narrations) to change.
FLOOR_MARGIN_POINTS = 2.0
# Pooled precision and recall in %, as reached on branch `recall2` (bench/results/phrasing.md).
# Two floors went down, each for a larger gain in recall on the same decision: narration precision
# 98.5 -> 96.1 (recall 29.0 -> 85.3: pasts with the student or the tutor in them, commits cf52538
# and 70780e5) and record precision 92.4 -> 92.1 (recall 51.2 -> 70.5: record questions decided
# by example, domain/recall/record_intent.py). Every other floor went up or stayed.
REACHED = {
    "record": (92.1, 70.5),
    "record_topic": (73.8, 47.9),
    "period": (92.1, 98.9),
    "teaching": (100.0, 87.4),
    "narration": (96.1, 85.3),
}
# Issue 13: the record decision may not buy recall with precision below this, whatever the floor.
MIN_RECORD_PRECISION = 90.0


@pytest.fixture(scope="module")
def pooled() -> dict[str, dict[str, float]]:
    decisions = run()["decisions"]
    return {d: decisions[d][OVERALL] for d in REACHED}


@pytest.mark.parametrize("decision", sorted(REACHED))
def test_precision_and_recall_stay_above_their_floor(
    pooled: dict[str, dict[str, float]], decision: str
) -> None:
    precision, recall = REACHED[decision]
    got = pooled[decision]
    assert got["precision"] * 100 >= precision - FLOOR_MARGIN_POINTS, got["false_positive_texts"]
    assert got["recall"] * 100 >= recall - FLOOR_MARGIN_POINTS, got["false_negative_texts"]


def test_record_questions_keep_their_precision(pooled: dict[str, dict[str, float]]) -> None:
    got = pooled["record"]
    assert got["precision"] * 100 >= MIN_RECORD_PRECISION, got["false_positive_texts"]
