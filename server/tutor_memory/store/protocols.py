"""What the use cases need of a store, as narrow protocols per concern (episodes, vectors, files,
beliefs, the nightly cycle), each split into reads and the writes of one transaction.

A use case asks for the narrowest protocol it needs; `Store` is what an engine implements (SQLite
in `store.sqlite`, PostgreSQL in `store.postgres` for deployments that outgrow one machine). SQL
of one engine stays inside that engine's package.

Threading contract: writes (`Store.writing()` and the conveniences `append`, `annotate`) come from
one writer thread at a time; the read methods may be called from several reader threads at once.
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
from tutor_memory.domain.erasure import Erasure, ErasureOutcome
from tutor_memory.domain.recall.facts import RecallFacts
from tutor_memory.domain.records import (
    BeliefRow,
    ChainVectors,
    DayDigest,
    FileVersion,
    MemoryRow,
    NewBelief,
    NewFileVersion,
    NightlyState,
    StoredPassage,
    WrittenDigest,
)
from tutor_memory.domain.sealing import MasterKey
from tutor_memory.store.transfer import TableTransfer


@dataclass(frozen=True, slots=True)
class PreparedEpisode:
    """A validated episode, with its embedding or without (then computed after the commit, by
    the embedding queue of app/embedding_queue.py), ready for one transaction."""

    episode: NewEpisode
    vector: npt.NDArray[np.float32] | None
    # What recall derives from it (stored beside it, in the same transaction).
    facts: RecallFacts


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
class Annotation:
    annotation_id: int
    episode_id: int
    kind: str
    body: str
    created_at_us: int


class EpisodeWrites(Protocol):
    def append(
        self, items: Sequence[PreparedEpisode], *, model_id: str, recorded_at_us: int
    ) -> list[AppendOutcome]:
        """Writes every item: each row, its chain link, its recall facts and its embedding when
        it has one. Returns one outcome per item, in order."""
        ...

    def annotate(
        self, chain: ChainKey, episode_id: int, kind: str, body: str, *, created_at_us: int
    ) -> int:
        """Adds a fact about an episode of `chain`; NotFound when the chain has no such episode."""
        ...


class FileWrites(Protocol):
    def add_file_version(
        self,
        chain: ChainKey,
        row: NewFileVersion,
        *,
        episode_id: int,
        model_id: str,
        ingested_at_us: int,
    ) -> int: ...

    def latest_file_version(self, chain: ChainKey, file_id: str) -> tuple[int, str] | None:
        """(version, fingerprint) of the file's newest version, read inside the transaction."""
        ...


