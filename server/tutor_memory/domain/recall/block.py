"""The memory block as data (SPEC R6): what a turn asks for, the sections it shows, and how they
are composed into text that fits the caller's token budget (R6.2, R6.3, R6.5, R7.1)."""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

from tutor_memory.domain.clock import time_zone
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import MAX_TIME_ZONE_CHARS, quoted
from tutor_memory.domain.recall import block_text
from tutor_memory.domain.recall.block_tokens import BlockCounter
from tutor_memory.domain.recall.explain import Explanation
from tutor_memory.domain.recall.sections import BELIEFS_TITLE, Extras
from tutor_memory.domain.recall.timewindow import TimeWindow
from tutor_memory.domain.records import MemoryRow


class Mode(enum.Enum):
    FULL = "full"
    EPISODES = "episodes"
    WINDOW = "window"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class BlockRequest:
    chain: ChainKey
    query: str
    budget_tokens: int
    now_us: int
    time_zone: str
    mode: Mode


@dataclass(frozen=True, slots=True)
class ShownMemory:
    episode: MemoryRow
    repeats: int
    repeated_ids: tuple[int, ...]
    score: float
    line: str
    # The day it happened, as the line that heads its day shows it.
    date: str
    # Tokens of `line` alone, and followed by another line (`BlockCounter.memory_line`): the
    # first sizes what dropping it frees, the second adds up to the block's count.
    tokens: int
    row_tokens: int


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    lines: tuple[str, ...]
    episode_ids: tuple[int, ...] = ()
    # A section whose lines stand alone (the record line, how to use) prints no heading.
    headed: bool = True
    # Concepts the section's lines are about (map and belief sections), in line order.
    concepts: tuple[str, ...] = ()
    # Tokens of each line followed by another, where known when it was composed (the memory
    # lines of earlier work, None for its day lines), so that the block's count adds them up.
    line_tokens: tuple[int | None, ...] = ()


@dataclass(slots=True)
class Block:
    text: str
    sections: list[Section]
    memories: list[ShownMemory]
    block_id: str
    tokens_used: int
    record_mode: bool
    window: TimeWindow | None
    no_record: bool
    timings: list[tuple[str, float]] = field(default_factory=list)
    # Why each candidate was shown or dropped; only when the caller asked (BuildBlock's explain).
    explanation: Explanation | None = None


@dataclass(frozen=True, slots=True)
class Framing:
    """What shapes a block besides its content: the record-question mode and the named period."""

    record: bool
    window: TimeWindow | None
    no_record: bool


def zone(name: str) -> ZoneInfo:
    """The IANA time zone `name` names ("" is UTC); INVALID_ARGUMENT naming time_zone if none."""
    if len(name) > MAX_TIME_ZONE_CHARS:
        raise InvalidArgument("time_zone", f"longer than {MAX_TIME_ZONE_CHARS} characters")
    try:
        return time_zone(name or "UTC")
    except ValueError as exc:
        raise InvalidArgument("time_zone", f"unknown IANA time zone {quoted(name)}") from exc


def compose(
    req: BlockRequest,
    shown: Sequence[ShownMemory],
    extras: Extras,
    framing: Framing,
    counter: BlockCounter | None,
) -> Block:
    """The block's sections in the order R6.3 gives them, and its text; `counter` None leaves
    it uncounted (a frame measured elsewhere)."""
    sections: list[Section] = []
    map_section = (
        Section(extras.map_header.rstrip(":"), extras.map_lines, concepts=extras.map_concepts)
        if extras.map_lines
        else None
    )
    if req.mode is not Mode.NONE:
        if framing.record:
            sections.append(
                Section(block_text.RECORD_TITLE, (block_text.RECORD_LINE,), headed=False)
            )
        elif map_section is not None:
            # An ordinary question: the material first (R6.3).
            sections.append(map_section)
        if extras.belief_lines:
            sections.append(
                Section(BELIEFS_TITLE, extras.belief_lines, concepts=extras.belief_concepts)
            )
        if framing.no_record and framing.window is not None:
            sections.append(
                Section(
                    block_text.EARLIER_WORK_TITLE,
                    (block_text.no_record_line(framing.window.label),),
                )
            )
        else:
            sections.append(
                earlier_work(
                    [(m.date, m.line) for m in shown],
                    tuple(m.episode.episode_id for m in shown),
                    tuple(m.row_tokens for m in shown),
                )
            )
        if framing.record and map_section is not None:
            # A question about the student's own record: the map comes last (R6.3).
            sections.append(map_section)
        sections.append(HOW_TO_USE)
    lines = lines_of(sections)
    text = "\n".join(lines)
    return Block(
        text=text,
        sections=sections,
        memories=list(shown),
        # Issued once the block is final (domain.recall.block_ids), not per composition.
        block_id="",
        tokens_used=(
            counter.block(lines, line_tokens_of(sections), text) if counter is not None else 0
        ),
        record_mode=framing.record,
        window=framing.window,
        no_record=framing.no_record,
    )


