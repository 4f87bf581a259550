"""Does a message ask something, and does it ask about the student's record by one of the record
phrases? (SPEC R6.3)

The two readings that both the record-question rules (`tutor_memory.domain.recall.record_mode`)
and the reading of which period a question asks about (`tutor_memory.domain.recall.asked_period`)
need, kept below both:

- `asks`: a question (a question mark of any script, or a question word or an inverted verb at the
  start of a sentence: `tutor_memory.domain.conceptmap.teaching.is_question`; or one of the
  `final_question_words` ending the message: "mardi on a revu quoi") or a request (an asking verb
  of the language files: "show me", "remind me", "dimmi");
- `trigger_matches`: the record phrases of the language files (`record_triggers`: "what did I get
  wrong", "cosa abbiamo studiato"), matched on normalised words, each unless one of its language's
  `trigger_vetoes` comes right before it ("¿por qué estudiamos…?" asks why);
- `question_matches`: the same for the phrases that ask about the record only in a clause that
  asks (`record_questions`: "abbiamo fatto", "haben wir gemacht").
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

from tutor_memory.domain import lang
from tutor_memory.domain.conceptmap.teaching import is_question
from tutor_memory.domain.text import spans
from tutor_memory.domain.text.phrases import Match, Phrase, PhraseIndex, compile_phrase
from tutor_memory.domain.text.words import clitics, words


@dataclass(frozen=True, slots=True)
class RecordPhrase:
    """A record phrase as matched: the phrase, the words that veto it right before it, and the
    language file it comes from."""

    phrase: Phrase
    vetoes: frozenset[str]
    language: str


def _record_phrases(field: str) -> PhraseIndex[RecordPhrase]:
    entries = []
    for data in lang.all_languages():
        glued = clitics(data, prepositions=True)  # Arabic بماذا أخطأت: "in what did I err"
        vetoes = frozenset(w for v in data.trigger_vetoes for w in words(v))
        entries += [
            (phrase := compile_phrase(t), RecordPhrase(phrase, vetoes, data.code), glued)
            for t in getattr(data, field)
        ]
    return PhraseIndex(entries)


@functools.cache
def _triggers() -> PhraseIndex[RecordPhrase]:
    return _record_phrases("record_triggers")


@functools.cache
def _questions() -> PhraseIndex[RecordPhrase]:
    return _record_phrases("record_questions")


def _unvetoed(index: PhraseIndex[RecordPhrase], tokens: list[str]) -> list[Match[RecordPhrase]]:
    return [
        m
        for m in index.find_all(tokens)
        if m.start == 0 or tokens[m.start - 1] not in m.payload.vetoes
    ]


@functools.cache
def _requests() -> PhraseIndex[None]:
    """Imperatives that ask for something ("show me", "remind me", "dimmi"): a request."""
    entries = []
    for data in lang.all_languages():
        entries += [(compile_phrase(v), None, ()) for v in data.asking_verbs]
    return PhraseIndex(entries)


def trigger_matches(tokens: list[str]) -> list[Match[RecordPhrase]]:
    """The record phrases among normalised `tokens`, vetoed ones left out."""
    return _unvetoed(_triggers(), tokens)


def question_matches(tokens: list[str]) -> list[Match[RecordPhrase]]:
    """The phrases among normalised `tokens` that ask about the record only in a clause that asks
    (`record_questions`: "abbiamo * fatto", "haben wir ** gemacht"), vetoed ones left out. Whether
    their clause asks is the caller's to read (`tutor_memory.domain.recall.record_mode`)."""
    return _unvetoed(_questions(), tokens)


def request_matches(tokens: list[str]) -> Iterator[Match[None]]:
    """The asking verbs ("show me", "dimmi") among normalised `tokens`."""
    return _requests().find_all(tokens)


@functools.cache
def one_word_question_words() -> frozenset[str]:
    """The question words of one word, normalised ("how", "wie", "come"; not "o que")."""
    return frozenset(
        single[0]
        for data in lang.all_languages()
        for q in data.question_words
        if len(single := words(q)) == 1
    )


@functools.cache
def _final_questions() -> PhraseIndex[spans.Phrase]:
    return spans.build_index("final_question_words")


def ends_with_question_word(tokens: list[str]) -> bool:
    """Whether the last words are a question word left at the end ("on a revu quoi")."""
    index = _final_questions()
    return any(
        m.end == len(tokens)
        for start in range(max(0, len(tokens) - index.longest_span), len(tokens))
        for m in index.matches_at(tokens, start)
    )


def asks_words(query: str, tokens: list[str]) -> bool:
    """`asks` for a query whose normalised words the caller has already."""
    return (
        is_question(query)
        or ends_with_question_word(tokens)
        or any(True for _ in request_matches(tokens))
    )


def asks(query: str) -> bool:
    """Whether `query` asks something: a question, a question word left at its end ("mardi on a
    revu quoi"), or a request ("show me", "dimmi")."""
    return asks_words(query, words(query))