class BeliefWrites(Protocol):
    def add_belief(self, chain: ChainKey, belief: NewBelief, *, created_at_us: int) -> int: ...

    def supersede_belief(self, chain: ChainKey, old_id: int, new_id: int) -> None: ...

    def retire_current_beliefs(self, chain: ChainKey, at_us: int) -> int: ...

    def current_beliefs(self, chain: ChainKey) -> list[BeliefRow]:
        """The current rows as this transaction sees them."""
        ...

    def save_recall_facts(self, chain: ChainKey, facts: Sequence[tuple[int, RecallFacts]]) -> None:
        """Stores (or remakes) the facts of these episodes of the chain."""
        ...

    def checks_after(self, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        """The chain's check episodes after `seq`, in seq order, as this transaction sees them
        (its own appends included)."""
        ...


class NightlyWrites(Protocol):
    def nightly_state(self, chain: ChainKey) -> NightlyState | None:
        """The cycle's state of the chain as this transaction sees it."""
        ...

    def save_nightly_state(self, chain: ChainKey, state: NightlyState, *, at_us: int) -> None: ...

    def add_day_digest(self, chain: ChainKey, digest: DayDigest, *, done_at_us: int) -> None: ...

    def save_self_model(
        self, chain: ChainKey, working_set: Sequence[str], calibration: str, *, at_us: int
    ) -> None: ...


class VectorWrites(Protocol):
    def save_vectors(
        self, model_id: str, rows: Sequence[tuple[ChainKey, int, npt.NDArray[np.float32]]]
    ) -> None:
        """Stores the embeddings (chain, episode id, vector) of episodes committed without one;
        an episode that has an embedding already keeps it (another node may have embedded it
        too), and an id that is not an episode of that chain is ignored."""
        ...


class StoreWriter(EpisodeWrites, FileWrites, BeliefWrites, NightlyWrites, VectorWrites, Protocol):
    """Writes inside one transaction (`Store.writing()`): all of them commit, or none."""


class EpisodeReads(Protocol):
    def list_episodes(
        self,
        chain: ChainKey,
        *,
        occurred_from_us: int | None,
        occurred_to_us: int | None,
        after: tuple[int, int] | None,
        limit: int,
        newest_first: bool = False,
    ) -> list[StoredEpisode]:
        """Episodes ordered by (occurred_at, seq), strictly after the `after` position; with
        `newest_first`, in the reverse order, strictly before it."""
        ...

    def iter_chain(self, chain: ChainKey) -> Iterator[StoredEpisode]:
        """Every episode of the chain in seq order, read from one consistent snapshot, with its
        words opened. Nothing for an erased student's chain."""
        ...

    def iter_links(self, chain: ChainKey) -> Iterator[StoredEpisode]:
        """Every episode of the chain in seq order as its hash covers it: sealed words stay
        sealed (the words read as empty) and no key is needed. Erased chains included: this is
        what verification reads."""
        ...

    def chains(self) -> list[ChainKey]:
        """Every chain that has at least one episode."""
        ...

    def episodes_by_id(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, StoredEpisode]:
        """The chain's episodes among `ids` (ids of other chains are silently absent)."""
        ...

    def episodes_of_kind(self, chain: ChainKey, kinds: Sequence[Kind]) -> list[StoredEpisode]:
        """The chain's episodes of these kinds, in seq order."""
        ...

    def memory_rows(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, MemoryRow]:
        """The few columns a block shows, for the chain's episodes among `ids`."""
        ...

    def recall_facts(self, chain: ChainKey) -> dict[int, tuple[int, RecallFacts]]:
        """episode id -> (version of the rules that made them, the facts) for the chain's
        episodes that have facts stored."""
        ...

    def annotations(
        self, chain: ChainKey, episode_id: int, kind: str | None = None
    ) -> list[Annotation]: ...

    def latest_annotations(self, chain: ChainKey, kind: str) -> dict[int, str]:
        """episode id -> body of its newest annotation of `kind`, for the whole chain."""
        ...


@dataclass(frozen=True, slots=True)
class Unembedded:
    """An episode stored without an embedding: committed before its vector was computed."""

    chain: ChainKey
    episode_id: int
    # What is embedded of it (`domain.episodes.embedding_text`).
    text: str


@dataclass(frozen=True, slots=True)
class StoredRecall:
    """What recall holds of one stored episode, read back to load a chain into memory."""

    episode_id: int
    occurred_at_us: int
    salience: float
    kind: Kind
    concepts: tuple[str, ...]
    # None when missing or made by older rules (`FACTS_VERSION`): derived again by the loader.
    facts: RecallFacts | None


@dataclass(frozen=True, slots=True)
class ChainRecall:
    """A chain's episodes after some id, as recall holds them, and their stored embeddings."""

    rows: list[StoredRecall]
    vector_ids: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]
    # How many episodes of the chain have ids up to the `after_id` asked for (to check that a
    # snapshot of the chain up to that id matches the store); a store may answer -1 when
    # `after_id` is not an episode of the chain, which matches no snapshot either.
    before: int


class ChainLoads(Protocol):
    def chain_recall(
        self, chain: ChainKey, model_id: str, *, after_id: int, vectors_of: Sequence[int] = ()
    ) -> ChainRecall:
        """From one consistent read: the chain's episodes with ids above `after_id` (ascending),
        the stored `model_id` embeddings of those episodes and of the episodes `vectors_of`, and
        how many episodes have ids up to `after_id`."""
        ...


@dataclass(frozen=True, slots=True)
class ChainHead:
    """What tells a server whether its caches of a chain are behind the store (app/sync.py)."""

    # The chain's last seq (0: no episode).
    seq: int
    # Changes to beliefs, which a write can make without an episode (a re-derivation): the
    # highest belief id and the latest retirement time of the chain, (0, 0) for none.
    beliefs: tuple[int, int]
    # The chain's student was erased (by any process): the caches drop the chain.
    erased: bool = False


