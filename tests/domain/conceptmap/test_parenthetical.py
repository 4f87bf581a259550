"""The extractor's parenthetical glosses, read in linear time, find what the old reading found.

The old reading took the clause before each parenthesis with a pattern run over the whole
sentence before it (quadratic in a sentence of many parentheses); `_ReferenceReader` keeps it, and
on sentences drawn from a small vocabulary the two readers must propose the same concepts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.conceptmap import extract
from tutor_memory.domain.conceptmap.extract import _predicate, _Reader, _Signal, _valid_name
from tutor_memory.domain.text.spans import Token

_CLAUSE_START = re.compile(r".*[,;:\u060c\u061b]")


class _ReferenceReader(_Reader):
    def _parenthetical(
        self, plain: str, tokens: Sequence[Token], page: int, sections: tuple[str, ...]
    ) -> None:
        for match in extract._PARENTHESIS.finditer(plain):
            gloss = _predicate(match.group(1))
            if any(c.isdigit() for c in gloss) or extract._word_count(gloss) < 3:
                continue
            clause = _CLAUSE_START.sub("", plain[: match.start()]).strip()
            if _valid_name(clause, marked=False):
                self.add(_Signal.PARENTHETICAL, clause, plain, gloss, page, sections)


WORDS = ("osmosis", "cell", "membrane", "the", "water", "of", "and", "it", "(", ")", ",", ";", ":")
SENTENCES = st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join)


def _concepts(reader: _Reader, text: str) -> list[tuple[str, str, str]]:
    reader.read_page(text, 1, (), markdown=False)
    return [(c.name, c.summary, c.definition) for c in reader.concepts()]


@settings(max_examples=1500, deadline=None)
@given(SENTENCES)
def test_parenthetical_glosses_agree_with_the_old_reading(text: str) -> None:
    assert _concepts(_Reader(), text) == _concepts(_ReferenceReader(), text)


def test_each_parenthesis_glosses_the_clause_before_it() -> None:
    text = (
        "Cells hold water, osmosis (the diffusion of water) moves it; turgor (the pressure "
        "of water) keeps cells firm."
    )
    names = [name for name, _, _ in _concepts(_Reader(), text)]
    assert names == ["Osmosis", "Turgor"]
