"""BuildBlock (SPEC R2, R6, R7.1): the per-turn memory block, under the turn's hard time cap.

One build runs on one block thread, start to end: embed the query once (on its own thread, so the
model runs while this one searches the text), gather the candidate sets over the whole history as
id arrays (`domain.recall.candidates`), hand them to the Rust core to filter, score, collapse and
pack (`domain.recall.ranking`), fetch text only for the packed rows, compose and fit the block
(`domain.recall.block`). Nothing here writes, and nothing calls a generative model.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import Future
from zoneinfo import ZoneInfo

import numpy as np
import numpy.typing as npt

from tutor_memory.app.caches import LruCache
from tutor_memory.app.executors import Executors
from tutor_memory.app.sync import ChainSync
from tutor_memory.domain.errors import DeadlineExceeded
from tutor_memory.domain.honesty.citations import BLOCK_NOTE
from tutor_memory.domain.recall import block_text
from tutor_memory.domain.recall.block import (
    Block,
    BlockRequest,
    Framing,
    Mode,
    ShownMemory,
    cites_changed_file,
    compose,
    fit_to_budget,
    zone,
)
from tutor_memory.domain.recall.block_ids import BlockIds
from tutor_memory.domain.recall.candidates import (
    MAX_MEMORIES,
    RECENT_CANDIDATES,
    SEMANTIC_CANDIDATES,
    CandidateSets,
    last_turns,
    most_recent,
    record_positions,
    same_as,
    window_positions,
)
from tutor_memory.domain.recall.facts import Snapshot
from tutor_memory.domain.recall.lexical import bm25
from tutor_memory.domain.recall.ranking import RankRequest, rank_and_pack
from tutor_memory.domain.recall.record_mode import is_record_question
from tutor_memory.domain.recall.sections import BlockSources, Extras, compose_extras
from tutor_memory.domain.recall.timewindow import TimeWindow, parse_time_window
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.stems import query_terms
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.index.recall_tables import ChainTable, RecallTables
from tutor_memory.index.vectors import VectorIndex
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.protocols import EpisodeReads

# Frames whose token count is remembered (see BlockBuilder._overhead): few distinct frames occur
# (the record line, a time window's label), so this bound is rarely reached.
FRAME_CACHE_SIZE = 4096

Vector = npt.NDArray[np.float32]


class StageTimer:
    """The milliseconds each stage of one build took, reported with the block."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings.append((stage, round((now - self._last) * 1000, 3)))
        self._last = now


