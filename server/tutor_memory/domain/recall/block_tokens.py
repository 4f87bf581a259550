"""Counting a block's tokens by adding numbers (SPEC R6.2), not by tokenizing its text per turn.

A block is lines joined by line breaks. With a tokenizer whose counts add up over lines (the
`TokenCounter.lines_add_up` promise: cl100k_base's pre-tokenizer never lets a token cross from a
line break into a line that starts with a non-space), the block's count is the sum of each line's
count with its line break, and a memory line's count is the count of its line as packed
(`block_text.sizing_line`, counted once when the episode was written and kept in the recall
tables) corrected for what the block adds after it: only the last word changes, since counts
also add up at a space that follows a non-space. Fixed lines, day lines, belief and map lines and
last words repeat from turn to turn, so their counts are remembered.

With any other tokenizer the whole text is counted, as it always was.
"""

from __future__ import annotations

from collections.abc import Sequence

from tutor_memory.domain.tokens import TokenCounter

# Distinct short texts (lines, last words with what follows them) whose counts are remembered.
# Few occur (fixed lines, dates, the beliefs and map lines of the chains in use, last words),
# so the bound is rarely reached; reaching it forgets them all, and they are counted again.
LINE_CACHE_SIZE = 65_536
LINE_BREAK = "\n"


def last_word_start(line: str) -> int:
    """Where the line's last word starts: its last space that follows a non-space (0 if none).
    Counts add up at that space (see the module docstring)."""
    at = len(line)
    while True:
        at = line.rfind(" ", 0, at)
        if at <= 0:
            return 0
        if not line[at - 1].isspace():
            return at


class BlockCounter:
    """Counts the tokens of blocks and of their lines for one tokenizer. Safe to share between
    threads: the remembered counts are a dict whose reads and writes are each atomic."""

    def __init__(self, counter: TokenCounter, cache_size: int = LINE_CACHE_SIZE) -> None:
        self.counter = counter
        self.adds_up = counter.lines_add_up
        self._cache_size = cache_size
        self._counts: dict[str, int] = {}

    @property
    def name(self) -> str:
        return self.counter.name

    def count(self, text: str) -> int:
        """The count of `text`, remembered (for short texts that recur)."""
        found = self._counts.get(text)
        if found is None:
            if len(self._counts) >= self._cache_size:
                self._counts.clear()
            found = self._counts[text] = self.counter.count(text)
        return found

    def line(self, text: str) -> int:
        """Tokens of `text` as a line of a block followed by another line."""
        if self.adds_up:
            return self.count(text + LINE_BREAK)
        return self.count(text) + 1

    def memory_line(self, sized_tokens: int, sized_line: str, added: str) -> tuple[int, int]:
        """Tokens of the line `sized_line + added` alone, and followed by another line, given
        the count of `sized_line` (made when its episode was written)."""
        if not self.adds_up:
            alone = self.counter.count(sized_line + added)
            return alone, alone + 1
        start = last_word_start(sized_line)
        last = sized_line[start:]
        rest = sized_tokens - self.count(last)
        return rest + self.count(last + added), rest + self.count(last + added + LINE_BREAK)

    def block(self, lines: Sequence[str], line_tokens: Sequence[int | None], text: str) -> int:
        """Tokens of the block `text`, made of `lines` joined by line breaks; `line_tokens`
        gives a line's count (as `line` or `memory_line` made it) where already known, else
        None. Counted whole with a tokenizer whose counts do not add up."""
        if not text:
            return 0
        if not self.adds_up:
            return self.counter.count(text)
        total = 0
        last = len(lines) - 1
        for i, (line, tokens) in enumerate(zip(lines, line_tokens, strict=True)):
            if i == last:
                # The last line has no line break after it.
                total += self.count(line)
            else:
                total += tokens if tokens is not None else self.line(line)
        return total
