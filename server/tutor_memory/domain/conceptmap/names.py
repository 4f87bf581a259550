"""Exact-name routing (SPEC R4.1, R5.5): which concept names a text mentions.

Names and text are compared word by word through their canonical forms
(`tutor_memory.conceptmap.canonical`), so "the cell membranes" in a sentence finds "Cell Membrane"
and "للخلية" finds "الخلية"; nothing else is fuzzy. A name is found only as whole words.

Where names overlap in the text, the longest wins ("cell membrane potential" finds "Membrane
potential" rather than "Cell membrane" when both are names and the second is longer), then the one
further left; each name is reported once, in the order of its first occurrence.

A single-word name that is one of the languages' short function words (`SHORT_STOP_WORD_LETTERS`
letters at most: "it", "la", "die") is not matched: it would be "found" in nearly every sentence.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from tutor_memory.domain.conceptmap.canonical import canonical_words, name_words
from tutor_memory.domain.text.words import stop_words

# Stop words up to this long are never matched as a one-word name ("IT" is "it"); longer ones are
# ("Mean" in a statistics course).
SHORT_STOP_WORD_LETTERS = 3


class NameMatcher:
    """The concept names that occur in a text, found through canonical keys.

    Names are indexed by their first canonical word, so `find` looks at a handful of candidates per
    word of the text whatever the number of names.
    """

    def __init__(self, names: Iterable[str]) -> None:
        names = tuple(names)
        # What the matcher was built from: two matchers of the same names match alike.
        self.names = frozenset(names)
        self._by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
        seen: set[tuple[str, ...]] = set()
        short_stops = {w for w in stop_words() if len(w) <= SHORT_STOP_WORD_LETTERS}
        for name in names:
            words = name_words(name)
            if not words or words in seen:
                continue  # a second name with the same key is the same concept: first one wins
            if len(words) == 1 and words[0] in short_stops:
                continue
            seen.add(words)
            self._by_first.setdefault(words[0], []).append((words, name))
        for candidates in self._by_first.values():
            candidates.sort(key=lambda c: -len(c[0]))
        self._nbytes: int | None = None

    def __len__(self) -> int:
        return sum(len(c) for c in self._by_first.values())

    def nbytes(self) -> int:
        """About what the matcher holds in memory: its index of canonical words. The names are
        counted with the map's nodes, and the words are shared with the bounded cache of folded
        words (`canonical.fold_word`). Weighed once: the matcher never changes, and the check
        groups that hold it are weighed at every check."""
        if self._nbytes is None:
            self._nbytes = self._weigh()
        return self._nbytes

    def _weigh(self) -> int:
        size = sys.getsizeof
        held = size(self) + size(vars(self)) + size(self.names) + size(self._by_first)
        for candidates in self._by_first.values():
            held += size(candidates)
            for words, _ in candidates:
                held += size((words, None)) + size(words)
        return held

    def find(self, text: str) -> list[str]:
        """The names that occur in `text` as whole words, longest first where they overlap, in the
        order of their first occurrence, each once."""
        words = canonical_words(text)
        found: list[tuple[int, int, str]] = []  # (start, end, name) of every candidate occurrence
        for start, word in enumerate(words):
            for name_seq, name in self._by_first.get(word, ()):
                end = start + len(name_seq)
                if tuple(words[start:end]) == name_seq:
                    found.append((start, end, name))
        if not found:
            return []
        taken = [False] * len(words)
        chosen: list[tuple[int, str]] = []
        for start, end, name in sorted(found, key=lambda f: (f[0] - f[1], f[0])):
            if not any(taken[start:end]):
                taken[start:end] = [True] * (end - start)
                chosen.append((start, name))
        result: list[str] = []
        for _, name in sorted(chosen):
            if name not in result:
                result.append(name)
        return result
