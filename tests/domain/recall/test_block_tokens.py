"""A block counted by adding its lines' counts equals the count of its whole text (R6.2)."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from tutor_memory.domain.recall.block_tokens import BlockCounter, last_word_start
from tutor_memory.models.tokenizers import TiktokenCounter

COUNTER = TiktokenCounter()
# Lines as blocks have them: never starting with whitespace; any text after the first character,
# line breaks, Unicode spaces and scripts without spaces included.
ALPHABET = st.sampled_from(
    [*"abcXYZ?.:!()-'\"019 éß中文الпр\t\u00a0\u2028\u3000…—\n\r", " the", "'s", "  "]
)
TEXT = st.lists(ALPHABET, max_size=20).map("".join)
LINE = st.tuples(st.sampled_from(list("-0=TAé中(")), TEXT).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, min_size=1, max_size=8))
def test_a_blocks_count_is_the_sum_of_its_lines_counts(lines: list[str]) -> None:
    counter = BlockCounter(COUNTER)
    text = "\n".join(lines)
    assert counter.block(lines, [None] * len(lines), text) == COUNTER.count(text)


@settings(max_examples=300, deadline=None)
@given(LINE, st.sampled_from(["", " (3 times)", " (12 times) [the file changed]", " x"]), LINE)
def test_a_memory_lines_count_follows_from_the_count_made_at_write_time(
    sized: str, added: str, following: str
) -> None:
    counter = BlockCounter(COUNTER)
    alone, row = counter.memory_line(COUNTER.count(sized), sized, added)
    whole = COUNTER.count(f"{sized}{added}\n{following}")
    assert row == whole - COUNTER.count(following)
    assert alone == COUNTER.count(sized + added)


def test_the_last_word_starts_at_the_last_space_after_a_non_space() -> None:
    assert last_word_start("- student: what is osmosis?") == len("- student: what is")
    assert last_word_start("- you: a  b") == len("- you: a")
    assert last_word_start("nospace") == 0
    assert last_word_start("  lead") == 0


def test_a_tokenizer_whose_counts_may_not_add_up_counts_the_whole_text() -> None:
    class Whole:
        name = "whole"
        lines_add_up = False

        def count(self, text: str) -> int:
            return len(text)

        def count_many(self, texts: Sequence[str]) -> list[int]:
            return [len(t) for t in texts]

    counter = BlockCounter(Whole())
    assert counter.block(["ab", "cd"], [100, None], "ab\ncd") == 5
