"""BuildBlock (SPEC R2, R6, R7.1): the per-turn memory block, under the turn's hard time cap.

One build runs on one block thread, start to end: embed the query once (on its own thread, so the
model runs while this one searches the text), gather the candidate sets over the whole history as
id arrays (`domain.recall.candidates`), hand them to the Rust core to filter, score, collapse and
pack (`domain.recall.ranking`), fetch text only for the packed rows, compose and fit the block
(`domain.recall.block`). Nothing here writes, and nothing calls a generative model.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

import numpy as np
import numpy.typing as npt

from tutor_memory.app.batched_embeddings import BatchedEmbeddings
from tutor_memory.app.executors import Executors
from tutor_memory.app.record_intent import embedded_examples
from tutor_memory.app.shown_rows import ShownRows
from tutor_memory.app.sync import ChainSync
from tutor_memory.app.telemetry import Telemetry
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.errors import DeadlineExceeded
from tutor_memory.domain.honesty.citations import BLOCK_NOTE
from tutor_memory.domain.recall import block_text
from tutor_memory.domain.recall.asked_period import asked_window
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
from tutor_memory.domain.recall.block_tokens import BlockCounter
from tutor_memory.domain.recall.candidates import (
    MAX_MEMORIES,
    RECENT_CANDIDATES,
    SEMANTIC_CANDIDATES,
    CandidateSets,
    current_turn,
    last_turns,
    neighbours,
    reciprocal_rank_relevance,
    record_positions,
    same_as,
    scaled_to_best,
    set_weights,
    window_positions,
)
from tutor_memory.domain.recall.explain import (
    Explanation,
    FoundBy,
    Source,
    explain_ranking,
    explain_window,
)
from tutor_memory.domain.recall.facts import Snapshot
from tutor_memory.domain.recall.levers import ALL_ON, Lever, RecallLevers
from tutor_memory.domain.recall.lexical import bm25, coverage
from tutor_memory.domain.recall.ranking import (
    CandidateTrace,
    RankRequest,
    rank_and_pack,
    rank_and_trace,
)
from tutor_memory.domain.recall.record_intent import open_to_examples
from tutor_memory.domain.recall.record_mode import is_record_question, record_topic
from tutor_memory.domain.recall.sections import BlockSources, Extras, compose_extras
from tutor_memory.domain.recall.timewindow import TimeWindow
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.stems import grouped_query_terms
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.index.recall_tables import ChainTable, RecallTables
from tutor_memory.index.vectors import VectorIndex
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.protocols import EpisodeReads

Vector = npt.NDArray[np.float32]


# Queries whose record reading (`_record_reading`) is kept: a block reads its query when it
# decides whether to embed it (`BlockBuilder.start_embedding`) and again when it builds, a few
# milliseconds apart. Enough for every turn in flight at once; at most 2 MB of queries (256 of
# 8,000 characters) when full.
RECORD_READINGS_KEPT = 256


@functools.lru_cache(maxsize=RECORD_READINGS_KEPT)
def _record_reading(query: str) -> tuple[bool, str | None]:
    """Whether `query` is a record question by the rules, and the topic it names if it is: read
    once for both of the block's looks at it (on the phrasing sets' messages, together 0.1 ms at
    the median and up to 2 ms, Python holding the GIL)."""
    record = is_record_question(query)
    return record, record_topic(query) if record else None


class StageTimer:
    """The milliseconds each stage of one build took, reported with the block."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        # When the build began (perf_counter seconds).
        self.started = self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings.append((stage, round((now - self._last) * 1000, 3)))
        self._last = now


@dataclass(slots=True)
class _Trace:
    """What an explained build gathers on its way (`BlockBuilder.build(explain=True)`)."""

    found: FoundBy | None = None
    ranked: dict[int, CandidateTrace] = field(default_factory=dict)
    last_turns: list[int] | None = None
    snapshot: Snapshot | None = None
    turn: int | None = None
    weights: tuple[float, float] = (1.0, 1.0)


