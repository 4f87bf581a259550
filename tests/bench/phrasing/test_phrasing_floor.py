"""The intent detectors on the hand-written phrasing set must not fall below what they reached
(issue 13). Floors are the pooled figures reached on branch `recall2` minus FLOOR_MARGIN_POINTS,
so a change that loses a few items fails CI; one that gains raises nothing until someone raises
the floors. The set is never generated from the detectors' lists."""

from __future__ import annotations

from typing import Any

import pytest
from bench.phrasing.dataset import SET_DIR
from bench.phrasing.evaluate import OVERALL, run

# Room for one or two items of the pooled set (~800 messages, ~430 narrations) to change.
FLOOR_MARGIN_POINTS = 2.0
# Pooled precision and recall in %, as reached on branch `recall2` (bench/results/phrasing.md).
# Two floors went down, each for a larger gain in recall on the same decision: narration precision
# 98.5 -> 96.1 (recall 29.0 -> 85.3: pasts with the student or the tutor in them, commits cf52538
# and 70780e5) and record precision 92.4 -> 92.1 (recall 51.2 -> 70.5: record questions decided
# by example, domain/recall/record_intent.py). Since then, record 92.1 / 70.5 -> 91.0 / 81.9
# (the examples also decide messages typed without a question mark, more examples, margin 0.06
# chosen on the examples alone) and its topic 73.8 / 47.9 -> 69.9 / 56.4 (more record questions,
# some with a topic the extractor reads wrongly); period precision rose 92.1 -> 95.0 and recall
# fell 98.9 -> 97.7 (a bare weekday needs a past in the query: `domain/recall/tense.py`). Then a
# period counts only when the message asks about it (`domain/recall/asked_period.py`): period
# 95.0 / 97.7 -> 100.0 / 98.3, record precision 91.0 -> 91.9, narration precision 96.1 -> 97.5
# (French nouns in -tions are no imperfect; another language's past form makes no narration).
# Then the topic is read in the record phrase's clause, without the record's own words ("quiz",
# "session") or a past's participle: topic precision 69.9 -> 74.4; and Brazilian "a gente" (we)
# is a person and makes record phrases: record 91.9 / 81.9 -> 92.0 / 83.3, topic -> 75.6 / 58.2.
# Then questions of what the tutor explained, "have we done X?" in a clause that asks, French
# "on", spoken Arabic, and topics said before their phrase: record -> 92.4 / 88.1, topic -> 81.4
# / 69.1. Then notes announced in more ways (cues that begin with a question word, "note that"
# about the student's own setting, colloquial cues): teaching 100.0 / 87.4 -> 100.0 / 100.0,
# record precision 92.4 -> 93.6 (messages that teach are not record questions by example).
# Then periods named by their start ("since the start of the year", "au début du mois") or by
# a range of bare day numbers, and the sessions as the person of a narration: narration 97.5 /
# 85.3 -> 97.8 / 95.2; and questions of what the tutor said or what was ever talked about:
# record -> 93.8 / 90.7, topic -> 84.5 / 75.8. Then how often the student asked, where the
# sessions left off, mistakes the student still makes, summaries of the sessions, pluperfects and
# French agreed participles: record -> 93.9 / 93.7, topic -> 85.8 / 84.2.
REACHED = {
    "record": (93.9, 93.7),
    "record_topic": (85.8, 84.2),
    "period": (100.0, 98.3),
    "teaching": (100.0, 100.0),
    "narration": (97.8, 95.2),
}
# Issue 13: the record decision may not buy recall with precision below this, whatever the floor.
MIN_RECORD_PRECISION = 90.0


def _assert_above_floor(got: dict[str, Any], reached: tuple[float, float], margin: float) -> None:
    """Pooled precision and recall (fractions) at least `reached` (%) less `margin` points; a
    failure lists the items the detector got wrong."""
    precision, recall = reached
    assert got["precision"] * 100 >= precision - margin, got["false_positive_texts"]
    assert got["recall"] * 100 >= recall - margin, got["false_negative_texts"]


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


# The second set (bench/phrasing/README.md), written blind after the detectors: its record
# decision, pooled, as reached when it was added (the held-out half's precision since 82.8 -> 85.7
# with the asked period; both halves' since the record phrases above: dev 92.7 / 74.5 -> 94.4 /
# 99.0, held-out 85.7 / 69.9 -> 87.1 / 78.6; the dev half's precision -> 97.1 with the notes
# announced in more ways, its recall -> 100.0 with the phrases of where the sessions left off).
# A half holds about 200 messages, about 100 of them record questions, so an item weighs about a
# point: the margin leaves room for two or three.
# The dev half's recall fell 100.0 -> 95.1 (precision 97.1 -> 97.0) with the record examples of
# requests, habits and standing requests and the threshold chosen again (-0.1 -> -0.2), which
# raised record precision on the sixth set's halves from 44.3 and 46.2 to 66.7 and 74.1
# (domain/recall/record_intent.py).
SECOND_SET_MARGIN_POINTS = 3.0
SECOND_REACHED = {"second-dev": (97.0, 95.1), "second-held-out": (87.1, 78.6)}


