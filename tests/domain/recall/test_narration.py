"""R2.6 a tutor's narration of a period ("In July we covered …") is recognised at write time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tutor_memory.domain.recall import narration
from tutor_memory.domain.recall.narration import is_narration
from tutor_memory.domain.recall.timewindow import parse_time_window

ROME = "Europe/Rome"
NOW = (datetime(2026, 11, 25, 14, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(
    microseconds=1
)

NARRATIONS = {
    "en": [
        "In July we covered photosynthesis and osmosis.",
        "Last week we worked on fractions, and you got the second example right.",
        "Osmosis is the diffusion of water. Yesterday we went over it twice.",
        "This month we've already reviewed the cell membrane.",
    ],
    "it": [
        "A luglio abbiamo visto la fotosintesi.",
        "La settimana scorsa abbiamo lavorato sulle frazioni.",
    ],
    "es": ["En julio estudiamos la célula.", "La semana pasada vimos las fracciones."],
    "fr": ["En juillet nous avons vu l'osmose.", "Hier, on a révisé les fractions."],
    "de": [
        "Im Juli haben wir Photosynthese und Osmose behandelt.",
        "Letzte Woche haben wir an Brüchen gearbeitet.",
    ],
    "pt": ["Em julho estudamos a fotossíntese.", "Na semana passada revisamos as frações."],
    "ar": ["في يوليو درسنا التمثيل الضوئي.", "الأسبوع الماضي راجعنا الكسور", "وأمس ودرسنا الخلية"],
}

NOT_NARRATIONS = {
    "en": [
        "The French Revolution began in July 1789.",
        "As we saw, osmosis needs a semi-permeable membrane.",
        "In July, plants in the northern hemisphere grow fastest.",
        "Today we will study osmosis.",
        "Today you will learn a new topic: osmosis.",  # French "a" is no past in English
        "We covered fractions. Photosynthesis peaks in July.",
        "May I explain osmosis with an example?",
    ],
    "it": [
        "La Rivoluzione francese iniziò nel luglio 1789.",
        "Come abbiamo visto, l'acqua si muove.",
    ],
    "es": ["La Revolución Francesa comenzó en julio de 1789.", "Hoy en día estudiamos genética."],
    "fr": ["La Révolution française a commencé en juillet 1789.", "Nous avons vu que l'eau monte."],
    "de": [
        "Die Französische Revolution begann im Juli 1789.",
        "Wir haben gesehen, dass Wasser fließt.",
    ],
    "pt": ["A Revolução Francesa começou em julho de 1789.", "Estudamos a osmose porque é útil."],
    "ar": ["بدأت الثورة الفرنسية في يوليو 1789", "في درسنا اليوم سنتعلم التمثيل الضوئي"],
}


def _cases(table: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(code, text) for code, texts in table.items() for text in texts]


@pytest.mark.parametrize(("code", "text"), _cases(NARRATIONS))
def test_a_recap_verb_with_a_period_is_a_narration(code: str, text: str) -> None:
    assert is_narration(text, NOW, ROME), (code, text)


@pytest.mark.parametrize(("code", "text"), _cases(NOT_NARRATIONS))
def test_explanations_that_mention_a_date_or_a_recap_alone_are_not_narrations(
    code: str, text: str
) -> None:
    assert not is_narration(text, NOW, ROME), (code, text)


def test_marker_and_period_must_share_a_sentence() -> None:
    assert not is_narration("Yesterday was rainy. We covered fractions.", NOW, ROME)
    assert is_narration("Yesterday, after the quiz, we covered fractions.", NOW, ROME)
    assert not is_narration("Yesterday was rainy;\nwe covered fractions", NOW, ROME)
    assert is_narration("It costs 3.5 euros. In July we covered prices 2.5 times", NOW, ROME)


def test_a_sentence_the_summary_repeats_from_the_text_is_read_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read: list[str] = []

    def counting(sentence: str, now_us: int, tz: str) -> object:
        read.append(sentence)
        return parse_time_window(sentence, now_us, tz)

    monkeypatch.setattr(narration, "parse_time_window", counting)
    # The first sentence is read for a period (a past with "you" and a time word) and names none.
    text = "Since then you practised a lot. Last week you solved every ratio."
    summary = text[:45]  # the text's start, cut short, as chat services often summarise
    assert is_narration(f"{summary}\n{text}", NOW, ROME)
    assert read.count("Since then you practised a lot.") == 1


def test_a_narration_of_a_period_outside_the_record_is_not_flagged() -> None:
    assert not is_narration("In July 1789 we saw the Bastille fall.", NOW, ROME)


def test_an_invalid_time_zone_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="time zone"):
        is_narration("In July we covered osmosis.", NOW, "Nowhere/Special")
    with pytest.raises(ValueError, match="time zone"):
        is_narration("", NOW, "Nowhere/Special")


NOW_US = 1_773_835_200_000_000  # a Wednesday, 2026-03-18T12:00Z


@pytest.mark.parametrize(
    "text",
    [
        "Yesterday you solved four simultaneous equations without help.",
        "Last month I showed you how to balance redox equations.",
        "La settimana scorsa hai sbagliato due domande sui logaritmi.",
        "El lunes resolviste tres problemas de probabilidad.",
        "Hier, tu as révisé les verbes irréguliers.",
        "Gestern hast du drei Aufgaben zur Optik gelöst.",
        "Ontem você resolveu cinco exercícios de frações.",
        "أمس راجعت قواعد الجمع.",
    ],
)
def test_a_past_with_the_student_or_the_tutor_in_a_period_narrates(text: str) -> None:
    assert is_narration(text, NOW_US, "UTC")


@pytest.mark.parametrize(
    "text",
    [
        "Tomorrow you will revise the redox equations.",
        "Today we are going to study volcanoes.",
        "So far you have done well with fractions.",
        "The Bastille was stormed in July 1789.",
        "Cette semaine on travaille à la maison.",
    ],
)
def test_plans_recaps_without_a_period_and_history_do_not_narrate(text: str) -> None:
    assert not is_narration(text, NOW_US, "UTC")


@pytest.mark.parametrize(
    "text",
    [
        "Last week's lessons were about the nervous system.",
        "La settimana scorsa le lezioni erano sulle equazioni.",
        "La semana pasada las clases fueron sobre la célula.",
        "Na semana passada as aulas foram sobre frações.",
    ],
)
def test_the_sessions_themselves_are_a_person_of_a_narration(text: str) -> None:
    assert is_narration(text, NOW_US, "UTC")


@pytest.mark.parametrize(
    "text",
    [
        "Since the start of the year you have solved sixty equations.",
        "Dall'inizio del mese hai fatto nove esercizi sui vettori.",
        "Au début de la semaine, tu as eu tout juste aux questions sur les fractions.",
        "Anfang des Monats hattest du Probleme mit Brüchen.",
        "Entre 2 e 9 de março você trabalhou com porcentagem.",
        "بين ٢ و٩ مارس اشتغلت على النسب المئوية.",
    ],
)
def test_periods_named_by_their_start_or_a_range_of_days_narrate(text: str) -> None:
    assert is_narration(text, NOW_US, "UTC")


@pytest.mark.parametrize(
    "text",
    [
        "The lesson starts at 5 pm today.",
        "Let's start the week with fractions.",
        "Letzte Woche hat die Prüfung drei Stunden gedauert.",
    ],
)
def test_a_lesson_to_come_or_a_start_to_make_does_not_narrate(text: str) -> None:
    assert not is_narration(text, NOW_US, "UTC")
