"""Words of a text: normalised letter-and-digit runs, and the language data that decides which
words carry meaning (stop words) and which may be glued to a word (clitics)."""

from __future__ import annotations

import functools
import re

from tutor_memory.domain import lang
from tutor_memory.domain.text.normalise import normalise

# A word: a run of letters and digits. Apostrophes, hyphens and punctuation separate words, which
# splits French/Italian elisions (l'acqua -> l, acqua).
_WORD = re.compile(r"[^\W_]+")


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
    and its prepositions too if `prepositions` (see `tutor_memory.domain.lang`)."""
    glued = data.attached_conjunctions + (data.attached_prepositions if prepositions else ())
    return tuple(w for p in glued for w in words(p))
