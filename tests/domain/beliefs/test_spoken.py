"""A check topic in the student's own words never becomes a belief (SPEC R5.5)."""

from __future__ import annotations

import pytest

from tutor_memory.domain.beliefs.spoken import is_spoken_expression


@pytest.mark.parametrize(
    "topic",
    [
        # the design document's two cases
        "ask me the questions",
        "bueno ahora explícame todos los pasos",
        # English: question words, asking verbs, pronouns, fillers
        "what is osmosis",
        "explain diffusion",
        "can you quiz me",
        "ok so osmosis",
        "i don't get mitosis",
        # Italian
        "spiegami la mitosi",
        "allora facciamo i mitocondri",
        "perché la cellula si divide",
        "chiedimi le domande",
        # Spanish
        "dime qué es la ósmosis",
        "pregúntame sobre la célula",
        "yo no entiendo la mitosis",
        # Arabic, also with a glued conjunction
        "اشرح الخلية",
        "واشرح لي الانتشار",
        "يعني الخلية",
        "ماذا تعني الخلية",
        # French, German, Portuguese
        "explique-moi la mitose",
        "alors les cellules",
        "erkläre mir die Osmose",
        "also die Zelle",
        "me explica a osmose",
        "então a célula",
        # a question mark of any script
        "osmosis?",
        "¿ósmosis",
        "الخلية؟",
    ],
)
def test_topics_in_spoken_words_read_as_spoken(topic: str) -> None:
    assert is_spoken_expression(topic)


@pytest.mark.parametrize(
    "topic",
    [
        "osmosis",
        "cell membrane",
        "la mitosi",
        "ciclo de Krebs",
        "الخلية",
        "i mitocondri",
        "le cellule",
        "les cellules",
        "cycle du carbone",
        "die Zelle",
        "a célula",
        "o ciclo de Krebs",
        "teoria das cordas",
        "trasporto ai tessuti",
        "غشاء الخلية",
        "الانتشار من الخلية",
        "photosynthesis and respiration",
        "potential well",
        "like terms",
        "cos x",
        "",
    ],
)
def test_subject_terms_in_any_language_do_not(topic: str) -> None:
    assert not is_spoken_expression(topic)
