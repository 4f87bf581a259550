"""A cheap guess of the language of a sentence, from its stop words.

Only where a word's role differs between languages and the sentence around it decides: German "das"
is an article, Portuguese "das" joins a name ("teoria das cordas"); English "do" is a verb,
Portuguese "do" joins a name. Canonical keys never use it: a name alone has no context.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from tutor_memory.domain import lang
from tutor_memory.domain.text.spans import Token, tokenize


@functools.cache
def _stop_words() -> tuple[tuple[str, frozenset[str]], ...]:
    return tuple(
        (data.code, frozenset(t.norm for w in data.stop_words for t in tokenize(w)))
        for data in lang.all_languages()
    )


def guess_language(tokens: Sequence[Token]) -> str | None:
    """The code of the language with the most stop words among `tokens`, if one has strictly
    more than every other; None when no stop word decides."""
    counts = sorted(
        ((sum(t.norm in words for t in tokens), code) for code, words in _stop_words()),
        reverse=True,
    )
    (best, code), (runner_up, _) = counts[0], counts[1]
    return code if best > runner_up else None
