"""Does a sentence speak of the past, and with the student or the tutor in it? (SPEC R2.5, R2.6)

Three readings share the language files' grammar of the past (`past_forms`, `past_person_forms`,
`past_endings`, `past_person_endings`, `past_ending_exceptions`, `perfect_auxiliaries`,
`participle_shapes`, `session_persons`; see `tutor_memory.domain.lang`):

- `past_with_a_person`: a past form with the student or the tutor in it ("Last Tuesday *you
  practised*…", "*hemos visto*"), which with a period makes a tutor's sentence a narration
  (`tutor_memory.domain.recall.narration`);
- `participles_of_perfects`: which words are the participle of a past, never the topic of a
  record question (`tutor_memory.domain.recall.record_mode.record_topic`);
- `speaks_of_past`: a past at all, which decides whether a bare weekday is the last one or the
  next ("what did we do on Monday" against "I have a test on Monday":
  `tutor_memory.domain.recall.timewindow`). Here a perfect auxiliary counts only with a participle
  after it, since alone it is a present ("have", "ho", "j'ai", "haben"), or right before it when
  the participle's shape has a prefix (German "was wir *gemacht haben*").

Endings and whole past forms are read only on a sentence of their language (`sentence_languages`;
every language's when the sentence's is not guessed): French "a" (has) and German "was" (what)
are no past in an English sentence. Endings count on words with at least `MIN_PAST_STEM` letters
before the ending.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from tutor_memory.domain import lang
from tutor_memory.domain.conceptmap.language import guess_language
from tutor_memory.domain.conceptmap.nounphrase import articles
from tutor_memory.domain.text.phrases import Match, PhraseIndex
from tutor_memory.domain.text.spans import (
    Phrase,
    Token,
    build_index,
    latin_accents,
    longest_at,
    tokenize,
)
from tutor_memory.domain.text.words import words

# A past ending counts on a word with at least this many letters before it: shorter, the "ending"
# is most of a function word ("need", "meu", "sei").
MIN_PAST_STEM = 3
# How the language files write a participle formed around its stem ("ge…t").
SHAPE_GAP = "…"
# The most words from a perfect auxiliary to a participle of a shape without a prefix: adverbs and
# pronouns may come between ("ho *già* fatto", "l'hai *mai* spiegato", "¿ya me lo has explicado?").
PARTICIPLE_REACH = 4


@functools.cache
def _index(field_name: str, codes: tuple[str, ...] | None = None) -> PhraseIndex[Phrase]:
    """The phrases of `field_name` of every language, or of the languages `codes` only."""
    return build_index(field_name, languages=codes)


@dataclass(frozen=True, slots=True)
class _Grammar:
    """A past grammar (one language's, or several joined), as `_ends_with` and `_participle_at`
    read it (casefolded)."""

    past_endings: tuple[str, ...]
    person_endings: tuple[str, ...]
    # Endings of words that are no past though they end like one ("fractions").
    exceptions: tuple[str, ...]
    vetoes: frozenset[str]
    auxiliaries: frozenset[str]
    # Past forms that are a present of having after an auxiliary ("I've got a test"), and the
    # words that open the noun phrase after them.
    possession: frozenset[str]
    noun_phrase_openers: frozenset[str]
    # (prefix, suffix, whether the prefix may follow other letters: a separable particle).
    shapes: tuple[tuple[str, str, bool], ...]


@functools.cache
def _grammar(code: str) -> _Grammar:
    data = lang.load(code)
    return _Grammar(
        tuple(e.casefold() for e in data.past_endings),
        tuple(e.casefold() for e in data.past_person_endings),
        tuple(e.casefold() for e in data.past_ending_exceptions),
        frozenset(w for v in data.marker_vetoes + data.past_ending_vetoes for w in words(v)),
        frozenset(w for a in data.perfect_auxiliaries for w in words(a)),
        frozenset(w for f in data.possession_forms for w in words(f)),
        frozenset(
            w
            for field in (data.articles, data.number_words, data.own_words, data.session_persons)
            for p in field
            for w in words(p)
        ),
        tuple(_shape(s) for s in data.participle_shapes),
    )


def _shape(written: str) -> tuple[str, str, bool]:
    """A participle shape as written ("ge…t", "…é", "…ge…en"): prefix, suffix and whether
    other letters may come before the prefix (a leading gap besides the one between them)."""
    inside = written.count(SHAPE_GAP) == 2
    prefix, _, suffix = written.removeprefix(SHAPE_GAP if inside else "").partition(SHAPE_GAP)
    return prefix.casefold(), suffix.casefold(), inside


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


def _matches(
    index: PhraseIndex[Phrase], sentence: str, tokens: list[Token]
) -> Iterator[Match[Phrase]]:
    """The phrases of `index` in the sentence, longest at each word, accents agreeing."""
    return (
        m
        for i, token in enumerate(tokens)
        if index.may_start(token.norm)
        and (m := longest_at(index, tokens, i)) is not None
        and _exactly_accented(sentence, tokens, m)
    )


def _any_at(field_name: str, sentence: str, tokens: list[Token]) -> bool:
    return any(True for _ in _matches(_index(field_name), sentence, tokens))


def _ends_with(
    sentence: str, tokens: list[Token], endings: tuple[str, ...], grammar: _Grammar
) -> bool:
    """Whether a word ends in one of `endings`, unless a veto precedes it (Arabic في درسنا is "in
    our lesson", a noun, where درسنا alone is "we studied") or it ends in one of the grammar's
    exceptions (French "fractions")."""
    vetoes, exceptions = grammar.vetoes, grammar.exceptions
    if not endings:
        return False
    shortest = MIN_PAST_STEM + min(len(e) for e in endings)
    for i, t in enumerate(tokens):
        word = sentence[t.start : t.end].casefold()
        if len(word) < shortest or (i and tokens[i - 1].norm in vetoes):
            continue
        # One C-level test of every ending first; the stem's length only when one matches.
        if (
            word.endswith(endings)
            and any(len(word) - len(e) >= MIN_PAST_STEM and word.endswith(e) for e in endings)
            and not (exceptions and word.endswith(exceptions))
        ):
            return True
    return False


def sentence_languages(tokens: list[Token]) -> tuple[str, ...]:
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


@functools.cache
def _joined(codes: tuple[str, ...]) -> _Grammar:
    grammars = [_grammar(code) for code in codes]
    return _Grammar(
        tuple(e for g in grammars for e in g.past_endings),
        tuple(e for g in grammars for e in g.person_endings),
        tuple(e for g in grammars for e in g.exceptions),
        frozenset(w for g in grammars for w in g.vetoes),
        frozenset(w for g in grammars for w in g.auxiliaries),
        frozenset(w for g in grammars for w in g.possession),
        frozenset(w for g in grammars for w in g.noun_phrase_openers),
        tuple(s for g in grammars for s in g.shapes),
    )


def _own_past_forms(
    sentence: str, tokens: list[Token], codes: tuple[str, ...]
) -> Iterator[Match[Phrase]]:
    """The past forms of the sentence's own languages `codes` (every language's when none is
    guessed): French "a" and German "was" are no past in "Today you will learn a new topic".
    Those inside a connective made of one ("visto che", "vu que": given that) are none."""
    codes = codes or lang.LANGUAGES
    forms = _matches(_index("past_forms", codes), sentence, tokens)
    connectives = [
        (m.start, m.end) for m in _matches(_index("past_connectives", codes), sentence, tokens)
    ]
    if not connectives:
        return forms
    return (m for m in forms if not any(a <= m.start and m.end <= b for a, b in connectives))


def past_with_a_person(sentence: str) -> bool:
    """A past form with the student or the tutor in it (see the module docstring)."""
    tokens = tokenize(sentence)
    codes = sentence_languages(tokens)
    grammar = _joined(codes)
    person_ending = _ends_with(sentence, tokens, grammar.person_endings, grammar) or _any_at(
        "past_person_forms", sentence, tokens
    )
    past = (
        person_ending
        or any(True for _ in _own_past_forms(sentence, tokens, codes))
        or _ends_with(sentence, tokens, grammar.past_endings, grammar)
    )
    return past and (person_ending or _any_at("session_persons", sentence, tokens))


def _participle_at(
    sentence: str, token: Token, grammar: _Grammar, *, prefixed: bool = False
) -> bool:
    """Whether the word has a participle's shape (with `prefixed`, only a shape with a prefix:
    "ge…t", not "…é")."""
    word = sentence[token.start : token.end].casefold()
    for prefix, suffix, inside in grammar.shapes:
        if prefixed and not prefix:
            continue
        at = word.find(prefix) if inside else (0 if word.startswith(prefix) else -1)
        stem = len(word) - at - len(prefix) - len(suffix)
        if at >= 0 and word.endswith(suffix) and stem >= MIN_PAST_STEM:
            return True
    return False


def speaks_of_past(sentence: str) -> bool:
    """Whether `sentence` has a past: a past form of its language other than a perfect auxiliary
    alone, a past ending, or an auxiliary with a participle after it (see the module
    docstring)."""
    tokens = tokenize(sentence)
    languages = sentence_languages(tokens)
    grammar = _joined(languages)
    if _any_at("past_person_forms", sentence, tokens) or _ends_with(
        sentence, tokens, grammar.person_endings + grammar.past_endings, grammar
    ):
        return True
    forms = [
        m
        for m in _own_past_forms(sentence, tokens, languages)
        if not _possession_after_an_auxiliary(tokens, m, grammar)
    ]
    for m in forms:
        if not all(t.norm in grammar.auxiliaries for t in tokens[m.start : m.end]):
            return True
        # An auxiliary: a perfect only with a participle after it (a past form, or a word of a
        # participle's shape: "ho *sbagliato*", "j'ai *raté*", "haben wir *gemacht*"). A shape
        # without a prefix only within reach: further on, it is a noun of the sentence ("è il
        # *significato*", "j'ai un contrôle sur la *société*"); German puts its prefixed
        # participle at the end of the clause, however far.
        near = _before_an_article(tokens[m.end : m.end + PARTICIPLE_REACH], languages)
        if (
            any(other.start >= m.end for other in forms)
            or any(_participle_at(sentence, t, grammar) for t in near)
            or any(_participle_at(sentence, t, grammar, prefixed=True) for t in tokens[m.end :])
        ):
            return True
        # Or right before it, as a subordinate clause puts it ("was ich *gelernt* hab"), for the
        # shapes with a prefix only: before "a", "…é" is too often a noun ("l'université a").
        if m.start and _participle_at(sentence, tokens[m.start - 1], grammar, prefixed=True):
            return True
    return False


def _possession_after_an_auxiliary(
    tokens: list[Token], m: Match[Phrase], grammar: _Grammar
) -> bool:
    """Whether the past form `m` is a present of having: a possession form right after a perfect
    auxiliary and before a noun phrase ("I've *got* a test on Friday")."""
    return (
        m.start > 0
        and m.end < len(tokens)
        and all(t.norm in grammar.possession for t in tokens[m.start : m.end])
        and tokens[m.start - 1].norm in grammar.auxiliaries
        and (tokens[m.end].norm in grammar.noun_phrase_openers or tokens[m.end].norm.isdigit())
    )


def _before_an_article(tokens: Sequence[Token], codes: tuple[str, ...]) -> Sequence[Token]:
    """`tokens` up to the first article of the languages `codes` (every language's when none):
    what follows an article is a noun phrase, not a participle ("ho la verifica sui
    *risultati*")."""
    found = _articles(codes or lang.LANGUAGES)
    for i, t in enumerate(tokens):
        if t.norm in found:
            return tokens[:i]
    return tokens


@functools.cache
def _articles(codes: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for code in codes for w in articles(code))


def participles_of_perfects(
    sentence: str,
    tokens: list[Token],
    passable: Callable[[int], bool],
    clause_ends: Sequence[int],
) -> frozenset[int]:
    """The positions in `tokens` (`tokenize(sentence)`) of the participles that complete a past
    form of the sentence's languages:

    - the first word after it that `passable` does not pass (the caller's function words), when
      that word has a participle's shape or a past ending ("hayamos *repasado*", "haben wir
      zusammen *gerechnet*"). Only that word: in "ho sbagliato sul *mercato*" the participle is
      a past form itself, and "mercato", which ends like one, is the question's topic;
    - the last word of its clause (`clause_ends`: the positions of clauses' last words, in
      order), when that word has a participle's shape with a prefix, where German puts it ("was
      hast du mir über Brüche *beigebracht*")."""
    codes = sentence_languages(tokens)
    grammar = _joined(codes)
    forms = list(_own_past_forms(sentence, tokens, codes))
    covered = {i for m in forms for i in range(m.start, m.end)}
    found: set[int] = set()
    for m in forms:
        i = m.end
        while i < len(tokens) and i not in covered and passable(i):
            i += 1
        if (
            i < len(tokens)
            and i not in covered
            and (
                _participle_at(sentence, tokens[i], grammar)
                or _ends_with(
                    sentence,
                    tokens[i : i + 1],
                    grammar.past_endings + grammar.person_endings,
                    grammar,
                )
            )
        ):
            found.add(i)
        at = bisect.bisect_left(clause_ends, m.end)
        last = clause_ends[at] if at < len(clause_ends) else None
        if (
            last is not None
            and last not in covered
            and _participle_at(sentence, tokens[last], grammar, prefixed=True)
        ):
            found.add(last)
    return frozenset(found)
