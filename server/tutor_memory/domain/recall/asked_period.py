"""Which period a message asks about, as against one it only mentions (SPEC R2.5, R6.3).

A period restricts recall to itself: the block shows only what happened in it, or says there is no
record of it. That is right for "what did we do last week?" and harmful for "I was off sick last
week, what is a prime number?", whose block would hold nothing about prime numbers. So a period
the time reading finds (`tutor_memory.domain.recall.timewindow.parse_time_window`) is the
question's only when the words around it ask about it.

The message is cut into clauses (`clauses`): at sentence ends, line breaks and clause punctuation
(commas, semicolons, colons, brackets, dashes, the Arabic comma; not a comma inside a number or
before a year, "November 11, 2023"), and, where a message runs on without punctuation, before a
question word followed by a question's verb (`question_words` then `question_openers`: "i was
off sick last week | what is a prime number"; a question word asked in place stays, "ça a donné
quoi aux quiz"). The clause that names the period decides first:

- a record phrase in it (`asking.trigger_matches`: "my mistakes last week", "how am I doing this
  week?"), or nothing but the period and function words ("last week,", "and in July?"): the
  period is asked about;
- a question or a request (`asking.asks`): the period is asked about when it is over ("tell me
  about last week"), when it is counted back from now ("which mistakes do I keep making in the
  last few weeks?", "since Monday") or when the clause speaks of the past
  (`tense.speaks_of_past`: "what did we do today?"); a period counted from now and still
  running, in a question of the present, is a plan or a greeting ("can we do some algebra
  today?", "how are you today?"), and read as the record's it would give the first turn of a
  day a block that says there is no record of today.
  A dated period is the record's even while it runs ("what is John doing as a volunteer in August
  2023?");
- a statement that places itself in the student's school (`school_words`: "last week in class
  we started Faust, what is it about?"), or that names a month or day still to come this year
  without speaking of the past ("the national exam is in June, where do I start?", asked in
  March: `timewindow`'s `coming`): the period is not the record's, and is not asked about;
- another statement ("I was off sick last week", "today I want to study photosynthesis"): if other
  clauses ask, the period is asked about only when one of them holds a record phrase or speaks of
  the past ("last week's quiz - how did I do?"); a question in the present ("what is a prime
  number?") is about something else, even after a "we" ("we moved house last month", where "we"
  is the family, not the sessions). A question after the statement that names a period of its
  own asks about that one instead ("my exam is on friday, can you quiz me on what we did last
  week?"; the first three questions after it are read). If no clause asks, a statement keeps its
  period when the period is dated or over or the statement speaks of the past ("today we did
  fractions"), not when it is a plan ("anota aí que eu vou fazer o ENEM esse ano").

A month named alone ("in January"), a season or a feast ("in winter", "before Christmas") names
one of every year. In a clause of the present it is the student's only when the clause asks for
nothing else ("tell me about January", "and at Christmas?", "show me my marks since Easter") or,
while it runs, has the student in it ("what are we working on in November?"): "why is it cold in
January?" and "what do bears do in winter?" name no period of the record. In the past a month is
the record's as before, while a season or a feast is told of the past by history and by other
people as often as by the student: it is theirs only with them, their class or their record in
the clause ("what did we do over the summer", "my scores since Easter", not "how did the soldiers
survive the winter" or "what did Joanna photograph last summer"). A statement of nothing but a
period still to come ("my Easter holidays are from 30 March to 10 April") is a plan.

A bare weekday ("on Monday") is the record's only in a past (`timewindow`). In a clause with a
verb, a person or any word of its own, that is the clause's own tense: "I have a test on Monday,
what did we do on fractions?" names the next Monday, an exam still to come, not the last one the
question's past would make of it. A clause with nothing but time words, the record's own words,
articles, prepositions and fillers ("On Monday in class, what did we cover?", "Monday's quiz -
how did I do?") frames the question beside it and is read by the whole message's tense.

A period whose words run across clauses ("Friday, 3 March") is kept as the time reading found it.
Each clause is read a fixed number of times (the one that names the period twice by the time
reading) and each test is linear in its clause, so the reading stays linear in the message
(issue 12).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence

from tutor_memory.domain import lang
from tutor_memory.domain.recall.asking import (
    asks,
    one_word_question_words,
    request_matches,
    trigger_matches,
)
from tutor_memory.domain.recall.calendar_names import NAMED
from tutor_memory.domain.recall.tense import past_with_a_person, speaks_of_past
from tutor_memory.domain.recall.timewindow import TimeWindow, parse_time_window
from tutor_memory.domain.recall.timewords import MONTHS, UNITS, WEEKDAYS, has_time_words
from tutor_memory.domain.text.phrases import PhraseIndex
from tutor_memory.domain.text.sentences import CLOSING_MARKS, SENTENCE_END_MARKS
from tutor_memory.domain.text.spans import (
    CLAUSE_MARKS,
    Phrase,
    Token,
    between,
    build_index,
    longest_at,
    tokenize,
)
from tutor_memory.domain.text.words import stop_words, words

# Digits of a year written after a comma ("November 11, 2023").
_YEAR_DIGITS = 4
# A hyphen standing alone between words, a space beside it, is a dash ("last week's quiz - how did
# I do?").
_DASH = "-"
# Marks that open a question or an exclamation in Spanish: they belong to the clause after them.
_OPENING_MARKS = "\u00bf\u00a1"
# What may close a clause and belongs to it: sentence-end marks (a question mark, after a space as
# French writes it) and the quotes and brackets after them.
_CLAUSE_END = re.compile(f"\\s*[{re.escape(SENTENCE_END_MARKS + CLOSING_MARKS)}]+")
# How the English reading opens a span counted back from now ("last 3 day", "since monday").
_COUNTED_BACK = frozenset({"last", "since"})
# The English reading's words that tie a month, a season or a feast to one year of the student's
# ("last summer", "this Easter").
_QUALIFIERS = frozenset({"last", "past", "this"})
# The English reading's words for a span counted from a date ("week beforedate calendarchristmas").
_SPANS = frozenset({*UNITS, *WEEKDAYS, "weekend"})
# How many questions after a statement that names a period are read for a period of their own.
_LATER_QUESTIONS = 3
# How many clauses naming a day still to come are passed over in search of the period a message
# asks about (a fixed number, so that a message of many such clauses is read in linear time).
_UPCOMING_CLAUSES = 3
# The language fields whose words a clause may hold and still hold nothing but its period.
_FUNCTION_FIELDS = ("lead_ins", "fillers", "discourse_words", "pronouns")
# A word as written: letters and digits, cut at apostrophes ("c'è" is "c" and "è").
_WRITTEN_WORD = re.compile(r"[^\W_]+")
# The language fields whose words a clause may hold and still only frame the question beside it
# (`_is_a_frame`): no verb, no person.
_FRAME_FIELDS = (
    "record_words",
    "articles",
    "topic_prepositions",
    "month_prepositions",
    "lead_ins",
    "fillers",
)


@functools.cache
def _function_words() -> frozenset[str]:
    """Words a clause may hold and still hold nothing but its period: function words other than
    a question word standing alone ("how are you today?" asks something of its own; "and in
    July?" does not)."""
    found = set(stop_words())
    for data in lang.all_languages():
        for field in _FUNCTION_FIELDS:
            found |= {w for p in getattr(data, field) for w in words(p)}
    return frozenset(found - one_word_question_words())


def _breaks_before(text: str, tokens: Sequence[Token], i: int) -> bool:
    """Whether punctuation between token i - 1 and token i ends a clause."""
    gap = between(text, tokens, i)
    # A hyphen inside a word joins it ("físico-química", "week-end"); with a space beside it, it is
    # a dash.
    if any(c in SENTENCE_END_MARKS or c == "\n" for c in gap) or (
        gap.strip() == _DASH and gap != _DASH
    ):
        return True
    if not any(c in CLAUSE_MARKS for c in gap):
        return False
    # A comma inside a number ("1,5") or before a year ("November 11, 2023") ends no clause.
    following = tokens[i].norm
    if gap == "," and following.isdigit() and tokens[i - 1].norm.isdigit():
        return False
    return not (gap.strip() == "," and following.isdigit() and len(following) == _YEAR_DIGITS)


@functools.cache
def _index(field_name: str) -> PhraseIndex[Phrase]:
    return build_index(field_name)


def _asks_from(tokens: Sequence[Token], i: int) -> bool:
    """Whether a question starts at token i without punctuation before it: a question word
    followed by a question's verb ("i was off sick last week | what is a prime number"). A
    question word followed by anything else stays in its clause ("ça a donné quoi aux quiz", "eu
    errei o que em química" ask in place)."""
    asked = longest_at(_index("question_words"), tokens, i)
    return (
        asked is not None and longest_at(_index("question_openers"), tokens, asked.end) is not None
    )


def clause_starts(text: str, tokens: Sequence[Token]) -> list[int]:
    """The index of the first word of each clause of `text` (see the module docstring), whose
    words are `tokens` (`tokenize(text)`); [] for a text without words."""
    starts = [0] if tokens else []
    for i in range(1, len(tokens)):
        if _breaks_before(text, tokens, i) or (i > starts[-1] and _asks_from(tokens, i)):
            starts.append(i)
    return starts


def clauses(text: str) -> list[str]:
    """The clauses of `text` (see the module docstring), each as written, with the marks that end
    it (a question mark) and the Spanish marks that open it."""
    tokens = tokenize(text)
    return clause_texts(text, tokens, clause_starts(text, tokens))


def clause_texts(text: str, tokens: Sequence[Token], starts: Sequence[int]) -> list[str]:
    """`clauses(text)` for a caller that has its tokens (`tokenize(text)`) and their
    `clause_starts` already."""
    out = []
    for n, first in enumerate(starts):
        last = (starts[n + 1] if n + 1 < len(starts) else len(tokens)) - 1
        begin = tokens[first].start
        while begin > 0 and text[begin - 1] in _OPENING_MARKS:
            begin -= 1
        end = tokens[last].end
        if (closing := _CLAUSE_END.match(text, end)) is not None:
            end = closing.end()
        out.append(text[begin:end])
    return out


def _about_the_record(clause: str) -> bool:
    """A record phrase ("what did I get wrong") or a past ("how did I do")."""
    return bool(trigger_matches(words(clause))) or speaks_of_past(clause)


def _only_the_period(clause: str) -> bool:
    """Whether the clause holds no word but time words, numbers and function words ("today",
    "and last week?")."""
    function_words = _function_words()
    return all(w in function_words or w.isdigit() or has_time_words(w) for w in words(clause))


def _still_to_come(clause: str, window: TimeWindow, now_us: int, tz: str) -> bool:
    """Whether the clause's month, day, season or feast, read as last year's, is one still to
    come this year in a clause that does not speak of the past ("the exam is in June", "my Easter
    holidays start on Friday", asked in March)."""
    dated = any(w in MONTHS or w in NAMED for w in window.expression.split())
    return dated and parse_time_window(clause, now_us, tz, coming=True) is None


def _at_school(clause: str) -> bool:
    """Whether the clause places what it tells in the student's school (`school_words`)."""
    return next(_index("school_words").find_all(words(clause)), None) is not None


def _a_plan_may_name(window: TimeWindow, now_us: int) -> bool:
    """Whether the period is still running and counted from now ("today", "this week"), as plans
    name theirs; a dated period ("in August 2023", "since March") is the record's even while it
    runs ("what is John doing as a volunteer in August 2023?")."""
    if not window.start_us <= now_us < window.end_us:
        return False
    # The English reading names a month or a year when the period is dated; relative periods
    # read as counts ("today" is "0 day ago"). A span counted back from now ("the last few days":
    # "last 3 day"; "since Monday") looks back, as plans do not.
    named = window.expression.split()
    if named and named[0] in _COUNTED_BACK:
        return False
    return not any(w in MONTHS or (w.isdigit() and len(w) == _YEAR_DIGITS) for w in named)


def _recurring_name(window: TimeWindow) -> str | None:
    """ "named" when the period was read from a season's or a feast's name (`calendar_names`:
    "in summer", "before Christmas", "last summer", "Easter 2025"), and "month" when from a
    month's name that nothing ties to the student's calendar (no year, no day, no "last" or
    "this": "in January"), or from a span counted from a season or a feast ("the week before
    Christmas"); else None."""
    read = window.expression.split()
    if NAMED.intersection(read):
        return "month" if _SPANS.intersection(read) else "named"
    if any(w.isdigit() or w in _QUALIFIERS for w in read):
        return None
    return "month" if len(read) == 1 and read[0] in MONTHS else None


def _only_asks_for_the_period(clause: str) -> bool:
    """Whether the clause holds nothing but the period, function words, question words, asking
    verbs and the student's or their record's words ("tell me about January", "what about
    Christmas?", "show me my marks since Easter")."""
    said = words(clause)
    allowed = {w for m in request_matches(said) for w in said[m.start : m.end]}
    for field in ("own_words", "record_words"):
        allowed |= {w for m in _index(field).find_all(said) for w in said[m.start : m.end]}
    common = _function_words() | one_word_question_words()
    return all(w in common or w in allowed or w.isdigit() or has_time_words(w) for w in said)


# The language fields whose words put the student, their class or their record in a clause
# ("I", "we", "my", "in class", "mistakes", "marks"), besides a past with a person
# (`_names_the_sessions`).
_STUDENT_FIELDS = ("pronouns", "own_words", "school_words", "record_words")


def _of_the_student(clause: str) -> bool:
    """Whether the clause speaks of the student, their class or their record."""
    said = words(clause)
    return past_with_a_person(clause) or any(
        next(_index(field).find_all(said), None) is not None for field in _STUDENT_FIELDS
    )


def _names_the_sessions(held: str, recurring: str, *, running: bool) -> bool:
    """Whether a clause that names a month alone, or a season or a feast (`_recurring_name`),
    names the student's: a clause of the present about something else names one of every year
    ("why is it cold in January?", "what do bears do in winter?"), and a season or a feast is told
    of the past by history and by other people as often as by the student, so it is the
    student's only with them, their class or their record in it ("what did we do over the
    summer", "my marks since Easter", "what did the class do before carnival", not "how did the
    pilgrims survive the winter" or "what did Joanna photograph last summer")."""
    if not speaks_of_past(held):
        # Under way, one is the student's too when they are in the question ("what are we
        # working on in November?", asked in November).
        return _only_asks_for_the_period(held) or (running and _of_the_student(held))
    return recurring == "month" or _of_the_student(held)


def _asked(held: str, others: Sequence[str], window: TimeWindow, now_us: int, tz: str) -> bool:
    """Whether the clause `held`, which names `window`, asks about it, given the message's other
    clauses (see the module docstring)."""
    if trigger_matches(words(held)):
        return True
    # A statement of nothing but a period still to come ("my Easter holidays are from 27 March
    # to 6 April", asked in March) tells a plan.
    if _only_the_period(held) and (
        asks(held) or _is_a_frame(held) or not _still_to_come(held, window, now_us, tz)
    ):
        return True
    recurring = _recurring_name(window)
    running = window.start_us <= now_us < window.end_us
    if recurring is not None and not _names_the_sessions(held, recurring, running=running):
        return False
    plans_period = _a_plan_may_name(window, now_us)
    if asks(held):
        return not plans_period or speaks_of_past(held)
    if not _is_a_frame(held) and (_at_school(held) or _still_to_come(held, window, now_us, tz)):
        return False
    asking = [c for c in others if asks(c)]
    if asking:
        return any(_about_the_record(c) for c in asking)
    return not plans_period or speaks_of_past(held)


def asked_window(query: str, now_us: int, tz: str) -> TimeWindow | None:
    """The period `query` asks about, as `parse_time_window` reads it; None when it names none or
    only mentions one (see the module docstring). Raises ValueError if `tz` is not a known IANA
    time zone."""
    window = parse_time_window(query, now_us, tz)
    if window is None:
        return None
    parts = clauses(query)
    if len(parts) == 1:
        return window if _asked(query, (), window, now_us, tz) else None
    past = functools.cache(functools.partial(speaks_of_past, query))
    upcoming = 0
    for n, clause in enumerate(parts):
        tense = _ClauseTense(clause, past)
        found = parse_time_window(clause, now_us, tz, past=tense)
        if found is None:
            if tense.reads_a_weekday_to_come() and (
                parse_time_window(clause, now_us, tz, past=past) is not None
            ):
                # A bare weekday of a clause with words of its own, which does not speak of the
                # past, though the message does: the next one ("I have a test on Monday, what
                # did we do on fractions?").
                upcoming += 1
                if upcoming == _UPCOMING_CLAUSES:
                    return None
            continue
        if upcoming:
            # The message's first period was that weekday; this clause names its own.
            window = found
        if not asks(clause):
            # A question after the statement that names a period of its own asks about that one:
            # "my exam is on friday, can you quiz me on what we did last week?".
            asked = _asked_by_a_later_question(parts, n, now_us, tz, past)
            if asked is not None:
                return asked
        others = parts[:n] + parts[n + 1 :]
        return window if _asked(clause, others, window, now_us, tz) else None
    return None if upcoming else window


class _ClauseTense:
    """The tense that reads a bare weekday of one clause (see the module docstring): the
    clause's own, or the message's (`message`) for a clause that only frames the question beside
    it. Called by the time reading only when it meets a bare weekday; read once."""

    def __init__(self, clause: str, message: Callable[[], bool]) -> None:
        self._clause = clause
        self._message = message
        self._own: bool | None = None

    def __call__(self) -> bool:
        if self._own is None:
            frame = _is_a_frame(self._clause)
            self._own = self._message() if frame else speaks_of_past(self._clause)
        return self._own

    def reads_a_weekday_to_come(self) -> bool:
        """Whether a bare weekday was read, and as the next one where the message's tense would
        have made it the last."""
        return self._own is not None and not self._own and self._message()


def _is_a_frame(clause: str) -> bool:
    """Whether the clause holds nothing but time words, numbers, the record's own words,
    articles, prepositions, lead-ins and fillers ("On Monday in class,", "Monday's quiz -"): it
    frames the question beside it, whose tense reads a bare weekday in it. A clause with a verb,
    a person or any other word has a tense of its own ("I have a test on Monday", "the exam is
    on Friday")."""
    allowed = _frame_words()
    return all(
        w in allowed or w.isdigit() or _elided(w) or has_time_words(w)
        for w in _written_words(clause)
    )


def _elided(word: str) -> bool:
    """A letter left of an elided word or a possessive ("l'", "c'", "d'", "'s"); not a one-letter
    verb ("è", "é")."""
    return len(word) == 1 and word.isascii()


def _written_words(text: str) -> list[str]:
    """The words of `text` in lower case with their accents: Italian "è" (is) is a verb where
    "e" (and) is a function word, and normalised they are one word."""
    return _WRITTEN_WORD.findall(text.casefold())


@functools.cache
def _frame_words() -> frozenset[str]:
    found: set[str] = set()
    for data in lang.all_languages():
        for field in _FRAME_FIELDS:
            found |= {w for p in getattr(data, field) for w in _written_words(p)}
    return frozenset(found)


def _asked_by_a_later_question(
    parts: Sequence[str], n: int, now_us: int, tz: str, past: Callable[[], bool]
) -> TimeWindow | None:
    """The period that one of the first `_LATER_QUESTIONS` questions after clause n names and
    asks about, read in that question alone; None if none does. (A fixed number of questions, so
    that a message of many clauses is read in a time linear in its length, issue 12.)"""
    questions = [k for k in range(n + 1, len(parts)) if asks(parts[k])][:_LATER_QUESTIONS]
    for k in questions:
        if not has_time_words(parts[k]):
            continue
        found = parse_time_window(parts[k], now_us, tz, past=past)
        others = [*parts[:k], *parts[k + 1 :]]
        if found is not None and _asked(parts[k], others, found, now_us, tz):
            return found
    return None
