"""Builds the per-turn memory block (SPEC R2, R6, R7.1): widen, filter, score, collapse, pack.

One call runs in one worker thread, start to end: embed the query once, gather candidate sets
over the whole history as id arrays, hand them to the Rust core (union, time filter, relevance
filter, score, collapse, pack; GIL released), fetch text only for the packed rows, compose.
Nothing here writes, and nothing calls a generative model.
"""

from __future__ import annotations

import enum
import hashlib
import math
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import ChainKey, Kind
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.honesty.citations import BLOCK_NOTE
from tutor_memory.domain.recall import block_text as render
from tutor_memory.domain.recall import scoring
from tutor_memory.domain.recall.record_mode import is_record_question
from tutor_memory.domain.recall.sections import BELIEFS_TITLE, BlockSources, Extras, compose_extras
from tutor_memory.domain.recall.timewindow import TimeWindow, parse_time_window
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.words import stop_words, words
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.index.recall_tables import KIND_CODES, ChainTable, RecallTables, Snapshot
from tutor_memory.index.vectors import VectorIndex
from tutor_memory.models.embedder import Embedder
from tutor_memory.native import _core
from tutor_memory.store.protocols import LedgerStore, MemoryRow

# Candidate sets (R2.1). Each reaches the whole history; only their union is scored.
RECENT_CANDIDATES = 500  # the most recent episodes
TEXT_CANDIDATES_PER_TERM = 500  # newest episodes containing each distinctive word of the query
SEMANTIC_CANDIDATES = 50  # nearest neighbours of the query embedding
# A neighbour counts as matching the query (for the filter of R2.2) from this cosine similarity
# of the multilingual USE embedder. Set by hand from its measured spread, not tuned on
# evaluation data: paraphrases across en/it/es/ar scored 0.52-0.94, unrelated sentences <= 0.25.
SEMANTIC_MATCH_MIN = 0.45
# A query word is distinctive when at most this share of the chain's episodes contain it (and it
# is not a stop word of any supported language); common words would match everything.
DISTINCTIVE_MAX_SHARE = 0.05
# ...but a word in this many episodes or fewer is always distinctive (small chains).
DISTINCTIVE_MIN_COUNT = 25
# Most memories one block shows.
MAX_MEMORIES = 40
# Frames whose token count is remembered (see BlockBuilder._overhead).
FRAME_CACHE_SIZE = 4096
# WINDOW mode: the last this many conversation turns.
WINDOW_TURNS = 20
# Kinds that are the conversation itself (WINDOW mode, and kept in record mode: R6.4).
CONVERSATION_KINDS = (Kind.QUESTION, Kind.ANSWER)
# Kinds that make up the student's record, all of which a record question considers.
RECORD_KINDS = (Kind.CHECK, Kind.QUIZ, Kind.TAUGHT)


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


@dataclass(frozen=True, slots=True)
class Section:
    title: str
    lines: tuple[str, ...]
    episode_ids: tuple[int, ...] = ()
    # A section whose lines stand alone (the record line, how to use) prints no heading.
    headed: bool = True
    # Concepts the section's lines are about (map and belief sections), in line order.
    concepts: tuple[str, ...] = ()


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


def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidArgument("time_zone", f"unknown IANA time zone {name!r}") from exc


class _Clock:
    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings.append((stage, round((now - self._last) * 1000, 3)))
        self._last = now


