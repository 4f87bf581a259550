"""Words with their place in the original text, and the phrase look-ups built on them.

`tutor_memory.domain.text.words.words` normalises a whole text and forgets where each word came
from; the concept map needs the place too, to hand back a name or a note as the user wrote it
("Mitochondria", not "mitochondria"). `tokenize` cuts the original text into words and normalises
each one with `tutor_memory.domain.text.normalise`, so a token's `norm` is exactly what `words`
would have produced for it.

One difference from `words`, on purpose: a word keeps the `+` and `#` signs glued to its end, so
that "C++", "C#" and "Na+" (an ion, not the atom) stay different from "C" and "Na".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

from tutor_memory.domain import lang
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.phrases import Match, PhraseIndex, compile_phrase
from tutor_memory.domain.text.words import clitics

# A word of the original text: letters and digits, plus what `normalise` drops or joins instead of
# splitting on (Latin and Arabic combining marks, tatweel is a letter already, zero-width joiners,
# soft hyphens, byte-order marks), plus trailing sign characters (see module docstring).
_RAW_WORD = re.compile(
    "(?:[^\\W_]|[\u0300-\u036f\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u00ad\u200b-\u200f\u2060\ufeff])+[+#\u207a\u208a]*"
)

# The signs a token keeps glued to its end, once normalised (see the module docstring).
GLUED_SIGNS = "+#"
# The same, on text that is already normalised (marks and format characters are gone).
_NORM_WORD = re.compile(f"[^\\W_]+[{GLUED_SIGNS}]*")

# Punctuation that ends a clause inside a sentence: a subject or a name never runs across it.
CLAUSE_MARKS = frozenset(",;:()[]\u060c\u061b\u2013\u2014")

# Latin combining accents, as left by canonical decomposition.
_LATIN_ACCENT_RANGE = ("\u0300", "\u036f")


@dataclass(frozen=True, slots=True)
class Token:
    """One word: its normalised form and where it sits in the original text."""

    norm: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """The words of `text`, normalised as `words.words` does, with their spans."""
    if text.isascii():
        # On ASCII text normalising is lower-casing, which keeps every span where it is.
        return [Token(m.group().lower(), m.start(), m.end()) for m in _NORM_WORD.finditer(text)]
    tokens: list[Token] = []
    for match in _RAW_WORD.finditer(text):
        for word in _NORM_WORD.findall(normalise(match.group())):
            tokens.append(Token(word, match.start(), match.end()))
    return tokens


class NormView(Sequence[str]):
    """The normalised words of a token list, read in place (phrase look-ups probe a few words at
    each position; copying the list each time would make a long sentence quadratic)."""

    __slots__ = ("_tokens",)

    def __init__(self, tokens: Sequence[Token]) -> None:
        self._tokens = tokens

    def __len__(self) -> int:
        return len(self._tokens)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [t.norm for t in self._tokens[index]]
        return self._tokens[index].norm


def between(text: str, tokens: Sequence[Token], index: int) -> str:
    """The characters between token `index - 1` and token `index` (the text before the first)."""
    start = tokens[index - 1].end if index > 0 else 0
    return text[start : tokens[index].start]


def clause_break_before(text: str, tokens: Sequence[Token], index: int) -> bool:
    """Whether punctuation that ends a clause separates token `index` from the one before it."""
    return index > 0 and any(c in CLAUSE_MARKS for c in between(text, tokens, index))


def span_text(text: str, tokens: Sequence[Token], start: int, end: int) -> str:
    """The original text of tokens[start:end] (empty when the range is empty)."""
    if start >= end:
        return ""
    return text[tokens[start].start : tokens[end - 1].end]


def latin_accents(word: str) -> str:
    """The Latin accents of `word`, in order ("è" -> grave accent, "e" -> "")."""
    low, high = _LATIN_ACCENT_RANGE
    return "".join(c for c in unicodedata.normalize("NFD", word.casefold()) if low <= c <= high)


@dataclass(frozen=True, slots=True)
class Phrase:
    """A phrase of a language file, with the accents of each of its words as written."""

    source: str
    accents: tuple[str, ...]
    length: int


def _phrase(source: str) -> Phrase:
    words = [source[t.start : t.end] for t in tokenize(source)]
    return Phrase(source, tuple(latin_accents(w) for w in words), len(words))


def build_index(
    field: str, *, glued_conjunctions: bool = False, languages: Sequence[str] | None = None
) -> PhraseIndex[Phrase]:
    """Every phrase of `field` in every language file (or in those of `languages`), searchable in
    one pass.

    With `glued_conjunctions`, a phrase also matches with one of its language's attached
    conjunctions glued to its first word (Arabic "وتذكر أن", "and remember that").
    """
    entries = []
    files = lang.all_languages() if languages is None else [lang.load(c) for c in languages]
    for data in files:
        prefixes = clitics(data, prepositions=False) if glued_conjunctions else ()
        for source in getattr(data, field):
            entries.append((compile_phrase(source), _phrase(source), prefixes))
    return PhraseIndex(entries)


def longest_at(
    index: PhraseIndex[Phrase],
    tokens: Sequence[Token],
    pos: int,
    *,
    text: str | None = None,
) -> Match[Phrase] | None:
    """The longest phrase of `index` starting at token `pos`, or None.

    With `text` (the text `tokens` come from), a phrase word written with Latin accents matches
    only a word with the same accents (Italian "è" 'is' is not "e" 'and').
    """
    if pos >= len(tokens):
        return None
    best: Match[Phrase] | None = None
    for match in index.matches_at(NormView(tokens), pos):
        if text is not None and not _accents_agree(text, tokens, match):
            continue
        if best is None or match.end > best.end:
            best = match
    return best


def _accents_agree(text: str, tokens: Sequence[Token], match: Match[Phrase]) -> bool:
    phrase = match.payload
    if match.end - match.start != phrase.length:
        return True  # a phrase with gaps: word-by-word alignment unknown; data never needs it
    for offset, wanted in enumerate(phrase.accents):
        if wanted:
            token = tokens[match.start + offset]
            if latin_accents(text[token.start : token.end]) != wanted:
                return False
    return True
