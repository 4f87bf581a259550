"""Seasons and feasts as periods of the student's calendar (R2.5): which days each names, which
year's, in which hemisphere, and how a count from one ("before Christmas", "since Easter") reads
them (`tutor_memory.domain.recall.calendar_names`)."""

from __future__ import annotations

from datetime import date

import pytest

from tutor_memory.domain.recall.calendar_names import NAMED, NAMED_PREFIX, occurrence, southern

TODAY = date(2026, 3, 18)


def _named(name: str) -> str:
    return NAMED_PREFIX + name


def test_every_name_has_a_reading_word_no_text_word_can_be() -> None:
    assert all(w.startswith(NAMED_PREFIX) and w.isalpha() for w in NAMED)
    assert occurrence("christmas", TODAY, south=False) is None


@pytest.mark.parametrize(
    ("name", "first", "after", "day"),
    [
        ("christmas", date(2025, 12, 24), date(2026, 1, 7), date(2025, 12, 25)),
        ("newyear", date(2025, 12, 31), date(2026, 1, 2), date(2026, 1, 1)),
        ("epiphany", date(2026, 1, 6), date(2026, 1, 7), date(2026, 1, 6)),
        # Easter Sunday 2025 was 20 April (2026's, 5 April, is still to come on TODAY).
        ("easter", date(2025, 4, 6), date(2025, 5, 5), date(2025, 4, 20)),
        # Ash Wednesday 2026 was 18 February; Shrove Tuesday the 17th.
        ("carnival", date(2026, 2, 12), date(2026, 2, 19), date(2026, 2, 17)),
        ("pentecost", date(2025, 6, 1), date(2025, 6, 16), date(2025, 6, 8)),
        ("allsaints", date(2025, 10, 17), date(2025, 11, 5), date(2025, 11, 1)),
        ("thanksgiving", date(2025, 11, 26), date(2025, 12, 1), date(2025, 11, 27)),
        # Orthodox Easter 2025 was 20 April too: Sham el-Nessim the Monday after.
        ("shamennessim", date(2025, 4, 20), date(2025, 4, 22), date(2025, 4, 21)),
        # Umm al-Qura: 1 Ramadan 1447 = 18 February 2026, 30 days; TODAY is inside it.
        ("ramadan", date(2026, 2, 18), date(2026, 3, 20), None),
        # 1 Shawwal 1446 = 30 March 2025; 10 Dhu al-Hijja 1446 = 6 June 2025.
        ("eidalfitr", date(2025, 3, 30), date(2025, 4, 6), date(2025, 3, 30)),
        ("eidaladha", date(2025, 6, 6), date(2025, 6, 13), date(2025, 6, 6)),
        ("eid", date(2025, 6, 6), date(2025, 6, 13), date(2025, 6, 6)),
        ("summer", date(2025, 6, 1), date(2025, 9, 1), None),
        ("autumn", date(2025, 9, 1), date(2025, 12, 1), None),
        ("winter", date(2025, 12, 1), date(2026, 3, 1), None),
        ("spring", date(2026, 3, 1), date(2026, 6, 1), None),
        # The February band of England's half terms.
        ("halfterm", date(2026, 2, 7), date(2026, 2, 23), None),
    ],
)
def test_alone_a_name_is_its_most_recent_occurrence_begun_by_today(
    name: str, first: date, after: date, day: date | None
) -> None:
    found = occurrence(_named(name), TODAY, south=False)
    assert found is not None
    assert (found.first, found.after, found.day) == (first, after, day)


def test_last_is_the_most_recent_one_whose_day_has_passed_or_that_has_ended() -> None:
    in_july = date(2026, 7, 10)
    assert occurrence(_named("summer"), in_july, south=False).first == date(2026, 6, 1)  # type: ignore[union-attr]
    last = occurrence(_named("summer"), in_july, south=False, which="last")
    assert last is not None
    assert last.first == date(2025, 6, 1)
    # During Ramadan, last Ramadan is the year before's; a week after Christmas, last Christmas is
    # the one a week ago (its day has passed).
    assert occurrence(_named("ramadan"), TODAY, south=False, which="last").first == date(  # type: ignore[union-attr]
        2025, 3, 1
    )
    after_christmas = occurrence(_named("christmas"), date(2026, 1, 3), south=False, which="last")
    assert after_christmas is not None
    assert after_christmas.year == 2025


def test_this_is_the_one_under_way_or_this_years_begun_and_none_still_to_come() -> None:
    assert occurrence(_named("spring"), TODAY, south=False, which="this").first == date(  # type: ignore[union-attr]
        2026, 3, 1
    )
    # The winter that ended on 28 February is this year's ("winter 2026").
    assert occurrence(_named("winter"), TODAY, south=False, which="this").year == 2026  # type: ignore[union-attr]
    assert occurrence(_named("summer"), TODAY, south=False, which="this") is None
    assert occurrence(_named("christmas"), TODAY, south=False, which="this") is None


def test_a_year_names_that_years_occurrence_and_a_winter_is_its_januarys() -> None:
    winter = occurrence(_named("winter"), TODAY, south=False, year=2025)
    assert winter is not None
    assert (winter.first, winter.after, winter.label) == (
        date(2024, 12, 1),
        date(2025, 3, 1),
        "Winter 2024-25",
    )
    christmas = occurrence(_named("christmas"), TODAY, south=False, year=2023)
    assert christmas is not None
    assert christmas.day == date(2023, 12, 25)
    assert occurrence(_named("easter"), TODAY, south=False, year=2026) is None  # still to come


def test_south_of_the_equator_the_seasons_are_six_months_apart() -> None:
    summer = occurrence(_named("summer"), TODAY, south=True)
    assert summer is not None
    assert (summer.first, summer.after, summer.label) == (
        date(2025, 12, 1),
        date(2026, 3, 1),
        "Summer 2025-26",
    )
    winter = occurrence(_named("winter"), TODAY, south=True)
    assert winter is not None
    assert (winter.first, winter.after) == (date(2025, 6, 1), date(2025, 9, 1))
    # Christmas does not move.
    assert occurrence(_named("christmas"), TODAY, south=True) == occurrence(
        _named("christmas"), TODAY, south=False
    )


@pytest.mark.parametrize(
    ("zone", "south"),
    [
        ("Europe/Rome", False),
        ("Africa/Cairo", False),
        ("America/New_York", False),
        ("America/Sao_Paulo", True),
        ("Australia/Sydney", True),
        ("Africa/Johannesburg", True),
        ("Pacific/Auckland", True),
        # A link of the time zone database, followed to its zone.
        ("America/Buenos_Aires", True),
        ("UTC", False),
        ("Etc/GMT+3", False),
    ],
)
def test_the_hemisphere_is_the_time_zone_databases_own(zone: str, south: bool) -> None:
    assert southern(zone) is south
