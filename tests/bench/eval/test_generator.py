"""The ablation benchmark's history generator (bench/eval/generator.py) and language packs."""

from __future__ import annotations

import copy
import json
from collections import Counter
from typing import Any

import pytest
from bench.eval.generator import DEFAULT_HISTORIES, generate, generate_all
from bench.eval.history import Check, FileArrival, History, Teaching, Turn
from bench.eval.language import DATA_DIR, LANGUAGES, PackError, load, parse

from tutor_memory.domain.files.passages import passages
from tutor_memory.domain.files.read import read_document
from tutor_memory.domain.recall.narration import is_narration


@pytest.fixture(scope="module")
def histories() -> list[History]:
    return generate_all()


def test_the_same_seed_and_index_give_the_same_history() -> None:
    assert generate(7, seed=3) == generate(7, seed=3)
    assert generate(7, seed=3) != generate(7, seed=4)


def test_a_history_does_not_depend_on_how_many_are_generated(histories: list[History]) -> None:
    assert generate_all(3) == histories[:3]


def test_histories_cover_five_languages_and_several_subjects(histories: list[History]) -> None:
    assert len(histories) == DEFAULT_HISTORIES
    assert Counter(h.language.code for h in histories) == {code: 9 for code in LANGUAGES}
    assert {h.subject_id for h in histories} == {"biology", "chemistry", "physics"}


def test_every_history_has_what_the_question_set_needs(histories: list[History]) -> None:
    for h in histories:
        active = [m for m in h.months if m.active]
        quiet = [m for m in h.months if not m.active]
        assert 6 <= len(h.months) <= 9, h.student_id
        assert quiet, h.student_id
        assert h.months[0].active, h.student_id
        assert h.months[-1].active, h.student_id
        assert len(active) >= 3, h.student_id
        assert any(isinstance(e, Teaching) for e in h.events), h.student_id
        assert h.narrations, h.student_id
        assert sum(isinstance(e, FileArrival) for e in h.events) == 2, h.student_id
        assert h.now > h.events[-1].at
        # Quiet months are quiet; the old exchange happened in the first active month.
        for month in quiet:
            assert not any(month.holds(e.at) for e in h.events), (h.student_id, month.key)
        anecdote = next(e for e in h.events if e.key == h.anecdote_key)
        assert active[0].holds(anecdote.at), h.student_id


def test_events_are_in_time_order_with_unique_keys(histories: list[History]) -> None:
    for h in histories:
        times = [e.at for e in h.events]
        assert times == sorted(times), h.student_id
        assert len({e.key for e in h.events}) == len(h.events), h.student_id


def test_checks_are_right_and_wrong_and_some_topics_are_spoken(histories: list[History]) -> None:
    checks = [c for h in histories for c in h.checks]
    assert any(c.right for c in checks)
    assert any(not c.right for c in checks)
    names = {c.name for h in histories for c in h.course.concepts}
    spoken = [c for c in checks if c.topic not in names]
    assert 0 < len(spoken) < len(checks) / 2
    assert "bueno ahora explícame todos los pasos" in {c.topic for c in spoken}
    for h in histories:
        keys = {e.key: e for e in h.events}
        for c in h.checks:
            verdict = keys[c.verdict_key]
            assert isinstance(verdict, Turn)
            assert not verdict.student
            assert verdict.text == c.evaluation


def test_answers_cite_a_file_that_arrived_before_them(histories: list[History]) -> None:
    for h in histories:
        arrived: dict[str, str] = {}
        for e in h.events:
            if isinstance(e, FileArrival):
                arrived[e.file.file_id] = e.file.fingerprint
            elif isinstance(e, Turn):
                for c in e.citations:
                    assert arrived.get(c.file_id) == c.fingerprint, (h.student_id, e.key)


def test_the_server_reads_each_concepts_page_where_the_generator_cites_it() -> None:
    for index in range(len(LANGUAGES) * 2):
        for file in generate(index).files:
            doc = read_document(file.content, file.filename, "text/markdown")
            by_page = {p.page: p.text for p in passages(doc)}
            for concept in file.concepts:
                assert concept.definition in by_page[file.page_of(concept.name)], concept.name


def test_the_tutors_narrations_read_as_narrations_to_the_server(
    histories: list[History],
) -> None:
    for h in histories:
        for turn in h.narrations:
            at_us = int(turn.at.timestamp() * 1_000_000)
            assert is_narration(turn.text, at_us, h.time_zone), turn.text
        for e in h.events:
            if isinstance(e, Turn) and e.narrates is None and not e.student:
                at_us = int(e.at.timestamp() * 1_000_000)
                assert not is_narration(e.text, at_us, h.time_zone), e.text


def test_some_questions_repeat_word_for_word(histories: list[History]) -> None:
    for h in histories[:10]:
        asked = Counter(e.text for e in h.events if isinstance(e, Turn) and e.student)
        assert asked.most_common(1)[0][1] >= 2, h.student_id


def test_every_language_pack_loads() -> None:
    for code in LANGUAGES:
        language = load(code)
        assert len(language.courses) == 2
        for course in language.courses.values():
            assert len(course.concepts) == 10
            assert len(course.files) == 2


def _raw(code: str) -> dict[str, Any]:
    raw: dict[str, Any] = json.loads((DATA_DIR / f"{code}.json").read_text(encoding="utf-8"))
    return copy.deepcopy(raw)


def test_a_pack_with_an_unknown_template_field_is_refused() -> None:
    raw = _raw("en")
    raw["conversation"]["teachings"].append("Remember that {concept} matters.")
    with pytest.raises(PackError, match="concept"):
        parse(raw)


def test_a_pack_whose_concept_builds_on_a_later_one_is_refused() -> None:
    raw = _raw("it")
    raw["courses"]["biology"]["concepts"][0]["builds_on"] = ["Osmosi"]
    with pytest.raises(PackError, match="Osmosi"):
        parse(raw)


def test_checks_and_teachings_name_known_concepts(histories: list[History]) -> None:
    for h in histories:
        names = {c.name for c in h.course.concepts}
        for e in h.events:
            if isinstance(e, Check | Teaching):
                assert e.concept in names
