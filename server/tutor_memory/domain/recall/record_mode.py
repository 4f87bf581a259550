"""Is the student asking about their own record, and about which topic? (SPEC R6.3, R6.4)

"What did I get wrong so far?", "cosa abbiamo studiato", "ماذا أخطأت": for such questions the block
puts beliefs and earlier work (the whole conversation, not only checks) first and says so. Two
rules decide it:

- a record phrase of the language files (`record_triggers`), matched on normalised words, so that
  case, accents, punctuation and Arabic letter variants don't matter; a trigger preceded by one of
  its language's `trigger_vetoes` is a different question ("¿por qué estudiamos…?" asks why)
  (`tutor_memory.domain.recall.asking`);
- a question or request, with the student or the tutor in it (`pronouns`: "I", "we", "my",
  "you"), that asks about a period of the student's calendar ("what did you show me last Friday",
  "vor einem Monat, woran haben wir gearbeitet"): asking what happened in the student's own last
  week is asking about the record, whatever verb carries it. The period comes from
  `tutor_memory.domain.recall.asked_period.asked_window`, which only reads periods of the record
  (dated subject matter such as "in July 1789" names none) and only those the question is about
  ("I was off sick last week, what is a prime number?" names one and asks about another thing).

`record_topic` says what a record question is about: the content words left once the record
phrase, the time words, stop words, fillers, discourse words, past forms, numbers and scope phrases
("so far", "overall", "last time": `scope_words`) are taken out ("what did I get
wrong about fractions?" -> "fractions"; "what did we do last week?" -> None). So are the record's
own words (`record_words`: "which questions did I get wrong in the *quizzes*" names no topic, "on
the *fractions* quiz" names fractions) and the participle that completes a past ("hayamos
*repasado*", "über Brüche *beigebracht*": `tense.participles_of_perfects`). The topic is read in
the clause of the record phrase or the topic preposition (`asked_period.clause_starts`): "cosa
abbiamo fatto ieri? boh, nn lo so" names none. A record question with a topic is recall *within*
the record about that topic; without one, it is about the whole record (or the whole period).
Each reading is linear in the message (tests/domain/recall/test_linear_time.py).
"""

from __future__ import annotations

import bisect
import functools
import re

from tutor_memory.domain import lang
from tutor_memory.domain.recall.asked_period import asked_window, clause_starts
from tutor_memory.domain.recall.asking import asks_words, trigger_matches
from tutor_memory.domain.recall.tense import participles_of_perfects
from tutor_memory.domain.recall.timewords import has_time_words
from tutor_memory.domain.text.phrases import PhraseIndex, compile_phrase
from tutor_memory.domain.text.spans import GLUED_SIGNS, tokenize
from tutor_memory.domain.text.words import clitics, stop_words, words

# Any instant will do for "does it name a period at all": the rule asks whether a period is named,
# not which one, and the record horizon is wide. Taken as a fixed day so the answer is stable.
_REFERENCE_US = 1_773_835_200_000_000  # 2026-03-18T12:00Z
# A topic longer than this is a sentence, not a topic: its first words are kept.
MAX_TOPIC_WORDS = 5
# A worked exercise in the message: an equals sign, or an operator between two numbers ("3/4 +
# 1/2", "2x + 3"). A question that carries its exercise asks about it ("where did I go wrong here?
# 3/4 + 1/2 = 4/6"), not about the record, whatever its words.
# A name: a capitalised word of two letters or more, in any script with case (English "I" is
# none); and what ends a sentence before it.
_NAME = re.compile(r"[^\W\d_]{2,}")
_SENTENCE_ENDS = frozenset(".!?¿¡؟:;\"'«“")
_EXERCISE = re.compile(r"=|\d\s*[-+*/\u00d7\u00f7^]\s*\(?\d")


@functools.cache
def _not_topic() -> frozenset[str]:
    """Words that are never a record question's topic."""
    out = set(stop_words())
    for data in lang.all_languages():
        for field in (
            data.fillers,
            data.discourse_words,
            data.pronouns,
            data.question_words,
            data.number_words,
            # A past form is the question's verb ("what have we *done* together"), never its
            # topic.
            data.past_forms,
            data.past_person_forms,
            data.record_words,
        ):
            out |= {w for p in field for w in words(p)}
        for phrase in data.record_triggers + data.asking_verbs:
            out |= {w for w in words(phrase) if w not in ("*", "**")}
    return frozenset(out)


def carries_exercise(query: str) -> bool:
    """Whether the message carries a worked exercise (see `_EXERCISE`)."""
    return _EXERCISE.search(query) is not None


@functools.cache
def _persons() -> PhraseIndex[None]:
    """First- and second-person words ("I", "we", "my", "you"): the student and the tutor."""
    entries = []
    for data in lang.all_languages():
        glued = clitics(data, prepositions=True)
        entries += [(compile_phrase(p), None, glued) for p in data.pronouns]
    return PhraseIndex(entries)


def _between_us(tokens: list[str]) -> bool:
    return any(True for _ in _persons().find_all(tokens))


