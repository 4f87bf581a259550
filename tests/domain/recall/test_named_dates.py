"""A month or weekday inside a name is no period (issue 13): "the October Revolution" is a topic,
and read as October it would filter the block down to October, or to nothing. Capitals mark the
name where the language's writing lets them; a date, a month preposition or a message written
all in capitals keeps the period."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tutor_memory.domain.recall.timewindow import parse_time_window

ROME = "Europe/Rome"
# Friday 4 December 2026, afternoon.
NOW_US = (datetime(2026, 12, 4, 15, 0, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(
    microseconds=1
)


def window(query: str) -> object:
    return parse_time_window(query, NOW_US, ROME)


@pytest.mark.parametrize(
    "query",
    [
        "what did we study about the October Revolution?",
        "can you go over the February Revolution again",
        "I still don't get what the July Monarchy was",
        "explain the May Fourth Movement like I'm 12",
        "what did we say about Black Friday in economics?",
        "remind me what Bloody Sunday was",
        "why is it called Good Friday",
        "October Revolution?",
        "¿qué aprendimos sobre la Revolución de Octubre?",
        "cosa abbiamo detto sulla Rivoluzione d'Ottobre?",
        "on avait parlé de la Révolution de Juillet, tu te rappelles ?",
    ],
)
def test_a_month_or_weekday_in_a_name_is_no_period(query: str) -> None:
    assert window(query) is None


@pytest.mark.parametrize(
    "query",
    [
        "What did we do on Friday?",
        "what did we do Friday Night?",
        "what did we study in October?",
        "What Did We Study In October",
        "What Did We Study Friday",
        "WHAT DID WE DO ON FRIDAY",
        "what did we cover on the October 3rd test?",
        "what was on the October 2025 quiz?",
        "¿Qué vimos el Viernes?",
        "cosa abbiamo fatto a Ottobre?",
        "Ottobre: cosa abbiamo fatto?",
        "o que fizemos em Outubro?",
        "as aulas de Outubro foram sobre o quê?",
        "Was haben wir Freitag Mathe gemacht?",
    ],
)
def test_a_month_or_weekday_that_dates_the_question_stays_a_period(query: str) -> None:
    assert window(query) is not None
