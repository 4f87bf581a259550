"""Stems for lexical recall in the seven supported languages (R2.1, R2.5): Snowball stemmers
(PyStemmer), chosen per text by its language, with Arabic clitics and the article folded first.

A text's language is guessed from its stop words (the language files' lists): the language whose
stop words it uses most, English when it uses none. Arabic script is Arabic whatever else. A
stored episode is indexed under the stems of its one guessed language, without that language's
stop words; a query, short and often ambiguous, is stemmed in its best two guesses, so that a
misguess costs a little noise rather than the match.

PyStemmer runs the Snowball algorithms in C (about 0.1 µs a word here), so stemming every word
an episode holds costs microseconds, and a query's stems cost nothing on the read path.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import Stemmer

from tutor_memory.domain import lang
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.words import split_words

# The Snowball algorithm of each language file.
SNOWBALL_ALGORITHMS = {
    "en": "english",
    "it": "italian",
    "es": "spanish",
    "fr": "french",
    "de": "german",
    "pt": "portuguese",
    "ar": "arabic",
}
# The language of a text whose stop words say nothing.
DEFAULT_LANGUAGE = "en"
# A query is stemmed in this many of its best-guessed languages.
QUERY_LANGUAGES = 2
# An Arabic clitic (و, ف, ب, ك, ل) or the article comes off a word only if this many letters
# remain: shorter words are more likely to begin with those letters than to carry a clitic.
MIN_ARABIC_STEM_LETTERS = 3
# Words shorter than this carry no meaning a lexical match should count (single letters, l', d').
MIN_TERM_LETTERS = 2


@dataclass(frozen=True, slots=True)
class _Language:
    code: str
    stop_words: frozenset[str]
    stemmer: Stemmer.Stemmer
    # Arabic: the clitics and article forms that may be glued to a word's start, longest first.
    prefixes: tuple[str, ...]


@functools.cache
def _languages() -> dict[str, _Language]:
    found: dict[str, _Language] = {}
    for data in lang.all_languages():
        prefixes: tuple[str, ...] = ()
        if data.code == "ar":
            glued = {*data.attached_conjunctions, *data.attached_prepositions}
            glued |= set(data.article_prefixes)
            prefixes = tuple(sorted((normalise(p) for p in glued), key=len, reverse=True))
        found[data.code] = _Language(
            data.code,
            frozenset(normalise(w) for w in data.stop_words),
            Stemmer.Stemmer(SNOWBALL_ALGORITHMS[data.code]),
            prefixes,
        )
    return found


# A character of the Arabic block: one regex search per word is C speed, where a Python loop over
# the characters of every word was a third of the cost of indexing an episode.
_ARABIC_LETTER = re.compile("[\u0600-\u06ff]")


@functools.cache
def _stop_word_languages() -> dict[str, tuple[str, ...]]:
    """Each stop word of a non-Arabic language -> the languages it is a stop word of."""
    found: dict[str, list[str]] = {}
    for code, language in _languages().items():
        if code != "ar":
            for word in language.stop_words:
                found.setdefault(word, []).append(code)
    return {word: tuple(codes) for word, codes in found.items()}


def _arabic(word: str) -> bool:
    return _ARABIC_LETTER.search(word) is not None


def guess_languages(words: Sequence[str]) -> list[str]:
    """Language codes of normalised `words`, most likely first (every supported language, ties
    in the language files' order, DEFAULT_LANGUAGE first when no stop word is known)."""
    languages = _languages()
    arabic = sum(1 for w in words if _arabic(w)) if _ARABIC_LETTER.search(" ".join(words)) else 0
    if arabic * 2 > len(words):
        return ["ar", *(c for c in languages if c != "ar")]
    hits = dict.fromkeys((code for code in languages if code != "ar"), 0)
    codes_of = _stop_word_languages()
    for word, n in Counter(words).items():
        for code in codes_of.get(word, ()):
            hits[code] += n
    ranked = sorted(hits, key=lambda c: (-hits[c], c != DEFAULT_LANGUAGE))
    return [*ranked, "ar"]


def _fold_arabic(word: str, language: _Language) -> str:
    """The word without the clitics and article glued to its start (و + ال + word ...)."""
    changed = True
    while changed:
        changed = False
        for prefix in language.prefixes:
            if word.startswith(prefix) and len(word) - len(prefix) >= MIN_ARABIC_STEM_LETTERS:
                word = word[len(prefix) :]
                changed = True
                break
    return word


def _stems(words: Sequence[str], code: str, stop_words: frozenset[str]) -> list[str]:
    """The stems of normalised `words` read as language `code`, `stop_words` and one-letter
    words left out. Arabic-script words are folded and stemmed as Arabic whatever `code` is;
    Latin-script words in an Arabic text as English."""
    languages = _languages()
    language, arabic = languages[code], languages["ar"]
    latin_stemmer = language.stemmer if code != "ar" else languages[DEFAULT_LANGUAGE].stemmer
    kept = [w for w in words if w not in stop_words and len(w) >= MIN_TERM_LETTERS]
    if not _ARABIC_LETTER.search(" ".join(kept)):
        # Latin script only (most text): each distinct word stemmed once.
        distinct = list(dict.fromkeys(kept))
        stems = dict(zip(distinct, latin_stemmer.stemWords(distinct), strict=True))
        return [stems[w] for w in kept]
    folded = [_fold_arabic(w, arabic) if _arabic(w) else w for w in kept]
    arabic_words = [w for w in folded if _arabic(w)]
    latin_words = [w for w in folded if not _arabic(w)]
    stems = dict(zip(latin_words, latin_stemmer.stemWords(latin_words), strict=True))
    stems.update(zip(arabic_words, arabic.stemmer.stemWords(arabic_words), strict=True))
    return [stems[w] for w in folded]


def document_terms(text: str) -> tuple[str, Counter[str]]:
    """The language of a stored text and how often each of its stems occurs (stop words left
    out)."""
    words = split_words(normalise(text))
    code = guess_languages(words)[0]
    return code, Counter(_stems(words, code, _languages()[code].stop_words))


def query_terms(query: str) -> list[str]:
    """The stems a query is looked up by: its words in its best-guessed languages, stop words of
    those languages left out, each stem once, in the order the words came."""
    return grouped_query_terms(query)[0]


def grouped_query_terms(query: str) -> tuple[list[str], list[tuple[str, ...]]]:
    """`query_terms`, and the same stems grouped by the word they stem: one group per distinct
    word kept, holding its stem in each guessed language (one stem when they agree). A word is
    one word of the query however many languages stem it, which is what BM25's coverage of the
    query counts (`domain.recall.lexical.coverage`)."""
    words = split_words(normalise(query))
    codes = guess_languages(words)[:QUERY_LANGUAGES]
    # A stop word of either guess is left out in both: the second guess must not bring back
    # the first one's "what" and "did".
    stop_words = frozenset().union(*(_languages()[c].stop_words for c in codes))
    # Each language's stems line up with the same kept words (stop words are left out alike).
    per_code = [_stems(words, code, stop_words) for code in codes]
    out: dict[str, None] = {}
    for stems in per_code:
        out.update(dict.fromkeys(stems))
    groups = {tuple(dict.fromkeys(word)): None for word in zip(*per_code, strict=True)}
    return list(out), list(groups)
