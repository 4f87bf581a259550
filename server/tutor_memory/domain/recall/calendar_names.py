"""The periods a student names by the school year's calendar rather than by dates: the seasons and
the feasts whose holidays interrupt school ("before Christmas", "over the summer", "since Easter",
"during Ramadan"; SPEC R2.5).

Each language file glosses its names for them (`time_glosses`: "natale", "vacances de Noël",
"Osterferien", "رمضان") to one reading word of `NAMED` (`tutor_memory.domain.recall.timewords`);
this module gives each one its days. Dates come from libraries made for them: Easter (and the
feasts counted from it, Orthodox Easter's among them) from `dateutil.easter`, Ramadan, the two Eids
and the Mawlid from the Umm al-Qura calendar (`hijridate`), the hemisphere of the student's time
zone from the time zone database's own coordinates (`tzdata`'s zone1970.tab).

What each name spans. A school's holidays differ by country, region and year, so each span is one
that holds every common one, as the current school term is read (`timewindow.TERM_MONTHS`): time is
a filter, and a window narrower than the student's would hide what they asked about.

- Seasons: the meteorological ones, three whole months (spring from March, summer from June,
  autumn from September, winter from December to February), six months later south of the
  equator. "The summer holidays" are the summer.
- Christmas: 24 December to 6 January (the Christmas holidays); New Year: 31 December and 1
  January; Easter: the 14 days before and after Easter Sunday (Holy Week and the Easter holidays,
  which some schools take before it and some after); carnival: from the Thursday before Ash
  Wednesday to Ash Wednesday; Pentecost: the week before Whit Sunday to the week after; All Saints:
  17 October to 4 November (the autumn holidays around 1 November); Thanksgiving: the Wednesday to
  the Sunday around the fourth Thursday of November; Epiphany: 6 January; England's half terms:
  a band around each (7 to 22 February, 23 May to 7 June, 17 October to 2 November), counted from
  as a day is (below), since a school's own week lies anywhere inside it; Sham el-Nessim: the
  Monday after Orthodox Easter, with its Sunday.
- Ramadan: the month, as the Umm al-Qura calendar counts it; Eid al-Fitr: the first week of
  Shawwal; Eid al-Adha: 10 to 16 Dhu al-Hijja; "Eid" alone: whichever of the two is meant by the
  rule below for the most recent one; the Mawlid: 12 Rabi al-Awwal and three days either side.

Which year's. Alone ("over the summer", "at Christmas"), the most recent one that has begun by
today; "last" names the most recent one whose day has passed (a feast) or that has ended (a season,
Ramadan): "last summer", asked in July, is the year before; "this" names the one under way, or
else this calendar year's if it has begun (the period reading takes the last one instead when
neither has and the question speaks of the past); with a year, that year's (a season from
December: the one whose January is in it; Ramadan and the Eids: the one that begins in it). One
still to come names no period of the record.

Counted from a feast, its day counts rather than its span: "before Easter" reaches Easter Sunday,
"after Christmas" starts on Christmas Day, so that a lesson just before or after the feast is
inside either way; from a half term, its whole band is inside either way. From a season or
Ramadan, its edge: "before the summer" ends on 31 May, "after the summer" starts on 1 September.
"Since" counts from the start of the span: "since Easter" from 14 days before Easter Sunday.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from importlib import resources

from dateutil.easter import EASTER_ORTHODOX, easter
from hijridate import Gregorian, Hijri

# The reading word of each name is this and the name ("calendarchristmas"): not an English word
# (as `timewords.BEFORE` is not), so that no untranslated word of a message passes for one.
NAMED_PREFIX = "calendar"
# How many years back (and one ahead) the occurrences of a name are looked for; the reading keeps
# only those inside the record's horizon (`timewindow.RECORD_HORIZON_YEARS`).
YEARS_SEARCHED = 12
# Months of the meteorological seasons (the first month of each) north of the equator; south of
# it each starts six months later.
_SEASON_START_MONTH = {"spring": 3, "summer": 6, "autumn": 9, "winter": 12}
_SEASON_MONTHS = 3
_HEMISPHERE_SHIFT_MONTHS = 6
# The Umm al-Qura months of Ramadan, Shawwal and Dhu al-Hijja, and how long an Eid's holidays are
# taken to last (its first day included).
_RAMADAN, _SHAWWAL, _DHU_AL_HIJJA = 9, 10, 12
_EID_AL_ADHA_DAY = 10
_EID_DAYS = 7
# Around Easter Sunday: Holy Week and the holidays some schools take after it.
_EASTER_DAYS_AROUND = 14
# Ash Wednesday is 46 days before Easter; carnival runs from the Thursday six days before it.
_ASH_WEDNESDAY_BEFORE_EASTER = 46
_CARNIVAL_DAYS_BEFORE_ASH_WEDNESDAY = 6
_PENTECOST_AFTER_EASTER = 49
_PENTECOST_DAYS_AROUND = 7
_THURSDAY = 3
_FOURTH = 4
# The Prophet's birthday (12 Rabi al-Awwal) and the days of its festivities either side.
_RABI_AL_AWWAL, _MAWLID_DAY, _MAWLID_DAYS_AROUND = 3, 12, 3
# England's half terms, (first day, day after) as (month, day): a band that holds every local
# authority's week, whose dates differ by a week or two.
_HALF_TERM_BANDS = (
    ("February", (2, 7), (2, 23)),
    ("May", (5, 23), (6, 8)),
    ("October", (10, 17), (11, 3)),
)


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One year's occurrence of a name: the year a student names it by ("Christmas 2025", "winter
    2026" of the north from December 2025), its days [first, after), the day a count from it
    starts or ends at (a feast's own day; None for a season or Ramadan, counted from its span),
    its label, and whether a count from it takes its span in (`inclusive`)."""

    year: int
    first: date
    after: date
    day: date | None
    label: str
    # The span is a band that holds the holidays of every school rather than the holidays
    # themselves (half term): counted from, it is inside either way, as a feast's day is.
    inclusive: bool = False

    @property
    def passed_by(self) -> date:
        """The date from which "last" names this one: after its day, or its end."""
        return self.day + timedelta(days=1) if self.day is not None else self.after


