"""Which passages an answer is traced against (SPEC R7.3): those sharing the most content words
with it. A course of hundreds of pages has thousands of passages; comparing every sentence with
all of them would cost more than the turn, and a passage sharing no word cannot trace a
sentence."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tutor_memory.domain.records import StoredPassage
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.words import stop_words, words

# Passages the tracer compares an answer with.
TRACE_PASSAGES = 50


def content_words(text: str) -> set[str]:
    """The words of `text` that carry meaning: not stop words, longer than one letter."""
    stops = stop_words()
    return {w for w in words(normalise(text)) if w not in stops and len(w) > 1}


def nearest_passages(
    answer: str,
    passages: Sequence[StoredPassage],
    words_of: Callable[[StoredPassage], set[str]],
) -> list[StoredPassage]:
    """The TRACE_PASSAGES passages sharing the most content words with `answer`, most first
    (ties in stored order); `words_of` gives a passage's content words (cached by the caller)."""
    wanted = content_words(answer)
    if not wanted:
        return []
    scored = []
    for p in passages:
        shared = len(wanted & words_of(p))
        if shared:
            scored.append((-shared, p.passage_id, p))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [p for _, _, p in scored[:TRACE_PASSAGES]]
