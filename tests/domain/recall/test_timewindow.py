"""R2.5 time is a filter: the calendar period a query names, in the student's zone, as UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tutor_memory.domain.recall.timewindow import (
    RECORD_HORIZON_YEARS,
    TimeWindow,
    parse_time_window,
)

ROME = "Europe/Rome"
RIYADH = "Asia/Riyadh"
NEW_YORK = "America/New_York"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def us(local: str, tz: str = ROME) -> int:
    """Microseconds since the epoch of a local wall-clock time in `tz`."""
    aware = datetime.fromisoformat(local).replace(tzinfo=ZoneInfo(tz))
    return (aware - _EPOCH) // timedelta(microseconds=1)


def utc_us(year: int, month: int, day: int, hour: int, minute: int = 0) -> int:
    return (datetime(year, month, day, hour, minute, tzinfo=UTC) - _EPOCH) // timedelta(
        microseconds=1
    )


# Wednesday 25 November 2026, mid-afternoon in Rome.
NOW = us("2026-11-25T15:00:00")


def window(query: str, now: int = NOW, tz: str = ROME) -> TimeWindow:
    found = parse_time_window(query, now, tz)
    assert found is not None, query
    return found


def test_month_without_year_is_the_most_recent_month_that_has_started() -> None:
    march = window("What did we cover in March?")
    assert (march.start_us, march.end_us) == (us("2026-03-01T00:00"), us("2026-04-01T00:00"))
    assert march.label == "March 2026"
    december = window("what did we do in December")
    assert (december.start_us, december.end_us) == (us("2025-12-01T00:00"), us("2026-01-01T00:00"))
    assert december.label == "December 2025"


def test_the_current_month_by_name_runs_to_now() -> None:
    november = window("what did we study in November?")
    assert (november.start_us, november.end_us) == (us("2026-11-01T00:00"), NOW + 1)
    assert november.label == "November 2026 (so far)"


def test_month_with_year_is_that_month() -> None:
    found = window("What did we cover in March 2025?")
    assert (found.start_us, found.end_us) == (us("2025-03-01T00:00"), us("2025-04-01T00:00"))
    assert (found.label, found.expression) == ("March 2025", "march 2025")
    assert window("July of 2025").label == "July 2025"
    assert window("julio de 2025").label == "July 2025"


def test_in_december_asked_in_january_is_the_previous_year() -> None:
    now = us("2027-01-10T09:00")
    found = window("in December", now)
    assert (found.start_us, found.end_us) == (us("2026-12-01T00:00"), us("2027-01-01T00:00"))


def test_last_month_in_january_is_december_of_the_previous_year() -> None:
    now = us("2027-01-10T09:00")
    found = window("what did we do last month?", now)
    assert (found.start_us, found.end_us) == (us("2026-12-01T00:00"), us("2027-01-01T00:00"))
    assert found.label == "last month (December 2026)"


def test_last_week_is_the_previous_monday_to_sunday_week() -> None:
    found = window("what did we do last week?")
    assert (found.start_us, found.end_us) == (us("2026-11-16T00:00"), us("2026-11-23T00:00"))
    assert found.label == "last week (2026-11-16 to 2026-11-22)"


def test_last_week_across_a_month_end() -> None:
    found = window("last week", us("2026-12-09T08:00"))  # a Wednesday
    assert (found.start_us, found.end_us) == (us("2026-11-30T00:00"), us("2026-12-07T00:00"))
    assert found.label == "last week (2026-11-30 to 2026-12-06)"


def test_last_week_across_a_year_end() -> None:
    found = window("la semana pasada", us("2027-01-06T08:00"))
    assert (found.start_us, found.end_us) == (us("2026-12-28T00:00"), us("2027-01-04T00:00"))


def test_this_week_runs_from_monday_to_now() -> None:
    found = window("what have we done this week?")
    assert (found.start_us, found.end_us) == (us("2026-11-23T00:00"), NOW + 1)
    assert found.label == "this week (2026-11-23 to 2026-11-25, so far)"
    monday = us("2026-11-23T10:00")
    assert window("this week", monday).start_us == us("2026-11-23T00:00")


def test_yesterday_and_today_are_local_days() -> None:
    yesterday = window("what did we do yesterday?")
    assert (yesterday.start_us, yesterday.end_us) == (
        us("2026-11-24T00:00"),
        us("2026-11-25T00:00"),
    )
    assert yesterday.label == "yesterday (2026-11-24)"
    today = window("today")
    assert (today.start_us, today.end_us) == (us("2026-11-25T00:00"), NOW + 1)
    assert today.label == "today (2026-11-25, so far)"


def test_yesterday_over_a_daylight_saving_change_is_23_hours_long() -> None:
    found = window("ieri", us("2026-03-30T10:00"))  # Rome moved to summer time on 29 March
    assert found.end_us - found.start_us == 23 * 3600 * 1_000_000


def test_this_year_and_last_year() -> None:
    this_year = window("this year")
    assert (this_year.start_us, this_year.end_us) == (us("2026-01-01T00:00"), NOW + 1)
    assert this_year.label == "this year (2026, so far)"
    last_year = window("l'anno scorso")
    assert (last_year.start_us, last_year.end_us) == (
        us("2025-01-01T00:00"),
        us("2026-01-01T00:00"),
    )


def test_exact_utc_boundaries_in_rome_across_summer_time() -> None:
    july = window("July 2026")
    assert (july.start_us, july.end_us) == (utc_us(2026, 6, 30, 22), utc_us(2026, 7, 31, 22))
    march = window("March 2026")  # starts in winter time (UTC+1), ends in summer time (UTC+2)
    assert (march.start_us, march.end_us) == (utc_us(2026, 2, 28, 23), utc_us(2026, 3, 31, 22))


def test_exact_utc_boundaries_in_riyadh() -> None:
    now = us("2026-11-25T15:00", RIYADH)
    march = window("في مارس 2026", now, RIYADH)
    assert (march.start_us, march.end_us) == (utc_us(2026, 2, 28, 21), utc_us(2026, 3, 31, 21))
    yesterday = window("أمس", now, RIYADH)
    assert (yesterday.start_us, yesterday.end_us) == (
        utc_us(2026, 11, 23, 21),
        utc_us(2026, 11, 24, 21),
    )


def test_the_time_zone_decides_which_month_it_is() -> None:
    now = utc_us(2026, 11, 30, 23, 30)  # already 1 December in Rome, still November in New York
    assert window("in December", now, ROME).label == "December 2026 (so far)"
    assert window("in December", now, NEW_YORK).label == "December 2025"
    assert window("in December", now, "UTC").label == "December 2025"
    new_york = window("last week", now, NEW_YORK)
    assert new_york.start_us == us("2026-11-23T00:00", NEW_YORK)


@pytest.mark.parametrize("tz", ["Mars/Olympus_Mons", "", "../etc/passwd", "Europe"])
def test_an_invalid_time_zone_is_a_value_error(tz: str) -> None:
    with pytest.raises(ValueError, match="time zone"):
        parse_time_window("last week", NOW, tz)
    with pytest.raises(ValueError, match="time zone"):
        parse_time_window("no time here", NOW, tz)


@pytest.mark.parametrize(
    "query",
    [
        "May I ask what osmosis is?",
        "You may use a calculator",
        "Why did the soldiers march to Rome?",
        "the Ides of March",
        "La planète Mars est rouge",
        "Le sol de Mars",
        "Non ho mai capito le frazioni",
        "O marco zero da cidade",
        "¿Qué hizo Julio César?",
        "Hoy en día usamos energía solar",
        "Al giorno d'oggi la cellula è studiata",
        "ما هو باب القلب؟",
        "مارس الرياضة كل يوم",
        "What is osmosis?",
    ],
)
def test_ambiguous_words_do_not_fire_on_their_other_meaning(query: str) -> None:
    assert parse_time_window(query, NOW, ROME) is None


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("what did we do in May?", "May 2026"),
        ("May 2025", "May 2025"),
        ("during march", "March 2026"),
        ("last August", "August 2026"),
        ("Qu'avons-nous vu en mars ?", "March 2026"),
        ("mars 2025", "March 2025"),
        ("en mai", "May 2026"),
        ("Was haben wir im Mai gemacht?", "May 2026"),
        ("Was haben wir im März gemacht?", "March 2026"),
        ("im Maerz", "March 2026"),
        ("Was haben wir im Marz gemacht?", "March 2026"),
        ("O que estudamos em março?", "March 2026"),
        ("o que estudamos em marco", "March 2026"),
        ("Março de 2025", "March 2025"),
        ("¿Qué estudiamos en julio?", "July 2026"),
        ("Cosa abbiamo fatto a luglio?", "July 2026"),
        ("ad agosto", "August 2026"),
        ("en juillet", "July 2026"),
        ("Im Juli", "July 2026"),
        ("em julho", "July 2026"),
        ("ماذا درسنا في يوليو؟", "July 2026"),
        ("بيوليو", "July 2026"),
        ("في شهر تموز", "July 2026"),
        ("في آب", "August 2026"),
        ("في مارس", "March 2026"),
        ("كانون الثاني 2026", "January 2026"),
        ("في كانون الأول", "December 2025"),
        ("يوليو عام ٢٠٢٥م", "July 2025"),
    ],
)
def test_month_names_in_every_language(query: str, label: str) -> None:
    assert window(query).label == label


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("ieri", "yesterday (2026-11-24)"),
        ("la settimana scorsa", "last week (2026-11-16 to 2026-11-22)"),
        ("il mese scorso", "last month (October 2026)"),
        ("quest'anno", "this year (2026, so far)"),
        ("ayer", "yesterday (2026-11-24)"),
        ("este mes", "this month (November 2026, so far)"),
        ("el año pasado", "last year (2025)"),
        ("hier", "yesterday (2026-11-24)"),
        ("la semaine dernière", "last week (2026-11-16 to 2026-11-22)"),
        ("aujourd'hui", "today (2026-11-25, so far)"),
        ("le mois dernier", "last month (October 2026)"),
        ("gestern", "yesterday (2026-11-24)"),
        ("letzte Woche", "last week (2026-11-16 to 2026-11-22)"),
        ("in der letzten Woche", "last week (2026-11-16 to 2026-11-22)"),
        ("diesen Monat", "this month (November 2026, so far)"),
        ("ontem", "yesterday (2026-11-24)"),
        ("na semana passada", "last week (2026-11-16 to 2026-11-22)"),
        ("no mês passado", "last month (October 2026)"),
        ("este ano", "this year (2026, so far)"),
        ("أمس", "yesterday (2026-11-24)"),
        ("بالأمس", "yesterday (2026-11-24)"),
        ("الأسبوع الماضي", "last week (2026-11-16 to 2026-11-22)"),
        ("في الأسبوع الماضي", "last week (2026-11-16 to 2026-11-22)"),
        ("هذا الشهر", "this month (November 2026, so far)"),
        ("الشهر الماضي", "last month (October 2026)"),
        ("السنة الماضية", "last year (2025)"),
    ],
)
def test_relative_periods_in_every_language(query: str, label: str) -> None:
    assert window(query).label == label


def test_the_first_expression_in_the_query_wins() -> None:
    assert window("yesterday, and also in March?").expression == "1 day ago"
    assert window("in March, not yesterday").expression == "march"
    assert window("hoy en día, ¿qué estudiamos ayer?").expression == "1 day ago"


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("What did she finish last Friday, on 12 October 2026?", "2026-10-12"),
        ("what was hard last week, as I said on November 6?", "2026-11-06"),
    ],
)
def test_a_full_date_wins_over_a_period_counted_from_today(query: str, label: str) -> None:
    # "last Friday" here is counted from that date, not from today.
    assert window(query).label == label


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("what did we do the week before 3 November?",
         "the week before 2026-11-03 (2026-10-27 to 2026-11-03)"),
        ("what did we go over 2 weeks before Nov 10",
         "2 weeks before 2026-11-10 (2026-10-27 to 2026-11-10)"),
        # 25 October 2026 is a Sunday: the one before it.
        ("what did we do the Sunday before October 25, 2026?",
         "Sunday before 2026-10-25 (2026-10-18 to 2026-10-25)"),
        ("what did we practise the weekend before 9 November?",
         "the weekend before 2026-11-09 (2026-11-07 to 2026-11-09)"),
        ("what was I stuck on in the 3 days after 12 October?",
         "3 days after 2026-10-12 (2026-10-12 to 2026-10-15)"),
        ("what did we cover in the week after the 3rd of November?",
         "the week after 2026-11-03 (2026-11-03 to 2026-11-10)"),
        ("what did we do prior to 3 November?", "up to 2026-11-03"),
        ("what did we study before March?", "before March 2026"),
        ("what have we done after September?", "after September 2026 (so far)"),
        ("cosa abbiamo fatto la settimana prima del 3 novembre?",
         "the week before 2026-11-03 (2026-10-27 to 2026-11-03)"),
        ("e nei due giorni dopo il 10 novembre?",
         "2 days after 2026-11-10 (2026-11-10 to 2026-11-12)"),
        ("¿qué vimos la semana antes del 3 de noviembre?",
         "the week before 2026-11-03 (2026-10-27 to 2026-11-03)"),
        ("¿qué hicimos después del 10 de noviembre?", "from 2026-11-10 (so far)"),
        ("on a fait quoi la semaine avant le 3 novembre ?",
         "the week before 2026-11-03 (2026-10-27 to 2026-11-03)"),
        ("et après le 10 novembre ?", "from 2026-11-10 (so far)"),
        ("was haben wir in der Woche vor dem 3. November gemacht?",
         "the week before 2026-11-03 (2026-10-27 to 2026-11-03)"),
        ("und zwei Tage nach dem 10. November?",
         "2 days after 2026-11-10 (2026-11-10 to 2026-11-12)"),
        ("o que estudamos na semana antes de 3 de novembro?",
         "the week before 2026-11-03 (2026-10-27 to 2026-11-03)"),
        ("e depois de 10 de novembro?", "from 2026-11-10 (so far)"),
        ("ماذا درسنا في الأسبوع قبل 3 نوفمبر؟",
         "the week before 2026-11-03 (2026-10-27 to 2026-11-03)"),
        ("ماذا درسنا بعد 10 نوفمبر؟", "from 2026-11-10 (so far)"),
    ],
)  # fmt: skip
def test_a_period_before_or_after_a_date_is_counted_from_that_date(query: str, label: str) -> None:
    # Read as the date alone before, which named one day instead of the span asked about.
    assert window(query).label == label


def test_a_span_before_a_day_holds_that_day_and_one_before_a_month_stops_at_it() -> None:
    week = window("what did we do the week before 3 November?")
    assert (week.start_us, week.end_us) == (us("2026-10-27T00:00:00"), us("2026-11-04T00:00:00"))
    before = window("what did we study before March?")
    start = us(f"{2026 - RECORD_HORIZON_YEARS}-01-01T00:00:00")
    assert (before.start_us, before.end_us) == (start, us("2026-03-01T00:00:00"))


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("what had we covered until March?", "until March 2026"),
        ("what did we do up to 3 November?", "until 2026-11-03"),
        ("cosa abbiamo fatto fino al 3 novembre?", "until 2026-11-03"),
        ("¿qué hicimos hasta el 3 de noviembre?", "until 2026-11-03"),
        ("qu'est-ce qu'on a fait jusqu'au 3 novembre ?", "until 2026-11-03"),
        ("was haben wir bis zum 3. November gemacht?", "until 2026-11-03"),
        ("o que fizemos até 3 de novembro?", "until 2026-11-03"),
        ("ماذا درسنا حتى 3 نوفمبر؟", "until 2026-11-03"),
        # Between two dates the same words join a range.
        ("what did we do from March until May?", "March 2026 to May 2026"),
        ("was haben wir von März bis Mai gemacht?", "March 2026 to May 2026"),
    ],
)
def test_until_a_date_closes_the_record_at_that_date(query: str, label: str) -> None:
    assert window(query).label == label


def test_until_a_month_holds_that_month() -> None:
    until = window("what had we covered until March?")
    assert until.end_us == us("2026-04-01T00:00:00")


@pytest.mark.parametrize(
    ("query", "label"),
    [
        # Before or after words with no date after them keep counting from now.
        ("was haben wir vor drei Tagen gemacht?", "3 days ago (2026-11-22)"),
        ("ماذا درسنا قبل أسبوعين؟", "2 weeks ago (2026-11-09 to 2026-11-15)"),
        ("what did we do the week before last?", "2 weeks ago (2026-11-09 to 2026-11-15)"),
        ("what did we do after class yesterday?", "yesterday (2026-11-24)"),
    ],
)
def test_before_and_after_without_a_date_count_from_now(query: str, label: str) -> None:
    assert window(query).label == label


@pytest.mark.parametrize(
    "query", ["explícame la segunda ley de Newton", "qual é a quinta nota da escala?"]
)
def test_a_weekday_name_after_an_article_is_an_ordinal(query: str) -> None:
    assert parse_time_window(query, NOW, ROME) is None


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("o que fizemos na segunda?", "Monday (2026-11-23)"),
        ("o que vimos a segunda-feira passada?", "Monday (2026-11-23)"),
        ("sexta passada", "Friday (2026-11-20)"),
    ],
)
def test_a_portuguese_weekday_introduced_as_a_day_stays_a_day(query: str, label: str) -> None:
    assert window(query).label == label


def test_a_range_of_two_month_first_dates() -> None:
    assert window("between August 11 and August 15 2026").label == "2026-08-11 to 2026-08-15"
    assert window("between May 3 and June 2").label == "2026-05-03 to 2026-06-02"


def test_subject_dates_outside_the_record_name_no_window() -> None:
    assert parse_time_window("What happened in July 1789?", NOW, ROME) is None
    assert parse_time_window("in March 2027", NOW, ROME) is None  # not started yet
    oldest = 2026 - RECORD_HORIZON_YEARS
    assert window(f"in March {oldest}").label == f"March {oldest}"
    assert parse_time_window(f"in December {oldest - 1}", NOW, ROME) is None
    assert window("in July 1789 and last week").expression == "1 week ago"


def test_a_query_without_time_names_no_window() -> None:
    for query in ("What is osmosis?", "Explain the French Revolution", "ماذا أخطأت؟", ""):
        assert parse_time_window(query, NOW, ROME) is None


def test_a_period_past_the_calendars_end_names_no_window() -> None:
    # The last second of 9999 UTC is already year 10000 in Rome; this month ends in 10000.
    last = 253_402_300_799 * 1_000_000
    assert parse_time_window("what did we do this month?", last, "Europe/Rome") is None
    assert parse_time_window("what did we do this year?", last - 86_400_000_000, "UTC") is None


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("راجعنا ايه من يومين؟", "2 days ago (2026-11-23)"),
        ("اتكلمنا عن ايه من تلات أيام؟", "3 days ago (2026-11-22)"),
        ("يوم الاتنين عملنا ايه؟", "Monday (2026-11-23)"),
        ("ذاكرنا ايه النهارده؟", "today (2026-11-25, so far)"),
    ],
)
def test_spoken_arabic_counts_days_back_with_min_and_names_them_its_own_way(
    query: str, label: str
) -> None:
    # من before a duration is "ago" in spoken Arabic; ت is written for ث in its numerals and
    # weekdays (تلات, الاتنين).
    assert window(query).label == label


@pytest.mark.parametrize("query", ["هل تتكون السنة من 12 شهر؟", "الشهر يتكون من 4 أسابيع"])
def test_min_before_a_duration_in_the_present_counts_nothing_back(query: str) -> None:
    # "a year made of twelve months": only a text that speaks of the past counts back.
    assert parse_time_window(query, NOW, ROME) is None


@pytest.mark.parametrize(
    "query",
    [
        "what have we done since the start of the year?",
        "cosa abbiamo fatto dall'inizio dell'anno?",
        "¿qué hemos hecho desde principios de año?",
        "qu'est-ce qu'on a fait depuis le début de l'année ?",
        "was haben wir seit Anfang des Jahres gemacht?",
        "o que fizemos desde o começo do ano?",
        "ماذا درسنا منذ بداية السنة؟",
    ],
)
def test_since_the_start_of_the_year_is_this_year_so_far(query: str) -> None:
    found = window(query)
    assert found.start_us == us("2026-01-01T00:00:00")
    assert found.end_us == NOW + 1


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("what did we do at the start of the month?", "2026-11-01"),
        ("cosa abbiamo fatto all'inizio del mese?", "2026-11-01"),
        ("o que fizemos no começo desta semana?", "2026-11-23"),
        ("qu'est-ce qu'on a fait en début de semaine ?", "2026-11-23"),
    ],
)
def test_the_start_of_a_month_or_week_is_that_month_or_week_so_far(query: str, first: str) -> None:
    found = window(query)
    assert found.start_us == us(f"{first}T00:00:00")
    assert found.end_us == NOW + 1


@pytest.mark.parametrize(
    "query",
    [
        "how do I start this problem?",
        "depuis 2 semaines on travaille les fractions",
        "since year 7 we have done algebra",
        "what have we done since the day we started?",
        "since the week I was sick, what did we do?",
    ],
)
def test_a_start_without_its_unit_or_a_count_of_units_names_no_period(query: str) -> None:
    assert parse_time_window(query, NOW, ROME) is None


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("o que estudamos entre 2 e 9 de março?", "2026-03-02 to 2026-03-09"),
        ("o que fizemos em 9 de março?", "2026-03-09"),
        ("ماذا درسنا بين ٢ و٩ مارس؟", "2026-03-02 to 2026-03-09"),
    ],
)
def test_a_day_number_without_an_article_dates_an_ambiguous_month(query: str, label: str) -> None:
    assert label in window(query).label


@pytest.mark.parametrize(
    ("query", "day"),
    [
        ("¿qué errores hice esta mañana?", "2026-11-25"),
        ("¿qué hicimos esta tarde?", "2026-11-25"),
        ("¿qué hicimos anoche?", "2026-11-24"),
        ("o que fizemos esta manhã?", "2026-11-25"),
    ],
)
def test_this_morning_and_last_night_are_today_and_yesterday(query: str, day: str) -> None:
    assert day in window(query).label


@pytest.mark.parametrize(
    ("query", "label"),
    [
        ("ya deux semaines on a fait quoi ?", "2 weeks ago (2026-11-09 to 2026-11-15)"),
        ("faz duas semanas que a gente estudou o quê?", "2 weeks ago (2026-11-09 to 2026-11-15)"),
        ("o que a gente viu tem três dias?", "3 days ago (2026-11-22)"),
        ("what did we do a couple weeks back?", "2 weeks ago (2026-11-09 to 2026-11-15)"),
        ("what did we go over 3 days back?", "3 days ago (2026-11-22)"),
    ],
)
def test_spoken_words_for_ago_count_back_in_a_question_of_the_past(query: str, label: str) -> None:
    # French "ya" (il y a), Portuguese "faz", "tem" before a duration, English "back" after one.
    assert window(query).label == label


@pytest.mark.parametrize(
    "query",
    [
        "ya deux semaines de vacances, on révise quoi ?",
        "faz duas semanas que estudo isso, me ajuda?",
        "can we go back to fractions?",
        # A unit without a number before "back" is the return, not a count.
        "what did we do on the first day back after the holidays?",
        "what did we cover in our first week back?",
    ],
)
def test_spoken_words_for_ago_count_nothing_back_in_the_present(query: str) -> None:
    assert parse_time_window(query, NOW, ROME) is None


@pytest.mark.parametrize(
    ("query", "start"),
    [
        ("cosa abbiamo ripassato nelle ultime settimane?", "2026-11-04"),
        ("¿qué repasamos en las últimas semanas?", "2026-11-04"),
        ("qu'est-ce qu'on a révisé ces dernières semaines ?", "2026-11-04"),
        ("o que a gente revisou nas últimas semanas?", "2026-11-04"),
        ("negli ultimi giorni cosa ho sbagliato?", "2026-11-22"),
        ("¿qué fallé en los últimos días?", "2026-11-22"),
        ("j'ai raté quoi ces derniers jours ?", "2026-11-22"),
        ("was habe ich in den letzten Tagen falsch gemacht?", "2026-11-22"),
        ("o que eu errei nos últimos dias?", "2026-11-22"),
        # Where "last" has no plural, the unit's plural says it.
        ("what did we go over these past weeks?", "2026-11-04"),
        ("what did I get wrong the last days?", "2026-11-22"),
        ("was haben wir die letzten Wochen wiederholt?", "2026-11-04"),
        ("was haben wir in den vergangenen Wochen gemacht?", "2026-11-04"),
        ("ماذا راجعنا في الأسابيع الماضية؟", "2026-11-04"),
    ],
)
def test_the_last_days_or_weeks_in_the_plural_are_the_last_few_not_the_last_one(
    query: str, start: str
) -> None:
    # The date library reads the plural unit as its singular ("last week", "last day": yesterday);
    # the plural form of "last" tells them apart. NOW is Wednesday 25 November.
    found = window(query)
    assert (found.start_us, found.end_us) == (us(f"{start}T00:00"), NOW + 1)


@pytest.mark.parametrize(
    "query",
    [
        "what did we study over the past months?",
        "what did we study over the past few months?",
        "was haben wir in den letzten Monaten gelernt?",
        "ماذا درسنا في الأشهر الماضية؟",
    ],
)
def test_the_last_months_in_the_plural_are_as_many_as_the_last_few_months(query: str) -> None:
    found, expected = window(query), window("what did we study in the last 3 months?")
    assert (found.start_us, found.end_us) == (expected.start_us, expected.end_us)


@pytest.mark.parametrize(
    ("query", "singular"),
    [
        ("what did we do the past week?", "what did we do last week?"),
        ("was haben wir in der letzten Woche gemacht?", "what did we do last week?"),
        ("was haben wir den letzten Monat gemacht?", "what did we do last month?"),
    ],
)
def test_the_last_week_or_month_in_the_singular_stays_the_last_one(
    query: str, singular: str
) -> None:
    found, expected = window(query), window(singular)
    assert (found.start_us, found.end_us, found.label) == (
        expected.start_us,
        expected.end_us,
        expected.label,
    )


@pytest.mark.parametrize(
    "query",
    [
        "what did we do the weekend before last?",
        "what did we do two weekends ago?",
        "was haben wir vorletztes Wochenende gemacht?",
        "cosa abbiamo fatto il weekend prima di quello scorso?",
    ],
)
def test_the_weekend_before_last_is_a_week_before_the_last_weekend(query: str) -> None:
    found = window(query)
    assert (found.start_us, found.end_us) == (us("2026-11-14T00:00"), us("2026-11-16T00:00"))


@pytest.mark.parametrize(
    "query",
    [
        "what did we do between monday and tuesday?",
        "what did we go over from monday to tuesday?",
        "cosa abbiamo fatto da lunedì a martedì?",
        "¿qué hicimos del lunes al martes?",
        "qu'est-ce qu'on a fait entre lundi et mardi ?",
        "was haben wir von Montag bis Dienstag gemacht?",
        "o que a gente fez de segunda a terça?",  # "a" links them: no article of an ordinal
        "¿qué hicimos de lunes a martes?",  # the library reads this "a" as "año"
        "what did we do last monday and tuesday?",
    ],
)
def test_a_range_of_weekdays_is_the_most_recent_such_span(query: str) -> None:
    # NOW is Wednesday 25 November: Monday 23 to Tuesday 24.
    found = window(query)
    assert (found.start_us, found.end_us) == (us("2026-11-23T00:00"), us("2026-11-25T00:00"))


def test_a_range_of_weekdays_wrapping_a_weekend_starts_in_the_week_before() -> None:
    found = window("what did we do from friday to monday?")
    assert (found.start_us, found.end_us) == (us("2026-11-20T00:00"), us("2026-11-24T00:00"))


def test_a_range_of_weekdays_still_to_come_names_no_period() -> None:
    query = "I have exams from monday to tuesday, can you help?"
    assert parse_time_window(query, NOW, ROME) is None


def test_weekends_further_back_are_labelled_by_their_count() -> None:
    found = window("what did we do three weekends ago?")
    assert (found.start_us, found.end_us) == (us("2026-11-07T00:00"), us("2026-11-09T00:00"))
    assert found.label.startswith("3 weekends ago")
