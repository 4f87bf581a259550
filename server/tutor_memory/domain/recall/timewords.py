"""The time words of a query, read in English by dateparser (SPEC R2.5).

Which library does what:

- `dateparser` (its per-language locale data) does the language work: it turns "la settimana
  scorsa", "vor drei Tagen", "il y a deux semaines", "قبل أسبوعين", weekday and month names, and
  the numerals it knows into one English vocabulary ("1 week ago", "3 day ago", "monday",
  "march"). Only its translation step is used: its date *search* answers instants ("last week" =
  now minus seven days), never periods, and reads "we" as Wednesday and "may" as May.
- Our language files add what the library lacks (`time_glosses`: "since", "between", "last" after
  a weekday, numerals such as Italian "tre", "the week before last" words; the names of seasons
  and feasts, "vacanze di Natale", "Osterferien", "رمضان", written as their reading before the
  library translates a word of them, `calendar_names`; month names such as the Levantine Arabic
  ones; `ago_prepositions`: spoken Arabic "من يومين", two days ago, read so only
  in a text that speaks of the past; `ago_postpositions`: "two weeks back") and what it gets wrong
  (`ambiguous_months`, `time_false_friends`: "may I ask", "Julio César", "hoy en día").
- `tutor_memory.domain.recall.timewindow` turns the English reading into a calendar period.

Fast path: a query holding no word of any language's time vocabulary (month, weekday and unit
names, the library's relative phrases, our glosses) and no four-digit number or ordinal is not
translated at all; it costs one tokenisation and a set look-up per word.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dateparser.conf import Settings
from dateparser.languages.loader import default_loader

from tutor_memory.domain import lang
from tutor_memory.domain.recall.calendar_names import NAMED
from tutor_memory.domain.recall.tense import speaks_of_past
from tutor_memory.domain.text.phrases import PhraseIndex, compile_phrase
from tutor_memory.domain.text.words import clitics, stop_words, words

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
# The library's unit words that name calendar periods (hours and minutes are no record period).
UNITS = ("day", "week", "fortnight", "month", "year")
# The English reading's word after a number of units that counts them back from now.
AGO = "ago"
# The count "a few" units stands for: the language files gloss "few" and "several" as 3, and the
# plural "last" of the Romance languages before a unit as the last 3 ("le ultime settimane").
A_FEW = "3"
# The English reading's word for "the start of" a period (see `timewindow`).
START = "start"
# Stop words a query must hold before its language is taken as known (see `_guess`).
GUESS_MIN_STOP_WORDS = 2
# What a masked word becomes before translation: a word the library leaves alone.
MASK = "_"
# The English reading's word between the two ends of a range of dates ("3 to 10 may").
RANGE_WORD = "to"
# The English reading's words for a language's `before_words` and `after_words` before a date
# ("the week before 3 May" reads "week beforedate 3 may"). Not English words: the library reads
# "before" as "ago" and "after" as "in" (or drops it), which would count from now instead.
BEFORE = "beforedate"
AFTER = "afterdate"
# And for its `until_words` ("until March" reads "untildate march").
UNTIL = "untildate"
# The English reading's words for a language's words for a school term (semester, "quadrimestre",
# "Halbjahr", الترم) and for the school year ("année scolaire", "Schuljahr"): glossed to these in
# the language files, not to English "term", which is as often a word of the subject ("what does
# this term mean?"); English "term" itself is read only after "the start of".
SCHOOL_TERM = "schoolterm"
SCHOOL_YEAR = "schoolyear"
# Words a query may hold that the library translates to a month or a weekday but that are mostly
# something else are masked unless a month preposition, a day number or a year stands next to them.
_YEAR = re.compile(r"\d{4}")
_DAY_NUMBER = re.compile(r"\d{1,2}")
_ORDINAL = re.compile(r"\d{1,2}(st|nd|rd|th|er|o|a|e)")
_TOKEN = re.compile(r"[^\W_]+")
# What may stand between two words of one phrase: spaces, apostrophes, hyphens ("d'Ottobre").
_WORD_JOINERS = " \t'-"
# Words inside its sentences from which a message mostly capitalised is read as written in title
# case or in capitals, whose capitals mark no name.
_TITLE_CASE_MIN_WORDS = 3
_ENGLISH_ORDINAL = re.compile(r"\d{1,2}(st|nd|rd|th)")
_APOSTROPHES = str.maketrans(dict.fromkeys("\u2019\u2018\u02bc\u0060\u00b4", "'"))


@dataclass(frozen=True, slots=True)
class _Language:
    code: str
    locale: Any  # dateparser's Locale (untyped library)
    # Normalised words the library reads as a month or a weekday but that are not full names in
    # our language files (abbreviations such as "we", "sun", "ago", "set").
    abbreviations: frozenset[str]
    # The library's weekday abbreviations, which are mostly other words ("we", "sun", "mar"):
    # always masked; a weekday counts when written in full.
    weekday_abbreviations: frozenset[str]
    glosses: PhraseIndex[tuple[str, ...]]
    # The glosses that name a season or a feast (`calendar_names`), read before the library
    # translates the text (see `_masked`), with their reading as written.
    named: PhraseIndex[str]
    # Phrases after which a season or a feast is the message's subject (`about_prepositions`),
    # as tuples of normalised words.
    about: frozenset[tuple[str, ...]]
    glued: tuple[str, ...]
    # Words that count a number of units back from now when they come before it
    # (`ago_prepositions`), and after it (`ago_postpositions`).
    ago_prepositions: frozenset[str]
    ago_postpositions: frozenset[str]
    # "last" and a plural unit without a count ("past weeks"), as pairs of normalised words:
    # the unit is read with `A_FEW` before it (`plural_spans`).
    plural_spans: frozenset[tuple[str, ...]]
    # What capitals say of a month or weekday name beside them (`name_capitals`).
    name_capitals: str


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    languages: tuple[_Language, ...]
    # word -> indexes into `languages` of the languages whose time vocabulary holds it
    trigger: dict[str, frozenset[int]]
    ambiguous: frozenset[str]  # month names that are also ordinary words
    # What makes an ambiguous month a month: a month preposition before it, a year after it
    # (perhaps behind a year link, "julio de 2025").
    context: frozenset[tuple[str, ...]]
    links: frozenset[tuple[str, ...]]
    # Or a range link to another month or a day beside it: "between March and May".
    range_links: frozenset[tuple[str, ...]]
    # Every language's before, after and until words, each with its reading (BEFORE, AFTER or
    # UNTIL), by their first word, longest first.
    anchors: dict[str, tuple[tuple[tuple[str, ...], str], ...]]
    glued: tuple[str, ...]  # every language's glued clitics, longest first
    year_words: frozenset[str]  # every language's words for "year"
    month_names: frozenset[str]  # every language's month names (single words)
    false_friends: PhraseIndex[None]
    # Weekday names that are also ordinals (Portuguese "segunda", "quinta"), the words that may
    # follow one that is a day ("feira"), and every language's articles, before which it is the
    # ordinal.
    ordinal_weekdays: frozenset[str]
    weekday_suffixes: frozenset[str]
    articles: frozenset[str]
    # Every language's weekday names written in full (single words).
    weekday_names: frozenset[str]


_SETTINGS = Settings()


def _names(info: dict[str, Any], keys: Sequence[str]) -> set[str]:
    return {w for k in keys for name in info.get(k, ()) for w in words(str(name))}


@functools.cache
def _vocabulary() -> _Vocabulary:
    trigger: dict[str, set[int]] = {}
    year_words: set[str] = set()
    weekday_names: set[str] = set()
    languages: list[_Language] = []
    common = stop_words()
    ambiguous = {" ".join(words(m)) for d in lang.all_languages() for m in d.ambiguous_months}
    full_months = {
        " ".join(words(n)) for d in lang.all_languages() for names in d.months for n in names
    }
    ambiguous |= full_months & common
    for index, data in enumerate(lang.all_languages()):
        locale = default_loader.get_locale(data.code)
        info = locale.info
        year_words |= _names(info, ("year",))
        dated = _names(info, MONTHS + WEEKDAYS)
        full = {w for k in WEEKDAYS for name in info.get(k, ()) for w in words(str(name))}
        full = {w for w in full if len(w) > 3}
        weekday_names |= full
        full |= full_months
        relative = {
            w
            for phrases in info.get("relative-type", {}).values()
            for p in phrases
            for w in words(p)
        }
        units = _names(info, UNITS) | _names(info, ("ago",))
        glosses: list[tuple[Any, tuple[str, ...], tuple[str, ...]]] = []
        glued = clitics(data, prepositions=True)
        for number, names in enumerate(data.months):
            # An ambiguous name glued to a clitic is another word (Arabic باب "door" is ب+آب).
            glosses += [
                (compile_phrase(n), (MONTHS[number],), () if " ".join(words(n)) in ambiguous
                 else glued)
                for n in names
            ]  # fmt: skip
        named: list[tuple[Any, str, tuple[str, ...]]] = []
        for source, english in data.time_glosses.items():
            glosses.append((compile_phrase(source), tuple(english.split()), glued))
            if NAMED.intersection(english.split()):
                named.append((compile_phrase(source), english, glued))
        # A word for "the start of" names no period without a unit, and a unit opens the slow
        # path by itself: alone, the word stays on the fast path ("how do I start this?"), also
        # where a longer gloss holds it ("start of term").
        starts = {
            w
            for p, english, _ in glosses
            if english == (START,)
            for w in p.items
            if isinstance(w, str)
        }
        # A function word inside a phrase ("todos *los* santos", "*les* fêtes") opens the slow
        # path only with the phrase's other words, which do so themselves.
        own = {
            w
            for p, english, _ in glosses
            if english != (START,)
            for w in p.items
            if isinstance(w, str) and w not in starts and (len(p.items) == 1 or w not in common)
        }
        # A month or weekday abbreviation that is a function word somewhere ("we", "mar") never
        # opens the slow path alone; unit and relative words do, even when they are ("hier" is
        # German "here", "mes" French "my"): the slow path then finds no period.
        for word in (dated - common) | relative | units | own:
            if len(word) > 2 or not word.isascii():
                trigger.setdefault(word, set()).add(index)
        for word in full_months & ({w for n in data.months for w in words(n[0])}):
            trigger.setdefault(word, set()).add(index)
        languages.append(
            _Language(
                data.code,
                locale,
                frozenset(dated - full),
                frozenset(_names(info, WEEKDAYS) - full - full_months),
                PhraseIndex(glosses),
                PhraseIndex(named),
                frozenset(tuple(words(p)) for p in data.about_prepositions),
                glued,
                frozenset(w for p in data.ago_prepositions for w in words(p)),
                frozenset(w for p in data.ago_postpositions for w in words(p)),
                frozenset(tuple(words(p)) for p in data.plural_spans),
                data.name_capitals,
            )
        )
    anchors = {
        (tuple(words(p)), reading)
        for d in lang.all_languages()
        for phrases, reading in (
            (d.before_words, BEFORE),
            (d.after_words, AFTER),
            (d.until_words, UNTIL),
        )
        for p in phrases
    }
    # "since", "between", "before", "after" and "until" introduce a month as a month preposition
    # does ("since March", "before March").
    context = (
        {tuple(words(p)) for d in lang.all_languages() for p in d.month_prepositions}
        | {
            tuple(words(k))
            for d in lang.all_languages()
            for k, v in d.time_glosses.items()
            if v in ("since", "between")
        }
        | {phrase for phrase, _ in anchors}
    )
    links = {tuple(words(p)) for d in lang.all_languages() for p in d.year_links}
    range_links = {tuple(words(p)) for d in lang.all_languages() for p in d.range_links}
    glued_any = tuple(
        sorted({c for d in lang.all_languages() for c in clitics(d, prepositions=True)}, key=len)
    )[::-1]
    false_friends = PhraseIndex(
        [
            (compile_phrase(p), None, clitics(d, prepositions=True))
            for d in lang.all_languages()
            for p in d.time_false_friends
        ]
    )
    return _Vocabulary(
        tuple(languages),
        {w: frozenset(s) for w, s in trigger.items()},
        frozenset(ambiguous),
        frozenset(context),
        frozenset(links),
        frozenset(range_links),
        {
            first: tuple(sorted((a for a in anchors if a[0][0] == first), key=lambda a: -len(a[0])))
            for first in {phrase[0] for phrase, _ in anchors}
        },
        glued_any,
        frozenset(year_words),
        frozenset(w for n in full_months for w in n.split()),
        false_friends,
        frozenset(w for d in lang.all_languages() for p in d.ordinal_weekdays for w in words(p)),
        frozenset(w for d in lang.all_languages() for p in d.weekday_suffixes for w in words(p)),
        frozenset(w for d in lang.all_languages() for p in d.articles for w in words(p)),
        frozenset(weekday_names),
    )


def warm_up() -> None:
    """Loads the library's locales and compiles their patterns (a first translation per
    language costs tens of milliseconds): call at start, off the read path."""
    vocab = _vocabulary()
    for language in vocab.languages:
        language.locale.translate("1", keep_formatting=False, settings=_SETTINGS)


def _languages_hit(tokens: Sequence[str]) -> list[int]:
    """Indexes of the languages whose time words the tokens hold, most hits first; every
    language when only a year or an ordinal hints at time; empty when nothing does."""
    trigger = _vocabulary().trigger
    hits: dict[int, int] = {}
    numeric = False
    vocab = _vocabulary()
    for token in tokens:
        found = trigger.get(token)
        if found is None and not token.isascii():
            # Arabic glues prepositions and conjunctions to the word: بالأمس, بيوليو.
            found = next(
                (trigger[token[len(c) :]] for c in vocab.glued
                 if token.startswith(c) and token[len(c) :] in trigger),
                None,
            )  # fmt: skip
        if found is not None:
            for index in found:
                hits[index] = hits.get(index, 0) + 1
        elif not numeric and token[:1].isdigit():
            numeric = bool(_YEAR.fullmatch(token) or _ORDINAL.fullmatch(token))
    if not hits:
        return list(range(len(vocab.languages))) if numeric else []
    guessed = _guess(tokens)
    if guessed is not None and guessed in hits:
        # The sentence's own language reads it.
        return [guessed]
    if guessed is not None:
        # Another language's time word that is a function word of the sentence's own language
        # is that function word: German "hier" is "here", not French "yesterday".
        own = _stop_sets()[guessed]
        hits = {i: n for i, n in hits.items() if any(
            t not in own and i in trigger.get(t, ()) for t in tokens
        )}  # fmt: skip
        if not hits:
            return []
    return sorted(hits, key=lambda i: (-hits[i], i))


@functools.cache
def _stop_sets() -> tuple[frozenset[str], ...]:
    return tuple(frozenset(w for s in d.stop_words for w in words(s)) for d in lang.all_languages())


def _guess(tokens: Sequence[str]) -> int | None:
    """The language with strictly the most stop words among `tokens`, if it has at least
    GUESS_MIN_STOP_WORDS of them (a lone "hier" is French or German)."""
    counts = sorted(((sum(t in s for t in tokens), i) for i, s in enumerate(_stop_sets())),
                    reverse=True)  # fmt: skip
    (best, index), (runner_up, _) = counts[0], counts[1]
    return index if best > runner_up and best >= GUESS_MIN_STOP_WORDS else None


def has_time_words(text: str) -> bool:
    """The fast path's test: whether `text` may name a period at all."""
    return bool(_languages_hit(words(text)))


