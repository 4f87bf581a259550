"""Text normalisation and phrase matching shared by recall's language-aware parts (SPEC R2.5, R6.3).

Everything language-specific is data in `tutor_memory.lang`; this module only knows how to make two
spellings of the same word compare equal (`normalise`), how to cut text into words (`words`) and how
to find a phrase from the language files in a word sequence (`Phrase`, `PhraseIndex`).

Phrase syntax (used by every phrase field of the language files): words separated by spaces, written
naturally (accents, capitals, Arabic hamza forms are normalised when compiled). Two wildcard words
allow other words in between, because questions and recaps put adverbs and objects there ("what have
we *already* studied", "haben wir *Photosynthese und Osmose* behandelt"):
- `*`  matches 0 to `SHORT_GAP` words;
- `**` matches 0 to `LONG_GAP` words (for verb-final clauses, German).
A phrase may not start or end with a wildcard.
"""

from __future__ import annotations

import functools
import itertools
import re
import sys
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from tutor_memory.domain import lang

# Wildcard words of the phrase syntax and how many words each may skip (see module docstring).
SHORT_GAP_WORD = "*"
LONG_GAP_WORD = "**"
SHORT_GAP = 2
LONG_GAP = 6
_GAPS = {SHORT_GAP_WORD: SHORT_GAP, LONG_GAP_WORD: LONG_GAP}

# Apostrophe look-alikes that keyboards and word processors produce; mapped to ASCII before NFKC,
# because NFKC turns the acute accent (U+00B4) into a space plus a combining mark.
_APOSTROPHES = str.maketrans(dict.fromkeys("\u2019\u2018\u02bc\u02bb\u0060\u00b4\u2032\uff07", "'"))

# Latin ligatures that NFKC leaves alone but that users type either way (French "cœur"/"coeur").
_LIGATURES = str.maketrans({"œ": "oe", "æ": "ae"})

# Arabic letter variants that spell the same word: hamza-carrying alefs and alef wasla are written
# as bare alef, alef maqsura as yeh, teh marbuta as heh (the usual search normalisation), plus the
# Persian yeh/kaf that Persian keyboards produce. Eastern Arabic digits become ASCII digits so that
# years compare equal whatever the keyboard.
_ARABIC = str.maketrans(
    {
        "\u0623": "\u0627",  # alef with hamza above -> alef
        "\u0625": "\u0627",  # alef with hamza below -> alef
        "\u0622": "\u0627",  # alef with madda -> alef
        "\u0671": "\u0627",  # alef wasla -> alef
        "\u0649": "\u064a",  # alef maqsura -> yeh
        "\u0629": "\u0647",  # teh marbuta -> heh
        "\u06cc": "\u064a",  # Farsi yeh -> yeh
        "\u06a9": "\u0643",  # keheh (Persian kaf) -> kaf
        **{chr(0x0660 + d): str(d) for d in range(10)},  # Arabic-Indic digits
        **{chr(0x06F0 + d): str(d) for d in range(10)},  # Extended Arabic-Indic digits
    }
)

# Arabic tashkeel (harakat, tanween, shadda, sukun, superscript alef, Quranic marks) and tatweel:
# optional in ordinary writing, so they must not make two spellings differ.
_ARABIC_MARKS = re.compile("[\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed\u0640]")

# Combining diacritics of Latin script (after NFD): accents, cedilla, umlaut, tilde.
_LATIN_MARKS = re.compile("[\u0300-\u036f]")

# A word: a run of letters and digits. Apostrophes, hyphens and punctuation separate words, which
# splits French/Italian elisions (l'acqua -> l, acqua).
_WORD = re.compile(r"[^\W_]+")


@functools.cache
def _format_characters() -> dict[int, None]:
    """Every Unicode format character (category Cf), as a deletion table for str.translate."""
    return {cp: None for cp in range(sys.maxunicode + 1) if unicodedata.category(chr(cp)) == "Cf"}


def normalise(text: str) -> str:
    """Fold `text` so that case, accents, Arabic letter variants and spacing don't matter."""
    if text.isascii():
        # Of all the steps below only the apostrophes, case and spacing can change ASCII text;
        # most stored text is ASCII, and this runs several times for every episode written.
        return " ".join(text.translate(_APOSTROPHES).lower().split())
    text = text.translate(_APOSTROPHES)
    text = unicodedata.normalize("NFKC", text).casefold()
    # Format characters (zero-width joiners, bidi marks, soft hyphens) are invisible; they would
    # otherwise split words.
    text = text.translate(_format_characters())
    text = text.translate(_LIGATURES).translate(_ARABIC)
    text = _ARABIC_MARKS.sub("", text)
    text = unicodedata.normalize("NFC", _LATIN_MARKS.sub("", unicodedata.normalize("NFD", text)))
    return " ".join(text.split())