def _season(name: str, south: bool) -> Callable[[int], Occurrence]:
    def of(year: int) -> Occurrence:
        shift = _HEMISPHERE_SHIFT_MONTHS if south else 0
        month = (_SEASON_START_MONTH[name] + shift - 1) % 12 + 1
        # A season from December is its January's: "winter 2026" (north) began in December 2025.
        first = date(year - (month == 12), month, 1)
        index = first.year * 12 + first.month - 1 + _SEASON_MONTHS
        after = date(index // 12, index % 12 + 1, 1)
        # Labelled by its years when it spans New Year ("Winter 2025-26").
        years = f"{year - 1}-{year % 100:02d}" if first.year < year else str(year)
        return Occurrence(year, first, after, None, f"{name.capitalize()} {years}")

    return of


def _christmas(year: int) -> Occurrence:
    return Occurrence(year, date(year, 12, 24), date(year + 1, 1, 7), date(year, 12, 25),
                      f"Christmas {year}")  # fmt: skip


def _new_year(year: int) -> Occurrence:
    return Occurrence(year, date(year - 1, 12, 31), date(year, 1, 2), date(year, 1, 1),
                      f"New Year {year}")  # fmt: skip


def _around_easter(name: str, offset: int, before: int, after: int) -> Callable[[int], Occurrence]:
    """A feast `offset` days from Easter Sunday, spanning `before` days before it and `after`
    after it."""

    def of(year: int) -> Occurrence:
        day = easter(year) + timedelta(days=offset)
        first, last = day - timedelta(days=before), day + timedelta(days=after)
        return Occurrence(year, first, last + timedelta(days=1), day, f"{name} {year}")

    return of


def _all_saints(year: int) -> Occurrence:
    return Occurrence(year, date(year, 10, 17), date(year, 11, 5), date(year, 11, 1),
                      f"All Saints {year}")  # fmt: skip


def _thanksgiving(year: int) -> Occurrence:
    first_of_november = date(year, 11, 1)
    thursday = first_of_november + timedelta(days=(_THURSDAY - first_of_november.weekday()) % 7)
    day = thursday + timedelta(weeks=_FOURTH - 1)
    return Occurrence(year, day - timedelta(days=1), day + timedelta(days=4), day,
                      f"Thanksgiving {year}")  # fmt: skip


def _epiphany(year: int) -> Occurrence:
    day = date(year, 1, 6)
    return Occurrence(year, day, day + timedelta(days=1), day, f"Epiphany {year}")


def _half_terms(year: int) -> tuple[Occurrence, ...]:
    """England's three half-term holidays of `year`, each as the band of dates that holds every
    local authority's week (mid-February, late May, late October)."""
    return tuple(
        Occurrence(
            year,
            date(year, *first),
            date(year, *after),
            None,
            f"{season} half term {year}",
            inclusive=True,
        )
        for season, first, after in _HALF_TERM_BANDS
    )


def _sham_el_nessim(year: int) -> Occurrence:
    """The Monday after Orthodox Easter, with the Easter Sunday before it."""
    day = easter(year, EASTER_ORTHODOX) + timedelta(days=1)
    return Occurrence(year, day - timedelta(days=1), day + timedelta(days=1), day,
                      f"Sham el-Nessim {year}")  # fmt: skip


def _hijri_date(year: int, month: int, day: int) -> date:
    g = Hijri(year, month, day).to_gregorian()
    return date(g.year, g.month, g.day)


def _ramadan(hijri_year: int) -> Occurrence:
    first = _hijri_date(hijri_year, _RAMADAN, 1)
    after = first + timedelta(days=Hijri(hijri_year, _RAMADAN, 1).month_length())
    return Occurrence(first.year, first, after, None, f"Ramadan {first.year} ({hijri_year} AH)")


def _eid(name: str, month: int, day: int) -> Callable[[int], Occurrence]:
    def of(hijri_year: int) -> Occurrence:
        first = _hijri_date(hijri_year, month, day)
        after = first + timedelta(days=_EID_DAYS)
        return Occurrence(first.year, first, after, first, f"{name} {first.year}")

    return of


def _mawlid(hijri_year: int) -> Occurrence:
    day = _hijri_date(hijri_year, _RABI_AL_AWWAL, _MAWLID_DAY)
    around = timedelta(days=_MAWLID_DAYS_AROUND)
    return Occurrence(day.year, day - around, day + around + timedelta(days=1), day,
                      f"Mawlid {day.year}")  # fmt: skip


_EASTER_FEASTS = {
    "easter": _around_easter("Easter", 0, _EASTER_DAYS_AROUND, _EASTER_DAYS_AROUND),
    "carnival": _around_easter(
        "Carnival", -_ASH_WEDNESDAY_BEFORE_EASTER - 1, _CARNIVAL_DAYS_BEFORE_ASH_WEDNESDAY - 1, 1
    ),
    "pentecost": _around_easter(
        "Pentecost", _PENTECOST_AFTER_EASTER, _PENTECOST_DAYS_AROUND, _PENTECOST_DAYS_AROUND
    ),
}
_GREGORIAN_FEASTS: dict[str, Callable[[int], Occurrence]] = {
    "christmas": _christmas,
    "newyear": _new_year,
    "epiphany": _epiphany,
    "allsaints": _all_saints,
    "thanksgiving": _thanksgiving,
    "shamennessim": _sham_el_nessim,
    **_EASTER_FEASTS,
}
# Names with several occurrences a year.
_GREGORIAN_SEVERAL: dict[str, Callable[[int], tuple[Occurrence, ...]]] = {
    "halfterm": _half_terms,
}
_HIJRI_FEASTS: dict[str, tuple[Callable[[int], Occurrence], ...]] = {
    "mawlid": (_mawlid,),
    "ramadan": (_ramadan,),
    "eidalfitr": (_eid("Eid al-Fitr", _SHAWWAL, 1),),
    "eidaladha": (_eid("Eid al-Adha", _DHU_AL_HIJJA, _EID_AL_ADHA_DAY),),
}
_HIJRI_FEASTS["eid"] = _HIJRI_FEASTS["eidalfitr"] + _HIJRI_FEASTS["eidaladha"]

# Every reading word, without its prefix.
NAMES = (
    frozenset(_SEASON_START_MONTH)
    | frozenset(_GREGORIAN_FEASTS)
    | frozenset(_GREGORIAN_SEVERAL)
    | frozenset(_HIJRI_FEASTS)
)
# The reading words themselves ("calendarchristmas").
NAMED = frozenset(NAMED_PREFIX + n for n in NAMES)


def _occurrences(name: str, today: date, south: bool) -> Iterator[Occurrence]:
    """The occurrences of `name` from YEARS_SEARCHED years back to one year ahead of `today`."""
    years = range(today.year - YEARS_SEARCHED, today.year + 2)
    if name in _SEASON_START_MONTH:
        of = _season(name, south)
        yield from (of(y) for y in years)
    elif name in _GREGORIAN_FEASTS:
        yield from (_GREGORIAN_FEASTS[name](y) for y in years)
    elif name in _GREGORIAN_SEVERAL:
        for y in years:
            yield from _GREGORIAN_SEVERAL[name](y)
    else:
        now = Gregorian(today.year, today.month, today.day).to_hijri().year
        # About 33 Hijri years pass in 32 Gregorian ones.
        for hijri_year in range(now - YEARS_SEARCHED - 1, now + 2):
            for of in _HIJRI_FEASTS[name]:
                try:
                    yield of(hijri_year)
                except (OverflowError, ValueError):  # outside the calendar's table
                    continue


def occurrence(
    word: str, today: date, *, south: bool, which: str | None = None, year: int | None = None
) -> Occurrence | None:
    """The occurrence of the named period `word` (one of NAMED) a student means on `today`:
    alone, "last" or "this" (`which`), or of `year` (see the module docstring). None when that
    one is still to come or `word` is no name."""
    if word not in NAMED:
        return None
    name = word.removeprefix(NAMED_PREFIX)
    try:
        found = list(_occurrences(name, today, south))
    except (OverflowError, ValueError):  # a year at the calendar's edge
        return None
    if year is not None:
        chosen = [o for o in found if o.year == year]
    elif which == "last":
        chosen = [o for o in found if o.passed_by <= today]
    elif which == "this":
        chosen = [o for o in found if o.first <= today < o.after]
        chosen = chosen or [o for o in found if o.year == today.year and o.first <= today]
    else:
        chosen = [o for o in found if o.first <= today]
    chosen = [o for o in chosen if o.first <= today]
    return max(chosen, key=lambda o: o.first) if chosen else None


@functools.cache
def southern(zone_key: str) -> bool:
    """Whether the time zone's reference city lies south of the equator (zone1970.tab of the time
    zone database, its links followed); a zone it does not place (UTC, Etc/GMT+3) is northern."""
    return _latitudes().get(_links().get(zone_key, zone_key), 0.0) < 0


@functools.cache
def _latitudes() -> dict[str, float]:
    """Each canonical zone's latitude in degrees, from ISO 6709 coordinates (+DDMM or +DDMMSS)."""
    table = resources.files("tzdata").joinpath("zoneinfo", "zone1970.tab").read_text("utf-8")
    found: dict[str, float] = {}
    for line in table.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        fields = line.split("\t")
        coordinates, zone = fields[1], fields[2]
        digits = next(i for i in range(1, len(coordinates)) if coordinates[i] in "+-")
        latitude = coordinates[:digits]
        degrees = int(latitude[1:3]) + int(latitude[3:5]) / 60
        found[zone] = -degrees if latitude[0] == "-" else degrees
    return found


@functools.cache
def _links() -> dict[str, str]:
    """Each zone alias to the zone it names ("America/Buenos_Aires" to
    "America/Argentina/Buenos_Aires"), from the database's link lines."""
    text = resources.files("tzdata").joinpath("zoneinfo", "tzdata.zi").read_text("utf-8")
    found: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("L "):
            _, target, alias = line.split()
            found[alias] = target
    return found