def _masked(raw: str, language: _Language, cased: str | None = None) -> str:
    """`raw` (lower case) with the words that would mislead the library masked: false friends,
    ambiguous month names without a month preposition, day number or year beside them, the
    library's month and weekday abbreviations, years no time word introduces, and month and
    weekday names that capitals in `cased` (the text as written, `raw` before lower case, of the
    same length) make part of a name that nothing dates ("the October Revolution")."""
    vocab = _vocabulary()
    spans = [m.span() for m in _TOKEN.finditer(raw)]
    tokens = [" ".join(words(raw[a:b])) for a, b in spans]
    masked = [False] * len(tokens)
    for friend in vocab.false_friends.find_all(tokens):
        for i in range(friend.start, friend.end):
            masked[i] = True

    def token_at(i: int) -> str:
        return tokens[i] if 0 <= i < len(tokens) else ""

    def day_number(token: str) -> bool:
        """A day of the month, bare or with a glued conjunction (Arabic و٩, "and 9")."""
        return bool(_DAY_NUMBER.fullmatch(token)) or any(
            token.startswith(c) and _DAY_NUMBER.fullmatch(token[len(c) :]) for c in language.glued
        )

    def preposition_before(i: int) -> bool:
        return any(tuple(tokens[max(0, i - len(p)) : i]) == p for p in vocab.context)

    def introduced(i: int) -> bool:
        before = token_at(i - 1)
        glued = any(tokens[i].startswith(c) and len(tokens[i]) > len(c) for c in language.glued)
        preposition = preposition_before(i)
        year_after = bool(_YEAR.match(token_at(i + 1))) or any(
            tuple(tokens[i + 1 : i + 1 + len(link)]) == link
            and bool(_YEAR.match(token_at(i + 1 + len(link))))
            for link in vocab.links
        )
        return (
            preposition
            or glued
            or year_after
            or bool(_DAY_NUMBER.fullmatch(token_at(i + 1)))
            or day_number(before)
            or bool(_ORDINAL.fullmatch(before))
            # "the 10th of May", "el 3 de julio" (not "chapter 3 of March Madness")
            or ((before,) in vocab.links and day_of(i - 2))
            or in_range(i)
        )

    def day_of(i: int) -> bool:
        """Whether i holds an ordinal, or a day number after an article ("el 3") or a month
        preposition ("em 9 de março"), or one that ends a range ("entre 2 e 9 de março")."""
        return bool(_ORDINAL.fullmatch(token_at(i))) or (
            bool(_DAY_NUMBER.fullmatch(token_at(i)))
            and (token_at(i - 1) in vocab.articles or preposition_before(i) or in_range(i))
        )

    def dated(token: str) -> bool:
        return (
            token in vocab.month_names
            or token in vocab.weekday_names
            or bool(_DAY_NUMBER.fullmatch(token) or _ORDINAL.fullmatch(token))
        )

    # A range link between two ends of a range, a month name, a weekday name or a day number each
    # ("march *and* may", "3 *to* 10 may", "lunes *a* miércoles"), is written "to", which the
    # library keeps in every language (it drops French "à" and reads Spanish "a" as "año"); an
    # ambiguous month beside one is a month.
    joins: list[str | None] = [None] * len(tokens)
    for i, token in enumerate(tokens):
        if not dated(token):
            continue
        for link in vocab.range_links:
            end = i + 1 + len(link)
            if tuple(tokens[i + 1 : end]) == link and dated(token_at(end)):
                joins[i + 1 : end] = [RANGE_WORD, *[""] * (len(link) - 1)]

    def in_range(i: int) -> bool:
        return (i > 0 and joins[i - 1] is not None) or (
            i + 1 < len(joins) and joins[i + 1] is not None
        )

    # A season or a feast ("vacances de Noël", "Weihnachtsferien", "رمضان") is written as its
    # reading before the library translates the text, which would otherwise translate a word of
    # it first ("semana santa": "week santa"); a date for the before, after and until words, and
    # a name a year may follow ("Natale 2024", "the winter of 2024").
    def about_before(i: int) -> bool:
        """Whether an about-preposition ends right before i, or before an article there."""
        ends = (i, i - 1) if token_at(i - 1) in vocab.articles else (i,)
        return any(
            tuple(tokens[max(0, end - len(p)) : end]) == p for end in ends for p in language.about
        )

    named: list[str | None] = [None] * len(tokens)
    named_end = [False] * len(tokens)
    covered = 0
    for found in language.named.find_all(tokens):
        if found.start < covered or any(masked[found.start : found.end]):
            continue
        longest = max(language.named.matches_at(tokens, found.start), key=lambda m: m.end - m.start)
        if about_before(found.start):
            # The subject of the message ("about the Christmas truce"): masked, so that neither
            # the library nor a gloss reads it.
            masked[longest.start : longest.end] = [True] * (longest.end - longest.start)
            covered = longest.end
            continue
        named[longest.start : longest.end] = [
            longest.payload,
            *[""] * (longest.end - longest.start - 1),
        ]
        named_end[longest.end - 1] = True
        covered = longest.end

    def date_at(j: int) -> bool:
        """Whether a date starts at j, perhaps behind an article: a month name, or a day number
        or ordinal with its month after it ("3 May", "the 3rd of May", "3 de mayo")."""
        j += token_at(j) in vocab.articles
        if token_at(j) in vocab.month_names or (0 <= j < len(named) and named[j]):
            return True
        if not (_DAY_NUMBER.fullmatch(token_at(j)) or _ORDINAL.fullmatch(token_at(j))):
            return False
        return token_at(j + 1) in vocab.month_names or (
            (token_at(j + 1),) in vocab.links and token_at(j + 2) in vocab.month_names
        )

    # A before, after or until word with a date after it is read as BEFORE, AFTER or UNTIL:
    # counted from that date. Without one it is left to the library ("vor drei Tagen": three
    # days ago), and so is a range link between two dates ("from March until May").
    i = 0
    while i < len(tokens):
        for phrase, reading in vocab.anchors.get(tokens[i], ()):
            end = i + len(phrase)
            if (
                tuple(tokens[i:end]) == phrase
                and not masked[i]
                and all(j is None for j in joins[i:end])
                and date_at(end)
            ):
                joins[i:end] = [reading, *[""] * (len(phrase) - 1)]
                i = end - 1
                break
        i += 1

    def year_introduced(i: int) -> bool:
        before = token_at(i - 1)
        return (
            any(tuple(tokens[max(0, i - len(p)) : i]) == p for p in vocab.context)
            or before in vocab.year_words
            or before in vocab.month_names
            or (i > 0 and named_end[i - 1])
            or (i > 1 and named_end[i - 2] and (before,) in vocab.links)
            # "October 13, 2023"
            or (bool(_DAY_NUMBER.fullmatch(before)) and token_at(i - 2) in vocab.month_names)
            or (
                any(tuple(tokens[max(0, i - len(k)) : i]) == k for k in vocab.links)
                and token_at(i - 2) in vocab.month_names
            )
        )

    for i, token in enumerate(tokens):
        if masked[i]:
            continue
        if _YEAR.match(token):
            # A year counts after a month, a month preposition or a word for "year": "in 2025",
            # "March 2025", "im Jahr 2025"; "2025 divided by 5" is arithmetic.
            masked[i] = not year_introduced(i)
            continue
        if token in language.weekday_abbreviations:
            masked[i] = True
        elif token in vocab.ordinal_weekdays:
            # Right after an article it is the ordinal ("a segunda lei", "la segunda ley"), unless
            # the day's own suffix follows ("a segunda-feira passada") or the article is the link
            # of a range from another day ("de segunda a quarta"); "na segunda", "sexta
            # passada" and a bare "segunda" stay days.
            masked[i] = (
                token_at(i - 1) in vocab.articles
                and token_at(i + 1) not in vocab.weekday_suffixes
                and joins[i - 1] is None
            )
        elif token in vocab.ambiguous or token in language.abbreviations:
            masked[i] = not introduced(i)
    if cased is not None and language.name_capitals != "none":
        both = language.name_capitals == "neighbours_and_dates"
        for i in _named_dates(raw, cased, spans, tokens, dates_too=both):
            masked[i] = masked[i] or not introduced(i)
    # "the past weeks": the library reads the plural unit as its singular, "last week"; read as
    # the last few, as "the past few weeks" is.
    for i in range(1, len(tokens)):
        if (tokens[i - 1], tokens[i]) in language.plural_spans and joins[i] is None:
            joins[i] = f"{A_FEW} {tokens[i]}"
    # Only "the 12th" / "on 12th" is a day of the month: "Caroline's 18th birthday" is not.
    ordinal = [
        bool(_ENGLISH_ORDINAL.fullmatch(t)) and token_at(i - 1) in ("the", "on")
        for i, t in enumerate(tokens)
    ]
    if not any(masked) and not any(ordinal) and not any(joins) and not any(named_end):
        return raw
    out, at = [], 0
    for (a, b), hide, nth, join, name in zip(spans, masked, ordinal, joins, named, strict=True):
        if name is not None:
            out += [raw[at:a], name]
            at = b
        elif join is not None:
            out += [raw[at:a], join]
            at = b
        elif hide:
            out += [raw[at:a], MASK]
            at = b
        elif nth:
            # "on the 12th": a day of the month, which the library reads as a bare number.
            out += [raw[at:a], "day ", raw[a:b].rstrip("stndrh")]
            at = b
    out.append(raw[at:])
    return "".join(out)


