"""The episode log's use cases (SPEC R1, R4.3, R5): AppendEpisode, ListEpisodes, VerifyChain and
Checkpoint.

An appended check changes beliefs exactly as RecordCheck does; an appended question may teach the
map ("remember that ..."); everything else is a plain append.
"""

from __future__ import annotations

import builtins
import enum
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from tutor_memory.app.beliefs import BeliefKeeper
from tutor_memory.app.executors import Executors
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.teaching import Teacher
from tutor_memory.domain.annotations import AnnotationKind
from tutor_memory.domain.budget import WorkBudget, text_work_budget
from tutor_memory.domain.chain import Verification, verify_chain
from tutor_memory.domain.clock import now_us, us_to_datetime
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode, StoredEpisode
from tutor_memory.domain.erasure import Erasure
from tutor_memory.domain.errors import AlreadyExists, FailedPrecondition, InvalidArgument, NotFound
from tutor_memory.domain.limits import MAX_CLIENT_KEY_CHARS
from tutor_memory.domain.signing import ServerKey, SignedCheckpoint
from tutor_memory.store.protocols import AppendOutcome, AppendStatus, EpisodeReads, ErasureReads

# The client key of the taught note a keyed question creates: the question's key and this.
TAUGHT_KEY_SUFFIX = ":taught"


class CheckpointStatus(enum.Enum):
    HOLDS = "holds"
    BAD_SIGNATURE = "bad_signature"
    REWRITTEN = "rewritten"
    TRUNCATED = "truncated"


class EpisodeLog(EpisodeReads, ErasureReads, Protocol):
    """What the episode use cases read: the log, and who was erased."""


@dataclass(frozen=True, slots=True)
class ChainReport:
    verification: Verification
    checkpoint_status: CheckpointStatus | None
    # Set when the chain's student was erased: the chain verifies over the sealed words, which
    # no longer open.
    erasure: Erasure | None = None


def erased_student(erasure: Erasure) -> NotFound:
    """What a read of an erased student's episodes gets."""
    when = us_to_datetime(erasure.erased_at_us).isoformat(timespec="seconds")
    return NotFound(
        f"student_id {erasure.student!r} was erased at {when}: no episode of theirs can be read "
        "(VerifyChain still verifies their chains)"
    )


@dataclass(frozen=True, slots=True)
class EpisodeNote:
    """An annotation of an episode as a person reads it: its kind and what it says."""

    kind: AnnotationKind | str
    says: str
    created_at_us: int


def _says(kind: str, body: str) -> str:
    """The gist of an annotation's stored body (JSON written by the use case of its kind)."""
    try:
        doc = json.loads(body)
    except ValueError:
        return body
    if not isinstance(doc, dict):
        return body
    if kind == AnnotationKind.GROUNDING:
        sentences = doc.get("sentences")
        count = len(sentences) if isinstance(sentences, list) else 0
        return f"{doc.get('status', '?')} ({count} sentences traced)"
    if kind == AnnotationKind.CITATION:
        return f"{doc.get('status', '?')}: {doc.get('detail', '')}"
    if kind == AnnotationKind.SHOWN_MEMORIES:
        ids = doc.get("memory_ids")
        return f"block showed memories {ids}" if ids else "block showed no memory"
    return body


@dataclass(frozen=True, slots=True)
class EpisodePage:
    """A page of ListEpisodes: the episodes, and whether another page follows."""

    episodes: list[StoredEpisode]
    more: bool