def words(text: str) -> list[str]:
    """The normalised word tokens of `text` (letters and digits only)."""
    return split_words(normalise(text))


def split_words(normalised: str) -> list[str]:
    """The word tokens of text that is already normalised."""
    return _WORD.findall(normalised)


@functools.cache
def stop_words() -> frozenset[str]:
    """Stop words of every supported language, normalised (the files store them normalised)."""
    return frozenset(normalise(w) for data in lang.all_languages() for w in data.stop_words)


def clitics(data: lang.LanguageData, *, prepositions: bool) -> tuple[str, ...]:
    """The normalised clitics that may be glued to a word of `data`'s language: its conjunctions,
    and its prepositions too if `prepositions` (see `tutor_memory.lang`)."""
    glued = data.attached_conjunctions + (data.attached_prepositions if prepositions else ())
    return tuple(w for p in glued for w in words(p))


@dataclass(frozen=True, slots=True)
class Phrase:
    """A compiled phrase: normalised words and, between them, gaps (the most words they skip)."""

    items: tuple[str | int, ...]
    source: str

    @property
    def first(self) -> str:
        first = self.items[0]
        assert isinstance(first, str)  # guaranteed by compile_phrase
        return first


def compile_phrase(source: str) -> Phrase:
    """Compile a phrase written in the syntax of the module docstring; ValueError if malformed."""
    items: list[str | int] = []
    for chunk in source.split():
        if chunk in _GAPS:
            items.append(_GAPS[chunk])
        else:
            items.extend(words(chunk))
    if not items or not isinstance(items[0], str) or not isinstance(items[-1], str):
        raise ValueError(f"phrase {source!r} is empty or starts or ends with a wildcard")
    if any(isinstance(a, int) and isinstance(b, int) for a, b in itertools.pairwise(items)):
        raise ValueError(f"phrase {source!r} has two wildcards in a row")
    return Phrase(tuple(items), source)


def _match_rest(tokens: Sequence[str], pos: int, items: Sequence[str | int]) -> int | None:
    """End index of the shortest match of `items` starting at `pos`, or None."""
    if not items:
        return pos
    head = items[0]
    if isinstance(head, int):
        # A gap is always followed by a word (compile_phrase guarantees it): try the shortest skip.
        for skip in range(head + 1):
            end = _match_rest(tokens, pos + skip, items[1:])
            if end is not None:
                return end
        return None
    if pos < len(tokens) and tokens[pos] == head:
        return _match_rest(tokens, pos + 1, items[1:])
    return None


T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Match(Generic[T]):
    """A phrase found in a token list: tokens[start:end], and the prefix glued to its first word."""

    start: int
    end: int
    payload: T
    prefix: str


@dataclass(frozen=True, slots=True)
class _Entry(Generic[T]):
    phrase: Phrase
    payload: T
    prefixes: tuple[str, ...]


class PhraseIndex(Generic[T]):
    """Many phrases, each with a payload, searchable in one pass over a token list.

    `prefixes` are clitics that may be glued to a phrase's first word (Arabic و, ف, ب: "وفي",
    "بيوليو"); a match through one reports it in `Match.prefix`, so callers can tell "in July"
    (بيوليو) from "and July" (ويوليو).
    """

    def __init__(self, entries: Iterable[tuple[Phrase, T, tuple[str, ...]]]) -> None:
        self._by_first: dict[str, list[_Entry[T]]] = {}
        prefixes: set[str] = set()
        for phrase, payload, entry_prefixes in entries:
            self._by_first.setdefault(phrase.first, []).append(
                _Entry(phrase, payload, entry_prefixes)
            )
            prefixes.update(entry_prefixes)
        self._prefixes = tuple(sorted(p for p in prefixes if p))

    def matches_at(self, tokens: Sequence[str], start: int) -> Iterator[Match[T]]:
        """Every phrase that matches at `start`, in index order."""
        token = tokens[start]
        heads = [(token, "")]
        heads += [(token[len(p) :], p) for p in self._prefixes if token.startswith(p)]
        for head, prefix in heads:
            for entry in self._by_first.get(head, ()):
                if prefix and prefix not in entry.prefixes:
                    continue
                end = _match_rest(tokens, start + 1, entry.phrase.items[1:])
                if end is not None:
                    yield Match(start, end, entry.payload, prefix)

    def find_all(self, tokens: Sequence[str]) -> Iterator[Match[T]]:
        """Every match in `tokens`, ordered by start position."""
        for start in range(len(tokens)):
            yield from self.matches_at(tokens, start)