def _named_dates(
    raw: str,
    cased: str,
    spans: Sequence[tuple[int, int]],
    tokens: Sequence[str],
    *,
    dates_too: bool,
) -> list[int]:
    """Positions of the month and weekday names that capitals make part of a name: a capitalised
    word right after a month ("October Revolution"; after a weekday it is mostly the time of day,
    "Friday Night") or right before either inside the sentence ("Black Friday"), not a function
    word, a time word or a number; with `dates_too`, also a month that is capitalised itself
    inside the sentence, in a language that writes months in lower case ("Revolución de Octubre";
    not a weekday, which students capitalise after an article, "el Viernes"). A message written
    in capitals or in title case says nothing by its capitals."""
    vocab = _vocabulary()
    common = stop_words()

    def written(j: int) -> str:
        return cased[spans[j][0] : spans[j][1]]

    def capitalised(j: int) -> bool:
        word = written(j)
        return word[:1].isupper() and not word.isupper()

    def gap(j: int) -> str:
        """What stands between token j and the one before it."""
        return raw[spans[j - 1][1] : spans[j][0]] if j else ""

    def opens_sentence(j: int) -> bool:
        # Anything but spaces, apostrophes and hyphens before it ends a sentence or a clause.
        return j == 0 or bool(gap(j).strip(_WORD_JOINERS))

    inside = [
        j
        for j, t in enumerate(tokens)
        if len(t) > 1 and not t[:1].isdigit() and not opens_sentence(j)
    ]
    # A few words say little about how the message is written ("October Revolution?").
    if len(inside) >= _TITLE_CASE_MIN_WORDS and 2 * sum(
        written(j)[:1].isupper() for j in inside
    ) > len(inside):
        return []

    def plain(j: int) -> bool:
        t = tokens[j]
        return t not in common and t not in vocab.trigger and not t[:1].isdigit()

    found = []
    for i, token in enumerate(tokens):
        if token not in vocab.month_names and token not in vocab.weekday_names:
            continue
        month = token in vocab.month_names
        after = month and i + 1 < len(tokens) and not gap(i + 1).strip()
        named = (
            (after and capitalised(i + 1) and plain(i + 1))
            or (i > 0 and not gap(i).strip() and capitalised(i - 1) and plain(i - 1)
                and not opens_sentence(i - 1))
            or (dates_too and month and capitalised(i) and not opens_sentence(i))
        )  # fmt: skip
        if named:
            found.append(i)
    return found


