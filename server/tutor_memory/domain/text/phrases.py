"""Phrases of the language files found in a word sequence (`Phrase`, `PhraseIndex`).

Everything language-specific is data in `tutor_memory.domain.lang`; words are compared in their
normalised form (`tutor_memory.domain.text.normalise`).

Phrase syntax (used by every phrase field of the language files): words separated by spaces, written
naturally (accents, capitals, Arabic hamza forms are normalised when compiled). Two wildcard words
allow other words in between, because questions and recaps put adverbs and objects there ("what have
we *already* studied", "haben wir *Photosynthese und Osmose* behandelt"):
- `*`  matches 0 to `SHORT_GAP` words;
- `**` matches 0 to `LONG_GAP` words (for verb-final clauses, German).
A phrase may not start or end with a wildcard.

A phrase word also matches the short spellings students type for it (`texting_spellings` of the
language files: "q" for "que", "xke" for "perché"): every phrase of an index is also indexed in
its spelled forms, so a token is still compared word for word; only a phrase whose later words
have spellings is tried in a few more forms where its first word matches.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from tutor_memory.domain import lang
from tutor_memory.domain.text.words import words

# Wildcard words of the phrase syntax and how many words each may skip (see module docstring).
SHORT_GAP_WORD = "*"
LONG_GAP_WORD = "**"
SHORT_GAP = 2
LONG_GAP = 6
_GAPS = {SHORT_GAP_WORD: SHORT_GAP, LONG_GAP_WORD: LONG_GAP}


# The most spelled forms indexed for one phrase (its words' spellings combined): a phrase of many
# spellable words ("q" "k" "ke" for each "que") would otherwise multiply without need.
MAX_SPELLED_FORMS = 16


@dataclass(frozen=True, slots=True)
class Phrase:
    """A compiled phrase: normalised words and, between them, gaps (the most words they skip)."""

    items: tuple[str | int, ...]
    source: str

    @property
    def longest_span(self) -> int:
        """The most tokens a match can cover: each word one, each gap as many as it skips."""
        return sum(1 if isinstance(item, str) else item for item in self.items)

    @property
    def long_gap(self) -> bool:
        """Whether the phrase has a `**` gap (a verb-final clause's)."""
        return LONG_GAP in self.items

    def word_positions(self, tokens: Sequence[str], start: int) -> list[int]:
        """The positions of the phrase's own words in its match at `start` (the one
        `PhraseIndex.find_all` reports there; [] if none): what is not a gap's."""
        found = [start]
        return found if _match_rest(tokens, start + 1, self.items, 1, found) is not None else []

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


@functools.cache
def _spellings() -> dict[str, tuple[str, ...]]:
    """Every language's `texting_spellings`, by the normalised word they spell."""
    spelled: dict[str, list[str]] = {}
    for data in lang.all_languages():
        for short, word in data.texting_spellings.items():
            (full,), (typed,) = words(word), words(short)
            if typed not in spelled.setdefault(full, []):
                spelled[full].append(typed)
    return {full: tuple(typed) for full, typed in spelled.items()}


def spelled_forms(phrase: Phrase) -> list[Phrase]:
    """`phrase` and the forms of it written with its words' texting spellings (at most
    `MAX_SPELLED_FORMS` in all, the phrase as written first)."""
    spellings = _spellings()
    choices: list[tuple[str | int, ...]] = [
        (item, *spellings.get(item, ())) if isinstance(item, str) else (item,)
        for item in phrase.items
    ]
    forms = itertools.islice(itertools.product(*choices), MAX_SPELLED_FORMS)
    return [Phrase(tuple(items), phrase.source) for items in forms]


def _match_rest(
    tokens: Sequence[str],
    pos: int,
    items: Sequence[str | int],
    item: int = 1,
    found: list[int] | None = None,
) -> int | None:
    """End index of the shortest match of items[item:] starting at `pos`, or None; with `found`,
    the positions of the phrase's words in that match are appended to it.

    The work per call is bounded by the phrase alone (its words, and the product of its gaps'
    sizes), never by the length of `tokens`: matching a whole text is linear in it.
    """
    while item < len(items):
        head = items[item]
        if isinstance(head, int):
            # A gap is always followed by a word (compile_phrase guarantees it): shortest skip
            # first.
            kept = len(found) if found is not None else 0
            for skip in range(head + 1):
                end = _match_rest(tokens, pos + skip, items, item + 1, found)
                if end is not None:
                    return end
                if found is not None:
                    del found[kept:]
            return None
        if pos >= len(tokens) or tokens[pos] != head:
            return None
        if found is not None:
            found.append(pos)
        pos += 1
        item += 1
    return pos


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
    # The phrase's second item when it is a word (no gap before it): the word right after the
    # first, compared before the rest of the phrase is tried.
    second: str | None


class PhraseIndex(Generic[T]):
    """Many phrases, each with a payload, searchable in one pass over a token list.

    `prefixes` are clitics that may be glued to a phrase's first word (Arabic و, ف, ب: "وفي",
    "بيوليو"); a match through one reports it in `Match.prefix`, so callers can tell "in July"
    (بيوليو) from "and July" (ويوليو).
    """

    def __init__(self, entries: Iterable[tuple[Phrase, T, tuple[str, ...]]]) -> None:
        self._by_first: dict[str, list[_Entry[T]]] = {}
        prefixes: set[str] = set()
        # The most tokens a match of any phrase covers (`longest_span`).
        self.longest_span = 0
        for written, payload, entry_prefixes in entries:
            self.longest_span = max(self.longest_span, written.longest_span)
            for phrase in spelled_forms(written):
                second = phrase.items[1] if len(phrase.items) > 1 else None
                self._by_first.setdefault(phrase.first, []).append(
                    _Entry(
                        phrase, payload, entry_prefixes, second if isinstance(second, str) else None
                    )
                )
            prefixes.update(entry_prefixes)
        self._prefixes = tuple(sorted(p for p in prefixes if p))
        # The letters a prefix starts with: most tokens start with none of them (every Latin word,
        # when the prefixes are Arabic clitics), and then no prefix needs trying.
        self._prefix_initials = frozenset(p[0] for p in self._prefixes)

    def matches_at(self, tokens: Sequence[str], start: int) -> Iterator[Match[T]]:
        """Every phrase that matches at `start`, in index order."""
        token = tokens[start]
        heads = [(token, "")]
        if token[:1] in self._prefix_initials:
            heads += [(token[len(p) :], p) for p in self._prefixes if token.startswith(p)]
        after = tokens[start + 1] if start + 1 < len(tokens) else None
        for head, prefix in heads:
            for entry in self._by_first.get(head, ()):
                if (prefix and prefix not in entry.prefixes) or (
                    entry.second is not None and entry.second != after
                ):
                    continue
                end = _match_rest(tokens, start + 1, entry.phrase.items)
                if end is not None:
                    yield Match(start, end, entry.payload, prefix)

    def may_start(self, token: str) -> bool:
        """Whether a phrase may start at `token`: its first word, or one glued to a prefix. A
        set look-up, so that a scan tries phrases only where one can match."""
        if token in self._by_first:
            return True
        return token[:1] in self._prefix_initials and any(
            token.startswith(p) and token[len(p) :] in self._by_first for p in self._prefixes
        )

    def find_all(self, tokens: Sequence[str]) -> Iterator[Match[T]]:
        """Every match in `tokens`, ordered by start position."""
        for start, token in enumerate(tokens):
            if self.may_start(token):
                yield from self.matches_at(tokens, start)
