"""What recall knows of every episode, derived once at write time: its duplicate key (R2.4), the
token size of its line, whether it recounts the record rather than being part of it (R2.6), its
language and the stems it holds with their counts (R2.1's lexical set); and the array view of a
chain (`Snapshot`) that ranking reads.

Deriving these costs a tokenizer call, a narration check, a normalisation and stemming per
episode, so it is done when the episode is written (off the event loop, beside its embedding) and
stored beside it, never per turn; `FACTS_VERSION` says which rules made stored facts, and facts
of an older version are made again when the server starts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.budget import WorkBudget, unlimited
from tutor_memory.domain.episodes import Kind, NewEpisode, StoredEpisode
from tutor_memory.domain.recall.block_text import sizing_line
from tutor_memory.domain.recall.narration import is_narration
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.stems import document_terms
from tutor_memory.domain.tokens import TokenCounter

# The rules that made an episode's facts: bumped whenever what they hold or how they are computed
# changes (the line a block shows, which `tokens` counts; the stemmers; the narration rules).
# Version 1 was the word sets of the full-text index; 2 added stems and the compact line.
FACTS_VERSION = 2

# Stable small codes for kinds, stored in a uint8 column.
KIND_CODES: dict[Kind, int] = {kind: i for i, kind in enumerate(Kind)}


def duplicate_key(kind: Kind, normalised_summary: str, normalised_text: str) -> int:
    """Equal for episodes that say the same thing (R2.4): same kind, same normalised words."""
    digest = hashlib.blake2b(
        f"{kind.value}\x00{normalised_summary}\x00{normalised_text}".encode(), digest_size=8
    ).digest()
    return int.from_bytes(digest, "little")


@dataclass(frozen=True, slots=True)
class RecallRow:
    """One episode as recall sees it."""

    episode_id: int
    occurred_at_us: int
    salience: float
    kind: Kind
    dup_key: int
    tokens: int
    flagged: bool
    concepts: tuple[str, ...]
    stems: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class Snapshot:
    ids: npt.NDArray[np.int64]
    occurred_at_us: npt.NDArray[np.int64]
    salience: npt.NDArray[np.float32]
    kind: npt.NDArray[np.uint8]
    dup_key: npt.NDArray[np.uint64]
    tokens: npt.NDArray[np.uint32]
    flagged: npt.NDArray[np.uint8]
    # How many stems (with repeats) each episode holds.
    length: npt.NDArray[np.uint32]

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, slots=True)
class RecallFacts:
    """What recall derives from an episode's content, computed before it is stored (off the
    event loop, beside its embedding)."""

    dup_key: int
    tokens: int
    flagged: bool
    language: str
    # Each stem of the episode once, with how often it occurs, most frequent first.
    stems: tuple[tuple[str, int], ...]

    def stems_text(self) -> str:
        """The stems as stored: "stem:count" pairs separated by spaces (a stem is letters and
        digits only, so neither separator can occur in one)."""
        return " ".join(f"{stem}:{count}" for stem, count in self.stems)


def stems_from_text(stored: str) -> tuple[tuple[str, int], ...]:
    """The stems of `RecallFacts.stems_text`."""
    out = []
    for pair in stored.split():
        stem, _, count = pair.rpartition(":")
        out.append((stem, int(count)))
    return tuple(out)


def recall_facts(
    episodes: Sequence[NewEpisode | StoredEpisode],
    counter: TokenCounter,
    budget: WorkBudget | None = None,
) -> list[RecallFacts]:
    """The facts of each episode; `budget` is checked at each episode and each sentence of a
    narration check."""
    budget = budget or unlimited()
    sizes = counter.count_many([sizing_line(ep.kind, ep.summary) for ep in episodes])
    facts = []
    for ep, size in budget.each(zip(episodes, sizes, strict=True)):
        summary, text = normalise(ep.summary), normalise(ep.text)
        language, stems = document_terms(f"{summary} {text}")
        facts.append(
            RecallFacts(
                dup_key=duplicate_key(ep.kind, summary, text),
                tokens=size,
                flagged=is_account_of_the_record(ep, budget),
                language=language,
                stems=tuple(stems.most_common()),
            )
        )
    return facts


def is_account_of_the_record(
    ep: NewEpisode | StoredEpisode, budget: WorkBudget | None = None
) -> bool:
    """Whether the episode recounts the record rather than being part of it: the nightly
    digest, and the tutor's narration of a period (R2.6). Neither counts as a record of a
    period, fills an empty one, or is recalled as a memory of it."""
    if ep.kind is Kind.CONSOLIDATION:
        return True
    # Only the tutor narrates the record; the time of writing anchors "last week".
    return ep.kind is Kind.ANSWER and is_narration(
        f"{ep.summary}\n{ep.text}", ep.occurred_at_us, "UTC", budget
    )


def recall_row(ep: StoredEpisode, facts: RecallFacts) -> RecallRow:
    return RecallRow(
        episode_id=ep.episode_id,
        occurred_at_us=ep.occurred_at_us,
        salience=ep.salience,
        kind=ep.kind,
        dup_key=facts.dup_key,
        tokens=facts.tokens,
        flagged=facts.flagged,
        concepts=ep.concepts,
        stems=facts.stems,
    )