def _glossed(translated: str, language: _Language, past: Callable[[], bool]) -> list[str]:
    """The library's output as English words, our glosses applied to what it left untranslated;
    an ago preposition counts back only in a text that speaks of the past (`past`): "السنة من 12
    شهر" is a year made of twelve months."""
    tokens = [" ".join(words(t)) for t in _TOKEN.findall(translated)]
    tokens = [t for t in tokens if t]
    out: list[str] = []
    i = 0
    replace = {m.start: m for m in language.glosses.find_all(tokens)}
    while i < len(tokens):
        m = replace.get(i)
        if m is not None and m.end > i:
            out += m.payload
            i = m.end
        else:
            out.append(tokens[i])
            i += 1
    if language.ago_postpositions.intersection(out):
        out = _ago_after(out, language.ago_postpositions)
    if language.ago_prepositions and language.ago_prepositions.intersection(out) and past():
        return _counted_back(out, language.ago_prepositions)
    return out


def _ago_after(reading: list[str], postpositions: frozenset[str]) -> list[str]:
    """`reading` with each "<number> <unit> <ago postposition>" read as "<number> <unit> ago" ("2
    week back"); after a unit without a number the word stays ("the first day back")."""
    return [
        AGO
        if word in postpositions and i >= 2 and reading[i - 1] in UNITS and reading[i - 2].isdigit()
        else word
        for i, word in enumerate(reading)
    ]


