"""After a turn (SPEC R7.2, R7.3): save which memories were shown for the answer, then trace the
answer's sentences to the chain's file passages and to those memories, and save its grounding
status as an annotation. A lookup and a word comparison: no model is called."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass

from tutor_memory.app.ledger import Ledger
from tutor_memory.app.passage_cache import PassageCache
from tutor_memory.domain.clock import now_us, us_to_datetime
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.honesty.grounding import (
    GroundingResult,
    SourceMemory,
    SourcePassage,
    ground,
)
from tutor_memory.domain.records import StoredPassage
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.words import stop_words, words

# Annotation kind of an answer's grounding (R7.3).
GROUNDING_ANNOTATION = "grounding"
# Passages the tracer compares an answer with: those sharing the most content words with it.
# A course of hundreds of pages has thousands of passages; comparing every sentence with all of
# them would cost more than the turn, and a passage sharing no word cannot trace a sentence.
TRACE_PASSAGES = 50
# Passages whose content words are kept in memory between turns.
PASSAGE_WORDS_CACHE = 100_000


@dataclass(frozen=True, slots=True)
class AnswerAnnotated:
    annotation_id: int
    grounding: GroundingResult


def content_words(text: str) -> set[str]:
    stops = stop_words()
    return {w for w in words(normalise(text)) if w not in stops and len(w) > 1}


def nearest_passages(
    answer: str, passages: list[StoredPassage], words_of: Callable[[StoredPassage], set[str]]
) -> list[StoredPassage]:
    wanted = content_words(answer)
    if not wanted:
        return []
    scored = []
    for p in passages:
        shared = len(wanted & words_of(p))
        if shared:
            scored.append((-shared, p.passage_id, p))
    scored.sort(key=lambda t: (t[0], t[1]))
    return [p for _, _, p in scored[:TRACE_PASSAGES]]


class AnswerTracer:
    def __init__(self, ledger: Ledger, passages: PassageCache) -> None:
        self.ledger = ledger
        self.passages = passages
        # Content words of each passage, by passage id: a passage never changes once stored, and
        # reading every passage of a course again on each turn would cost more than tracing.
        self._words: dict[int, set[str]] = {}

    def _passage_words(self, passage: StoredPassage) -> set[str]:
        found = self._words.get(passage.passage_id)
        if found is None:
            if len(self._words) >= PASSAGE_WORDS_CACHE:
                self._words.clear()
            found = self._words[passage.passage_id] = content_words(passage.text)
        return found

    async def annotate(
        self, chain: ChainKey, answer_id: int, block_id: str, memory_ids: list[int]
    ) -> AnswerAnnotated:
        annotation_id, found = await self.ledger.annotate_shown_memories(
            chain, answer_id, block_id, memory_ids
        )
        answer = found[answer_id]
        passages, _ = await self.ledger.read(lambda: self.passages.get(chain))
        text = answer.text or answer.summary
        sources = [
            SourcePassage(p.file_id, p.version, p.page, p.text)
            for p in nearest_passages(text, passages, self._passage_words)
        ]
        memories = [
            SourceMemory(
                ep.episode_id, us_to_datetime(ep.occurred_at_us), f"{ep.summary}\n{ep.text}"
            )
            for i, ep in found.items()
            if i != answer_id
        ]
        result = ground(text, sources, memories)
        body = json.dumps({"block_id": block_id, **asdict(result)}, default=str)
        await self.ledger.in_transaction(
            lambda w: w.annotate(
                chain, answer_id, GROUNDING_ANNOTATION, body, created_at_us=now_us()
            )
        )
        return AnswerAnnotated(annotation_id, result)