def about_someone_else(query: str) -> bool:
    """Whether `query` names someone (a capitalised word past the first of its sentence:
    "What exercises has John done?") while neither the student nor the tutor is in it: a
    question about that person's past, not the student's record."""
    named = any(
        m.group()[0].isupper()
        for m in _NAME.finditer(query)
        if not _sentence_start(query, m.start())
    )
    return named and not _between_us(words(query))


def _sentence_start(query: str, at: int) -> bool:
    before = query[:at].rstrip()
    return not before or before[-1] in _SENTENCE_ENDS


def is_record_question(query: str) -> bool:
    """True if `query` asks about the student's own record: mistakes, what was studied, progress,
    what happened in a period of their calendar. A message that carries a worked exercise asks
    about that exercise."""
    if carries_exercise(query):
        return False
    tokens = words(query)
    if trigger_matches(tokens):
        return True
    # A period alone is not enough: "when did Melanie go camping in June?" asks about someone
    # else's June. The student or the tutor must be in the question ("what did *we* do", "hai
    # *mi* spiegato", "what did *you* explain").
    return (
        has_time_words(query)
        and asks_words(query, tokens)
        and _between_us(tokens)
        and asked_window(query, _REFERENCE_US, "UTC") is not None
    )


@functools.cache
def _scope() -> PhraseIndex[None]:
    entries = []
    for data in lang.all_languages():
        entries += [(compile_phrase(p), None, ()) for p in data.scope_words]
    return PhraseIndex(entries)


@functools.cache
def _topic_prepositions() -> PhraseIndex[None]:
    entries = []
    for data in lang.all_languages():
        glued = clitics(data, prepositions=False)
        entries += [(compile_phrase(p), None, glued) for p in data.topic_prepositions]
    return PhraseIndex(entries)


def record_topic(query: str) -> str | None:
    """The topic a record question names: the content words after a topic preposition ("about
    fractions", "sulla fotosintesi"), else right after the record phrase ("did we already do
    mitosis"), within that clause ("cosa abbiamo fatto ieri? boh, nn lo so" names none); time
    words, stop words, fillers, the record's own words (`record_words`: "session", "quiz"), the
    participle of a past ("hayamos *repasado*") and the record phrase itself are never part of
    it. None when it names none."""
    spans = tokenize(query)
    # The words as `words` reads them: the spans keep a sign glued to a word ("C#"), the phrase
    # lists and the topic do not.
    tokens = [t.norm.rstrip(GLUED_SIGNS) for t in spans]
    triggers = trigger_matches(tokens)
    skip = _not_topic()
    time_words = {t for t in tokens if has_time_words(t)}
    # Scope phrases ("so far", "last time", "since we started") are masked as a whole: their words
    # alone may be content words ("far", "time", "started").
    scope = {i for m in _scope().find_all(tokens) for i in range(m.start, m.end)}
    introduced = list(_topic_prepositions().find_all(tokens))
    at_preposition = {i for m in introduced for i in range(m.start, m.end)}

    def passable(i: int) -> bool:
        # A past form's participle may follow its function words, never a topic preposition:
        # "what did we do about the *United* Nations" has no participle.
        t = tokens[i]
        return i not in at_preposition and (t in skip or t in time_words or i in scope)

    starts = clause_starts(query, spans)
    clause_ends = [s - 1 for s in starts[1:]] + [len(tokens) - 1]
    participles = participles_of_perfects(query, spans, passable, clause_ends)

    def clause_end(start: int, *, introduced: bool) -> int:
        # The end of the clause of the word before `start`. After a record phrase, a clause that
        # starts at `start` is another one ("cosa abbiamo fatto? tipo grafici?"); after a topic
        # preposition it is the topic that the preposition introduces ("re: cell division").
        at = (bisect.bisect_right if introduced else bisect.bisect_left)(starts, start)
        return starts[at] if at < len(starts) else len(tokens)

    def content(start: int, end: int) -> list[str]:
        kept: list[str] = []
        for i in range(start, end):
            t = tokens[i]
            if t in time_words or i in scope or any(c.isdigit() for c in t):
                if kept:
                    break
                continue
            if t in skip or i in participles:
                if kept and len(kept) < MAX_TOPIC_WORDS and t not in stop_words():
                    break
                continue
            kept.append(t)
            if len(kept) == MAX_TOPIC_WORDS:
                break
        return kept

    # A topic preposition may sit inside the record phrase's gap ("was haben wir *über die
    # Zellatmung* gelernt"); the phrase's own words are in `skip`.
    # A scan that finds nothing has read to its clause's end: a later preposition inside what it
    # read would find nothing either, and skipping it keeps the reading linear in the message.
    read_up_to = 0
    for m in introduced:
        if m.end < read_up_to:
            continue
        read_up_to = clause_end(m.end, introduced=True)
        kept = content(m.end, read_up_to)
        if kept:
            return " ".join(kept)
    if triggers:
        after = max(m.end for m in triggers)
        kept = content(after, clause_end(after, introduced=False))
        if kept:
            return " ".join(kept)
    return None