def _counted_back(reading: list[str], prepositions: frozenset[str]) -> list[str]:
    """`reading` with each "<ago preposition> <number> <unit>" read as "<number> <unit> ago"
    (spoken Arabic "من 2 day", from two days, is two days ago)."""
    out: list[str] = []
    i = 0
    while i < len(reading):
        if (
            reading[i] in prepositions
            and i + 2 < len(reading)
            and reading[i + 1].isdigit()
            and reading[i + 2] in UNITS
        ):
            out += [reading[i + 1], reading[i + 2], AGO]
            i += 3
        else:
            out.append(reading[i])
            i += 1
    return out


def english_readings(text: str) -> Iterator[list[str]]:
    """The English readings of `text`, one per language whose time words it holds (most hits
    first); nothing at all when it holds none (the fast path)."""
    hit = _languages_hit(words(text))
    if not hit:
        return
    raw = normalise_case(text)
    # Capitals are read from the text as written where lower case kept every offset.
    cased = text if len(text) == len(raw) else None
    languages = _vocabulary().languages
    past = functools.cache(functools.partial(speaks_of_past, text))
    for index in hit:
        language = languages[index]
        translated = language.locale.translate(
            _masked(raw, language, cased), keep_formatting=False, settings=_SETTINGS
        )
        yield _glossed(translated, language, past)


def normalise_case(text: str) -> str:
    """Lower case with apostrophe look-alikes made ASCII, accents kept: the library's locale data
    is written with accents ("lunedì", "março") and apostrophes ("quest'anno")."""
    return text.lower().translate(_APOSTROPHES)
