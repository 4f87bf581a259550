"""The narrow interface every ledger store implements.

The domain code (ledger.py) talks only to this protocol, so that a PostgreSQL store can follow for
deployments that outgrow one machine; SQL of one engine stays inside that engine's module.

Threading contract: `append` and `annotate` are called from one writer thread at a time; the read
methods may be called from several reader threads at once.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode, StoredEpisode
from tutor_memory.domain.records import (
    BeliefRow,
    ChainVectors,
    Consolidation,
    FileVersion,
    NewBelief,
    NewFileVersion,
    StoredPassage,
)


@dataclass(frozen=True, slots=True)
class PreparedEpisode:
    """A validated episode with its embedding, ready for one transaction."""

    episode: NewEpisode
    vector: npt.NDArray[np.float32]
    # The distinct normalised words of its summary and text, for the full-text index.
    terms: frozenset[str]


class AppendStatus(enum.Enum):
    INSERTED = "inserted"
    # The client key was stored before with the same content: nothing was written.
    DUPLICATE = "duplicate"
    # The client key was stored before with different content: nothing was written.
    CONFLICT = "conflict"


@dataclass(frozen=True, slots=True)
class AppendOutcome:
    status: AppendStatus
    episode: StoredEpisode
    reason: str = ""


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


@dataclass(frozen=True, slots=True)
class Annotation:
    annotation_id: int
    episode_id: int
    kind: str
    body: str
    created_at_us: int


class StoreWriter(Protocol):
    """Writes inside one transaction (`LedgerStore.writing()`): all of them commit, or none."""

    def append(
        self, items: Sequence[PreparedEpisode], *, model_id: str, recorded_at_us: int
    ) -> list[AppendOutcome]: ...

    def annotate(
        self, chain: ChainKey, episode_id: int, kind: str, body: str, *, created_at_us: int
    ) -> int: ...

    def add_file_version(
        self,
        chain: ChainKey,
        row: NewFileVersion,
        *,
        episode_id: int,
        model_id: str,
        ingested_at_us: int,
    ) -> int: ...

    def latest_file_version(self, chain: ChainKey, file_id: str) -> tuple[int, str] | None: ...

    def add_belief(self, chain: ChainKey, belief: NewBelief, *, created_at_us: int) -> int: ...

    def supersede_belief(self, chain: ChainKey, old_id: int, new_id: int) -> None: ...

    def retire_current_beliefs(self, chain: ChainKey, at_us: int) -> int: ...

    def current_beliefs(self, chain: ChainKey) -> list[BeliefRow]: ...

    def find_consolidation(
        self, chain: ChainKey, start_us: int, end_us: int
    ) -> Consolidation | None: ...

    def add_consolidation(
        self, chain: ChainKey, record: Consolidation, *, done_at_us: int
    ) -> None: ...

    def save_self_model(
        self, chain: ChainKey, working_set: Sequence[str], calibration: str, *, at_us: int
    ) -> None: ...


class LedgerStore(Protocol):
    def writing(self) -> AbstractContextManager[StoreWriter]:
        """One write transaction, from the single writer thread."""
        ...

    def append(
        self, items: Sequence[PreparedEpisode], *, model_id: str, recorded_at_us: int
    ) -> list[AppendOutcome]:
        """Writes every item in ONE transaction: each row, its chain link, its full-text entry and
        its embedding, or nothing at all. Returns one outcome per item, in order."""
        ...

    def list_episodes(
        self,
        chain: ChainKey,
        *,
        occurred_from_us: int | None,
        occurred_to_us: int | None,
        after: tuple[int, int] | None,
        limit: int,
    ) -> list[StoredEpisode]:
        """Episodes ordered by (occurred_at, seq), strictly after the `after` position."""
        ...

    def iter_chain(self, chain: ChainKey) -> Iterator[StoredEpisode]:
        """Every episode of the chain in seq order, read from one consistent snapshot."""
        ...

    def chains(self) -> list[ChainKey]:
        """Every chain that has at least one episode."""
        ...

    def iter_vectors(self, model_id: str) -> Iterator[ChainVectors]:
        """Every stored embedding made by `model_id`, one chain at a time."""
        ...

    def count_vectors_of_other_models(self, model_id: str) -> int: ...

    def episodes_by_id(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, StoredEpisode]:
        """The chain's episodes among `ids` (ids of other chains are silently absent)."""
        ...

    def memory_rows(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, MemoryRow]:
        """The few columns a block shows, for the chain's episodes among `ids`."""
        ...

    def text_matches(
        self, chain: ChainKey, terms: Sequence[str], limit: int
    ) -> list[npt.NDArray[np.int64]]:
        """For each (normalised) term, the ids of the chain's episodes that contain it, newest
        first, at most `limit` per term."""
        ...

    def annotate(
        self, chain: ChainKey, episode_id: int, kind: str, body: str, *, created_at_us: int
    ) -> int:
        """Adds a fact about an episode of `chain`; NotFound when the chain has no such episode."""
        ...

    def annotations(
        self, chain: ChainKey, episode_id: int, kind: str | None = None
    ) -> list[Annotation]: ...

    # -- beside the ledger: files, passages, beliefs, the nightly cycle ------------------------

    def file_versions(
        self, chain: ChainKey, dim: int, *, current_only: bool = True
    ) -> list[FileVersion]:
        """File versions in ingest order; by default each file's current one (removals
        excluded). `dim` is the embedding width of the stored name vectors."""
        ...

    def latest_file_version(self, chain: ChainKey, file_id: str) -> tuple[int, str] | None: ...

    def current_passages(
        self, chain: ChainKey, model_id: str
    ) -> tuple[list[StoredPassage], npt.NDArray[np.float32]]: ...

    def current_beliefs(self, chain: ChainKey) -> list[BeliefRow]: ...

    def belief_rows(self, chain: ChainKey, concept_key: str | None = None) -> list[BeliefRow]: ...

    def episodes_of_kind(self, chain: ChainKey, kinds: Sequence[Kind]) -> list[StoredEpisode]: ...

    def find_consolidation(
        self, chain: ChainKey, start_us: int, end_us: int
    ) -> Consolidation | None: ...

    def latest_annotations(self, chain: ChainKey, kind: str) -> dict[int, str]:
        """episode id -> body of its newest annotation of `kind`, for the whole chain."""
        ...

    def self_model_composed_at(self, chain: ChainKey) -> int | None:
        """When the nightly cycle last composed the chain's working set and self-model."""
        ...

    def active_chains(self, start_us: int, end_us: int) -> list[ChainKey]:
        """Chains with a non-consolidation episode that occurred in [start, end)."""
        ...

    def citation_batch(self, chain: ChainKey, kind: str, limit: int) -> list[int]: ...

    def close(self) -> None: ...
