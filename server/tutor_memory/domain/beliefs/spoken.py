"""Check topics that are the student's own words, not a subject term (SPEC R5.5).

In teaching mode a check's "topic" was sometimes whatever the student had just said, and replayed
checks produced beliefs such as "understands ask me the questions" and "struggles with bueno ahora
explícame todos los pasos". A topic that matches no concept and reads as spoken expression is kept
as evidence but never becomes a belief; `is_spoken_expression` is that reading.

A topic reads as spoken when it contains a question mark (any script) or any word or phrase from
the language files (`tutor_memory.lang`, every language at once, since a topic's language is not
known): question words ("what", "perché", "ماذا"), asking verbs ("ask", "spiegami", "explícame",
"erkläre", "اشرح"), first- and second-person pronouns ("me", "tú", "moi", "ich", "أنا") and fillers
("ok", "bueno", "allora", "alors", "então", "يعني"). Words that are also articles or name-internal
prepositions somewhere ("i", "la", "du", "ai") are deliberately not in those lists, so "la mitosi"
or "cycle du carbone" stay subject terms. An Arabic word may carry a glued و or ف ("واشرح").
"""

from __future__ import annotations

import functools

from tutor_memory.domain import lang
from tutor_memory.domain.text.phrases import PhraseIndex, compile_phrase
from tutor_memory.domain.text.sentences import QUESTION_MARKS
from tutor_memory.domain.text.words import clitics, words

# The lists that mark spoken expression, one field of every language file each.
SPOKEN_FIELDS = ("question_words", "asking_verbs", "pronouns", "fillers")


@functools.cache
def _index() -> PhraseIndex[str]:
    entries = []
    for data in lang.all_languages():
        prefixes = clitics(data, prepositions=False)
        for field in SPOKEN_FIELDS:
            for phrase in getattr(data, field):
                entries.append((compile_phrase(phrase), field, prefixes))
    return PhraseIndex(entries)


def is_spoken_expression(topic: str) -> bool:
    """Whether a check topic reads as the student's spoken words rather than a subject term."""
    if any(c in QUESTION_MARKS for c in topic):
        return True
    return next(iter(_index().find_all(words(topic))), None) is not None
