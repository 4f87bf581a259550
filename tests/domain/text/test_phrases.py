"""Phrase matching (`domain.text.phrases`): how far a match may reach.

`PhraseIndex.longest_span` lets a caller that needs a match ending at a given token look only
that far back (the teaching detector's tails, `domain.conceptmap.teaching`); these tests hold
it to every match the index can make.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tutor_memory.domain.text.phrases import (
    LONG_GAP,
    LONG_GAP_WORD,
    MAX_SPELLED_FORMS,
    SHORT_GAP,
    SHORT_GAP_WORD,
    PhraseIndex,
    compile_phrase,
    spelled_forms,
)
from tutor_memory.domain.text.words import words

_WORDS = ("keep", "that", "in", "mind", "note")
_word = st.sampled_from(_WORDS)


@st.composite
def _phrase_sources(draw: st.DrawFn) -> str:
    """A phrase of the syntax: words, with single wildcards between some of them."""
    words = draw(st.lists(_word, min_size=1, max_size=4))
    parts = [words[0]]
    for word in words[1:]:
        gap = draw(st.sampled_from(("", SHORT_GAP_WORD, LONG_GAP_WORD)))
        parts += [gap, word] if gap else [word]
    return " ".join(parts)


def test_a_phrase_spans_its_words_and_the_most_its_gaps_skip() -> None:
    assert compile_phrase("keep that in mind").longest_span == 4
    assert compile_phrase(f"keep {SHORT_GAP_WORD} in mind").longest_span == 3 + SHORT_GAP
    assert compile_phrase(f"haben {LONG_GAP_WORD} behandelt").longest_span == 2 + LONG_GAP
    index = PhraseIndex(
        [
            (compile_phrase("note"), "a", ()),
            (compile_phrase(f"keep {SHORT_GAP_WORD} mind"), "b", ()),
        ]
    )
    assert index.longest_span == 2 + SHORT_GAP


@given(
    sources=st.lists(_phrase_sources(), min_size=1, max_size=4),
    tokens=st.lists(_word, max_size=30),
)
def test_no_match_covers_more_tokens_than_the_index_longest_span(
    sources: list[str], tokens: list[str]
) -> None:
    index = PhraseIndex((compile_phrase(source), source, ()) for source in sources)
    for match in index.find_all(tokens):
        assert match.end - match.start <= index.longest_span


def _found(source: str, text: str) -> list[tuple[int, int]]:
    index = PhraseIndex([(compile_phrase(source), None, ())])
    return [(m.start, m.end) for m in index.find_all(words(text))]


def test_a_phrase_matches_its_words_written_as_students_text_them() -> None:
    assert _found("para que lo sepas", "pa q lo sepas, no tengo libro") == [(0, 4)]
    assert _found("perché abbiamo", "xke abbiamo fatto questo") == [(0, 2)]
    assert _found("você me explicou", "vc me explicou ontem") == [(0, 3)]
    # The written form still matches, and a spelling matches only in the phrase's place.
    assert _found("para que lo sepas", "para que lo sepas") == [(0, 4)]
    assert _found("para que lo sepas", "q lo sepas") == []


def test_a_phrase_of_many_spellable_words_is_indexed_in_a_bounded_number_of_forms() -> None:
    forms = spelled_forms(compile_phrase("que que que que que"))
    assert len(forms) == MAX_SPELLED_FORMS
    assert forms[0] == compile_phrase("que que que que que")