class ChangeReads(Protocol):
    """What a server reads to catch its caches up with writes made by other processes."""

    def chain_head(self, chain: ChainKey) -> ChainHead:
        """The chain's head, in one indexed lookup (it runs before every block)."""
        ...

    def episodes_since(self, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        """The chain's episodes after `seq`, every kind, in seq order."""
        ...

    def vectors_of(
        self, chain: ChainKey, model_id: str, ids: Sequence[int]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """(ids, vectors) of the chain's episodes among `ids` that have an embedding made by
        `model_id`, by ascending id."""
        ...


class ErasureReads(Protocol):
    def erasure_of(self, tenant: str, student: str) -> Erasure | None:
        """The record of the student's erasure; None when they were never erased. Cheap (held
        in memory): every use case may ask."""
        ...


class Erasing(Protocol):
    def erase_student(
        self, tenant: str, student: str, *, by: str, at_us: int, allow_plaintext_history: bool
    ) -> ErasureOutcome:
        """In one transaction: records the erasure, destroys the student's data key and deletes
        the derived rows of every chain of theirs (recall facts, vectors, passages and file
        versions, annotations, beliefs, the self-model). A student erased before: the earlier
        record, nothing done. NotFound when no episode of the student is stored;
        FailedPrecondition when some were written in plaintext before sealing and
        `allow_plaintext_history` is false (nothing is done then)."""
        ...


class VectorReads(Protocol):
    def iter_vectors(self, model_id: str) -> Iterator[ChainVectors]:
        """Every stored embedding made by `model_id`, one chain at a time."""
        ...

    def last_episode_id(self) -> int:
        """The highest episode id stored (0 when there is none)."""
        ...

    def unembedded(self, *, after_id: int, up_to_id: int, limit: int) -> list[Unembedded]:
        """Up to `limit` episodes with ids in (after_id, up_to_id] that have no stored embedding,
        by ascending id."""
        ...

    def unembedded_counts(self, up_to_id: int) -> dict[ChainKey, int]:
        """How many episodes up to `up_to_id` have no stored embedding, per chain (chains with
        none left out)."""
        ...

    def count_vectors_of_other_models(self, model_id: str) -> int: ...


class FileReads(Protocol):
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


class BeliefReads(Protocol):
    def current_beliefs(self, chain: ChainKey) -> list[BeliefRow]: ...

    def belief_rows(self, chain: ChainKey, concept_key: str | None = None) -> list[BeliefRow]: ...


class NightlyReads(Protocol):
    def nightly_state(self, chain: ChainKey) -> NightlyState | None: ...

    def day_coverage(self, chain: ChainKey) -> dict[int, int]:
        """Start of each digested day -> the highest seq up to which its episodes are
        digested."""
        ...

    def episodes_after(self, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        """The chain's episodes after `seq`, digests left out, in seq order."""
        ...

    def recent_digests(self, chain: ChainKey, limit: int) -> list[WrittenDigest]:
        """The chain's `limit` most recently written day digests, newest run first and, within
        a run, the latest day first."""
        ...

    def nightly_candidates(self) -> list[tuple[ChainKey, int, int | None]]:
        """(chain, highest seq of a non-digest episode, scanned_seq or None when the cycle has
        never run for it) of every chain with an episode other than a digest."""
        ...

    def self_model_composed_at(self, chain: ChainKey) -> int | None:
        """When the nightly cycle last composed the chain's working set and self-model."""
        ...

    def citation_batch(self, chain: ChainKey, kind: str, limit: int) -> list[int]:
        """Episodes to verify next: never-checked first, then those checked longest ago."""
        ...


class Operations(Protocol):
    """What running the server needs of a store: readiness and quotas."""

    def ping(self) -> None:
        """Returns when the store can be reached and read now; raises (OSError, the engine's
        error) when it cannot. Cheap: the readiness probe calls it every few seconds."""
        ...

    def episode_counts(self) -> dict[str, int]:
        """Stored episodes per tenant (digests included), for the episode quotas at start."""
        ...

    def master_key_ids(self) -> dict[str, int]:
        """How many stored data keys each master key wraps, by `MasterKey.key_id`: a server
        refuses to start with a master key that did not wrap them all."""
        ...


class KeyRotation(Protocol):
    def rewrap_data_keys(self, new_master: MasterKey) -> int:
        """Re-wraps every data key under `new_master` in one transaction (the store was opened
        with the current master key); keys already under it are left as they are, so an
        interrupted rotation can be run again. Returns how many were re-wrapped."""
        ...

    def check_data_keys(self) -> int:
        """Unwraps every stored data key with the master key (nothing is kept); returns how
        many. Raises FailedPrecondition or SealBroken, naming the student, for one that does
        not open."""
        ...


class Store(
    EpisodeWrites,
    EpisodeReads,
    VectorReads,
    ChainLoads,
    FileReads,
    BeliefReads,
    NightlyReads,
    ChangeReads,
    TableTransfer,
    Operations,
    ErasureReads,
    Erasing,
    KeyRotation,
    Protocol,
):
    """Everything an engine implements: the reads of every concern, and transactions."""

    def writing(self) -> AbstractContextManager[StoreWriter]:
        """One write transaction, from the single writer thread."""
        ...

    def close(self) -> None: ...