class BlockBuilder:
    def __init__(
        self,
        store: LedgerStore,
        embedder: Embedder,
        index: VectorIndex,
        tables: RecallTables,
        counter: TokenCounter,
        sources: BlockSources | None = None,
    ) -> None:
        self.store = store
        self.sources = sources
        self.embedder = embedder
        self.index = index
        self.tables = tables
        self.counter = counter
        # The query is embedded on its own thread while this one searches the text (onnxruntime
        # releases the GIL), so the two costs overlap instead of adding up.
        self._embedding = ThreadPoolExecutor(1, thread_name_prefix="query-embed")
        # Token counts of the block's fixed frame (everything but memories, beliefs and map), by
        # frame text; bounded, though few distinct frames occur (record line, time window label).
        self._frame_tokens: dict[str, int] = {}

    def close(self) -> None:
        self._embedding.shutdown(wait=True)

    def build(self, req: BlockRequest) -> Block:
        """Synchronous: the service runs it in a worker thread under the turn's time cap."""
        clock = _Clock()
        tz = zone(req.time_zone)
        if req.mode is Mode.NONE:
            block = self._compose(req, [], Extras(), record=False, window=None, no_record=False)
            clock.lap("compose")
            block.timings = clock.timings
            return block
        table = self.tables.get(req.chain)
        snap = table.snapshot() if table is not None else None
        record = req.mode is Mode.FULL and bool(req.query) and is_record_question(req.query)
        # Started as early as possible, so that the model runs while everything up to the
        # neighbour search does. A record question does not search by meaning.
        embedding = (
            self._embedding.submit(self.embedder.embed, [req.query])
            if req.query.strip() and req.mode is not Mode.WINDOW and snap is not None and not record
            else None
        )
        window = (
            parse_time_window(req.query, req.now_us, tz.key)
            if req.query and req.mode is not Mode.WINDOW
            else None
        )
        clock.lap("parse")

        sources = self.sources if req.mode is Mode.FULL and snap is not None else None

        def extras_for(query_vector: npt.NDArray[np.float32] | None) -> Extras:
            """The beliefs and map sections (FULL mode), routed by the query's embedding."""
            if sources is None:
                return Extras()
            made = compose_extras(sources, req.chain, req.query, query_vector, req.budget_tokens)
            clock.lap("beliefs_and_map")
            return made

        extras: Extras | None = None
        shown: list[ShownMemory] = []
        no_record = False
        if snap is not None and len(snap):
            if req.mode is Mode.WINDOW:
                positions = self._last_turns(snap)
                counts = np.ones(len(positions), dtype=np.uint32)
                scores = np.zeros(len(positions), dtype=np.float32)
                clock.lap("rank")
            else:
                in_window = _window_positions(snap, window)
                no_record = window is not None and len(in_window) == 0
                if no_record:
                    positions = np.empty(0, np.int64)
                    counts = np.empty(0, np.uint32)
                    scores = np.empty(0, np.float32)
                else:
                    assert table is not None
                    positions, counts, scores, extras = self._rank(
                        req, table, snap, window, in_window, record, clock, embedding, extras_for
                    )
            if extras is None:
                extras = extras_for(embedding.result()[0] if embedding is not None else None)
            assert table is not None
            shown = self._fetch_and_render(
                req, table, snap, window, positions, counts, scores, tz, extras
            )
            clock.lap("fetch")
        elif window is not None:
            no_record = True
        if extras is None:
            extras = extras_for(None)

        block = self._compose(req, shown, extras, record=record, window=window, no_record=no_record)
        # The packer counted each line with the widest date and no repeat suffix; the whole block
        # is counted here, and the lowest-ranked memories leave until it fits (as many at once as
        # the overshoot needs, so the text is rarely counted more than twice), then the last map
        # lines, then the last beliefs.
        while block.tokens_used > req.budget_tokens:
            if shown:
                shown = _drop_lowest(shown, block.tokens_used - req.budget_tokens, self.counter)
            elif extras.map_lines:
                extras = extras.without_map_line()
            elif extras.belief_lines:
                extras = extras.without_belief_line()
            else:
                break
            block = self._compose(
                req, shown, extras, record=record, window=window, no_record=no_record
            )
        if block.tokens_used > req.budget_tokens:
            block = _empty_block(req, record, window, no_record)
        clock.lap("compose")
        block.timings = clock.timings
        return block

    # -- candidates and ranking ----------------------------------------------------------------

    def _rank(
        self,
        req: BlockRequest,
        table: ChainTable,
        snap: Snapshot,
        window: TimeWindow | None,
        in_window: npt.NDArray[np.int64],
        record: bool,
        clock: _Clock,
        embedding: Future[npt.NDArray[np.float32]] | None,
        extras_for: Callable[[npt.NDArray[np.float32] | None], Extras],
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], Extras]:
        sets_ids: list[npt.NDArray[np.int64]] = []
        sets_rel: list[npt.NDArray[np.float32]] = []
        sets_match: list[npt.NDArray[np.uint8]] = []

        def add(
            ids: npt.NDArray[np.int64], rel: npt.NDArray[np.float32] | float, match: bool
        ) -> None:
            if len(ids) == 0:
                return
            sets_ids.append(ids.astype(np.int64, copy=False))
            sets_rel.append(np.broadcast_to(np.float32(rel), ids.shape).astype(np.float32))
            sets_match.append(np.full(len(ids), 1 if match else 0, dtype=np.uint8))

        # The most recent episodes: the honest offer when nothing matches (R2.2).
        add(snap.ids[_most_recent(snap.occurred_at_us, RECENT_CANDIDATES)], 0.0, False)
        # Inside a named period every episode is a candidate and counts as matching it.
        if window is not None:
            add(snap.ids[in_window], 0.0, True)
        if record:
            # A record question is about the whole record, not about its own words: every check,
            # quiz and taught note is a candidate beside the recent conversation (R6.4), ranked
            # with it by salience (wrong checks first) and recency alike. So a wrong check months
            # old can rank below this week's conversation; the beliefs section, which comes first,
            # is what carries older verdicts.
            kinds = np.isin(snap.kind, [KIND_CODES[k] for k in RECORD_KINDS])
            add(snap.ids[kinds], 0.0, False)
        has_query = bool(req.query.strip()) and not record
        query_vector = None
        if has_query:
            assert embedding is not None
            norm = normalise(req.query)
            terms = _distinctive_terms(table, norm, len(snap))
            ids, relevance = _text_relevance(
                table, terms, self.store.text_matches(req.chain, terms, TEXT_CANDIDATES_PER_TERM)
            )
            add(ids, relevance, True)
            add(table.tagged(norm), 1.0, True)
            clock.lap("text")
            query_vector = embedding.result()[0]
            clock.lap("embed")
            ids, sims = self.index.search(req.chain, query_vector, SEMANTIC_CANDIDATES)
            if len(ids):
                sets_ids.append(ids)
                sets_rel.append(np.clip(sims, 0.0, 1.0).astype(np.float32))
                sets_match.append((sims >= SEMANTIC_MATCH_MIN).astype(np.uint8))
            clock.lap("neighbours")
        # The map's sections need the query's embedding (to route it to concepts) and must be
        # known before packing, since what they take leaves less for the episodes.
        extras = extras_for(query_vector)
        if extras.routed:
            # Episodes touching the concepts the query was routed to (R2.1).
            add(table.tagged_with(extras.routed), 1.0, True)
        overhead = self._overhead(req, extras, record, window)

        positions, counts, scores, _used = _core.rank_and_pack(
            snap.ids,
            snap.occurred_at_us,
            snap.salience,
            snap.dup_key,
            snap.tokens,
            snap.flagged,
            np.concatenate(sets_ids) if sets_ids else np.empty(0, np.int64),
            np.concatenate(sets_rel) if sets_rel else np.empty(0, np.float32),
            np.concatenate(sets_match) if sets_match else np.empty(0, np.uint8),
            req.now_us,
            has_query or window is not None,
            window.start_us if window else None,
            window.end_us if window else None,
            # The tutor's narrations of a period are not memories of it (R2.6).
            window is not None or record,
            max(0, req.budget_tokens - overhead),
            MAX_MEMORIES,
            scoring.W_RELEVANCE,
            scoring.W_SALIENCE,
            scoring.W_RECENCY,
            scoring.RECENCY_HALF_LIFE_DAYS,
        )
        clock.lap("rank")
        return positions, counts, scores, extras

    def _last_turns(self, snap: Snapshot) -> npt.NDArray[np.int64]:
        conversation = np.flatnonzero(
            np.isin(snap.kind, [KIND_CODES[k] for k in CONVERSATION_KINDS])
        )
        order = np.argsort(snap.occurred_at_us[conversation], kind="stable")
        return conversation[order[-WINDOW_TURNS:]][::-1].astype(np.int64)

    # -- composition ---------------------------------------------------------------------------

    def _fetch_and_render(
        self,
        req: BlockRequest,
        table: ChainTable,
        snap: Snapshot,
        window: TimeWindow | None,
        positions: npt.NDArray[np.int64],
        counts: npt.NDArray[np.uint32],
        scores: npt.NDArray[np.float32],
        tz: ZoneInfo,
        extras: Extras,
    ) -> list[ShownMemory]:
        ids = snap.ids[positions]
        rows = self.store.memory_rows(req.chain, ids.tolist())
        shown = []
        for pos, episode_id, count, score in zip(positions, ids, counts, scores, strict=True):
            ep = rows.get(int(episode_id))
            if ep is None:
                continue
            repeated = _same_as(table, snap, int(pos), window) if count > 1 else (ep.episode_id,)
            line = render.memory_line(
                ep.kind, ep.summary, render.format_date(ep.occurred_at_us, tz), len(repeated)
            )
            if _cites_changed_file(ep, extras.fingerprints):
                line = f"{line} {BLOCK_NOTE}"
            shown.append(ShownMemory(ep, len(repeated), repeated, float(score), line))
        # Earlier work reads oldest first (the design document's block).
        shown.sort(key=lambda m: (m.episode.occurred_at_us, m.episode.seq))
        return shown

    def _overhead(
        self, req: BlockRequest, extras: Extras, record: bool, window: TimeWindow | None
    ) -> int:
        """Tokens of the block without memories, which the memories' budget must leave room for:
        the fixed frame (counted once per distinct frame) plus what the beliefs and map take."""
        frame = self._compose(
            req, [], Extras(), record=record, window=window, no_record=False, count=False
        )
        tokens = self._frame_tokens.get(frame.text)
        if tokens is None:
            if len(self._frame_tokens) >= FRAME_CACHE_SIZE:
                self._frame_tokens.clear()
            tokens = self._frame_tokens[frame.text] = self.counter.count(frame.text)
        return tokens + extras.tokens

    def _compose(
        self,
        req: BlockRequest,
        shown: list[ShownMemory],
        extras: Extras,
        *,
        record: bool,
        window: TimeWindow | None,
        no_record: bool,
        count: bool = True,
    ) -> Block:
        sections: list[Section] = []
        map_section = (
            Section(extras.map_header.rstrip(":"), extras.map_lines, concepts=extras.map_concepts)
            if extras.map_lines
            else None
        )
        if req.mode is not Mode.NONE:
            if record:
                sections.append(Section(render.RECORD_TITLE, (render.RECORD_LINE,), headed=False))
            elif map_section is not None:
                # An ordinary question: the material first (R6.3).
                sections.append(map_section)
            if extras.belief_lines:
                sections.append(
                    Section(BELIEFS_TITLE, extras.belief_lines, concepts=extras.belief_concepts)
                )
            if no_record and window is not None:
                lines: tuple[str, ...] = (render.no_record_line(window.label),)
            elif shown:
                lines = tuple(m.line for m in shown)
            else:
                lines = (render.NOTHING_YET,)
            ids = tuple(m.episode.episode_id for m in shown)
            sections.append(Section(render.EARLIER_WORK_TITLE, lines, ids))
            if record and map_section is not None:
                # A question about the student's own record: the map comes last (R6.3).
                sections.append(map_section)
            sections.append(Section(render.HOW_TO_USE_TITLE, (render.HOW_TO_USE,), headed=False))
        text = _text(sections)
        return Block(
            text=text,
            sections=sections,
            memories=shown,
            block_id=_block_id(req, shown),
            tokens_used=self.counter.count(text) if text and count else 0,
            record_mode=record,
            window=window,
            no_record=no_record,
        )


