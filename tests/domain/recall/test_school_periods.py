"""The current school term and school year as periods (R2.5): "since the start of term", "this
semester", "depuis la rentrée", in every language, read as the last TERM_MONTHS or
SCHOOL_YEAR_MONTHS up to now, since the student's school calendar is unknown; a past term, and
the English word "term" where it is a word of the subject, name none."""

from __future__ import annotations

import pytest

from tests.domain.recall.test_period_forms import NOW, ROME, SYDNEY, span, us
from tutor_memory.domain.recall.asked_period import asked_window
from tutor_memory.domain.recall.timewindow import (
    SCHOOL_YEAR_MONTHS,
    TERM_MONTHS,
    parse_time_window,
)
from tutor_memory.domain.recall.timewords import has_time_words

# NOW (18 March 2026) less TERM_MONTHS and SCHOOL_YEAR_MONTHS.
TERM_START = "2025-09-18T00:00"
SCHOOL_YEAR_START = "2025-03-18T00:00"


def test_the_constants_are_the_months_these_tests_count_back() -> None:
    assert (TERM_MONTHS, SCHOOL_YEAR_MONTHS) == (6, 12)


@pytest.mark.parametrize(
    "query",
    [
        "how have my scores been since the start of term?",
        "at the start of term, what did I struggle with?",
        "what did we cover this semester?",
        "what have we done since the semester started?",
        "come vanno i miei punteggi da inizio quadrimestre?",
        "cosa abbiamo fatto questo trimestre?",
        "¿cómo van mis notas desde que empezó el trimestre?",
        "¿qué hicimos este cuatrimestre?",
        "qu'est-ce qu'on a vu ce trimestre ?",
        "wie haben sich meine Ergebnisse seit Beginn des Halbjahrs entwickelt?",
        "was haben wir dieses Halbjahr gemacht?",
        "como estão minhas notas desde o início do semestre?",
        "o que estudamos neste bimestre?",
        "درجاتي عاملة ازاي من أول الترم؟",
        "ماذا درسنا هذا الفصل الدراسي؟",
        "ماذا درسنا في الترم الحالي؟",
    ],
)
def test_the_current_term_is_the_last_six_months_up_to_now(query: str) -> None:
    assert span(query) == (us(TERM_START), us(NOW) + 1)


@pytest.mark.parametrize(
    "query",
    [
        "what did I get wrong since the start of the school year?",
        "what did we cover this academic year?",
        "cosa ho sbagliato da inizio anno scolastico?",
        "¿qué he fallado desde el comienzo del curso escolar?",
        "qu'est-ce qu'on a vu depuis la rentrée ?",
        "qu'est-ce que j'ai raté depuis le début de l'année scolaire ?",
        "was habe ich seit Beginn des Schuljahres falsch gemacht?",
        "o que errei desde o início do ano letivo?",
        "ماذا أخطأت منذ بداية العام الدراسي؟",
    ],
)
def test_the_current_school_year_is_the_last_twelve_months_up_to_now(query: str) -> None:
    assert span(query) == (us(SCHOOL_YEAR_START), us(NOW) + 1)


def test_the_label_says_how_the_term_was_read() -> None:
    found = parse_time_window("what did we cover this semester?", us(NOW), ROME)
    assert found is not None
    assert found.label == "this term, read as the last 6 months (2025-09-18 to 2026-03-18, so far)"
    since = parse_time_window("what did we do since the start of term?", us(NOW), ROME)
    assert since is not None
    assert since.label == found.label


def test_the_months_are_counted_in_the_students_zone() -> None:
    # 03:00 on 19 March in Sydney is still 18 March in Rome.
    now = "2026-03-19T03:00"
    assert span("what did we cover this semester?", SYDNEY, now) == (
        us("2025-09-19T00:00", SYDNEY),
        us(now, SYDNEY) + 1,
    )


@pytest.mark.parametrize(
    "query",
    [
        # The word of the subject, not the school term.
        "what does this term mean?",
        "what did this term mean in the last exercise?",
        "can you explain the term osmosis?",
        # A past term's bounds are unknown: no guess.
        "what did we do last semester?",
        "wie lief das letzte Halbjahr?",
        "I have a semester exam on biology",
        "how do I start this problem?",
    ],
)
def test_a_past_term_and_terms_of_the_subject_name_no_period(query: str) -> None:
    assert parse_time_window(query, us(NOW), ROME) is None


def test_a_word_for_the_start_alone_stays_on_the_fast_path() -> None:
    assert not has_time_words("where do I start?")
    assert has_time_words("at the start of term")
    assert has_time_words("this semester")


def test_a_term_a_plan_names_is_not_asked_about() -> None:
    assert asked_window("this semester I want to focus on genetics", us(NOW), ROME) is None
    assert asked_window("what did we do this semester?", us(NOW), ROME) is not None
