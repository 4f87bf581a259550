"""Does a tutor answer narrate the record of a period? (SPEC R2.6)

"In July we covered photosynthesis and osmosis" is stored as an answer episode; recalled later as a
memory of July it would make the brain remember that it remembered. The server flags such answers
at write time with `is_narration`, so recall can keep them out of the period they narrate.

A narration is a sentence that holds both a narration marker (a first-person-plural recap verb from
the language files, "we covered", "abbiamo visto", "درسنا") and a time window
(`parse_time_window`). Sentences are cut by the `CLAUSES` rule of
`tutor_memory.domain.text.sentences`: at sentence-end marks and semicolons before white space, and
at line breaks. Requiring both in the *same sentence* keeps ordinary explanations out: "The
French Revolution began in July 1789" has a date but no recap verb (and 1789 is no record period);
"As we saw, osmosis needs a membrane" has a recap verb but no period.

Tutors recount in many more shapes than the recap verbs ("Last Tuesday you practised…", "This
week you got every ratio right", "La settimana scorsa hai lavorato…", "Il y a trois jours, on s'est
entraînés…"). What they share is structure, not vocabulary: a past tense with the student or the
tutor in it, inside a sentence that names a period of the record. So a sentence also narrates when
it has a period, a past form (`past_forms`, `past_person_forms`, or a word ending as the sentence's
language forms its past: `past_endings`, `past_person_endings`) and a person of the sessions
(`session_persons`: "you", "we", never "I" alone; or a past ending that carries the person): the
reading of `tutor_memory.domain.recall.tense`.
Plans ("Today we're going to study volcanoes") have no past; dated subject matter ("in July 1789
the Bastille fell") has no period of the record; a recap without a period ("So far you've done
well") has no period.
"""

from __future__ import annotations

import functools

from tutor_memory.domain import lang
from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.recall.tense import past_with_a_person
from tutor_memory.domain.recall.timewindow import parse_time_window
from tutor_memory.domain.recall.timewords import has_time_words
from tutor_memory.domain.text.phrases import PhraseIndex, compile_phrase
from tutor_memory.domain.text.sentences import CLAUSES, split_sentences
from tutor_memory.domain.text.words import clitics, words


@functools.cache
def _markers() -> PhraseIndex[frozenset[str]]:
    entries = []
    for data in lang.all_languages():
        # Only conjunctions may be glued to a recap verb: a glued preposition makes it a noun
        # (Arabic بدرسنا, "in our lesson").
        glued = clitics(data, prepositions=False)
        vetoes = frozenset(w for v in data.marker_vetoes for w in words(v))
        entries += [(compile_phrase(m), vetoes, glued) for m in data.narration_markers]
    return PhraseIndex(entries)


def _has_marker(sentence: str) -> bool:
    tokens = words(sentence)
    return any(
        m.start == 0 or tokens[m.start - 1] not in m.payload for m in _markers().find_all(tokens)
    )


def is_narration(text: str, now_us: int, tz: str, budget: WorkBudget | None = None) -> bool:
    """True if `text` narrates what happened in a period of the record (a recap verb, or a past
    with the student or the tutor in it, and a window in one sentence). Raises ValueError if `tz`
    is not a known IANA time zone. `budget` is checked at each sentence: reading the windows of
    thousands of sentences takes seconds."""
    parse_time_window("", now_us, tz)  # validate tz even when no sentence gets that far
    # Each sentence is read once: an episode's summary often repeats its text's first sentences
    # (its start, cut short), and the verdict is the sentence's alone.
    sentences = dict.fromkeys(split_sentences(text, CLAUSES))
    # Cheapest first: most sentences hold no time word, and then name no period (the time
    # window's fast path, asked before the costlier past-and-person reading).
    return any(
        has_time_words(sentence)
        and (_has_marker(sentence) or past_with_a_person(sentence))
        and parse_time_window(sentence, now_us, tz) is not None
        for sentence in (budget or unlimited()).each(sentences)
    )