class Episodes:
    def __init__(
        self,
        ledger: Ledger,
        store: EpisodeLog,
        key: ServerKey,
        beliefs: BeliefKeeper,
        teacher: Teacher,
        executors: Executors,
    ) -> None:
        self._ledger = ledger
        self._store = store
        self._key = key
        self._beliefs = beliefs
        self._teacher = teacher
        self._executors = executors

    async def append(self, episode: NewEpisode, *, deadline: float | None = None) -> AppendOutcome:
        """Appends one episode; a retry with the same client key and content is a duplicate,
        with other content ALREADY_EXISTS. Its text work (a question's teaching, an answer's
        narration, a check's topic routing) stops at the caller's `deadline` (event-loop time)
        or after TEXT_WORK_SECONDS, and then nothing is written."""
        budget = text_work_budget("text: reading the episode", deadline)
        if episode.kind is Kind.CHECK:
            # A check appended as a plain episode changes beliefs exactly as RecordCheck does.
            outcome = (
                await self._beliefs.append_check(episode, budget=budget, deadline=deadline)
            ).outcome
        elif episode.kind is Kind.QUESTION:
            outcome = await self._append_question(episode, deadline, budget)
        else:
            outcome = await self._ledger.append(episode, deadline=deadline, budget=budget)
        if outcome.status is AppendStatus.CONFLICT:
            raise AlreadyExists(outcome.reason)
        return outcome

    async def _append_question(
        self, question: NewEpisode, deadline: float | None, budget: WorkBudget
    ) -> AppendOutcome:
        """A question, and the taught note its message carries (R4: "remember that ..."), in
        one transaction: both are written or neither. The note's client key derives from the
        question's, so a retried question never teaches twice."""
        text = question.text or question.summary
        teaching = await self._teacher.teaching_in(text, budget)
        if teaching is None:
            return await self._ledger.append(question, deadline=deadline, budget=budget)
        key = f"{question.client_key}{TAUGHT_KEY_SUFFIX}" if question.client_key else ""
        taught = await self._teacher.taught_note(
            question.chain,
            text,
            teaching,
            question.occurred_at_us,
            question.occurred_at_given,
            client_key=key[:MAX_CLIENT_KEY_CHARS],
        )
        prepared = await self._ledger.embed([question, taught.episode], budget)
        outcomes = await self._ledger.write(prepared, deadline=deadline)
        return outcomes[0]

    async def list(
        self,
        chain: ChainKey,
        *,
        occurred_from_us: int | None,
        occurred_to_us: int | None,
        after: tuple[int, int] | None,
        limit: int,
        newest_first: bool = False,
    ) -> EpisodePage:
        """Episodes ordered by (occurred_at, seq) inside [from, to), after a page position; with
        `newest_first`, the latest first and the page position's earlier ones after it."""
        if (
            occurred_from_us is not None
            and occurred_to_us is not None
            and occurred_to_us <= occurred_from_us
        ):
            raise InvalidArgument("occurred_to", "must be later than occurred_from")
        erasure = self._store.erasure_of(chain.tenant, chain.student)
        if erasure is not None:
            raise erased_student(erasure)
        # One row more than the page tells whether another page follows.
        rows = await self._executors.run(
            self._executors.readers,
            lambda: self._store.list_episodes(
                chain,
                occurred_from_us=occurred_from_us,
                occurred_to_us=occurred_to_us,
                after=after,
                limit=limit + 1,
                newest_first=newest_first,
            ),
        )
        return EpisodePage(rows[:limit], len(rows) > limit)

    async def chains_of(self, tenant: str) -> builtins.list[ChainKey]:
        """The tenant's chains that hold at least one episode, by student then subject."""
        chains = await self._executors.run(self._executors.readers, self._store.chains)
        return sorted(
            (
                c
                for c in chains
                if c.tenant == tenant and self._store.erasure_of(c.tenant, c.student) is None
            ),
            key=lambda c: (c.student, c.subject),
        )

    async def notes(
        self, chain: ChainKey, episode_ids: Sequence[int]
    ) -> dict[int, builtins.list[EpisodeNote]]:
        """The annotations of these episodes of the chain (grounding, citation verdicts, the
        memories shown), oldest first; episodes without any are absent."""

        def read() -> dict[int, builtins.list[EpisodeNote]]:
            found: dict[int, builtins.list[EpisodeNote]] = {}
            for episode_id in episode_ids:
                rows = self._store.annotations(chain, episode_id)
                if rows:
                    found[episode_id] = [
                        EpisodeNote(r.kind, _says(r.kind, r.body), r.created_at_us) for r in rows
                    ]
            return found

        return await self._executors.run(self._executors.readers, read)

    async def verify(
        self, chain: ChainKey, checkpoint: SignedCheckpoint | None = None
    ) -> ChainReport:
        stop_at = checkpoint.length if checkpoint is not None else None

        def walk() -> Verification:
            return verify_chain(self._store.iter_links(chain), stop_at=stop_at)

        verification = await self._executors.run(self._executors.readers, walk)
        status = None
        if checkpoint is not None:
            status = self._checkpoint_status(chain, checkpoint, verification)
        erasure = self._store.erasure_of(chain.tenant, chain.student)
        return ChainReport(verification, status, erasure)

    def _checkpoint_status(
        self, chain: ChainKey, checkpoint: SignedCheckpoint, verification: Verification
    ) -> CheckpointStatus:
        if not self._key.is_authentic(checkpoint, chain):
            return CheckpointStatus.BAD_SIGNATURE
        if verification.length < checkpoint.length:
            return CheckpointStatus.TRUNCATED
        if verification.hash_at_stop != checkpoint.head_hash:
            return CheckpointStatus.REWRITTEN
        return CheckpointStatus.HOLDS

    async def checkpoint(self, chain: ChainKey) -> SignedCheckpoint:
        """Signs the chain head after verifying the whole chain: a broken chain is never signed."""
        report = await self.verify(chain)
        found = report.verification.first_break
        if found is not None:
            raise FailedPrecondition(
                f"the chain is broken at seq {found.seq} ({found.reason}); refusing to sign it"
            )
        v = report.verification
        return self._key.sign(chain, v.length, v.head_hash, now_us())
