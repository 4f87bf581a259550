"""Teaching the map by telling it (SPEC R4): a person's "remember that ..." becomes a note on the
concept it names (exact name match only), or a new concept at the taught level with a short name,
and a `taught` episode that records it. Questions never teach."""

from __future__ import annotations

from dataclasses import dataclass

from tutor_memory.app.executors import Executors
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.maps import MapCache
from tutor_memory.domain.budget import WorkBudget, text_work_budget
from tutor_memory.domain.conceptmap.teaching import Teaching, detect_teaching, is_question
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode, StoredEpisode
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import (
    MAX_CONCEPT_CHARS,
    MAX_SUMMARY_CHARS,
    check_text,
)

# How a taught note reads in the earlier-work line (the design document's block shows
# "the student taught you: Taught: in our class we call ...").
TAUGHT_SUMMARY_PREFIX = "Taught: "


@dataclass(frozen=True, slots=True)
class TaughtNote:
    """A taught episode ready to append, and what it teaches."""

    concept: str
    created: bool
    note: str
    episode: NewEpisode


@dataclass(frozen=True, slots=True)
class Taught:
    concept: str
    created: bool
    note: str
    episode: StoredEpisode


class Teacher:
    def __init__(self, ledger: Ledger, maps: MapCache, executors: Executors) -> None:
        self._ledger = ledger
        self._maps = maps
        self._executors = executors

    async def teaching_in(self, text: str, budget: WorkBudget) -> Teaching | None:
        """The teaching a message carries, if any (read off the event loop, within the request's
        `budget`). `detect_teaching` reads it sentence by sentence and no question sentence ever
        teaches, so "Remember that X. Got it?" teaches X while "Do you remember that X?" teaches
        nothing."""
        if not text.strip():
            return None
        return await self._executors.run_within(
            self._executors.text_pool(len(text)), budget, detect_teaching, text, budget
        )

    async def teach(
        self,
        chain: ChainKey,
        text: str,
        occurred_at_us: int,
        *,
        occurred_at_given: bool,
        deadline: float | None = None,
    ) -> Taught:
        """`deadline` is the caller's (event-loop time); the text work stops at it, or after
        TEXT_WORK_SECONDS."""
        check_text("text", text)
        if not text.strip():
            raise InvalidArgument("text", "required")
        budget = text_work_budget("text: looking for a teaching phrase", deadline)
        teaching = await self.teaching_in(text, budget)
        if teaching is None:
            question = await self._executors.run_within(
                self._executors.text_pool(len(text)), budget, is_question, text, budget
            )
            if question:
                raise InvalidArgument("text", "a question never teaches (SPEC R4.3)")
            raise InvalidArgument(
                "text",
                'no teaching phrase ("remember that ...", "consider X as ...", or its '
                "equivalent in the student's language)",
            )
        taught = await self.taught_note(chain, text, teaching, occurred_at_us, occurred_at_given)
        outcome = await self._ledger.append(taught.episode, deadline=deadline, budget=budget)
        return Taught(taught.concept, taught.created, taught.note, outcome.episode)

    async def taught_note(
        self,
        chain: ChainKey,
        text: str,
        teaching: Teaching,
        occurred_at_us: int,
        occurred_at_given: bool,
        client_key: str = "",
    ) -> TaughtNote:
        """The `taught` episode a teaching becomes (R4.1, R4.2): a note on the concept it names
        (exact name match), else a new concept with the teaching's short topic."""
        chain_map = await self._executors.run(self._executors.readers, self._maps.get, chain)
        # Off the event loop: a note may be as long as its message (14 ms on 64 KiB, a probe).
        named = await self._executors.run(
            self._executors.text_pool(len(teaching.note)), chain_map.matcher.find, teaching.note
        )
        concept = named[0] if named else teaching.topic
        note = " ".join(teaching.note.split())
        episode = NewEpisode(
            chain=chain,
            kind=Kind.TAUGHT,
            summary=(TAUGHT_SUMMARY_PREFIX + note)[:MAX_SUMMARY_CHARS],
            text=text,
            concepts=(concept[:MAX_CONCEPT_CHARS],),
            occurred_at_us=occurred_at_us,
            occurred_at_given=occurred_at_given,
            evidence=(),
            check=None,
            quiz=None,
            client_key=client_key,
        )
        return TaughtNote(concept, not named, note, episode)
