"""Periods named by a season or a feast in every language (R2.5): "before Christmas", "over the
summer", "since Easter", "durante il Ramadan", read in the student's time zone; and when a message
that names one asks about the student's own (a question about seasons or about history does not).
Today is Wednesday 18 March 2026 (`test_period_forms.NOW`)."""

from __future__ import annotations

import pytest

from tests.domain.recall.test_period_forms import NOW, ROME, SYDNEY, days, span, us
from tutor_memory.domain.recall.asked_period import asked_window, clauses
from tutor_memory.domain.recall.timewords import has_time_words

CAIRO = "Africa/Cairo"
# From RECORD_HORIZON_YEARS (10) back: what "before" a date reaches.
HORIZON = "2016-01-01"


@pytest.mark.parametrize(
    "query",
    [
        "what did we do over the christmas holidays?",
        "cosa abbiamo fatto durante le vacanze di Natale?",
        "¿qué hicimos en Navidad?",
        "qu'est-ce qu'on a fait pendant les vacances de Noël ?",
        "was haben wir in den Weihnachtsferien gemacht?",
        "o que estudamos nas férias de Natal?",
        "ماذا درسنا في الكريسماس؟",
    ],
)
def test_christmas_is_its_holidays_from_christmas_eve_to_epiphany(query: str) -> None:
    assert span(query) == days("2025-12-24", "2026-01-07")


@pytest.mark.parametrize(
    "query",
    [
        "what did I get wrong before christmas?",
        "cosa ho sbagliato prima di Natale?",
        "¿qué hicimos antes de Navidad?",
        "on a fait quoi avant Noël ?",
        "was haben wir vor Weihnachten gemacht?",
        "o que estudamos antes do Natal?",
    ],
)
def test_before_a_feast_reaches_its_day(query: str) -> None:
    assert span(query) == days(HORIZON, "2025-12-26")


@pytest.mark.parametrize(
    "query",
    [
        "what have we done since easter?",
        "cosa abbiamo fatto da Pasqua?",
        "was haben wir seit Ostern gemacht?",
    ],
)
def test_since_a_feast_is_from_its_span_up_to_now(query: str) -> None:
    # Easter Sunday 2025 was 20 April; its span starts 14 days before.
    assert span(query) == (us("2025-04-06T00:00"), us(NOW) + 1)


@pytest.mark.parametrize(
    "query",
    [
        "what did we do last summer?",
        "cosa abbiamo fatto l'estate scorsa?",
        "¿qué hicimos el verano pasado?",
        "qu'est-ce qu'on a fait l'été dernier ?",
        "was haben wir letzten Sommer gemacht?",
        "o que estudámos no verão passado?",
        "ماذا درسنا في الصيف الماضي؟",
    ],
)
def test_last_summer_is_june_to_august_in_the_north(query: str) -> None:
    assert span(query) == days("2025-06-01", "2025-09-01")


def test_summer_south_of_the_equator_is_december_to_february() -> None:
    assert span("what did we do last summer?", tz=SYDNEY) == days(
        "2025-12-01", "2026-03-01", tz=SYDNEY
    )


def test_ramadan_and_eid_follow_the_hijri_calendar() -> None:
    # 1 Ramadan 1447 = 18 February 2026: on NOW it is still running.
    assert span("ماذا درسنا في رمضان؟", tz=CAIRO) == (
        us("2026-02-18T00:00", CAIRO),
        us(NOW, CAIRO) + 1,
    )
    assert span("ماذا درسنا قبل رمضان؟", tz=CAIRO) == days(HORIZON, "2026-02-18", tz=CAIRO)
    # Eid al-Adha 1446: 6 June 2025.
    assert span("شو عملنا في عيد الأضحى", tz=CAIRO) == days("2025-06-06", "2025-06-13", tz=CAIRO)


def test_a_year_after_the_name_is_that_years() -> None:
    assert span("cosa abbiamo fatto a Natale 2024?") == days("2024-12-24", "2025-01-07")
    assert span("what did we do in the winter of 2024?") == days("2023-12-01", "2024-03-01")


