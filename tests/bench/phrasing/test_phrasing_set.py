"""The hand-labelled phrasing set (bench/phrasing): its schema, its size, and its evaluator end to
end. Detector quality is what the evaluator reports, not what these tests assert."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from bench.phrasing.dataset import (
    LANGUAGES,
    MIN_MESSAGES_PER_LANGUAGE,
    LanguageSet,
    Message,
    SchemaError,
    load_set,
    parse_language_set,
)
from bench.phrasing.evaluate import DECISIONS, OVERALL, RECORD_TOPIC, evaluate_language, main
from bench.phrasing.scoring import Counts, Outcome, topic_matches

from bench.phrasing import detectors


def _item(**changes: Any) -> dict[str, Any]:
    item: dict[str, Any] = {
        "text": "what did I get wrong about fractions last week?",
        "record": True,
        "topic": "fractions",
        "period": True,
        "period_text": "last week",
        "teaching": False,
    }
    item.update(changes)
    return item


def _file(messages: list[Any]) -> dict[str, Any]:
    return {
        "language": "en",
        "now": "2026-03-18T16:30:00",
        "time_zone": "Europe/London",
        "messages": messages,
        "narrations": [{"text": "In July we covered photosynthesis.", "narration": True}],
    }


def test_every_language_has_enough_messages_and_both_labels_of_every_decision() -> None:
    sets = load_set()
    assert [s.language for s in sets] == list(LANGUAGES)
    for s in sets:
        assert len(s.messages) >= MIN_MESSAGES_PER_LANGUAGE, s.language
        labels = {
            "record": [m.record for m in s.messages],
            "record_topic": [bool(m.topic) for m in s.messages],
            "period": [m.period for m in s.messages],
            "teaching": [m.teaching for m in s.messages],
            "narration": [n.narration for n in s.narrations],
        }
        for decision, values in labels.items():
            assert set(values) == {True, False}, (s.language, decision)


def test_a_well_formed_file_parses_with_its_local_now() -> None:
    parsed = parse_language_set(_file([_item()]), "test")
    assert parsed.messages[0].period_text == "last week"
    # 16:30 in London on 18 March 2026 is GMT, so 16:30 UTC.
    assert parsed.now_us == int(dt.datetime(2026, 3, 18, 16, 30, tzinfo=dt.UTC).timestamp()) * 10**6


@pytest.mark.parametrize(
    ("item", "complaint"),
    [
        (_item(topic="decimals"), "not written in the text"),
        (_item(period_text="yesterday"), "not written in the text"),
        (_item(period=False), "period_text is set exactly when period is true"),
        (_item(record=False), "only labelled on a record question"),
        (_item(teaching="no"), "must be a bool"),
        ({"text": "hi", "record": False}, "missing keys"),
        (_item(label="x"), "unknown keys"),
        (_item(text="  "), "empty text"),
    ],
)
def test_a_malformed_item_is_refused(item: dict[str, Any], complaint: str) -> None:
    with pytest.raises(SchemaError, match=complaint):
        parse_language_set(_file([item]), "test")


def test_a_text_given_twice_is_refused() -> None:
    with pytest.raises(SchemaError, match="appears twice"):
        parse_language_set(_file([_item(), _item()]), "test")


def test_precision_and_recall_count_a_wrong_topic_as_both_errors() -> None:
    outcomes = [
        Outcome("a", expected=True, predicted=True),  # TP
        Outcome("b", expected=True, predicted=True, right=False),  # FP and FN
        Outcome("c", expected=True, predicted=False),  # FN
        Outcome("d", expected=False, predicted=True),  # FP
        Outcome("e", expected=False, predicted=False),  # TN
    ]
    counts = Counts.of(outcomes)
    assert (counts.true_positives, counts.false_positives, counts.false_negatives) == (1, 2, 2)
    assert counts.precision == pytest.approx(1 / 3)
    assert counts.recall == pytest.approx(1 / 3)
    assert counts.f1 == pytest.approx(1 / 3)
    silent = Counts.of([Outcome("e", expected=False, predicted=False)])
    assert (silent.precision, silent.recall, silent.f1) == (None, None, None)


def test_a_topic_matches_on_a_shared_content_word_with_case_and_accents_folded() -> None:
    assert topic_matches("la Revolucion", "revolución francesa")
    assert topic_matches("DNA replication", "DNA")  # a label with only short words keeps them
    assert not topic_matches("the cell", "the water cycle")  # "the" is too short to count
    assert topic_matches("الكسور العادية", "الكسور")


def test_an_arabic_topic_matches_its_label_whether_or_not_the_article_is_glued() -> None:
    # Labels leave a leading article out ("كسور"); the extractor keeps Arabic's, glued ("الكسور").
    assert topic_matches("الكسور", "كسور")
    assert topic_matches("كسور", "الكسور")
    assert not topic_matches("الكيمياء", "كسور")


def test_the_topic_decision_is_scored_when_an_extractor_is_wired_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_label(text: str) -> Message:
        return Message(text, False, "", False, "", False, "")

    ls = LanguageSet(
        "en",
        dt.datetime(2026, 3, 18, 16, 30, tzinfo=ZoneInfo("Europe/London")),
        "Europe/London",
        (
            Message(
                "what did I get wrong about fractions?", True, "fractions", False, "", False, ""
            ),
            Message("what did we study about volcanoes?", True, "volcanoes", False, "", False, ""),
            no_label("what are fractions?"),
            no_label("what is 2 + 2?"),
        ),
        (),
    )
    # Says "fractions" for anything mentioning it, "rocks" for volcanoes: one right topic, one
    # wrong one, one topic where none was asked for.
    answers = {"fractions": "fractions", "volcanoes": "rocks"}

    def extract(text: str) -> str | None:
        return next((v for k, v in answers.items() if k in text), None)

    monkeypatch.setattr(detectors, "record_topic", extract)
    spent: dict[str, list[int]] = {d: [] for d in DECISIONS}
    outcomes = evaluate_language(ls, spent)[RECORD_TOPIC]
    assert outcomes is not None
    counts = Counts.of(outcomes)
    assert (counts.true_positives, counts.false_positives, counts.false_negatives) == (1, 2, 1)
    assert len(spent[RECORD_TOPIC]) == 4


def test_the_evaluator_reports_every_decision_for_every_language(tmp_path: Path) -> None:
    assert main(["--out-dir", str(tmp_path), "--name", "run"]) == 0
    result = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    sets = {s.language: s for s in load_set()}
    assert set(result["decisions"]) == set(DECISIONS)
    for decision, rows in result["decisions"].items():
        assert list(rows) == [*LANGUAGES, OVERALL], decision
        for language, row in rows.items():
            if language == OVERALL:
                continue
            s = sets[language]
            expected_items = len(s.narrations if decision == "narration" else s.messages)
            assert row["items"] == expected_items, (decision, language)
            if row["measured"]:
                assert row["true_positives"] + row["false_negatives"] == row["positives"]
                assert len(row["false_positive_texts"]) == row["false_positives"]
        if rows[OVERALL]["measured"]:
            pooled = sum(rows[lang]["true_positives"] for lang in LANGUAGES)
            assert rows[OVERALL]["true_positives"] == pooled, decision
    markdown = (tmp_path / "run.md").read_text(encoding="utf-8")
    assert markdown.startswith("# Intent detectors on the phrasing set")
    for language in [*LANGUAGES, OVERALL]:
        assert f"| {language} |" in markdown
