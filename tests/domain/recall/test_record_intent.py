"""The record examples and the decision they make (domain.recall.record_intent)."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest
from bench.phrasing.dataset import SET_DIR, load_set

from tutor_memory.domain.recall.record_intent import (
    MAX_EXAMPLE_QUERY_CHARS,
    RecordExamples,
    could_be_about_the_record,
    example_texts,
    is_record_intent,
    open_to_examples,
)
from tutor_memory.domain.text.words import words


def _folded(text: str) -> str:
    return " ".join(text.casefold().split()).strip("?!.¿¡؟ ")


# Every phrasing set that measures the decision: the first one and both halves of the second
# and of the fourth. (The third was written for periods and was not checked against the
# examples before its figures were committed; 9 of its items are near copies of one.)
MEASURING_SETS = (
    SET_DIR,
    SET_DIR / "second-dev",
    SET_DIR / "second-held-out",
    SET_DIR / "fourth-dev",
    SET_DIR / "fourth-held-out",
    SET_DIR / "sixth-dev",
    SET_DIR / "sixth-held-out",
)


def _measured_texts() -> list[str]:
    return [m.text for d in MEASURING_SETS for s in load_set(d) for m in s.messages]


def test_no_example_is_an_item_of_the_phrasing_sets_that_measure_it() -> None:
    measured = {_folded(t) for t in _measured_texts()}
    texts = example_texts()
    assert not {_folded(t) for t in texts.record + texts.other} & measured


# An example whose words are mostly inside one phrasing item, or that shares most of the two
# items' words with one, is a near copy: it would grade the decision on what it memorised.
NEAR_COPY_SHARE = 0.8
NEAR_COPY_JACCARD = 0.6


def test_no_example_is_a_near_copy_of_an_item_of_the_phrasing_sets() -> None:
    measured = [set(words(t)) for t in _measured_texts()]
    texts = example_texts()
    copies = []
    for text in texts.record + texts.other:
        mine = set(words(text))
        for item in measured:
            shared = len(mine & item)
            if shared >= NEAR_COPY_SHARE * len(mine) or shared >= NEAR_COPY_JACCARD * len(
                mine | item
            ):
                copies.append(text)
                break
    assert not copies


def test_every_language_has_examples_of_both_labels() -> None:
    raw = json.loads(
        resources.files("tutor_memory.domain.recall")
        .joinpath("record_examples.json")
        .read_text(encoding="utf-8")
    )
    counts = {k: (len(v["record"]), len(v["other"])) for k, v in raw.items() if k != "about"}
    assert set(counts) == {"en", "it", "es", "fr", "de", "pt", "ar"}
    assert all(min(c) >= 15 for c in counts.values()), counts


def _unit(*values: float) -> np.ndarray:
    v = np.array(values, dtype=np.float32)
    return v / np.linalg.norm(v)


EXAMPLES = RecordExamples(
    record=np.stack([_unit(1, 0, 0), _unit(1, 0.1, 0), _unit(1, 0, 0.1)]),
    other=np.stack([_unit(0, 1, 0), _unit(0, 1, 0.1), _unit(0.1, 1, 0)]),
)


def test_a_question_closer_to_the_record_examples_is_a_record_question() -> None:
    assert is_record_intent("any better lately?", _unit(1, 0.05, 0), EXAMPLES)


def test_a_question_closer_to_the_others_is_not() -> None:
    assert not is_record_intent("any better lately?", _unit(0.05, 1, 0), EXAMPLES)


@pytest.mark.parametrize(
    "query", ["list the things i keep messing up pls", "che esercizi ho sbagliato tre giorni fa"]
)
def test_a_message_without_a_question_mark_is_left_to_the_examples(query: str) -> None:
    # Students type questions without one, and requests that no asking verb opens.
    assert is_record_intent(query, _unit(1, 0, 0), EXAMPLES)
    assert not is_record_intent(query, _unit(0, 1, 0), EXAMPLES)


@pytest.mark.parametrize(
    "query",
    ["remember that my exams are always multiple choice", "merk dir, dass ich Legasthenie habe"],
)
def test_a_teaching_message_is_never_made_a_record_question_by_example(query: str) -> None:
    # It tells the tutor something to keep ("about me"), which sits near the record in meaning.
    assert not is_record_intent(query, _unit(1, 0, 0), EXAMPLES)


@pytest.mark.parametrize("vector", [None, _unit(0, 1, 0)])
def test_a_rule_decides_without_the_embedding(vector: np.ndarray | None) -> None:
    assert is_record_intent("What did I get wrong?", vector, EXAMPLES)


def test_a_message_longer_than_any_record_question_is_never_made_one_by_example() -> None:
    short = "any better lately?"
    long = short + " " + "and the rest of the story " * 40
    assert len(long) > MAX_EXAMPLE_QUERY_CHARS
    assert is_record_intent(short, _unit(1, 0, 0), EXAMPLES)
    assert could_be_about_the_record(long)
    assert not open_to_examples(long)
    assert not is_record_intent(long, _unit(1, 0, 0), EXAMPLES)


def test_a_long_message_is_still_a_record_question_by_the_rules() -> None:
    assert is_record_intent("What did I get wrong? " + "so " * 400, None, EXAMPLES)


def test_a_question_carrying_its_exercise_is_about_the_exercise() -> None:
    assert not is_record_intent("where did I go wrong? 2/3 + 1/6 = 3/9", _unit(1, 0, 0), EXAMPLES)


@pytest.mark.parametrize(
    "query", ["What exercises has John done?", "In which month's game did John score most?"]
)
def test_a_question_about_someone_else_by_name_is_never_made_one_by_example(query: str) -> None:
    assert not is_record_intent(query, _unit(1, 0, 0), EXAMPLES)


@pytest.mark.parametrize(
    "query",
    ["What did I get wrong about Newton?", "Sono migliorato? Cosa mi hai spiegato su Dante?"],
)
def test_a_name_beside_the_student_still_leaves_it_to_the_examples(query: str) -> None:
    assert is_record_intent(query, _unit(1, 0, 0), EXAMPLES)