@pytest.mark.parametrize("half", sorted(SECOND_REACHED))
def test_the_second_sets_record_decision_stays_above_its_floor(half: str) -> None:
    got = run(SET_DIR / half)["decisions"]["record"][OVERALL]
    _assert_above_floor(got, SECOND_REACHED[half], SECOND_SET_MARGIN_POINTS)


# The fourth set (bench/phrasing/README.md), written blind to test record questions, teaching and
# hard negatives: record and teaching, pooled, as reached with the changes made after its
# development half (before them: dev 58.9 / 76.8 and 93.8 / 34.1, held-out 60.8 / 66.2 and
# 100.0 / 32.5). A half holds about 220 messages, 70 record questions and 40 teaching messages.
# Since then: teaching on the dev half 79.5 -> 86.4 (standing requests), and record on the
# held-out half 76.8 / 77.9 -> 82.5 / 69.1 with the record examples and threshold of the second
# set's note above.
FOURTH_SET_MARGIN_POINTS = 3.0
FOURTH_REACHED = {
    ("fourth-dev", "record"): (87.5, 81.2),
    ("fourth-dev", "teaching"): (100.0, 86.4),
    ("fourth-held-out", "record"): (82.5, 69.1),
    ("fourth-held-out", "teaching"): (100.0, 42.5),
}


# The fifth set (bench/phrasing/README.md), written blind on holidays, feasts and seasons: the
# period and narration decisions, pooled, as reached with seasons and feasts as periods (before
# them: dev 45.5 / 8.9 and 100.0 / 14.3, held-out 100.0 / 5.4 and 50.0 / 4.8). A half holds
# about 105 messages, 56 of them naming such a period, and 42 tutor sentences, 21 narrations: an
# item weighs about two points, and the margin leaves room for two.
FIFTH_SET_MARGIN_POINTS = 4.0
FIFTH_REACHED = {
    ("fifth-dev", "period"): (93.8, 80.4),
    ("fifth-dev", "narration"): (94.7, 85.7),
    ("fifth-held-out", "period"): (92.3, 64.3),
    ("fifth-held-out", "narration"): (93.8, 71.4),
}


# The sixth set (bench/phrasing/README.md), written blind on standing requests and preferences:
# its record and teaching decisions, pooled, as reached with standing requests taught and the
# record examples of requests and habits (before them: dev 44.3 / 96.4 and 100.0 / 19.5,
# held-out 46.2 / 88.9 and 100.0 / 6.5). A half holds about 215 messages, 28 record questions and
# 77 standing requests: a record question weighs about 3.6 points, and the margin leaves room for
# one.
SIXTH_SET_MARGIN_POINTS = 4.0
SIXTH_REACHED = {
    ("sixth-dev", "record"): (68.4, 92.9),
    ("sixth-dev", "teaching"): (100.0, 28.6),
    ("sixth-held-out", "record"): (74.1, 74.1),
    ("sixth-held-out", "teaching"): (100.0, 13.0),
}


# Every half of the blind sets from the fourth on, with its decisions and its margin.
BLIND_FLOORS = {
    **{key: (reached, FOURTH_SET_MARGIN_POINTS) for key, reached in FOURTH_REACHED.items()},
    **{key: (reached, FIFTH_SET_MARGIN_POINTS) for key, reached in FIFTH_REACHED.items()},
    **{key: (reached, SIXTH_SET_MARGIN_POINTS) for key, reached in SIXTH_REACHED.items()},
}


@pytest.fixture(scope="module")
def blind_runs() -> dict[str, dict[str, Any]]:
    """Each half's decisions, run once for all of its floors."""
    return {half: run(SET_DIR / half)["decisions"] for half in {h for h, _ in BLIND_FLOORS}}


@pytest.mark.parametrize(("half", "decision"), sorted(BLIND_FLOORS))
def test_the_blind_sets_decisions_stay_above_their_floor(
    blind_runs: dict[str, dict[str, Any]], half: str, decision: str
) -> None:
    reached, margin = BLIND_FLOORS[(half, decision)]
    _assert_above_floor(blind_runs[half][decision][OVERALL], reached, margin)
