"""Does a tutor answer narrate the record of a period? (SPEC R2.6)

"In July we covered photosynthesis and osmosis" is stored as an answer episode; recalled later as a
memory of July it would make the brain remember that it remembered. The server flags such answers
at write time with `is_narration`, so recall can keep them out of the period they narrate.

A narration is a sentence that holds both a narration marker (a first-person-plural recap verb from
the language files, "we covered", "abbiamo visto", "درسنا") and a time window
(`parse_time_window`). Sentences are cut by the `CLAUSES` rule of
`tutor_memory.domain.text.sentences`: at sentence-end marks and semicolons before white space, and
at line breaks. Requiring both in the *same sentence* keeps ordinary explanations out: "The
French Revolution began in July 1789" has a date but no recap verb (and 1789 is no record period);
"As we saw, osmosis needs a membrane" has a recap verb but no period.

Tutors recount in many more shapes than the recap verbs ("Last Tuesday you practised…", "This
week you got every ratio right", "La settimana scorsa hai lavorato…", "Il y a trois jours, on s'est
entraînés…"). What they share is structure, not vocabulary: a past tense with the student or the
tutor in it, inside a sentence that names a period of the record. So a sentence also narrates when
it has a period, a past form (`past_forms`, `past_person_forms`, or a word ending as the sentence's
language forms its past: `past_endings`, `past_person_endings`) and a person of the sessions
(`session_persons`: "you", "we", never "I" alone; or a past ending that carries the person).
Plans ("Today we're going to study volcanoes") have no past; dated subject matter ("in July 1789
the Bastille fell") has no period of the record; a recap without a period ("So far you've done
well") has no period.
"""

from __future__ import annotations

import functools

from tutor_memory.domain import lang
from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.conceptmap.language import guess_language
from tutor_memory.domain.recall.timewindow import parse_time_window
from tutor_memory.domain.recall.timewords import has_time_words
from tutor_memory.domain.text.phrases import Match, PhraseIndex, compile_phrase
from tutor_memory.domain.text.sentences import CLAUSES, split_sentences
from tutor_memory.domain.text.spans import (
    Phrase,
    Token,
    build_index,
    latin_accents,
    longest_at,
    tokenize,
)
from tutor_memory.domain.text.words import clitics, words


@functools.cache
def _markers() -> PhraseIndex[frozenset[str]]:
    entries = []
    for data in lang.all_languages():
        # Only conjunctions may be glued to a recap verb: a glued preposition makes it a noun
        # (Arabic بدرسنا, "in our lesson").
        glued = clitics(data, prepositions=False)
        vetoes = frozenset(w for v in data.marker_vetoes for w in words(v))
        entries += [(compile_phrase(m), vetoes, glued) for m in data.narration_markers]
    return PhraseIndex(entries)


def _has_marker(sentence: str) -> bool:
    tokens = words(sentence)
    return any(
        m.start == 0 or tokens[m.start - 1] not in m.payload for m in _markers().find_all(tokens)
    )


# A past ending counts on a word with at least this many letters before it: shorter, the "ending"
# is most of a function word ("need", "meu", "sei").
MIN_PAST_STEM = 3


@functools.cache
def _index(field_name: str) -> PhraseIndex[Phrase]:
    return build_index(field_name)