def _drop_lowest(
    shown: list[ShownMemory], overshoot: int, counter: TokenCounter
) -> list[ShownMemory]:
    """`shown` without its lowest-scored memories whose lines add up to `overshoot` tokens (at
    least one), in the same order."""
    leaving: set[int] = set()
    freed = 0
    for i in sorted(range(len(shown)), key=lambda i: shown[i].score):
        leaving.add(i)
        freed += counter.count(shown[i].line) + 1
        if freed >= overshoot:
            break
    return [m for i, m in enumerate(shown) if i not in leaving]


def _cites_changed_file(row: MemoryRow, fingerprints: dict[str, str] | None) -> bool:
    """Whether a file the memory cites has been replaced or removed since (R7.4): a lookup of
    the recorded fingerprints against the chain's current ones. A file this chain never received
    cannot be judged, and gets no note."""
    if not fingerprints or not row.cited:
        return False
    return any(f in fingerprints and fingerprints[f] != h for f, h in row.cited)


def _text(sections: list[Section]) -> str:
    if not sections:
        return ""
    out = [render.HEADER]
    for s in sections:
        if s.headed:
            out.append(f"{s.title}:")
        out.extend(s.lines)
    out.append(render.FOOTER)
    return "\n".join(out)


def _empty_block(
    req: BlockRequest, record: bool, window: TimeWindow | None, no_record: bool
) -> Block:
    """A budget too small for even the block's frame gets no block, rather than an overflow."""
    return Block("", [], [], _block_id(req, []), 0, record, window, no_record)


