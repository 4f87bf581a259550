"""What recall knows of every episode, derived once at write time: its duplicate key (R2.4), the
token size of its line, whether it is the tutor's narration of a period (R2.6), its words; and
the array view of a chain (`Snapshot`) that ranking reads.

Deriving these costs a tokenizer call, a narration check and a normalisation per episode, so it
is done when the episode is written (off the event loop, beside its embedding), never per turn.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import Kind, NewEpisode, StoredEpisode
from tutor_memory.domain.recall.block_text import sizing_line
from tutor_memory.domain.recall.narration import is_narration
from tutor_memory.domain.text.normalise import normalise
from tutor_memory.domain.text.words import split_words
from tutor_memory.domain.tokens import TokenCounter

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
    terms: frozenset[str]


@dataclass(frozen=True, slots=True)
class Snapshot:
    ids: npt.NDArray[np.int64]
    occurred_at_us: npt.NDArray[np.int64]
    salience: npt.NDArray[np.float32]
    kind: npt.NDArray[np.uint8]
    dup_key: npt.NDArray[np.uint64]
    tokens: npt.NDArray[np.uint32]
    flagged: npt.NDArray[np.uint8]

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, slots=True)
class RecallFacts:
    """What recall derives from an episode's content, computed before it is stored (off the
    event loop, beside its embedding)."""

    dup_key: int
    tokens: int
    flagged: bool
    terms: frozenset[str]


def recall_facts(
    episodes: Sequence[NewEpisode | StoredEpisode], counter: TokenCounter
) -> list[RecallFacts]:
    sizes = counter.count_many([sizing_line(ep.kind, ep.summary) for ep in episodes])
    facts = []
    for ep, size in zip(episodes, sizes, strict=True):
        summary, text = normalise(ep.summary), normalise(ep.text)
        facts.append(
            RecallFacts(
                dup_key=duplicate_key(ep.kind, summary, text),
                tokens=size,
                flagged=is_account_of_the_record(ep),
                terms=frozenset(split_words(f"{summary} {text}")),
            )
        )
    return facts


def is_account_of_the_record(ep: NewEpisode | StoredEpisode) -> bool:
    """Whether the episode recounts the record rather than being part of it: the nightly
    digest, and the tutor's narration of a period (R2.6). Neither counts as a record of a
    period, fills an empty one, or is recalled as a memory of it."""
    if ep.kind is Kind.CONSOLIDATION:
        return True
    # Only the tutor narrates the record; the time of writing anchors "last week".
    return ep.kind is Kind.ANSWER and is_narration(
        f"{ep.summary}\n{ep.text}", ep.occurred_at_us, "UTC"
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
        terms=facts.terms,
    )
