"""The ablation benchmark's pre-registered question set (bench/eval/questions.py)."""

from __future__ import annotations

import pytest
from bench.eval.generator import DEFAULT_SEED, generate_all
from bench.eval.history import History, Turn
from bench.eval.questions import (
    ACTIVE_MONTH_MIN_SHOWN,
    Category,
    Question,
    fingerprint,
    question_set,
    questions_for,
    wrong_concepts,
)


@pytest.fixture(scope="module")
def histories() -> list[History]:
    return generate_all()


@pytest.fixture(scope="module")
def questions(histories: list[History]) -> list[Question]:
    return question_set(histories, DEFAULT_SEED)


def test_the_question_set_is_the_same_for_the_same_seed(
    histories: list[History], questions: list[Question]
) -> None:
    again = question_set(histories, DEFAULT_SEED)
    assert again == questions
    assert fingerprint(again) == fingerprint(questions)
    assert fingerprint(question_set(histories, DEFAULT_SEED + 1)) != fingerprint(questions)


def test_every_category_is_asked_with_unique_ids(questions: list[Question]) -> None:
    assert {q.category for q in questions} == set(Category)
    assert len({q.qid for q in questions}) == len(questions)


def test_what_did_i_get_wrong_expects_the_concepts_whose_latest_check_was_wrong(
    histories: list[History],
) -> None:
    for h in histories:
        latest = {c.concept: c for c in h.checks}  # oldest first: the last one wins
        expected = {w.name: set(w.keys) for w in wrong_concepts(h)}
        assert set(expected) == {n for n, c in latest.items() if not c.right}, h.student_id
        for name, keys in expected.items():
            wrong = [c for c in h.checks if c.concept == name and not c.right]
            assert keys == {k for c in wrong for k in (c.key, c.verdict_key)}
        asked = [q for q in questions_for(h, DEFAULT_SEED) if q.category is Category.WRONG]
        assert len(asked) == (1 if expected else 0)


def test_review_expects_the_direct_prerequisites(
    questions: list[Question], histories: list[History]
) -> None:
    for q in (q for q in questions if q.category is Category.REVIEW):
        concept = histories[q.history].course.concept(q.target)
        assert q.expected.names == concept.builds_on
        assert concept.builds_on


def test_month_questions_name_their_month_and_skip_the_current_one(
    histories: list[History], questions: list[Question]
) -> None:
    for q in questions:
        if q.category not in (Category.ACTIVE_MONTH, Category.EMPTY_MONTH):
            continue
        h = histories[q.history]
        month = q.expected.month
        assert month is not None
        assert month.key == q.target
        assert month.active is (q.category is Category.ACTIVE_MONTH)
        assert month != h.month_of(h.now)
        if q.category is Category.EMPTY_MONTH:
            assert not q.expected.keys
            assert set(q.expected.narration_keys) == {t.key for t in h.narrations}
    quiet = sum(not m.active for h in histories for m in h.months)
    assert sum(q.category is Category.EMPTY_MONTH for q in questions) == quiet


def test_an_active_months_expected_memories_leave_out_the_narrations(
    histories: list[History], questions: list[Question]
) -> None:
    for q in (q for q in questions if q.category is Category.ACTIVE_MONTH):
        h = histories[q.history]
        month = q.expected.month
        assert month is not None
        events = {e.key: e for e in h.events}
        assert q.expected.keys
        for key in q.expected.keys:
            event = events[key]
            assert month.holds(event.at)
            assert not (isinstance(event, Turn) and event.narrates)
        assert q.expected.min_shown == min(ACTIVE_MONTH_MIN_SHOWN, len(q.expected.keys))


def test_cross_language_questions_are_english_in_other_histories_only(
    histories: list[History], questions: list[Question]
) -> None:
    crossed = [q for q in questions if q.cross_language]
    assert crossed
    for q in crossed:
        assert q.language == "en" != histories[q.history].language.code
        assert q.category is not Category.OLD_MATCH
    for q in questions:
        if not q.cross_language:
            assert q.language == histories[q.history].language.code


def test_the_old_match_asks_for_the_anecdote_by_its_own_words(
    histories: list[History], questions: list[Question]
) -> None:
    for q in (q for q in questions if q.category is Category.OLD_MATCH):
        h = histories[q.history]
        assert q.expected.keys == (h.anecdote_key,)
        assert q.text == h.anecdote_query