def test_a_span_counted_from_a_feast() -> None:
    # Carnival 2026: Shrove Tuesday 17 February; the week before it ends on that day.
    assert span("what did we cover the week before carnival?") == days("2026-02-10", "2026-02-18")


def test_a_half_term_band_is_inside_either_way() -> None:
    # The February band, 7 to 22 February: "after half term" starts at its first day.
    assert span("what did we do after half term?", tz="Europe/London") == (
        us("2026-02-07T00:00", "Europe/London"),
        us(NOW, "Europe/London") + 1,
    )


def test_a_hyphen_inside_a_word_ends_no_clause() -> None:
    assert clauses("o q deram em fisico-quimica na semana antes do carnaval? tive gripe") == [
        "o q deram em fisico-quimica na semana antes do carnaval?",
        "tive gripe",
    ]
    assert clauses("last week's quiz - how did I do?") == ["last week's quiz", "how did I do?"]


def test_season_words_open_the_slow_path_and_other_words_do_not() -> None:
    assert has_time_words("what did we do over the summer?")
    assert has_time_words("ماذا درسنا في رمضان")
    assert not has_time_words("what is the capital of France?")


def _asked(query: str, tz: str = ROME) -> bool:
    return asked_window(query, us(NOW, tz), tz) is not None


@pytest.mark.parametrize(
    "query",
    [
        "what did we do over the summer?",
        "was haben wir über die Pfingstferien gemacht?",
        "remind me what we covered before easter",
        "what did I get wrong before christmas",
        "have my scores gone up since the summer holidays?",
        "cosa hanno fatto in classe la settimana prima di carnevale? ero a casa con la febbre",
        "and at christmas?",
        "tell me about my marks since half term",
        "qu'est-ce qu'on a fait avant Noël ?",
        "ماذا درسنا في رمضان؟",
    ],
)
def test_a_season_or_feast_of_the_students_own_is_asked_about(query: str) -> None:
    assert _asked(query, CAIRO if query[0] > "z" else ROME)


@pytest.mark.parametrize(
    "query",
    [
        # Questions of the present about seasons and feasts, in any language.
        "why is it hot in summer?",
        "why do leaves fall in autumn",
        "pk il fait plus froid en hiver alors que la terre est plus proche du soleil",
        "was feiert man eigentlich an Pfingsten?",
        "perché d'estate fa caldo?",
        "ماذا نأكل في رمضان؟",
        # History, and other people's seasons, in the past.
        "how did the soldiers survive the winter?",
        "what did the pilgrims eat in winter?",
        "what did Joanna photograph near Fort Wayne last summer?",
        # A season or a feast the message is about.
        "what did we cover about the Christmas truce?",
        "cosa abbiamo detto sulla Primavera di Botticelli?",
        "qu'est-ce qu'on a vu sur le Printemps arabe ?",
        "ماذا درسنا عن الربيع العربي؟",
        # A holiday of the student's life beside another question, and holidays still to come.
        "over the summer i went to spain, what is a verb?",
        "after christmas i have exams, can you help with algebra",
        "as minhas férias da Páscoa são de 30 de março a 10 de abril",
    ],
)
def test_a_season_or_feast_that_is_not_the_students_is_not_asked_about(query: str) -> None:
    assert not _asked(query, CAIRO if query[0] > "z" else ROME)


@pytest.mark.parametrize(
    "query",
    ["what do animals do in january?", "why is it cold in January?", "do bears sleep in december?"],
)
def test_a_month_named_alone_in_a_question_of_the_present_is_not_the_students(query: str) -> None:
    assert not _asked(query)


@pytest.mark.parametrize(
    "query", ["what did we do in july?", "how did I do in January?", "tell me about january"]
)
def test_a_month_named_alone_in_the_past_or_asked_for_itself_is_still_asked_about(
    query: str,
) -> None:
    assert _asked(query)
