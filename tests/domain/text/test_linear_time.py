"""The text toolkit runs in time linear in its input, whatever the input (issue 12).

Each public entry point of `tutor_memory.domain.text` is timed on adversarial shapes drawn by
hypothesis (`tests.helpers.hostile_text`) at n and 16 n characters: the cost may grow at most
`MAX_GROWTH`-fold (linear: 16, quadratic: 256), and the larger run must stay under a ceiling 50
times what the linear implementation needs (`tests.helpers.timing`). The shapes the issue measured
run at full size under the same ceilings.
"""

from __future__ import annotations

import functools

from tests.helpers.linear_time import linear_time_tests
from tests.helpers.phrase_fields import WILDCARD_PHRASE_FIELDS
from tests.helpers.timing import EntryPoint
from tutor_memory.domain import lang
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.phrases import PhraseIndex, compile_phrase
from tutor_memory.domain.text.sentences import (
    ANSWER,
    CLAUSES,
    sentence_pieces,
    sentence_spans,
    split_sentences,
)
from tutor_memory.domain.text.spans import tokenize
from tutor_memory.domain.text.stems import document_terms, grouped_query_terms
from tutor_memory.domain.text.words import clitics, words


@functools.cache
def _every_phrase() -> PhraseIndex[None]:
    """Every wildcard phrase of every language file (recaps, record questions), with clitics."""
    return PhraseIndex(
        (compile_phrase(phrase), None, clitics(data, prepositions=True))
        for data in lang.all_languages()
        for field in WILDCARD_PHRASE_FIELDS
        for phrase in getattr(data, field)
    )


ENTRY_POINTS = {
    "sentences.sentence_spans (PROSE)": EntryPoint(sentence_spans, 512, 0.6),
    "sentences.split_sentences (ANSWER)": EntryPoint(
        lambda text: split_sentences(text, ANSWER), 512, 0.8
    ),
    "sentences.split_sentences (CLAUSES)": EntryPoint(
        lambda text: split_sentences(text, CLAUSES), 512, 0.5
    ),
    "sentences.sentence_pieces": EntryPoint(sentence_pieces, 512, 0.4),
    "words.words": EntryPoint(words, 512, 0.3),
    "spans.tokenize": EntryPoint(tokenize, 512, 0.7),
    "normalise.normalise": EntryPoint(normalise, 512, 0.3),
    "phrases.PhraseIndex.find_all": EntryPoint(
        lambda text: list(_every_phrase().find_all(words(text))), 512, 1.0
    ),
    "stems.document_terms": EntryPoint(document_terms, 512, 0.4),
    "stems.grouped_query_terms": EntryPoint(grouped_query_terms, 512, 0.5),
}


(
    test_cost_grows_linearly_on_known_shapes,
    test_cost_grows_linearly_on_drawn_shapes,
    test_the_issue_shapes_stay_under_the_ceiling,
) = linear_time_tests(ENTRY_POINTS)
