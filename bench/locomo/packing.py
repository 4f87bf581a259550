"""Packs a baseline's ranked turns into a memory block of the server's shape, under a budget.

So that every method is compared at equal budget, a baseline's block is the server's block: the
same frame (header, section title, how-to-use line, footer), the same memory lines (rendered by
`tutor_memory.recall.render`, dates in UTC as the benchmark asks BuildBlock for), the same token
counter, the same most-memories cap, and the same packing rule (greedy in rank order, skipping
what does not fit, then the whole text counted and the lowest-ranked memories dropped until it
fits). Only which turns are offered, and in which order, differs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from tutor_memory.domain.episodes import Kind
from tutor_memory.domain.recall import block_text as render
from tutor_memory.domain.recall.block import HOW_TO_USE, earlier_work, text_of
from tutor_memory.domain.recall.candidates import MAX_MEMORIES
from tutor_memory.domain.tokens import TokenCounter

UTC_ZONE = ZoneInfo("UTC")


@dataclass(frozen=True, slots=True)
class StoredTurn:
    """One episode of a conversation's chain, as the baselines read it from the store."""

    episode_id: int
    seq: int
    kind: Kind
    summary: str
    occurred_at_us: int


def block_text(dated_lines: Sequence[tuple[str, str]]) -> str:
    """The text of a block showing these (date, line) pairs as earlier work, composed by the
    server's own code."""
    return text_of([earlier_work(dated_lines), HOW_TO_USE])


class BlockPacker:
    """Packs positions of `turns` (in the order a ranking gives them) into a token budget."""

    def __init__(self, turns: Sequence[StoredTurn], counter: TokenCounter) -> None:
        self._turns = turns
        self._counter = counter
        self.lines = [render.memory_line(t.kind, t.summary) for t in turns]
        self.dates = [render.format_date(t.occurred_at_us, UTC_ZONE) for t in turns]
        self.line_tokens = counter.count_many(self.lines)
        self._day_tokens = {d: counter.count(render.day_line(d)) for d in set(self.dates)}
        # What the memories' budget must leave room for, counted as the server counts it.
        self.overhead = counter.count(block_text([]))

    def pack(self, ranking: Sequence[int], budget: int) -> list[int]:
        """The positions the block shows, best-ranked first; empty when not even the frame fits."""
        room = budget - self.overhead
        if room < 0:
            return []
        chosen: list[int] = []
        days: set[str] = set()
        used = 0
        for pos in ranking:
            if len(chosen) == MAX_MEMORIES:
                break
            # A memory of a day not shown yet also pays for its day's line.
            day = self.dates[pos]
            tokens = self.line_tokens[pos] + (0 if day in days else self._day_tokens[day])
            if used + tokens <= room:
                chosen.append(pos)
                days.add(day)
                used += tokens
        # Lines counted one by one can differ by a token or so from the joined text.
        while chosen and self.tokens_of(chosen) > budget:
            chosen.pop()
        return chosen

    def tokens_of(self, positions: Sequence[int]) -> int:
        """Tokens of the whole block showing `positions` (oldest first, as the server shows)."""
        order = sorted(positions, key=lambda p: (self._turns[p].occurred_at_us, self._turns[p].seq))
        return self._counter.count(block_text([(self.dates[p], self.lines[p]) for p in order]))
