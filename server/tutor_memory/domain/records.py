"""Rows the store keeps beside the episode ledger: file versions, passages, beliefs, and the
nightly cycle's bookkeeping. Plain data; the SQL lives in the engine's module."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.episodes import ChainKey, Kind


@dataclass(frozen=True, slots=True)
class NewPassage:
    page: int
    text: str
    vector: npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class NewFileVersion:
    """A file version to store with the `file` episode that records it (same transaction)."""

    file_id: str
    version: int
    # sha256 hex of the bytes; "" records a removal.
    fingerprint: str
    filename: str
    kind: str
    title: str
    pages: int
    size_bytes: int
    extractor: str
    concepts: tuple[ExtractedConcept, ...]
    # One L2-normalised row per concept name, in `concepts` order.
    name_vectors: npt.NDArray[np.float32]
    rejected: tuple[tuple[str, str], ...]
    passages: tuple[NewPassage, ...]


@dataclass(frozen=True, slots=True)
class FileVersion:
    file_row: int
    file_id: str
    version: int
    fingerprint: str
    filename: str
    kind: str
    title: str
    pages: int
    extractor: str
    concepts: tuple[ExtractedConcept, ...]
    name_vectors: npt.NDArray[np.float32]
    episode_id: int
    ingested_at_us: int

    @property
    def removed(self) -> bool:
        return not self.fingerprint


@dataclass(frozen=True, slots=True)
class StoredPassage:
    passage_id: int
    file_id: str
    version: int
    fingerprint: str
    page: int
    text: str


@dataclass(frozen=True, slots=True)
class NewBelief:
    concept: str
    concept_key: str
    # "understands" / "struggles with" (beliefs.rules.Claim values).
    claim: str
    confidence: float
    supporting: tuple[int, ...]
    reason: str
    rules_version: str
    needs_reconfirmation: bool
    evidence_at_us: int
    # A decay row: the end of the day (evidence clock) at which it decayed (R8.2).
    decayed_as_of_us: int | None = None


# What a Python int of a row id or a microsecond time, or a float, takes: 28-32 bytes.
NUMBER_BYTES = 32


@dataclass(frozen=True, slots=True)
class BeliefRow:
    belief_id: int
    concept: str
    concept_key: str
    claim: str
    confidence: float
    supporting: tuple[int, ...]
    reason: str
    rules_version: str
    needs_reconfirmation: bool
    evidence_at_us: int
    created_at_us: int
    superseded_by: int | None
    retired_at_us: int | None
    decayed_as_of_us: int | None = None

    @property
    def current(self) -> bool:
        return self.superseded_by is None and self.retired_at_us is None

    def nbytes(self) -> int:
        """About what the row holds in memory, its texts and numbers included (a cache of rows
        weighs them by this)."""
        size = sys.getsizeof
        texts = size(self.concept) + size(self.concept_key) + size(self.claim) + size(self.reason)
        # The supporting ids, the row's id, confidence and two times: one number object each.
        numbers = (len(self.supporting) + 4) * NUMBER_BYTES
        return size(self) + size(self.supporting) + size(self.rules_version) + texts + numbers


def belief_rows_bytes(rows: Sequence[BeliefRow]) -> int:
    """About what a chain's belief rows hold in memory (their cache's weight)."""
    return sys.getsizeof(rows) + sum(row.nbytes() for row in rows)


@dataclass(frozen=True, slots=True)
class NightlyState:
    """How far the nightly cycle has read a chain, and the time zone its days are in."""

    zone: str
    # Every non-digest episode with seq <= scanned_seq was in an ended day and is digested.
    scanned_seq: int
    # Bumped by every run that wrote for the chain.
    generation: int


@dataclass(frozen=True, slots=True)
class DayDigest:
    """One digest the nightly cycle wrote for a day of a chain (a follow-up digest of late
    arrivals is a second row for the same day)."""

    day_start_us: int
    day_end_us: int
    first_seq: int
    last_seq: int
    episodes: int
    # The highest seq the run had read: every episode of the day up to it is digested.
    covered_seq: int
    episode_id: int


@dataclass(frozen=True, slots=True)
class WrittenDigest:
    """A stored day digest, with when the run that wrote it committed (every digest one run
    writes for a chain shares that time)."""

    digest: DayDigest
    done_at_us: int


@dataclass(frozen=True, slots=True)
class ChainVectors:
    """Every stored embedding of one chain made by one model (what the vector index loads)."""

    chain: ChainKey
    ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """What a memory block shows of an episode."""

    episode_id: int
    seq: int
    kind: Kind
    summary: str
    occurred_at_us: int
    # (file_id, fingerprint) of every file the episode cites, for the citation note (R7.4).
    cited: tuple[tuple[str, str], ...] = ()