def _block_id(req: BlockRequest, shown: list[ShownMemory]) -> str:
    """Same request and same memories, same id: a replayed turn is recognisable."""
    h = hashlib.blake2b(digest_size=12)
    for part in (req.chain.tenant, req.chain.student, req.chain.subject, req.query):
        h.update(part.encode())
        h.update(b"\x00")
    h.update(f"{req.now_us}:{req.budget_tokens}:{req.mode.value}".encode())
    for m in shown:
        h.update(m.episode.episode_id.to_bytes(8, "little"))
    return h.hexdigest()


def _distinctive_terms(table: ChainTable, normalised_query: str, n: int) -> list[str]:
    """The query's words that are rare in this chain (R2.1): present, but in no more than
    DISTINCTIVE_MAX_SHARE of its episodes, and not a stop word of any supported language."""
    cap = max(DISTINCTIVE_MIN_COUNT, int(DISTINCTIVE_MAX_SHARE * n))
    stops = stop_words()
    return [
        word
        for word in dict.fromkeys(words(normalised_query))
        if word not in stops and len(word) > 1 and 0 < table.document_frequency(word) <= cap
    ]


def _most_recent(occurred: npt.NDArray[np.int64], k: int) -> npt.NDArray[np.int64]:
    if len(occurred) <= k:
        return np.arange(len(occurred), dtype=np.int64)
    return np.argpartition(occurred, len(occurred) - k)[-k:].astype(np.int64)


