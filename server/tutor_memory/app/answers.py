"""AnnotateAnswer (SPEC R7.2, R7.3): save which memories were shown for the answer, then trace
the answer's sentences to the chain's file passages and to those memories, and save its grounding
status as an annotation. A lookup and a word comparison: no model is called."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from tutor_memory.app.changes import Change
from tutor_memory.app.executors import Executors
from tutor_memory.app.files import PassageCache
from tutor_memory.app.ledger import Ledger
from tutor_memory.domain.annotations import AnnotationKind
from tutor_memory.domain.budget import text_work_budget
from tutor_memory.domain.clock import now_us, us_to_datetime
from tutor_memory.domain.episodes import ChainKey, Kind, StoredEpisode
from tutor_memory.domain.errors import InvalidArgument, NotFound
from tutor_memory.domain.honesty.grounding import (
    GroundingResult,
    SourceMemory,
    SourcePassage,
    ground,
)
from tutor_memory.domain.honesty.tracing import content_words, nearest_passages
from tutor_memory.domain.recall.block_ids import BlockIds
from tutor_memory.domain.records import StoredPassage
from tutor_memory.store.lru import LruCache
from tutor_memory.store.protocols import EpisodeReads

# Passages whose content words are kept in memory between turns.
PASSAGE_WORDS_CACHE = 100_000


@dataclass(frozen=True, slots=True)
class ShownTurn:
    """AnnotateAnswer's request: the turn's answer, its block, and the memories shown from it."""

    answer_id: int
    block_id: str
    memory_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class AnswerAnnotated:
    annotation_id: int
    grounding: GroundingResult


class AnswerTracer:
    def __init__(
        self,
        ledger: Ledger,
        episodes: EpisodeReads,
        passages: PassageCache,
        block_ids: BlockIds,
        executors: Executors,
    ) -> None:
        self._ledger = ledger
        self._episodes = episodes
        self._passages = passages
        self._block_ids = block_ids
        self._executors = executors
        # Content words of each passage, by passage id: a passage never changes once stored, and
        # reading every passage of a course again on each turn would cost more than tracing.
        self._words: LruCache[int, set[str]] = LruCache(PASSAGE_WORDS_CACHE)

    def forget(self, chain: ChainKey) -> None:
        """A student was erased: their passages' words go (the cache is by passage id, not by
        chain, so all of it goes; it refills as answers are traced)."""
        self._words.clear()

    def _passage_words(self, passage: StoredPassage) -> set[str]:
        found = self._words.get(passage.passage_id)
        if found is None:
            found = content_words(passage.text)
            self._words.put(passage.passage_id, found)
        return found

    async def annotate(
        self, chain: ChainKey, turn: ShownTurn, *, deadline: float | None = None
    ) -> AnswerAnnotated:
        # Only what the named block showed counts as shown (R7.2): a caller naming any other
        # episode of the chain could inflate the answer's grounding.
        shown = self._block_ids.shown(chain, turn.block_id)
        others = [i for i in turn.memory_ids if i not in shown]
        if others:
            raise InvalidArgument(
                "memory_ids", f"not shown in the block {turn.block_id[:16]}...: {others[:10]}"
            )
        answer_id, block_id, memory_ids = turn.answer_id, turn.block_id, list(turn.memory_ids)
        annotation_id, found = await self._shown_memories(chain, answer_id, block_id, memory_ids)
        answer = found[answer_id]
        passages, _ = await self._executors.run(self._executors.readers, self._passages.get, chain)
        text = answer.text or answer.summary
        memories = [
            SourceMemory(
                ep.episode_id, us_to_datetime(ep.occurred_at_us), f"{ep.summary}\n{ep.text}"
            )
            for i, ep in found.items()
            if i != answer_id
        ]

        budget = text_work_budget("answer: tracing it to its sources", deadline)

        def trace() -> GroundingResult:
            sources = [
                SourcePassage(p.file_id, p.version, p.page, p.text)
                for p in nearest_passages(text, passages, self._passage_words)
            ]
            return ground(text, sources, memories, budget=budget)

        result = await self._executors.run_within(
            self._executors.text_pool(len(text)), budget, trace
        )
        body = json.dumps({"block_id": block_id, **asdict(result)}, default=str)
        await self._ledger.in_transaction(
            chain,
            Change.NOTHING,
            lambda w: w.annotate(
                chain, answer_id, AnnotationKind.GROUNDING, body, created_at_us=now_us()
            ),
        )
        return AnswerAnnotated(annotation_id, result)

    async def _shown_memories(
        self, chain: ChainKey, answer_id: int, block_id: str, memory_ids: list[int]
    ) -> tuple[int, dict[int, StoredEpisode]]:
        """Saves which block and memories were shown for the turn an answer closes (R7.2).
        Returns the annotation's id and the episodes read to check the call: the answer and
        every memory, by id."""
        wanted = [answer_id, *memory_ids]
        found = await self._executors.run(
            self._executors.readers, self._episodes.episodes_by_id, chain, wanted
        )
        answer = found.get(answer_id)
        if answer is None:
            raise NotFound(f"answer_episode_id: episode {answer_id} is not in this chain")
        if answer.kind is not Kind.ANSWER:
            raise InvalidArgument(
                "answer_episode_id", f"episode {answer_id} is a {answer.kind}, not an answer"
            )
        missing = [i for i in memory_ids if i not in found]
        if missing:
            raise NotFound(f"memory_ids: not in this chain: {missing}")
        body = json.dumps({"block_id": block_id, "memory_ids": memory_ids})
        annotation_id = await self._ledger.in_transaction(
            chain,
            Change.NOTHING,
            lambda w: w.annotate(
                chain, answer_id, AnnotationKind.SHOWN_MEMORIES, body, created_at_us=now_us()
            ),
        )
        return annotation_id, found
