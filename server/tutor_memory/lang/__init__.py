"""Word lists of the languages students write in (SPEC R2.5, R2.6, R6.3): one JSON file each.

Code never holds a word of any language; it reads these files. Each `<code>.json` holds one object:

- `code`, `name`: the ISO 639-1 code (equal to the file name) and the English name of the language.
- `months`: 12 lists, January first; each lists the month's names: the full name first (the English
  file's full names also label time windows), then unambiguous abbreviations and spelling variants.
  Arabic lists both the Levantine/Iraqi names (كانون الثاني … كانون الأول) and the Egyptian/Gulf
  ones (يناير … ديسمبر), plus Maghrebi forms. Variants that differ only in what normalisation folds
  (accents, hamza on alef, teh marbuta) are listed once.
- `ambiguous_months`: names from `months` that are also ordinary words ("may" the verb, "march",
  French "mars" the planet, Spanish "julio" the first name). They count as a month only right after
  a month preposition of the same language or right before a year, and never with a glued clitic.
  (Recall also treats as ambiguous any month name that is a stop word of *any* language: French and
  German "mai" is Italian "never".)
- `month_prepositions`: phrases that introduce a month ("in", "during", "month of"; "a", "di",
  "nel mese di"; "في", "في شهر").
- `year_links`: phrases allowed between a month and its year ("July *of* 2025", "julio *de* 2025").
- `year_suffixes`: letters glued after a year's digits (Arabic "2025م").
- `attached_prepositions`, `attached_conjunctions`: clitics glued to the next word (Arabic ب "in",
  و "and"). A month with an attached preposition counts as introduced by one; a conjunction doesn't.
- `relative`: for each key of `RELATIVE_KEYS`, the phrases naming that period ("last week").
- `record_triggers`: phrases by which a student asks about their own record ("what did I get
  wrong").
- `trigger_vetoes`: single words that, right before a trigger, make it a different question
  (Spanish "por" in "¿por qué estudiamos…?", "why do we study…").
- `narration_markers`: first-person-plural recap verbs a tutor uses to narrate past sessions
  ("we covered", "abbiamo visto", "درسنا").
- `marker_vetoes`: single words that, right before a marker, make it something else (Arabic في in
  "في درسنا", "in our lesson").
- `time_false_friends`: phrases in which a time word means something else ("hoy en día",
  "nowadays"; "Julio César"; Arabic "في اليوم", "per day"); a time expression overlapping one is
  ignored.
- `stop_words`: 100-250 of the language's most common function words and question words, already
  normalised (as `tutor_memory.recall.text.normalise` leaves them).

Phrases are written in the syntax documented in `tutor_memory.recall.text` (words, with `*` / `**`
wildcards for the words a recap or question may put in between); `month_prepositions`, `year_links`
and month names are plain words, without wildcards.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

LANGUAGES = ("en", "it", "es", "fr", "de", "pt", "ar")

# The relative periods every language file names, in the order documented for `relative`.
RELATIVE_KEYS = (
    "yesterday",
    "today",
    "last_week",
    "this_week",
    "last_month",
    "this_month",
    "last_year",
    "this_year",
)

MONTHS_PER_YEAR = 12

_STRING_LIST_FIELDS = (
    "ambiguous_months",
    "month_prepositions",
    "year_links",
    "year_suffixes",
    "attached_prepositions",
    "attached_conjunctions",
    "record_triggers",
    "trigger_vetoes",
    "narration_markers",
    "marker_vetoes",
    "time_false_friends",
    "stop_words",
)


@dataclass(frozen=True, slots=True)
class LanguageData:
    """One language file, as written (see the module docstring for what each field means)."""

    code: str
    name: str
    months: tuple[tuple[str, ...], ...]
    ambiguous_months: tuple[str, ...]
    month_prepositions: tuple[str, ...]
    year_links: tuple[str, ...]
    year_suffixes: tuple[str, ...]
    attached_prepositions: tuple[str, ...]
    attached_conjunctions: tuple[str, ...]
    relative: Mapping[str, tuple[str, ...]]
    record_triggers: tuple[str, ...]
    trigger_vetoes: tuple[str, ...]
    narration_markers: tuple[str, ...]
    marker_vetoes: tuple[str, ...]
    time_false_friends: tuple[str, ...]
    stop_words: tuple[str, ...]


def _strings(where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{where} must be a list of non-empty strings")
    return tuple(value)


def _parse(code: str, raw: Any) -> LanguageData:
    where = f"language file {code}.json"
    if not isinstance(raw, dict):
        raise ValueError(f"{where} must hold a JSON object")
    if raw.get("code") != code or not isinstance(raw.get("name"), str):
        raise ValueError(f"{where}: 'code' must be {code!r} and 'name' a string")
    months = raw.get("months")
    if not isinstance(months, list) or len(months) != MONTHS_PER_YEAR:
        raise ValueError(f"{where}: 'months' must list {MONTHS_PER_YEAR} months")
    relative = raw.get("relative")
    if not isinstance(relative, dict) or set(relative) != set(RELATIVE_KEYS):
        raise ValueError(f"{where}: 'relative' must have exactly the keys {RELATIVE_KEYS}")
    lists = {f: _strings(f"{where}: '{f}'", raw.get(f)) for f in _STRING_LIST_FIELDS}
    return LanguageData(
        code=code,
        name=raw["name"],
        months=tuple(_strings(f"{where}: month {i + 1}", m) for i, m in enumerate(months)),
        relative=MappingProxyType(
            {k: _strings(f"{where}: relative '{k}'", relative[k]) for k in RELATIVE_KEYS}
        ),
        **lists,
    )


@functools.cache
def load(code: str) -> LanguageData:
    """The data of one language (`code` from `LANGUAGES`); read once, then cached."""
    if code not in LANGUAGES:
        raise ValueError(f"unknown language {code!r}; known: {', '.join(LANGUAGES)}")
    text = resources.files(__name__).joinpath(f"{code}.json").read_text(encoding="utf-8")
    return _parse(code, json.loads(text))


def all_languages() -> tuple[LanguageData, ...]:
    """Every supported language, in `LANGUAGES` order."""
    return tuple(load(code) for code in LANGUAGES)