@functools.cache
def _endings(code: str) -> tuple[tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """The past endings, the past-and-person endings (casefolded) and the marker vetoes of a
    language."""
    data = lang.load(code)
    return (
        tuple(e.casefold() for e in data.past_endings),
        tuple(e.casefold() for e in data.past_person_endings),
        frozenset(w for v in data.marker_vetoes for w in words(v)),
    )


def _exactly_accented(sentence: str, tokens: list[Token], match: Match[Phrase]) -> bool:
    """Whether the words matched carry exactly the accents the phrase is written with: past forms
    differ from other words by an accent alone (French "a" 'has', "à" 'at')."""
    words_matched = tokens[match.start : match.end]
    if len(words_matched) != len(match.payload.accents):
        return True  # a gap: no word-by-word alignment (past forms have none)
    return all(
        latin_accents(sentence[t.start : t.end]) == wanted
        for t, wanted in zip(words_matched, match.payload.accents, strict=True)
    )


def _any_at(field_name: str, sentence: str, tokens: list[Token]) -> bool:
    index = _index(field_name)
    return any(
        _exactly_accented(sentence, tokens, m)
        for i, token in enumerate(tokens)
        if index.may_start(token.norm) and (m := longest_at(index, tokens, i)) is not None
    )


def _ends_with(
    sentence: str, tokens: list[Token], endings: tuple[str, ...], vetoes: frozenset[str]
) -> bool:
    """Whether a word ends in one of `endings`, unless a veto precedes it (Arabic في درسنا is "in
    our lesson", a noun, where درسنا alone is "we studied")."""
    if not endings:
        return False
    shortest = MIN_PAST_STEM + min(len(e) for e in endings)
    for i, t in enumerate(tokens):
        word = sentence[t.start : t.end].casefold()
        if len(word) < shortest or (i and tokens[i - 1].norm in vetoes):
            continue
        # One C-level test of every ending first; the stem's length only when one matches.
        if word.endswith(endings) and any(
            len(word) - len(e) >= MIN_PAST_STEM and word.endswith(e) for e in endings
        ):
            return True
    return False


def _languages_of(tokens: list[Token]) -> tuple[str, ...]:
    """The sentence's language by its stop words; on a tie, every language tied at the top ("El
    lunes resolviste…" has as many stop words of Spanish as of Portuguese); none without any."""
    code = guess_language(tokens)
    if code is not None:
        return (code,)
    counts = [(sum(1 for t in tokens if t.norm in _stop_words(c)), c) for c in lang.LANGUAGES]
    best = max(n for n, _ in counts)
    return tuple(c for n, c in counts if n == best) if best else ()


@functools.cache
def _stop_words(code: str) -> frozenset[str]:
    return frozenset(w for s in lang.load(code).stop_words for w in words(s))


def _recounts_a_session(sentence: str) -> bool:
    """A past form with the student or the tutor in it (see the module docstring)."""
    tokens = tokenize(sentence)
    past_endings: tuple[str, ...] = ()
    person_endings: tuple[str, ...] = ()
    vetoes: frozenset[str] = frozenset()
    for code in _languages_of(tokens):
        more_past, more_person, more_vetoes = _endings(code)
        past_endings, person_endings = past_endings + more_past, person_endings + more_person
        vetoes |= more_vetoes
    person_ending = _ends_with(sentence, tokens, person_endings, vetoes) or _any_at(
        "past_person_forms", sentence, tokens
    )
    past = (
        person_ending
        or _any_at("past_forms", sentence, tokens)
        or _ends_with(sentence, tokens, past_endings, vetoes)
    )
    return past and (person_ending or _any_at("session_persons", sentence, tokens))


def is_narration(text: str, now_us: int, tz: str, budget: WorkBudget | None = None) -> bool:
    """True if `text` narrates what happened in a period of the record (a recap verb, or a past
    with the student or the tutor in it, and a window in one sentence). Raises ValueError if `tz`
    is not a known IANA time zone. `budget` is checked at each sentence: reading the windows of
    thousands of sentences takes seconds."""
    parse_time_window("", now_us, tz)  # validate tz even when no sentence gets that far
    # Each sentence is read once: an episode's summary often repeats its text's first sentences
    # (its start, cut short), and the verdict is the sentence's alone.
    sentences = dict.fromkeys(split_sentences(text, CLAUSES))
    # Cheapest first: most sentences hold no time word, and then name no period (the time
    # window's fast path, asked before the costlier past-and-person reading).
    return any(
        has_time_words(sentence)
        and (_has_marker(sentence) or _recounts_a_session(sentence))
        and parse_time_window(sentence, now_us, tz) is not None
        for sentence in (budget or unlimited()).each(sentences)
    )
