"""R2.5, R6.3: a period restricts recall only when the message asks about it; one it only mentions
beside a question about something else ("I was off sick last week, what is a prime number?") leaves
the question's recall whole."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tutor_memory.domain.recall.asked_period import asked_window, clauses
from tutor_memory.domain.recall.record_mode import is_record_question
from tutor_memory.domain.recall.timewindow import parse_time_window

ROME = "Europe/Rome"
# Wednesday 25 November 2026, mid-afternoon in Rome.
NOW = (
    datetime(2026, 11, 25, 15, tzinfo=ZoneInfo(ROME)) - datetime(1970, 1, 1, tzinfo=UTC)
) // timedelta(microseconds=1)


def asked(query: str) -> str | None:
    found = asked_window(query, NOW, ROME)
    return None if found is None else found.label


@pytest.mark.parametrize(
    "query",
    [
        "I had the flu on Tuesday, how do plants make sugar?",
        "We moved house last month. Can you explain what a derivative is?",
        "Mi sono trasferito a marzo, come si calcola l'area di un cerchio?",
        "Ayer fui al médico, ¿qué es una célula?",
        "Hier je suis allé au cinéma, c'est quoi une fraction ?",
        "Letzte Woche war ich im Urlaub, was ist eine Primzahl?",
        "Ontem eu fui à praia, o que é fotossíntese?",
        "الأسبوع الماضي سافرت مع عائلتي، ما هي الخلية؟",
        "My sister got married in July - why is the sky blue?",
        "i was off sick last week what is a prime number",  # no punctuation between the two
        "letzte woche war ich krank was ist eine primzahl",
    ],
)
def test_a_period_mentioned_beside_another_question_is_not_asked_about(query: str) -> None:
    assert parse_time_window(query, NOW, ROME) is not None  # the period is read...
    assert asked(query) is None  # ...and is not the question's


@pytest.mark.parametrize(
    "query",
    [
        "What did we cover last week?",
        "Last week, what did I get wrong?",
        "I was sick yesterday, what did I miss?",
        "Last week's quiz - how did I do?",
        "Tell me about last week",
        "last week?",
        "in July",
        "Cosa abbiamo fatto la settimana scorsa?",
        "Was haben wir letzten Monat gemacht?",
        "¿Qué vimos ayer?",
        "Qu'est-ce qu'on a vu hier ?",
        "O que estudamos na semana passada?",
        "ماذا درسنا الأسبوع الماضي؟",
        "Today we did photosynthesis",
        "What did we do today?",
        "How am I doing this week?",
        "Have I improved this month?",
        "ces 10 derniers jours ça a donné quoi aux quiz",  # a question word asked in place
        "mês passado eu errei o que em química",
        "What are we working on in November?",
        "How many times have I gone over fractions in 2026?",
        "Which exercise did you give me, as mentioned on November 11, 2026?",
    ],
)
def test_a_period_the_message_asks_about_is_kept(query: str) -> None:
    assert asked(query) == parse_time_window(query, NOW, ROME).label  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "query",
    [
        "Today I want to study photosynthesis",
        "This week I'm going to learn the causes of the war",
        "Questo mese voglio ripassare le equazioni",
        "Can we do some algebra today?",
        "hi, how are you today?",
        "On peut faire de la géométrie cette semaine ?",
    ],
)
def test_a_running_period_in_a_plan_is_not_a_period_of_the_record(query: str) -> None:
    assert parse_time_window(query, NOW, ROME) is not None
    assert asked(query) is None


@pytest.mark.parametrize(
    ("query", "question"),
    [
        (
            "my exam is on friday, can you quiz me on what we did last week?",
            "can you quiz me on what we did last week?",
        ),
        ("I was off sick last week, what did we do yesterday?", "what did we do yesterday?"),
        (
            "ho la verifica venerdì, cosa abbiamo fatto la settimana scorsa?",
            "cosa abbiamo fatto la settimana scorsa?",
        ),
        ("tengo examen el viernes. ¿qué vimos ayer?", "¿qué vimos ayer?"),
    ],
)
def test_a_question_that_names_its_own_period_asks_about_that_one(
    query: str, question: str
) -> None:
    assert asked(question) is not None
    assert asked(query) == asked(question)


@pytest.mark.parametrize(
    "query",
    [
        "I have a quiz on Thursday, what did we go over about the water cycle?",
        "we've got a quiz on Thursday. what did you show me on circuits?",
        "I'm so worried about Thursday's test, what did we do on the water cycle?",
        "the test is on friday. what did you show me on circuits?",
        "giovedì ho l'interrogazione, cosa abbiamo ripassato sulle frazioni?",
        "l'interrogazione è giovedì, cosa abbiamo ripassato sulle frazioni?",  # "è", not "e"
        "giovedì c'è il compito in classe, che cosa abbiamo fatto sui vulcani?",
        "o simulado é na quinta, o que a gente estudou de genética?",
        "el jueves tengo control, ¿qué hemos repasado de la célula?",
        "jeudi j'ai une interro, on a vu quoi sur la photosynthèse ?",
        "am Donnerstag schreiben wir eine Arbeit, was haben wir über Zellen gelernt?",
        "quinta tenho simulado, o que a gente estudou de genética?",
    ],
)
def test_a_weekday_of_a_statement_with_its_own_verb_is_the_next_one_not_the_questions(
    query: str,
) -> None:
    # The question beside it speaks of the past, and the whole message, read by that tense,
    # names last Thursday; the statement's own words are a present (an exam still to come).
    assert parse_time_window(query, NOW, ROME) is not None
    assert asked(query) is None


@pytest.mark.parametrize(
    ("query", "question"),
    [
        ("On Thursday in class, what did we go over?", "what did we go over on Thursday?"),
        ("Thursday's quiz: how did I do?", "how did I do on Thursday?"),
        ("giovedì a lezione, cosa abbiamo fatto?", "cosa abbiamo fatto giovedì?"),
        ("jeudi en cours, on a fait quoi ?", "on a fait quoi jeudi ?"),
    ],
)
def test_a_weekday_that_only_frames_the_question_is_read_by_the_questions_tense(
    query: str, question: str
) -> None:
    # No verb and no person of its own: the clause frames the question beside it.
    assert asked(question) is not None
    assert asked(query) == asked(question)


def test_after_an_upcoming_weekday_a_question_naming_its_own_period_asks_about_that_one() -> None:
    query = "I have a quiz on Thursday, what did we do last week?"
    assert asked(query) == asked("what did we do last week?")


@pytest.mark.parametrize(
    "query",
    [
        "which mistakes do I keep making in the last few weeks?",
        "how is my spelling going over the past 10 days?",
        "quali errori faccio negli ultimi giorni?",
        "¿qué errores cometo en las últimas semanas?",
        "which mistakes do I keep making since monday?",
        "¿qué errores cometo desde el lunes?",
    ],
)
def test_a_span_counted_back_from_now_is_asked_about_in_a_question_of_the_present(
    query: str,
) -> None:
    # Still running, as "today" is, but it looks back: no plan names "the last few weeks".
    assert asked(query) == parse_time_window(query, NOW, ROME).label  # type: ignore[union-attr]


def test_a_message_that_names_no_period_has_none() -> None:
    assert asked("what is a prime number?") is None
    assert asked("") is None


def test_clauses_keep_their_question_marks_and_split_at_clause_punctuation() -> None:
    assert clauses("Ayer fui al médico, ¿qué es una célula?") == [
        "Ayer fui al médico",
        "¿qué es una célula?",
    ]
    assert clauses("Hier j'étais malade ; c'est quoi une fraction ?") == [
        "Hier j'étais malade",
        "c'est quoi une fraction ?",
    ]
    assert clauses("Last week's quiz - how did I do?") == ["Last week's quiz", "how did I do?"]
    # A comma between two numbers is a decimal comma, not a clause break.
    assert clauses("è 1,5 volte") == ["è 1,5 volte"]
    assert clauses("i was ill last week what is a prime") == [
        "i was ill last week",
        "what is a prime",
    ]
    assert clauses("can you remind me what we did") == ["can you remind me what we did"]
    assert clauses("as mentioned on November 11, 2023?") == ["as mentioned on November 11, 2023?"]
    assert clauses("") == []


def test_a_mentioned_period_does_not_make_a_record_question() -> None:
    assert not is_record_question("I was at my cousin's last weekend, what is a prime number?")
    assert is_record_question("What did you show me last weekend?")


@pytest.mark.parametrize(
    "query",
    [
        "l'altro giorno cosa abbiamo ripassato?",
        "el otro día qué vimos de química?",
        "l'autre jour on a travaillé sur quoi ?",
        "neulich, was haben wir da besprochen?",
        "no outro dia o que a gente estudou?",
        "من كام يوم ذاكرنا ايه؟",
    ],
)
def test_the_other_day_is_a_recent_day_of_the_last_week(query: str) -> None:
    found = asked_window(query, NOW, ROME)
    assert found is not None
    assert (NOW - found.start_us) // 86_400_000_000 in (6, 7)


@pytest.mark.parametrize(
    "query",
    ["otro día lo vemos, ¿qué es un vector?", "facciamolo un altro giorno, cos'è un vettore?"],
)
def test_another_day_is_not_the_other_day(query: str) -> None:
    assert asked_window(query, NOW, ROME) is None


@pytest.mark.parametrize(
    "query",
    [
        "last week in class we started Macbeth, what is it about?",
        "la settimana scorsa in classe abbiamo iniziato Dante, di cosa parla?",
        "la semaine dernière en cours on a commencé Candide, c'est quoi le message ?",
        "letzte Woche haben wir im Unterricht mit Faust angefangen, worum geht es?",
        "la semana pasada en clase empezamos el Quijote, de qué trata?",
        "na semana passada na escola começámos Os Lusíadas, do que fala?",
    ],
)
def test_a_period_of_the_students_school_is_not_asked_about(query: str) -> None:
    # "we" is the class at school, not the sessions: the question is about the book.
    assert asked(query) is None


def test_a_period_that_only_frames_a_question_about_a_lesson_is_still_asked_about() -> None:
    assert asked("Last Thursday in class, what did we go over?") is not None


@pytest.mark.parametrize(
    "query",
    [
        "my final exam is in December, where should I start revising?",
        "l'esame di stato è a dicembre, da dove comincio?",
        "la prova é no dia 20 de dezembro, por onde começo?",
    ],
)
def test_a_month_still_to_come_in_a_statement_is_no_period_of_the_record(query: str) -> None:
    # Asked in November: December is the coming one, not last year's.
    assert asked(query) is None


def test_a_month_still_to_come_asked_about_in_the_past_is_last_years() -> None:
    found = asked("what did we do in December?")
    assert found is not None
    assert "2025" in found
