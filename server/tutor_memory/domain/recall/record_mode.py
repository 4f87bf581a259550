"""Is the student asking about their own record? (SPEC R6.3, R6.4)

"What did I get wrong so far?", "cosa abbiamo studiato", "ماذا أخطأت": for such questions the block
puts beliefs and earlier work (the whole conversation, not only checks) first and says so. The
phrases live in the language files (`record_triggers`); matching is on normalised words, so case,
accents, punctuation and Arabic letter variants don't matter. A trigger preceded by one of its
language's `trigger_vetoes` is a different question ("¿por qué estudiamos…?" asks why).
"""

from __future__ import annotations

import functools

from tutor_memory.domain import lang
from tutor_memory.domain.text.phrases import PhraseIndex, compile_phrase
from tutor_memory.domain.text.words import clitics, words


@functools.cache
def _triggers() -> PhraseIndex[frozenset[str]]:
    entries = []
    for data in lang.all_languages():
        glued = clitics(data, prepositions=True)  # Arabic بماذا أخطأت: "in what did I err"
        vetoes = frozenset(w for v in data.trigger_vetoes for w in words(v))
        entries += [(compile_phrase(t), vetoes, glued) for t in data.record_triggers]
    return PhraseIndex(entries)


def is_record_question(query: str) -> bool:
    """True if `query` asks about the student's own record: mistakes, what was studied, progress."""
    tokens = words(query)
    return any(
        m.start == 0 or tokens[m.start - 1] not in m.payload for m in _triggers().find_all(tokens)
    )