@dataclass(frozen=True, slots=True)
class _TextMatches:
    """What the text search found for `words`: positions in the chain's snapshot matched by
    BM25 and their calibrated relevance, and ids of the episodes tagged with a concept the words
    name (None with that lever off)."""

    words: str
    lexical: npt.NDArray[np.int64]
    lexical_relevance: npt.NDArray[np.float32]
    # How much of the query the best lexical match covers (`lexical.coverage`).
    lexical_coverage: float
    tagged: npt.NDArray[np.int64] | None


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
        levers: RecallLevers = ALL_ON,
    ) -> None:
        self._episodes = episodes
        # The rows shown before, kept (app/shown_rows.py).
        self.shown_rows = ShownRows(episodes)
        # Every lever on, except in an ablation (`domain.recall.levers`).
        self.levers = levers
        self._block_ids = block_ids
        # Embedded now, never on the read path (a turn embeds its query and nothing else).
        self._record_examples = embedded_examples(embedder)
        self._vectors = vectors
        self._tables = tables
        self.counter = BlockCounter(counter)
        self._queries = BatchedEmbeddings(embedder, executors.query_embed)
        self._sources = sources

    def forget(self, chain: ChainKey) -> None:
        """A student was erased: the rows kept and the lines and frames counted may hold their
        words or queries, so every kept row and remembered count goes (read and recounted once
        each)."""
        self.shown_rows.forget(chain)
        self.counter.clear()

    def start_embedding(self, req: BlockRequest) -> Future[Vector] | None:
        """Starts the turn's one query embedding, if its block searches by meaning: a query, a
        mode that recalls, a chain with episodes, and not a record question without a topic
        (which is about the whole record, not its own words). Started as early as possible, so
        that the model runs while the block searches the text, and batched with other turns'
        (`BatchedEmbeddings`)."""
        if (
            not req.query.strip()
            or req.mode in (Mode.WINDOW, Mode.NONE)
            or not self._tables.get(req.chain)
            or (req.mode is Mode.FULL and _record_reading(req.query) == (True, None))
        ):
            return None
        return self._queries.submit(req.query)

    def build(
        self, req: BlockRequest, embedding: Future[Vector] | None = None, *, explain: bool = False
    ) -> Block:
        """The block (blocking). `embedding` is the future `start_embedding(req)` returned, when
        the caller started it; else it is started here. With `explain`, ranked by the Python
        twin of the core with the reasons of every candidate (`domain.recall.explain`): the same
        block (tests/app/test_block_paths.py)."""
        trace = _Trace() if explain else None
        if embedding is None:
            embedding = self.start_embedding(req)
        block = self._build(req, embedding, trace)
        block.block_id = self._block_ids.issue(req, [m.episode.episode_id for m in block.memories])
        if trace is not None:
            block.explanation = self._explanation(req, block, trace)
        return block

    def _build(
        self, req: BlockRequest, embedding: Future[Vector] | None, trace: _Trace | None = None
    ) -> Block:
        timer = StageTimer()
        tz = zone(req.time_zone)
        if req.mode is Mode.NONE:
            block = compose(req, [], Extras(), Framing(False, None, False), self.counter)
            timer.lap("compose")
            block.timings = timer.timings
            return block
        table = self._tables.get(req.chain)
        snap = table.snapshot() if table is not None else None
        # The question of this very turn, if the chat service stored it first: never a memory.
        turn = current_turn(snap, req.query, req.now_us) if snap is not None else None
        # A record question that names a topic is recall within the record about that topic.
        record, topic = (
            _record_reading(req.query) if req.mode is Mode.FULL and req.query else (False, None)
        )
        window = (
            asked_window(req.query, req.now_us, tz.key)
            if req.query and req.mode is not Mode.WINDOW and self.levers.on(Lever.PERIOD)
            else None
        )
        timer.lap("parse")
        early: _TextMatches | None = None
        if (
            embedding is not None
            and not record
            and req.mode is Mode.FULL
            and open_to_examples(req.query)
        ):
            # No rule made it a record question: the labelled examples decide, by the turn's one
            # embedding (domain.recall.record_intent). The text search of the question as asked
            # runs first, while the model embeds it; what is left of the wait is timed as its
            # own stage. (Kept unless the examples make it a record question.)
            # The words searched if the examples make it a record question about a topic are
            # searched too while the model is still running, when it is likely to run for
            # longer than a search like the question's own took: else that search follows the
            # wait. (On the AMD host of the latest benchmarks the model takes 3-4 ms from its
            # start; a search takes 1-2 ms at 10k episodes and 2-4 ms at 100k, where searching
            # the topic early cost more CPU than the wait it saved.)
            # The topic is read at most once per build, and only when it is needed.
            topic_of = functools.cache(functools.partial(record_topic, req.query))
            early_topic: _TextMatches | None = None
            if table is not None and snap is not None and len(snap):
                searching = time.perf_counter()
                early = self._text_matches(table, snap, req.query)
                now = time.perf_counter()
                # Counted from the build's start, a little after the model's.
                model_left = self._queries.typical_seconds - (now - timer.started)
                if (
                    not embedding.done()
                    and model_left > now - searching
                    and (maybe_topic := topic_of()) is not None
                ):
                    early_topic = self._text_matches(table, snap, maybe_topic)
                timer.lap("text")
            record = self._record_examples.closer_to_record(embedding.result())
            # The examples tell that the question is about the record, not which of its words
            # are the record phrase: without a topic the extractor finds, the question's own
            # words are searched ("did I ever finish that probability worksheet"), so that a
            # topic it names is not lost to the whole record.
            topic = (topic_of() or req.query) if record else None
            if record and early_topic is not None:
                early = early_topic
            timer.lap("record_intent")

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
                positions = positions[positions != turn] if turn is not None else positions
                counts = np.ones(len(positions), dtype=np.uint32)
                scores = np.zeros(len(positions), dtype=np.float32)
                if trace is not None:
                    trace.last_turns = snap.ids[positions].tolist()
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
                        req, table, snap, window, in_window, record, topic, turn, timer,
                        embedding, extras_for, trace, early,
                    )  # fmt: skip
            if extras is None:
                extras = extras_for(embedding.result() if embedding is not None else None)
            shown = self._fetch_and_render(
                req, table, snap, window, turn, positions, counts, scores, tz, extras
            )
            timer.lap("fetch")
        elif window is not None:
            no_record = True
        if extras is None:
            extras = extras_for(None)
        if trace is not None and snap is not None:
            trace.snapshot, trace.turn = snap, turn
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
        topic: str | None,
        turn: int | None,
        timer: StageTimer,
        embedding: Future[Vector] | None,
        extras_for: Callable[[Vector | None], Extras],
        trace: _Trace | None,
        early: _TextMatches | None,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float32], Extras]:
        sets = CandidateSets(explain=trace is not None)
        # The most recent episodes: the honest offer when nothing matches (R2.2).
        recent = snap.ids[table.most_recent(RECENT_CANDIDATES, len(snap))]
        sets.add(recent, 0.0, False, Source.RECENT)
        # Inside a named period every episode is a candidate and counts as matching it.
        if window is not None:
            sets.add(snap.ids[in_window], 0.0, True, Source.PERIOD)
        if record:
            # A record question is about the whole record, not about its own words: every check,
            # quiz and taught note is a candidate beside the recent conversation (R6.4), ranked
            # with it by salience (wrong checks first) and recency alike. So a wrong check months
            # old can rank below this week's conversation; the beliefs section, which comes first,
            # is what carries older verdicts.
            sets.add(snap.ids[record_positions(snap)], 0.0, False, Source.RECORD)
        has_query = bool(req.query.strip()) and (not record or topic is not None)
        # A record question with a topic matches its words by the topic alone, so that the
        # record phrase ("what did I get wrong") matches nothing on its own; the record's checks
        # and quizzes stay candidates, and the topic's matches win over them (R2.2).
        words_of = topic if topic is not None else req.query
        query_vector = None
        if has_query:
            if embedding is None:  # the chain's first episode arrived since the turn started
                embedding = self._queries.submit(req.query)
            levers = self.levers
            text = early
            if text is None or text.words != words_of:
                text = self._text_matches(table, snap, words_of)
                timer.lap("text")
            query_vector = embedding.result()
            timer.lap("embed")
            found = None
            if levers.on(Lever.DENSE):
                found = self._vectors.neighbours(
                    req.chain, query_vector, SEMANTIC_CANDIDATES, centre=levers.on(Lever.CENTRING)
                )
            lexical_weight, dense_weight = 1.0, 1.0
            if found is not None and levers.on(Lever.LEXICAL) and levers.on(Lever.CALIBRATION):
                lexical_weight, dense_weight = set_weights(
                    text.lexical_coverage, found.similarities, centred=found.centred
                )
                if trace is not None:
                    trace.weights = (lexical_weight, dense_weight)
            lexical, lexical_relevance = text.lexical, text.lexical_relevance
            if lexical_weight != 1.0:  # most turns: the lexical set counts fully, no copy
                lexical_relevance = lexical_relevance * lexical_weight
            if levers.on(Lever.LEXICAL):
                sets.add(snap.ids[lexical], lexical_relevance, True, Source.LEXICAL)
            if text.tagged is not None:
                sets.add(text.tagged, 1.0, True, Source.TAGGED)
            dense_ids, dense_relevance = np.empty(0, np.int64), np.empty(0, np.float32)
            if found is not None:
                dense_ids = found.ids
                dense_relevance = sets.add_neighbours(
                    dense_ids,
                    found.similarities,
                    centred=found.centred,
                    calibrated=levers.on(Lever.CALIBRATION),
                    weight=dense_weight,
                )
            if levers.on(Lever.NEIGHBOURS):
                # The turns next to the best matches, lexical or dense (a cheap second hop).
                near, near_relevance = neighbours(
                    snap,
                    np.concatenate([lexical, np.searchsorted(snap.ids, dense_ids)]),
                    np.concatenate([lexical_relevance, dense_relevance]),
                )
                sets.add(snap.ids[near], near_relevance, True, Source.NEIGHBOUR)
            timer.lap("neighbours")
        # The map's sections need the query's embedding (to route it to concepts) and must be
        # known before packing, since what they take leaves less for the episodes.
        extras = extras_for(query_vector)
        if extras.routed and self.levers.on(Lever.CONCEPTS):
            # Episodes touching the concepts the query was routed to (R2.1).
            sets.add(table.tagged_with(extras.routed), 1.0, True, Source.CONCEPT)
        overhead = self._overhead(req, extras, record, window)

        cand_ids, cand_relevance, cand_matched = sets.arrays()
        if turn is not None:
            keep = cand_ids != snap.ids[turn]
            cand_ids, cand_relevance, cand_matched = (
                cand_ids[keep],
                cand_relevance[keep],
                cand_matched[keep],
            )
        request = RankRequest(
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
        if trace is None:
            ranked = rank_and_pack(request)
        else:
            ranked, trace.ranked = rank_and_trace(request)
            trace.found = sets.found
        positions, counts, scores = ranked.positions, ranked.counts, ranked.scores
        timer.lap("rank")
        return positions, counts, scores, extras

    def _text_matches(self, table: ChainTable, snap: Snapshot, words: str) -> _TextMatches:
        """The episodes that match `words` by their text (BM25 over the stems, with relevance
        calibrated) and by their concept tags, as the levers allow."""
        lexical, relevance = np.empty(0, np.int64), np.empty(0, np.float32)
        covered = 0.0
        if self.levers.on(Lever.LEXICAL):
            calibrate = (
                scaled_to_best if self.levers.on(Lever.CALIBRATION) else reciprocal_rank_relevance
            )
            terms, stemmed_words = grouped_query_terms(words)
            postings = table.postings(terms)
            lexical, scores = bm25(postings, snap.length)
            relevance = calibrate(scores)
            if len(scores):
                covered = coverage(
                    terms, postings, stemmed_words, len(snap.length), float(scores.max())
                )
        tagged = table.tagged(normalise(words)) if self.levers.on(Lever.CONCEPTS) else None
        return _TextMatches(words, lexical, relevance, covered, tagged)

    # -- composition ---------------------------------------------------------------------------

    def _fetch_and_render(
        self,
        req: BlockRequest,
        table: ChainTable,
        snap: Snapshot,
        window: TimeWindow | None,
        turn: int | None,
        positions: npt.NDArray[np.int64],
        counts: npt.NDArray[np.uint32],
        scores: npt.NDArray[np.float32],
        tz: ZoneInfo,
        extras: Extras,
    ) -> list[ShownMemory]:
        ids = snap.ids[positions].tolist()
        rows = self.shown_rows.memory_rows(req.chain, ids)
        # The copies of every collapsed memory, found at once.
        copies = table.copies_of(snap.dup_key[positions[counts > 1]].tolist(), len(snap))
        shown = []
        # Python ints and floats from here: a numpy scalar per memory costs more than its work.
        sized_tokens = snap.tokens[positions].tolist()
        for pos, episode_id, count, score, size in zip(
            positions.tolist(), ids, counts.tolist(), scores.tolist(), sized_tokens, strict=True
        ):
            ep = rows.get(episode_id)
            if ep is None:
                continue
            repeated = (
                same_as(copies[int(snap.dup_key[pos])], snap, pos, window, turn)
                if count > 1
                else (ep.episode_id,)
            )
            sized = block_text.sizing_line(ep.kind, ep.summary)
            added = block_text.repeats_suffix(len(repeated))
            if cites_changed_file(ep, extras.fingerprints):
                added = f"{added} {BLOCK_NOTE}"
            alone, row = self.counter.memory_line(size, sized, added)
            date = block_text.format_date(ep.occurred_at_us, tz)
            shown.append(
                ShownMemory(ep, len(repeated), repeated, score, sized + added, date, alone, row)
            )
        # Earlier work reads oldest first (the design document's block).
        shown.sort(key=lambda m: (m.episode.occurred_at_us, m.episode.seq))
        return shown

    def _explanation(self, req: BlockRequest, block: Block, trace: _Trace) -> Explanation:
        """The reasons of an explained build, each with the row of its episode."""
        snap = trace.snapshot
        if snap is None:
            return Explanation()
        shown = {m.episode.episode_id for m in block.memories}
        if trace.last_turns is not None:
            made = explain_window(trace.last_turns, snap.ids, snap.salience, shown)
        elif trace.found is not None:
            turn = int(snap.ids[trace.turn]) if trace.turn is not None else None
            made = explain_ranking(trace.found, snap.ids, snap.salience, trace.ranked, shown, turn)
        else:
            return Explanation()
        rows = self._episodes.memory_rows(req.chain, [c.episode_id for c in made.candidates])
        made.candidates = [
            dataclasses.replace(c, row=rows.get(c.episode_id)) for c in made.candidates
        ]
        made.lexical_weight, made.dense_weight = trace.weights
        return made

    def _overhead(
        self, req: BlockRequest, extras: Extras, record: bool, window: TimeWindow | None
    ) -> int:
        """Tokens of the block without memories, which the memories' budget must leave room for:
        the fixed frame (counted once per distinct frame) plus what the beliefs and map take."""
        frame = compose(req, [], Extras(), Framing(record, window, False), None)
        return self.counter.count(frame.text) + extras.tokens


class Blocks:
    """The BuildBlock use case: a build on a block thread, never awaited past the turn's cap."""

    def __init__(
        self,
        builder: BlockBuilder,
        executors: Executors,
        cap_seconds: float,
        telemetry: Telemetry | None = None,
        sync: ChainSync | None = None,
    ) -> None:
        self.builder = builder
        self._executors = executors
        self._cap_seconds = cap_seconds
        # Catches the chain's caches up with other nodes' writes before the build (app/sync.py).
        self._sync = sync
        self._telemetry = telemetry or Telemetry()

    def _build_timed(
        self, req: BlockRequest, embedding: Future[Vector] | None, *, explain: bool
    ) -> tuple[int, Block]:
        """The block and the wall-clock time (ns) its build began on the block thread."""
        started_ns = time.time_ns()
        if self._sync is None:
            return started_ns, self.builder.build(req, embedding, explain=explain)
        with self._sync.fresh(req.chain):
            return started_ns, self.builder.build(req, embedding, explain=explain)

    @property
    def tokenizer(self) -> str:
        return self.builder.counter.name

    async def build(
        self, req: BlockRequest, time_remaining: float | None, *, explain: bool = False
    ) -> Block | None:
        """The block, or None when it was dropped at the cap (R6.1): a slow memory must not
        stand in front of the chat model's first token. The worker finishes on its own; its
        result is dropped. Raises DeadlineExceeded when the caller's own deadline came first."""
        limit = self._cap_seconds if time_remaining is None else min(self._cap_seconds,
                                                                     time_remaining)  # fmt: skip
        # The query's embedding starts now, batched with other turns', while the build waits
        # for a block thread.
        embedding = self.builder.start_embedding(req)
        building = self._executors.run(
            self._executors.blocks, self._build_timed, req, embedding, explain=explain
        )
        try:
            started_ns, block = await asyncio.wait_for(building, timeout=max(limit, 0.0))
        except TimeoutError:
            if time_remaining is not None and time_remaining <= self._cap_seconds:
                raise DeadlineExceeded(
                    "the memory block was not ready before the call's deadline; abandoned"
                ) from None
            self._telemetry.block_dropped()
            return None
        self._telemetry.block_built(started_ns, block.timings)
        return block