class BlockBuilder:
    """Builds one block, synchronously, on the calling thread."""

    def __init__(
        self,
        episodes: EpisodeReads,
        embedder: Embedder,
        vectors: VectorIndex,
        tables: RecallTables,
        counter: TokenCounter,
        executors: Executors,
        block_ids: BlockIds,
        sources: BlockSources | None = None,
    ) -> None:
        self._episodes = episodes
        self._block_ids = block_ids
        self._embedder = embedder
        self._vectors = vectors
        self._tables = tables
        self.counter = counter
        self._query_pool = executors.query_embed
        self._sources = sources
        # Token counts of the block's fixed frame (everything but memories, beliefs and map).
        self._frame_tokens: LruCache[str, int] = LruCache(FRAME_CACHE_SIZE)

    def build(self, req: BlockRequest) -> Block:
        block = self._build(req)
        block.block_id = self._block_ids.issue(req, [m.episode.episode_id for m in block.memories])
        return block

    def _build(self, req: BlockRequest) -> Block:
        timer = StageTimer()
        tz = zone(req.time_zone)
        if req.mode is Mode.NONE:
            block = compose(req, [], Extras(), Framing(False, None, False), self.counter)
            timer.lap("compose")
            block.timings = timer.timings
            return block
        table = self._tables.get(req.chain)
        snap = table.snapshot() if table is not None else None
        record = req.mode is Mode.FULL and bool(req.query) and is_record_question(req.query)
        # Started as early as possible, so that the model runs while everything up to the
        # neighbour search does. A record question does not search by meaning.
        embedding = (
            self._query_pool.submit(self._embedder.embed, [req.query])
            if req.query.strip() and req.mode is not Mode.WINDOW and snap is not None and not record
            else None
        )
        window = (
            parse_time_window(req.query, req.now_us, tz.key)
            if req.query and req.mode is not Mode.WINDOW
            else None
        )
        timer.lap("parse")

        sources = self._sources if req.mode is Mode.FULL and snap is not None else None

        def extras_for(query_vector: Vector | None) -> Extras:
            """The beliefs and map sections (FULL mode), routed by the query's embedding."""
            if sources is None:
                return Extras()
            made = compose_extras(sources, req.chain, req.query, query_vector, req.budget_tokens)
            timer.lap("beliefs_and_map")
            return made

        extras: Extras | None = None
        shown: list[ShownMemory] = []
        no_record = False
        if snap is not None and len(snap):
            assert table is not None
            if req.mode is Mode.WINDOW:
                positions = last_turns(snap)
                counts = np.ones(len(positions), dtype=np.uint32)
                scores = np.zeros(len(positions), dtype=np.float32)
                timer.lap("rank")
            else:
                in_window = window_positions(snap, window)
                no_record = window is not None and len(in_window) == 0
                if no_record:
                    positions = np.empty(0, np.int64)
                    counts = np.empty(0, np.uint32)
                    scores = np.empty(0, np.float32)
                else:
                    positions, counts, scores, extras = self._rank(
                        req, table, snap, window, in_window, record, timer, embedding, extras_for
                    )
            if extras is None:
                extras = extras_for(embedding.result()[0] if embedding is not None else None)
            shown = self._fetch_and_render(
                req, table, snap, window, positions, counts, scores, tz, extras
            )
            timer.lap("fetch")
        elif window is not None:
            no_record = True
        if extras is None:
            extras = extras_for(None)
        block = fit_to_budget(req, shown, extras, Framing(record, window, no_record), self.counter)
        timer.lap("compose")
        block.timings = timer.timings
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
        timer: StageTimer,
        embedding: Future[Vector] | None,
        extras_for: Callable[[Vector | None], Extras],
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], Extras]:
        sets = CandidateSets()
        # The most recent episodes: the honest offer when nothing matches (R2.2).
        sets.add(snap.ids[most_recent(snap.occurred_at_us, RECENT_CANDIDATES)], 0.0, False)
        # Inside a named period every episode is a candidate and counts as matching it.
        if window is not None:
            sets.add(snap.ids[in_window], 0.0, True)
        if record:
            # A record question is about the whole record, not about its own words: every check,
            # quiz and taught note is a candidate beside the recent conversation (R6.4), ranked
            # with it by salience (wrong checks first) and recency alike. So a wrong check months
            # old can rank below this week's conversation; the beliefs section, which comes first,
            # is what carries older verdicts.
            sets.add(snap.ids[record_positions(snap)], 0.0, False)
        has_query = bool(req.query.strip()) and not record
        query_vector = None
        if has_query:
            assert embedding is not None
            norm = normalise(req.query)
            positions, scores = bm25(table.postings(query_terms(req.query)), snap.length)
            if len(positions):
                sets.add(snap.ids[positions], scores / scores.max(), True)
            sets.add(table.tagged(norm), 1.0, True)
            timer.lap("text")
            query_vector = embedding.result()[0]
            timer.lap("embed")
            sets.add_neighbours(*self._vectors.search(req.chain, query_vector, SEMANTIC_CANDIDATES))
            timer.lap("neighbours")
        # The map's sections need the query's embedding (to route it to concepts) and must be
        # known before packing, since what they take leaves less for the episodes.
        extras = extras_for(query_vector)
        if extras.routed:
            # Episodes touching the concepts the query was routed to (R2.1).
            sets.add(table.tagged_with(extras.routed), 1.0, True)
        overhead = self._overhead(req, extras, record, window)

        cand_ids, cand_relevance, cand_matched = sets.arrays()
        ranked = rank_and_pack(
            RankRequest(
                chain_ids=snap.ids,
                occurred_at_us=snap.occurred_at_us,
                salience=snap.salience,
                dup_key=snap.dup_key,
                tokens=snap.tokens,
                flagged=snap.flagged,
                cand_ids=cand_ids,
                cand_relevance=cand_relevance,
                cand_matched=cand_matched,
                now_us=req.now_us,
                has_query=has_query or window is not None,
                window_start_us=window.start_us if window else None,
                window_end_us=window.end_us if window else None,
                # The tutor's narrations of a period are not memories of it (R2.6).
                exclude_flagged=window is not None or record,
                budget_tokens=max(0, req.budget_tokens - overhead),
                max_items=MAX_MEMORIES,
            )
        )
        positions, counts, scores = ranked.positions, ranked.counts, ranked.scores
        timer.lap("rank")
        return positions, counts, scores, extras

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
        rows = self._episodes.memory_rows(req.chain, ids.tolist())
        shown = []
        for pos, episode_id, count, score in zip(positions, ids, counts, scores, strict=True):
            ep = rows.get(int(episode_id))
            if ep is None:
                continue
            repeated = (
                same_as(table.copies(int(snap.dup_key[pos]), len(snap)), snap, int(pos), window)
                if count > 1
                else (ep.episode_id,)
            )
            line = block_text.memory_line(
                ep.kind, ep.summary, block_text.format_date(ep.occurred_at_us, tz),
                len(repeated),
            )  # fmt: skip
            if cites_changed_file(ep, extras.fingerprints):
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
        frame = compose(req, [], Extras(), Framing(record, window, False), None)
        tokens = self._frame_tokens.get(frame.text)
        if tokens is None:
            tokens = self.counter.count(frame.text)
            self._frame_tokens.put(frame.text, tokens)
        return tokens + extras.tokens


class Blocks:
    """The BuildBlock use case: a build on a block thread, never awaited past the turn's cap."""

    def __init__(
        self,
        builder: BlockBuilder,
        executors: Executors,
        cap_seconds: float,
        sync: ChainSync | None = None,
    ) -> None:
        self.builder = builder
        self._executors = executors
        self._cap_seconds = cap_seconds
        # Catches the chain's caches up with other nodes' writes before the build (app/sync.py).
        self._sync = sync

    @property
    def tokenizer(self) -> str:
        return self.builder.counter.name

    async def build(self, req: BlockRequest, time_remaining: float | None) -> Block | None:
        """The block, or None when it was dropped at the cap (R6.1): a slow memory must not
        stand in front of the chat model's first token. The worker finishes on its own; its
        result is dropped. Raises DeadlineExceeded when the caller's own deadline came first."""
        limit = self._cap_seconds if time_remaining is None else min(self._cap_seconds,
                                                                     time_remaining)  # fmt: skip
        building = self._executors.run(self._executors.blocks, self._build_fresh, req)
        try:
            return await asyncio.wait_for(building, timeout=max(limit, 0.0))
        except TimeoutError:
            if time_remaining is not None and time_remaining <= self._cap_seconds:
                raise DeadlineExceeded(
                    "the memory block was not ready before the call's deadline; abandoned"
                ) from None
            return None

    def _build_fresh(self, req: BlockRequest) -> Block:
        if self._sync is None:
            return self.builder.build(req)
        with self._sync.fresh(req.chain):
            return self.builder.build(req)