def _window_positions(snap: Snapshot, window: TimeWindow | None) -> npt.NDArray[np.int64]:
    if window is None:
        return np.empty(0, np.int64)
    inside = (snap.occurred_at_us >= window.start_us) & (snap.occurred_at_us < window.end_us)
    # The tutor's own narrations do not make a period "recorded" (R2.6).
    return np.flatnonzero(inside & (snap.flagged == 0)).astype(np.int64)


def _same_as(
    table: ChainTable, snap: Snapshot, pos: int, window: TimeWindow | None
) -> tuple[int, ...]:
    """Ids of every episode a collapsed memory stands for, itself first: all its copies in the
    chain (inside the period, when one was named), not only those that were candidates."""
    same = table.copies(int(snap.dup_key[pos]), len(snap))
    if window is not None:
        at = snap.occurred_at_us[same]
        same = same[(at >= window.start_us) & (at < window.end_us)]
    own = int(snap.ids[pos])
    return (own, *(int(i) for i in snap.ids[same] if int(i) != own))


def _text_relevance(
    table: ChainTable, terms: list[str], hits: list[npt.NDArray[np.int64]]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Each hit's share of the query's distinctive words, weighted by how rare each word is in
    the chain (IDF): 1.0 for an episode that holds them all."""
    if not terms:
        return np.empty(0, np.int64), np.empty(0, np.float32)
    n = len(table)
    idf = [math.log1p(n / max(1, table.document_frequency(t))) for t in terms]
    ids = np.concatenate(hits)
    weights = np.concatenate([np.full(len(h), w) for h, w in zip(hits, idf, strict=True)])
    unique, inverse = np.unique(ids, return_inverse=True)
    return unique, (np.bincount(inverse, weights=weights) / sum(idf)).astype(np.float32)


__all__ = ["Block", "BlockBuilder", "BlockRequest", "Mode", "ShownMemory"]