def fit_to_budget(
    req: BlockRequest,
    shown: list[ShownMemory],
    extras: Extras,
    framing: Framing,
    counter: BlockCounter,
) -> Block:
    """The composed block, within the budget (R6.2). Packing counted each memory line without
    its day line and repeat suffix; the whole block is counted here (by adding its lines'
    counts, see `block_tokens`), and the lowest-ranked memories leave until it fits (as many at
    once as the overshoot needs), then the last map lines, then the last beliefs. A budget too
    small for even the frame gets no block, rather than an overflow."""
    block = compose(req, shown, extras, framing, counter)
    while block.tokens_used > req.budget_tokens:
        if shown:
            shown = drop_lowest(shown, block.tokens_used - req.budget_tokens)
        elif extras.map_lines:
            extras = extras.without_map_line()
        elif extras.belief_lines:
            extras = extras.without_belief_line()
        else:
            break
        block = compose(req, shown, extras, framing, counter)
    if block.tokens_used > req.budget_tokens:
        block = Block("", [], [], "", 0, framing.record, framing.window, framing.no_record)
    return block


def drop_lowest(shown: Sequence[ShownMemory], overshoot: int) -> list[ShownMemory]:
    """`shown` without its lowest-scored memories whose lines add up to `overshoot` tokens (at
    least one), in the same order."""
    leaving: set[int] = set()
    freed = 0
    for i in sorted(range(len(shown)), key=lambda i: shown[i].score):
        leaving.add(i)
        freed += shown[i].tokens + 1
        if freed >= overshoot:
            break
    return [m for i, m in enumerate(shown) if i not in leaving]


def cites_changed_file(row: MemoryRow, fingerprints: Mapping[str, str | None] | None) -> bool:
    """Whether a file the memory cites has been replaced or removed since (R7.4): a lookup of
    the recorded fingerprints against the chain's current ones. A file this chain never received
    cannot be judged, and gets no note."""
    if not fingerprints or not row.cited:
        return False
    return any(f in fingerprints and fingerprints[f] != h for f, h in row.cited)


def earlier_work(
    dated_lines: Sequence[tuple[str, str]],
    episode_ids: tuple[int, ...] = (),
    memory_tokens: Sequence[int] = (),
) -> Section:
    """The earlier-work section showing these (date, memory line) pairs, oldest first: each day
    once, on a line of its own above its memories (a line saying so when there are none).
    `memory_tokens`, when given, holds each memory line's count (`ShownMemory.row_tokens`)."""
    lines: list[str] = []
    tokens: list[int | None] = []
    day = None
    for i, (date, line) in enumerate(dated_lines):
        if date != day:
            lines.append(block_text.day_line(date))
            tokens.append(None)
            day = date
        lines.append(line)
        tokens.append(memory_tokens[i] if memory_tokens else None)
    if not lines:
        return Section(block_text.EARLIER_WORK_TITLE, (block_text.NOTHING_YET,), episode_ids)
    return Section(
        block_text.EARLIER_WORK_TITLE, tuple(lines), episode_ids, line_tokens=tuple(tokens)
    )


# The closing instruction every block ends with.
HOW_TO_USE = Section(block_text.HOW_TO_USE_TITLE, (block_text.HOW_TO_USE,), headed=False)


def lines_of(sections: Sequence[Section]) -> list[str]:
    """The block's lines: the header, each section (with its heading when it has one), the end
    marker; none without a section."""
    if not sections:
        return []
    out = [block_text.HEADER]
    for s in sections:
        if s.headed:
            out.append(f"{s.title}:")
        out.extend(s.lines)
    out.append(block_text.FOOTER)
    return out


def line_tokens_of(sections: Sequence[Section]) -> list[int | None]:
    """Beside `lines_of`: each line's count where its section knows it, else None."""
    if not sections:
        return []
    out: list[int | None] = [None]
    for s in sections:
        if s.headed:
            out.append(None)
        out.extend(s.line_tokens or (None,) * len(s.lines))
    out.append(None)
    return out


def text_of(sections: Sequence[Section]) -> str:
    """The block's text: its lines (`lines_of`) joined by line breaks."""
    return "\n".join(lines_of(sections))
