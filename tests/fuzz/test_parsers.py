"""Every parser and detector of the domain, fuzzed (issue 12): on any text a client can send, each
one returns a well-formed answer, the same answer twice, and raises nothing but its documented
errors.

"Well-formed" is what each caller relies on: spans inside the text and in order, pieces that join
back into the text, chunks within their limit that lose no visible character, windows that end
after they start, traces that cite only the sources they were given. The examples per property
are `tests.helpers.fuzz.FUZZ_EXAMPLES`: a short run in `make test`, a long one in `make fuzz`.
File readers and the chain hash have their own modules beside this one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.fuzz import fuzz_settings, hostile_text
from tests.helpers.phrase_fields import WILDCARD_PHRASE_FIELDS
from tutor_memory.domain import lang
from tutor_memory.domain.beliefs.routing import Routing, route_topic
from tutor_memory.domain.beliefs.spoken import is_spoken_expression
from tutor_memory.domain.conceptmap.blocks import parse_blocks
from tutor_memory.domain.conceptmap.canonical import canonical_key, canonical_words, name_words
from tutor_memory.domain.conceptmap.headings import clean_name, rejection_reason
from tutor_memory.domain.conceptmap.markup import strip_markup, strong_spans
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.conceptmap.teaching import detect_teaching, is_question
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.files.chunking import (
    chunk,
    split_at_spaces,
    split_markdown_blocks,
    split_paragraphs,
)
from tutor_memory.domain.files.passages import strip_markdown
from tutor_memory.domain.honesty.citations import CitationStatus, verify_citations
from tutor_memory.domain.honesty.grounding import (
    GroundingStatus,
    SourceMemory,
    SourcePassage,
    ground,
)
from tutor_memory.domain.honesty.grounding import split_sentences as answer_sentences
from tutor_memory.domain.honesty.tracing import content_words
from tutor_memory.domain.limits import MAX_TIME_US, MAX_TIME_ZONE_CHARS, MIN_TIME_US
from tutor_memory.domain.recall.block import zone
from tutor_memory.domain.recall.narration import is_narration
from tutor_memory.domain.recall.record_mode import MAX_TOPIC_WORDS, is_record_question, record_topic
from tutor_memory.domain.recall.timewindow import parse_time_window
from tutor_memory.domain.recall.timewords import has_time_words
from tutor_memory.domain.text.markdown import unwrap_images, unwrap_links
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.phrases import PhraseIndex, compile_phrase
from tutor_memory.domain.text.sentences import (
    ANSWER,
    CLAUSES,
    LINES_JOINED,
    PROSE,
    sentence_pieces,
    sentence_spans,
    split_sentences,
)
from tutor_memory.domain.text.spans import tokenize
from tutor_memory.domain.text.stems import document_terms, query_terms
from tutor_memory.domain.text.words import clitics, words
from tutor_memory.models.tokenizers import TiktokenCounter

RULES = {"PROSE": PROSE, "ANSWER": ANSWER, "CLAUSES": CLAUSES, "LINES_JOINED": LINES_JOINED}

# Zones a student may live in, the edges of the offsets included, and UTC.
ZONES = ("UTC", "Europe/Rome", "Pacific/Kiritimati", "Pacific/Pago_Pago", "Asia/Kathmandu")
any_zone = st.sampled_from(ZONES)
# Any time a caller may send (the documented range), with its edges drawn often.
any_time_us = st.integers(MIN_TIME_US, MAX_TIME_US) | st.sampled_from([MIN_TIME_US, MAX_TIME_US])

# Words the detectors and the extractor look for, so that drawn texts reach past the first test.
_TRIGGERS = (
    "last week",
    "this month",
    "in July 1789",
    "yesterday",
    "what did I get wrong",
    "remember that",
    "consider the",
    "as we covered",
    "Osmosis is the diffusion of water.",
    "**Osmosis**",
    "# Cells\n",
    "## Osmosis\n",
    "```\n",
    "- item\n",
    "Term: definition.\n",
    "e.g. ",
    "p. 3 ",
    "\u0627\u0644\u0623\u0633\u0628\u0648\u0639 \u0627\u0644\u0645\u0627\u0636\u064a",
    "la semana pasada",
    "?",
    "\n\n",
)
# Hostile text, and text assembled from the phrases the detectors react to with hostile glue.
texts = hostile_text | st.lists(
    st.sampled_from(_TRIGGERS) | hostile_text.filter(lambda t: len(t) < 40), max_size=30
).map("".join)


def twice(fn: Callable[[], Any]) -> Any:
    """`fn()`, checked to give the same answer on a second call (no hidden state)."""
    first = fn()
    assert fn() == first
    return first


def assert_spans(spans: list[tuple[int, int]], length: int) -> None:
    """Non-empty, inside the text, in order and not overlapping."""
    previous_end = 0
    for start, end in spans:
        assert previous_end <= start < end <= length
        previous_end = end


# -- the text toolkit ----------------------------------------------------------------------------


@fuzz_settings
@given(texts)
def test_normalise_is_idempotent_and_has_no_edge_or_double_blanks(text: str) -> None:
    folded = twice(lambda: normalise(text))
    assert folded == folded.strip()
    assert "  " not in folded
    assert normalise(folded) == folded


@fuzz_settings
@given(texts)
def test_words_are_non_empty_and_blank_free(text: str) -> None:
    found = twice(lambda: words(text))
    assert all(w and not any(c.isspace() for c in w) for w in found)


@fuzz_settings
@given(texts)
def test_tokens_lie_inside_the_text_in_order(text: str) -> None:
    tokens = twice(lambda: tokenize(text))
    previous_start = 0
    for token in tokens:
        assert token.norm
        assert previous_start <= token.start < token.end <= len(text)
        previous_start = token.start


@pytest.mark.parametrize("rule_name", RULES)
def test_sentence_spans_are_stripped_ordered_and_inside(rule_name: str) -> None:
    rule = RULES[rule_name]

    @fuzz_settings
    @given(texts)
    def check(text: str) -> None:
        spans = twice(lambda: sentence_spans(text, rule))
        assert_spans(spans, len(text))
        for start, end in spans:
            piece = text[start:end]
            assert piece == piece.strip()
            assert piece
        assert split_sentences(text, rule) == [text[s:e] for s, e in spans]
        # No visible character is dropped between sentences.
        kept = "".join(text[s:e] for s, e in spans)
        assert "".join(kept.split()) == "".join(text.split())

    check()


@pytest.mark.parametrize("rule_name", RULES)
def test_sentence_pieces_join_back_into_the_text(rule_name: str) -> None:
    rule = RULES[rule_name]

    @fuzz_settings
    @given(texts)
    def check(text: str) -> None:
        pieces = twice(lambda: sentence_pieces(text, rule))
        assert all(pieces)
        assert "".join(pieces) == text

    check()


@functools.cache
def _every_phrase() -> PhraseIndex[str]:
    """Every wildcard phrase of every language file, with its clitics."""
    return PhraseIndex(
        (compile_phrase(phrase), phrase, clitics(data, prepositions=True))
        for data in lang.all_languages()
        for field in WILDCARD_PHRASE_FIELDS
        for phrase in getattr(data, field)
    )


@fuzz_settings
@given(texts)
def test_phrase_matches_lie_inside_the_word_list(text: str) -> None:
    tokens = words(text)
    matches = twice(lambda: list(_every_phrase().find_all(tokens)))
    starts = [m.start for m in matches]
    assert starts == sorted(starts)
    for match in matches:
        assert 0 <= match.start < match.end <= len(tokens)


@fuzz_settings
@given(texts)
def test_links_and_images_unwrap_to_no_longer_text(text: str) -> None:
    assert len(twice(lambda: unwrap_images(text))) <= len(text)
    assert len(twice(lambda: unwrap_links(text))) <= len(text)


@fuzz_settings
@given(texts)
def test_stems_count_each_stem_positively_in_a_known_language(text: str) -> None:
    code, counts = twice(lambda: document_terms(text))
    assert code in {data.code for data in lang.all_languages()}
    assert all(n > 0 and stem for stem, n in counts.items())
    terms = twice(lambda: query_terms(text))
    assert len(terms) == len(set(terms))
    assert all(terms)


# -- chunking and Markdown stripping (pages and passages) ------------------------------------------


@fuzz_settings
@given(texts, st.integers(1, 300))
def test_chunks_fit_their_limit_and_lose_no_visible_character(text: str, limit: int) -> None:
    splitters = (split_paragraphs, sentence_pieces, split_at_spaces)
    chunks = twice(lambda: chunk(text, limit, splitters))
    assert all(c and c == c.strip() and len(c) <= limit for c in chunks)
    assert "".join("".join(chunks).split()) == "".join(text.split())


@fuzz_settings
@given(texts)
def test_markdown_blocks_join_back_into_the_text(text: str) -> None:
    blocks = twice(lambda: split_markdown_blocks(text))
    assert all(blocks)
    assert "".join(blocks) == "".join(text.splitlines(keepends=True))


@fuzz_settings
@given(texts)
def test_stripping_markdown_never_adds_text(text: str) -> None:
    stripped = twice(lambda: strip_markdown(text))
    assert len(stripped) <= len(text)
    assert len(twice(lambda: strip_markup(text))) <= len(text)
    assert all(span and span in text for span in twice(lambda: strong_spans(text)))


# -- recall's detectors ----------------------------------------------------------------------------


@fuzz_settings
@given(texts, any_time_us, any_zone)
def test_narration_is_a_plain_answer(text: str, now_us: int, tz: str) -> None:
    assert twice(lambda: is_narration(text, now_us, tz)) in (True, False)


@fuzz_settings
@given(texts)
def test_record_questions_are_a_plain_answer(text: str) -> None:
    assert twice(lambda: is_record_question(text)) in (True, False)


@fuzz_settings
@given(texts)
def test_a_record_topic_is_a_few_of_the_messages_own_words(text: str) -> None:
    topic = twice(lambda: record_topic(text))
    if topic is None:
        return
    said = set(words(text))
    assert 0 < len(topic.split()) <= MAX_TOPIC_WORDS
    assert all(w in said for w in topic.split())


@fuzz_settings
@given(texts, any_time_us, any_zone)
def test_a_time_window_ends_after_it_starts_and_comes_from_time_words(
    text: str, now_us: int, tz: str
) -> None:
    window = twice(lambda: parse_time_window(text, now_us, tz))
    if window is None:
        return
    assert window.start_us < window.end_us
    assert window.label
    assert window.expression
    # The expression is the library's English reading, not a quote; but a window only ever comes
    # from text the fast path lets through.
    assert has_time_words(text)


@fuzz_settings
@given(hostile_text.filter(lambda t: len(t) <= 2 * MAX_TIME_ZONE_CHARS))
def test_a_time_zone_name_is_a_zone_or_invalid_argument_naming_time_zone(name: str) -> None:
    refused: InvalidArgument | None = None
    try:
        zone(name)
    except InvalidArgument as exc:
        refused = exc
    if refused is not None:
        assert refused.field == "time_zone"
        assert len(refused.problem) < 120  # the name is quoted short: status details stay small
    with pytest.raises(ValueError, match="time zone"):
        # The detector's own contract: an unknown zone is a ValueError, never something else.
        parse_time_window("last week", 0, name + "/\x00nowhere")


# -- honesty -------------------------------------------------------------------------------------


passage_strategy = st.builds(
    SourcePassage,
    file_id=st.sampled_from(["bio-1", "chem-2"]),
    version=st.integers(1, 3),
    page=st.integers(0, 5),
    text=texts,
)
memory_strategy = st.builds(
    SourceMemory,
    episode_id=st.integers(1, 1000),
    occurred_at=st.datetimes(
        min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
    text=texts,
)


@fuzz_settings
@given(
    texts,
    st.lists(passage_strategy, max_size=4),
    st.lists(memory_strategy, max_size=4),
    any_zone,
)
def test_grounding_cites_only_the_sources_it_was_given(
    answer: str, passages: list[SourcePassage], memories: list[SourceMemory], tz: str
) -> None:
    result = twice(lambda: ground(answer, passages, memories, tz))
    assert result.status in set(GroundingStatus)
    given_passages = {(p.file_id, p.version, p.page) for p in passages}
    given_memories = {m.episode_id for m in memories}
    for trace in result.sentences:
        assert trace.sentence
        assert trace.sentence in answer
        assert set(trace.passages) <= given_passages
        assert set(trace.episode_ids) <= given_memories
        assert len(trace.labels) == len(trace.passages) + len(trace.episode_ids)
    assert [t.sentence for t in result.sentences] == answer_sentences(answer)
    assert all(len(w) > 1 for w in twice(lambda: content_words(answer)))


@fuzz_settings
@given(
    st.lists(st.tuples(texts, texts), max_size=4),
    st.dictionaries(texts, st.none() | texts, max_size=4),
)
def test_citation_verdicts_always_have_a_status_and_a_detail(
    cited: list[tuple[str, str]], current: dict[str, str | None]
) -> None:
    verdict = twice(lambda: verify_citations(cited, current))
    assert verdict.status in set(CitationStatus)
    assert verdict.detail


# -- the concept map -------------------------------------------------------------------------------


@pytest.mark.parametrize("markdown", [True, False], ids=["markdown", "plain"])
def test_blocks_are_headings_of_a_known_level_or_text(markdown: bool) -> None:
    @fuzz_settings
    @given(texts)
    def check(text: str) -> None:
        blocks = twice(lambda: list(parse_blocks(text, markdown=markdown)))
        for block in blocks:
            assert block.kind in ("heading", "text")
            # A text block may be empty (an empty list item, "- "), as the reader it replaced
            # made it; a heading always has its level.
            if block.kind == "heading":
                assert 1 <= block.level <= 6

    check()


@fuzz_settings
@given(texts)
def test_names_are_judged_cleaned_and_keyed_deterministically(name: str) -> None:
    reason = twice(lambda: rejection_reason(name))
    assert reason is None or reason
    cleaned = twice(lambda: clean_name(name))
    assert len(cleaned) <= len(name)
    key = twice(lambda: canonical_key(name))
    assert key == " ".join(name_words(name))
    assert all(w and " " not in w for w in canonical_words(name))


@fuzz_settings
@given(texts)
def test_teaching_detection_names_a_topic_from_the_text(text: str) -> None:
    found = twice(lambda: detect_teaching(text))
    if found is not None:
        assert found.topic
        assert found.note
    assert twice(lambda: is_question(text)) in (True, False)


@fuzz_settings
@given(st.lists(texts, max_size=6), texts, texts)
def test_names_found_and_topics_routed_are_among_the_names_given(
    names: list[str], topic: str, evaluation: str
) -> None:
    matcher = NameMatcher(names)
    assert set(twice(lambda: matcher.find(evaluation))) <= set(names)
    routing, routed = twice(lambda: route_topic(topic, evaluation, matcher))
    if routing in (Routing.NAME, Routing.EVALUATION):
        assert routed in names
    else:
        assert routed is None
    assert twice(lambda: is_spoken_expression(topic)) in (True, False)


# -- token counting --------------------------------------------------------------------------------


@functools.cache
def _counter() -> TiktokenCounter:
    return TiktokenCounter()


@fuzz_settings
@given(st.lists(texts, max_size=5))
def test_token_counts_are_deterministic_and_add_up(lines: list[str]) -> None:
    counter = _counter()
    counts = twice(lambda: counter.count_many(lines))
    assert counts == [counter.count(line) for line in lines]
    assert all(n >= 0 and (n > 0) == bool(line) for n, line in zip(counts, lines, strict=True))
