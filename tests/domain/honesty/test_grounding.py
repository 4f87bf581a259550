"""R7.2, R7.3: an answer's sentences traced to file passages and recalled memories, no model."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.honesty import grounding
from tutor_memory.domain.honesty.grounding import (
    MAX_TRACES_PER_KIND,
    GroundingStatus,
    SourceMemory,
    SourcePassage,
    ground,
    split_sentences,
)

OSMOSIS = SourcePassage(
    "bio-1",
    1,
    3,
    "Osmosis is the diffusion of water molecules across a semi-permeable membrane, from the "
    "side with fewer dissolved particles to the side with more.",
)
CELL = SourcePassage(
    "bio-1", 1, 4, "The cell is the basic unit of life. Every cell is enclosed by a membrane."
)
REVOLUTION = SourcePassage(
    "hist-2", 2, 7, "The French Revolution began in 1789 with the storming of the Bastille."
)
JULY = SourceMemory(
    12,
    datetime(2026, 7, 12, 10, 30, tzinfo=UTC),
    "Can we go over eukaryotic cells today?\nWe worked through two examples of eukaryotic cells "
    "and you got the second one right.",
)
ITALIAN = SourcePassage(
    "bio-it",
    1,
    2,
    "La cellula è l'unità fondamentale della vita. Le cellule eucariotiche possiedono un nucleo "
    "e numerosi organelli.",
)
ARABIC = SourcePassage(
    "bio-ar",
    1,
    5,
    "الخلية هي الوحدة الأساسية للحياة. تنتقل جزيئات الماء عبر الغشاء في عملية الخاصية الأسموزية.",
)


# ---------------------------------------------------------------- sentences


def test_sentences_split_at_latin_ends_but_not_inside_abbreviations_or_numbers() -> None:
    text = (
        "Osmosis moves water, e.g. into a cell. Dr. Rossi measured 3.5 ml! Did it work? "
        "See p. 12 for details... Then rest.\n- a list item"
    )
    assert split_sentences(text) == [
        "Osmosis moves water, e.g. into a cell.",
        "Dr. Rossi measured 3.5 ml!",
        "Did it work?",
        "See p. 12 for details...",
        "Then rest.",
        "- a list item",
    ]


def test_a_dot_before_a_lowercase_word_does_not_end_the_sentence() -> None:
    assert split_sentences("It took approx. ten minutes. Next.") == [
        "It took approx. ten minutes.",
        "Next.",
    ]


def test_closing_quotes_stay_with_their_sentence() -> None:
    assert split_sentences('He said "it diffuses." Then it stopped.') == [
        'He said "it diffuses."',
        "Then it stopped.",
    ]


def test_italian_sentences_and_abbreviations() -> None:
    text = "La cellula è viva, ad es. il lievito. Cosa contiene? Il nucleo, ecc. Bene."
    assert split_sentences(text) == [
        "La cellula è viva, ad es. il lievito.",
        "Cosa contiene?",
        "Il nucleo, ecc. Bene.",
    ]


def test_arabic_sentences_split_at_the_arabic_question_mark_and_full_stops() -> None:
    full_stop = "\u06d4"  # ARABIC FULL STOP
    text = f"ما هي الخلية؟ الخلية هي وحدة الحياة. وتنتقل جزيئات الماء عبر الغشاء{full_stop} شكرا"
    assert split_sentences(text) == [
        "ما هي الخلية؟",
        "الخلية هي وحدة الحياة.",
        f"وتنتقل جزيئات الماء عبر الغشاء{full_stop}",
        "شكرا",
    ]


def test_blank_text_has_no_sentences() -> None:
    assert split_sentences("  \n\n ") == []


# ---------------------------------------------------------------- status


def test_every_sentence_traced_is_answered_and_names_its_page() -> None:
    answer = (
        "Sure! Osmosis is the diffusion of water across a membrane. "
        "The cell is the basic unit of life."
    )
    result = ground(answer, [OSMOSIS, CELL, REVOLUTION], [])
    assert result.status is GroundingStatus.ANSWERED
    greeting, osmosis, cell = result.sentences
    assert not greeting.counted
    assert greeting.labels == ()
    assert osmosis.passages == (("bio-1", 1, 3),)
    assert osmosis.labels == ("file bio-1 p.3",)
    assert cell.passages[0] == ("bio-1", 1, 4)


def test_an_answer_with_one_invented_sentence_is_partial() -> None:
    answer = (
        "Osmosis is the diffusion of water across a membrane. "
        "Mitochondria release energy from glucose through respiration."
    )
    result = ground(answer, [OSMOSIS, CELL], [])
    assert result.status is GroundingStatus.PARTIAL
    assert [bool(s.labels) for s in result.sentences] == [True, False]


def test_an_answer_nothing_supports_is_impossible() -> None:
    answer = "Mitochondria release energy from glucose. Ribosomes assemble proteins."
    assert ground(answer, [OSMOSIS, CELL], []).status is GroundingStatus.IMPOSSIBLE


def test_no_source_and_no_claim_is_impossible() -> None:
    assert ground("Sure! Great question.", [], []).status is GroundingStatus.IMPOSSIBLE
    assert ground("", [OSMOSIS], []).status is GroundingStatus.IMPOSSIBLE


def test_an_answer_that_claims_nothing_with_sources_at_hand_is_answered() -> None:
    result = ground("Sure! Great question.", [OSMOSIS], [])
    assert result.status is GroundingStatus.ANSWERED
    assert not any(s.counted for s in result.sentences)


def test_a_shared_topic_alone_does_not_trace_a_sentence() -> None:
    # Shares "osmosis" and "water" with the passage, but not most of its words.
    answer = "Osmosis explains why wilted lettuce regains crispness when soaked in cold water."
    assert ground(answer, [OSMOSIS], []).status is GroundingStatus.IMPOSSIBLE


def test_numbers_must_match() -> None:
    right = ground("The French Revolution began in 1789.", [REVOLUTION], [])
    wrong = ground("The French Revolution began in 1788.", [REVOLUTION], [])
    assert right.status is GroundingStatus.ANSWERED
    assert wrong.status is GroundingStatus.IMPOSSIBLE


def test_plural_and_singular_forms_match() -> None:
    answer = "Osmosis moves water molecule across membranes."
    assert ground(answer, [OSMOSIS], []).status is GroundingStatus.ANSWERED


# ---------------------------------------------------------------- memories as sources (R7.2)


def test_a_recalled_memory_grounds_a_sentence_and_is_labelled_with_its_date() -> None:
    answer = "In July we worked through two examples of eukaryotic cells."
    result = ground(answer, [OSMOSIS], [JULY])
    assert result.status is GroundingStatus.ANSWERED
    (trace,) = result.sentences
    assert trace.passages == ()
    assert trace.episode_ids == (12,)
    assert trace.labels == ("memory of 12 Jul 2026",)


def test_memory_dates_are_given_in_the_students_time_zone() -> None:
    late = SourceMemory(13, datetime(2026, 7, 11, 23, 30, tzinfo=UTC), JULY.text)
    answer = "We worked through two examples of eukaryotic cells."
    in_utc = ground(answer, [], [late])
    in_rome = ground(answer, [], [late], tz_name="Europe/Rome")
    assert in_utc.sentences[0].labels == ("memory of 11 Jul 2026",)
    assert in_rome.sentences[0].labels == ("memory of 12 Jul 2026",)


def test_passage_labels_come_before_memory_labels() -> None:
    memory = SourceMemory(20, datetime(2026, 9, 18, tzinfo=UTC), OSMOSIS.text)
    result = ground("Osmosis is the diffusion of water across a membrane.", [OSMOSIS], [memory])
    assert result.sentences[0].labels == ("file bio-1 p.3", "memory of 18 Sep 2026")


def test_a_sentence_lists_at_most_three_passages_best_first() -> None:
    weaker = [
        SourcePassage("bio-1", 1, page, "Osmosis: water diffusion across a membrane.")
        for page in range(10, 16)
    ]
    result = ground("Osmosis is the diffusion of water molecules.", [*weaker, OSMOSIS], [])
    trace = result.sentences[0]
    assert len(trace.passages) == MAX_TRACES_PER_KIND
    assert trace.passages[0] == ("bio-1", 1, 3)  # holds every word, the others miss "molecules"


# ---------------------------------------------------------------- languages


def test_italian_answer_traces_through_plural_and_singular() -> None:
    answer = "Certo! Le cellule eucariotiche hanno un nucleo e molti organelli."
    result = ground(answer, [ITALIAN], [])
    assert result.status is GroundingStatus.ANSWERED
    assert result.sentences[1].labels == ("file bio-it p.2",)


def test_italian_invented_sentence_makes_it_partial() -> None:
    answer = (
        "Le cellule eucariotiche possiedono un nucleo. "
        "La fotosintesi produce ossigeno nelle foglie."
    )
    assert ground(answer, [ITALIAN], []).status is GroundingStatus.PARTIAL


def test_arabic_answer_traces_through_glued_conjunctions_and_articles() -> None:
    answer = "بالتأكيد! والخلية هي الوحدة الأساسية للحياة. وتنتقل جزيئات الماء عبر الغشاء."
    result = ground(answer, [ARABIC], [])
    assert result.status is GroundingStatus.ANSWERED
    assert [s.counted for s in result.sentences] == [False, True, True]
    assert result.sentences[2].labels == ("file bio-ar p.5",)


def test_arabic_invented_sentence_makes_it_partial() -> None:
    answer = "الخلية هي الوحدة الأساسية للحياة. الميتوكوندريا تنتج الطاقة للخلية."
    result = ground(answer, [ARABIC], [])
    assert result.status is GroundingStatus.PARTIAL


# ---------------------------------------------------------------- internals and speed


@settings(max_examples=300, deadline=None)
@given(
    tokens=st.lists(st.text("abc", min_size=1, max_size=8), min_size=1, max_size=12),
    word=st.text("abc", min_size=2, max_size=8),
)
def test_the_fast_latin_lookup_agrees_with_comparing_every_pair_of_forms(
    tokens: list[str], word: str
) -> None:
    source = grounding._source(" ".join(tokens))
    expected = any(grounding._forms(word) & grounding._forms(t) for t in tokens)
    assert source.holds(grounding._word(word)) is expected
