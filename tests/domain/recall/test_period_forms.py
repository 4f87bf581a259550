"""The period forms read through the date library (issue 13): relative days, weeks, months and
years, the week before last, weekdays, bare years, "since", ranges, in several languages and time
zones, and the fast path that keeps queries without time words off the library."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tutor_memory.domain.recall.timewindow import TimeWindow, parse_time_window
from tutor_memory.domain.recall.timewords import has_time_words

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ROME = "Europe/Rome"
NEW_YORK = "America/New_York"
SYDNEY = "Australia/Sydney"
RIYADH = "Asia/Riyadh"


def us(local: str, tz: str = ROME) -> int:
    aware = datetime.fromisoformat(local).replace(tzinfo=ZoneInfo(tz))
    return (aware - _EPOCH) // timedelta(microseconds=1)


# Wednesday 18 March 2026, late afternoon.
NOW = "2026-03-18T16:30"


def span(query: str, tz: str = ROME, now: str = NOW) -> tuple[int, int]:
    found = parse_time_window(query, us(now, tz), tz)
    assert found is not None, query
    return found.start_us, found.end_us


def days(first: str, after: str, tz: str = ROME) -> tuple[int, int]:
    return us(f"{first}T00:00", tz), us(f"{after}T00:00", tz)


@pytest.mark.parametrize(
    "query",
    [
        "what did we cover three days ago",
        "cosa abbiamo fatto tre giorni fa?",
        "qué vimos hace tres días",
        "on a fait quoi il y a trois jours",
        "was haben wir vor drei Tagen gemacht",
        "o que vimos há três dias",
        "ماذا درسنا قبل ثلاثة أيام",
    ],
)
def test_n_days_ago_is_that_local_day(query: str) -> None:
    assert span(query) == days("2026-03-15", "2026-03-16")


@pytest.mark.parametrize(
    "query",
    [
        "recap what we did the day before yesterday pls",
        "ieri l'altro cosa abbiamo ripassato?",
        "avantieri abbiamo fatto le frazioni o no?",
        "qu est ce qu on a vu avant hier",
        "antier vimos algo de química, ¿no?",
        "¿de qué hablamos antes de ayer?",
        "o que estudamos antes de ontem?",
        "ماذا درسنا أول أمس؟",
        "شو حكينا اول امبارح",
        "ماذا راجعنا قبل البارحة؟",
    ],
)
def test_the_day_before_yesterday_however_it_is_written_is_two_days_back(query: str) -> None:
    assert span(query) == days("2026-03-16", "2026-03-17")


@pytest.mark.parametrize(
    ("spoken", "written"),
    [
        ("on a fait quoi y a deux semaines en maths", "il y a deux semaines, en maths"),
        ("y a trois jours on a parlé de quoi ?", "de quoi on a parlé il y a trois jours"),
    ],
)
def test_spoken_french_ago_without_il_is_the_written_period(spoken: str, written: str) -> None:
    assert span(spoken) == span(written)


@pytest.mark.parametrize(
    "query",
    [
        "what did we study the week before last?",
        "vorletzte Woche",
        "la semana antepasada",
        "two weeks ago",
        "il y a deux semaines",
        "قبل أسبوعين",
    ],
)
def test_the_week_before_last_is_two_monday_to_sunday_weeks_back(query: str) -> None:
    assert span(query) == days("2026-03-02", "2026-03-09")


@pytest.mark.parametrize(
    "query",
    [
        "what did i get wrong on monday",
        "lunedì cosa ho sbagliato",
        "was haben wir am Montag gemacht",
        "was hab ich am Montag abgeschrieben",
        "qué hicimos el lunes",
        "lundi on a révisé quoi",
        "na segunda a gente falou do quê",
        "last monday",
        "this monday, the test",
    ],
)
def test_a_named_weekday_is_its_most_recent_day_before_today(query: str) -> None:
    assert span(query) == days("2026-03-16", "2026-03-17")


@pytest.mark.parametrize(
    "query",
    [
        "I have a test on monday can you help me with fractions",
        "lunedì ho la verifica, mi aiuti?",
        "el lunes tengo examen de física",
        "am Montag schreib ich ne Arbeit, hilfst du mir?",
        "segunda tenho prova, me ajuda?",
        "on friday we have a quiz on cells",
    ],
)
def test_a_bare_weekday_in_a_query_without_a_past_names_no_period(query: str) -> None:
    # The next Monday as often as the last: a window on the last one would empty the block.
    assert parse_time_window(query, us(NOW), ROME) is None


def test_the_same_weekday_as_today_is_a_week_ago() -> None:
    assert span("what did we do on wednesday?") == days("2026-03-11", "2026-03-12")


@pytest.mark.parametrize(
    "query", ["what did we do in 2025", "cosa abbiamo fatto nel 2025", "im Jahr 2025", "في 2025"]
)
def test_a_bare_year_after_a_preposition_is_that_year(query: str) -> None:
    assert span(query) == days("2025-01-01", "2026-01-01")


def test_a_number_that_no_time_word_introduces_is_no_year() -> None:
    assert parse_time_window("what is 2025 divided by 5?", us(NOW), ROME) is None


@pytest.mark.parametrize(
    "query", ["what have we covered since march?", "desde marzo", "depuis mars", "seit März"]
)
def test_since_a_month_runs_from_its_first_day_to_now(query: str) -> None:
    start, end = span(query)
    assert (start, end) == (us("2026-03-01T00:00"), us(NOW) + 1)


def test_since_a_month_still_to_come_this_year_is_last_years() -> None:
    start, _ = span("since July")
    assert start == us("2025-07-01T00:00")


@pytest.mark.parametrize(
    "query",
    [
        "what did we go over between 3 and 10 may",
        "tra il 3 e il 10 maggio",
        "entre el 3 y el 10 de mayo",
        "entre le 3 et le 10 mai",
        "zwischen dem 3. und 10. Mai",
    ],
)
def test_a_date_range_runs_from_its_first_day_to_the_end_of_its_last(query: str) -> None:
    assert span(query) == days("2025-05-03", "2025-05-11")


@pytest.mark.parametrize(
    "query",
    [
        "what did we do from 3 to 10 May",
        "from May 3 to May 10",
        "from the 3rd to the 10th of May",
        "dal 3 al 10 maggio",
        "del 3 al 10 de mayo",
        "du 3 au 10 mai",
        "vom 3. bis 10. Mai",
        "de 3 a 10 de maio",
        "من 3 إلى 10 مايو",
    ],
)
def test_a_range_from_one_day_to_another_is_both_days_and_those_between(query: str) -> None:
    assert span(query) == days("2025-05-03", "2025-05-11")


@pytest.mark.parametrize(
    "query",
    [
        "what did we study between September and November?",
        "from September until November",
        "tra settembre e novembre",
        "da settembre a novembre",
        "entre septiembre y noviembre",
        "von September bis November",
        "de setembro a novembro",
        "de septiembre a noviembre",
        "de septembre à novembre",
        "من سبتمبر إلى نوفمبر",
    ],
)
def test_a_range_of_months_runs_from_the_first_to_the_end_of_the_last(query: str) -> None:
    assert span(query) == days("2025-09-01", "2025-12-01")


@pytest.mark.parametrize(
    "query", ["between March and May", "from March to May", "from march until may"]
)
def test_ambiguous_month_names_joined_as_a_range_are_months(query: str) -> None:
    assert span(query, now="2026-06-10T12:00") == days("2026-03-01", "2026-06-01")


def test_a_range_of_months_across_new_year_starts_in_the_year_before() -> None:
    assert span("from November to February") == days("2025-11-01", "2026-03-01")


def test_a_range_of_days_without_a_month_is_in_this_month() -> None:
    assert span("what did we do from the 3rd to the 10th?") == days("2026-03-03", "2026-03-11")


def test_an_ordinal_of_a_month_is_that_day() -> None:
    assert span("what did we do on the 10th of May?") == days("2025-05-10", "2025-05-11")


@pytest.mark.parametrize(
    "query",
    ["I may march to the shop and back", "and may I ask you?", "chapter 3 of March Madness"],
)
def test_may_and_march_as_words_are_no_range(query: str) -> None:
    assert parse_time_window(query, us(NOW), ROME) is None


def test_a_named_month_with_and_without_a_year() -> None:
    assert span("in January 2026") == days("2026-01-01", "2026-02-01")
    assert span("a luglio") == days("2025-07-01", "2025-08-01")


def test_last_n_days_is_a_rolling_span_up_to_now() -> None:
    start, end = span("how did my quizzes go in the last 10 days")
    assert (start, end) == (us("2026-03-08T00:00"), us(NOW) + 1)


def test_the_weekend_is_the_last_saturday_and_sunday() -> None:
    assert span("what did we do over the weekend") == days("2026-03-14", "2026-03-16")


def test_the_day_of_the_month_alone() -> None:
    assert span("what did we talk about on the 12th") == days("2026-03-12", "2026-03-13")
    assert span("what did we talk about on the 20th") == days("2026-02-20", "2026-02-21")


def test_a_months_ago_is_the_calendar_month() -> None:
    assert span("what were we working on a month ago") == days("2026-02-01", "2026-03-01")


@pytest.mark.parametrize("tz", [NEW_YORK, SYDNEY, RIYADH])
def test_yesterday_is_the_local_day_in_every_zone(tz: str) -> None:
    assert span("yesterday", tz) == days("2026-03-17", "2026-03-18", tz)


def test_the_zone_decides_the_day_just_after_midnight() -> None:
    # 00:30 on Thursday in Sydney is still Wednesday in New York.
    instant = us("2026-03-19T00:30", SYDNEY)
    sydney = parse_time_window("yesterday", instant, SYDNEY)
    new_york = parse_time_window("yesterday", instant, NEW_YORK)
    assert sydney is not None
    assert new_york is not None
    assert sydney.start_us == us("2026-03-18T00:00", SYDNEY)
    assert new_york.start_us == us("2026-03-17T00:00", NEW_YORK)


def test_days_ago_across_spring_forward_is_23_hours_long() -> None:
    # New York moved its clocks forward on Sunday 8 March 2026.
    start, end = span("3 days ago", NEW_YORK, "2026-03-11T12:00")
    assert (start, end) == days("2026-03-08", "2026-03-09", NEW_YORK)
    assert end - start == 23 * 3600 * 1_000_000


def test_last_week_across_fall_back_is_one_hour_longer() -> None:
    # Rome moved its clocks back on Sunday 25 October 2026.
    window = parse_time_window("la settimana scorsa", us("2026-10-28T10:00"), ROME)
    assert window is not None
    assert (window.start_us, window.end_us) == days("2026-10-19", "2026-10-26")
    assert window.end_us - window.start_us == (7 * 24 + 1) * 3600 * 1_000_000


@pytest.mark.parametrize(
    "query",
    [
        "I was born in 1789",
        "we finished the chapter",
        "the sun is a star",
        "Non ho mai capito le frazioni",
        "may I ask about fractions",
    ],
)
def test_words_the_library_would_misread_name_no_window(query: str) -> None:
    assert parse_time_window(query, us(NOW), ROME) is None


@pytest.mark.parametrize(
    "query",
    [
        "What is osmosis?",
        "spiegami la fotosintesi",
        "¿cómo se resuelve una ecuación?",
        "Erklär mir die Zellatmung",
        "ما هي الخلية؟",
        "solve 3x - 5 = 10",
    ],
)
def test_a_query_without_time_words_takes_the_fast_path(query: str) -> None:
    assert not has_time_words(query)


@pytest.mark.parametrize("query", ["last week", "ieri", "vor drei Tagen", "بالأمس", "in 2025"])
def test_a_query_with_time_words_takes_the_slow_path(query: str) -> None:
    assert has_time_words(query)


def test_the_window_label_names_the_period() -> None:
    found: TimeWindow | None = parse_time_window("vor drei Tagen", us(NOW), ROME)
    assert found is not None
    assert found.label == "3 days ago (2026-03-15)"
