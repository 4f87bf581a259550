"""Episodes: what the ledger stores (SPEC R1.1-R1.3), the one salience table, and input limits.

An episode is never modified or deleted once written (R1.4); facts that arrive later about it are
annotation rows (R1.5). Everything a caller sends is checked here before anything is written, and
each problem is reported with the field it concerns.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import (
    MAX_CLIENT_KEY_CHARS,
    MAX_CONCEPT_CHARS,
    MAX_FILE_ID_CHARS,
    MAX_SUMMARY_CHARS,
    MAX_TOPIC_CHARS,
    check_identifier,
    check_line,
    check_not_future,
    check_text,
)


class Kind(enum.StrEnum):
    """What happened. The string values are stored and hashed: never rename one."""

    QUESTION = "question"
    ANSWER = "answer"
    CHECK = "check"
    QUIZ = "quiz"
    FILE = "file"
    TAUGHT = "taught"
    CONSOLIDATION = "consolidation"


class Outcome(enum.StrEnum):
    RIGHT = "right"
    WRONG = "wrong"


# Salience is fixed by what the episode is, never by the caller or by mood (R1.3). The order is
# the design document's: what the student explicitly taught is the strongest memory, then a wrong
# check (a known gap), a right check, and so on down to a plain question, the weakest. The values
# between the document's anchors (quiz, file, answer, consolidation) are set in the same spirit:
# graded evidence above material, material above the tutor's own words, a digest above a question.
SALIENCE_TAUGHT = 0.85
SALIENCE_CHECK_WRONG = 0.70
SALIENCE_CHECK_RIGHT = 0.60
SALIENCE_QUIZ = 0.55
SALIENCE_FILE = 0.50
SALIENCE_ANSWER = 0.45
SALIENCE_CONSOLIDATION = 0.40
SALIENCE_QUESTION = 0.35

# Limits on what one episode may carry (the constants live with every other field limit in
# `domain.limits`): they keep one row small enough to embed, index and show in a block.
MAX_CONCEPTS = 64
MAX_EVIDENCE = 32

_FINGERPRINT = re.compile(r"[0-9a-f]{64}")


def embedding_text(summary: str, text: str) -> str:
    """What is embedded of an episode (see `NewEpisode.embedding_text`)."""
    start = text[:EMBED_TEXT_CHARS]
    if not start or start.startswith(summary):
        return start or summary
    return f"{summary}\n{start}"


@dataclass(frozen=True, slots=True)
class ChainKey:
    """One hash chain: everything of one (tenant, student, subject)."""

    tenant: str
    student: str
    subject: str


@dataclass(frozen=True, slots=True)
class Evidence:
    file_id: str
    page: int
    file_fingerprint: str


@dataclass(frozen=True, slots=True)
class Check:
    outcome: Outcome
    topic: str
    predicted_mastery: float | None


@dataclass(frozen=True, slots=True)
class Quiz:
    correct: int
    total: int


@dataclass(frozen=True, slots=True)
class NewEpisode:
    """A validated episode that is not stored yet."""

    chain: ChainKey
    kind: Kind
    summary: str
    text: str
    concepts: tuple[str, ...]
    occurred_at_us: int
    # False when the caller left occurred_at unset and it was taken from the server clock; a
    # retry of such an episode is then matched on everything but the time.
    occurred_at_given: bool
    evidence: tuple[Evidence, ...]
    check: Check | None
    quiz: Quiz | None
    client_key: str

    @property
    def salience(self) -> float:
        return salience_of(self.kind, self.check)

    def embedding_text(self) -> str:
        """What is embedded for semantic recall: the summary, then the start of the full text.

        A summary that merely repeats the start of the text is not embedded twice: the cost of
        embedding grows with length, and the repeat would only weigh those words double.
        """
        return embedding_text(self.summary, self.text)

    def same_content(self, other: StoredEpisode) -> bool:
        """Whether a retry carries what is already stored under its client key."""
        return (
            self.kind == other.kind
            and self.summary == other.summary
            and self.text == other.text
            and self.concepts == other.concepts
            and (not self.occurred_at_given or self.occurred_at_us == other.occurred_at_us)
            and self.evidence == other.evidence
            and self.check == other.check
            and self.quiz == other.quiz
        )


# The embedder reads at most this much of the full text; the summary always goes in whole.
EMBED_TEXT_CHARS = 2_000


@dataclass(frozen=True, slots=True)
class StoredEpisode:
    episode_id: int
    chain: ChainKey
    seq: int
    kind: Kind
    summary: str
    text: str
    concepts: tuple[str, ...]
    salience: float
    occurred_at_us: int
    recorded_at_us: int
    evidence: tuple[Evidence, ...]
    check: Check | None
    quiz: Quiz | None
    client_key: str
    prev_hash: bytes
    hash: bytes
    # The words (summary, text, concepts, check topic) as the ledger holds them sealed
    # (domain.sealing), which is what the hash covers; None for an episode written in plaintext
    # before sealing. Once the student is erased the words read as empty and this still hashes.
    sealed: bytes | None = None


def salience_of(kind: Kind, check: Check | None) -> float:
    if kind is Kind.CHECK:
        if check is None:
            raise InvalidArgument("check", "required for a check episode")
        return SALIENCE_CHECK_WRONG if check.outcome is Outcome.WRONG else SALIENCE_CHECK_RIGHT
    return _SALIENCE_BY_KIND[kind]


_SALIENCE_BY_KIND: dict[Kind, float] = {
    Kind.TAUGHT: SALIENCE_TAUGHT,
    Kind.QUIZ: SALIENCE_QUIZ,
    Kind.FILE: SALIENCE_FILE,
    Kind.ANSWER: SALIENCE_ANSWER,
    Kind.CONSOLIDATION: SALIENCE_CONSOLIDATION,
    Kind.QUESTION: SALIENCE_QUESTION,
}


def validate_new_episode(
    *,
    chain: ChainKey,
    kind: Kind,
    summary: str,
    text: str,
    concepts: Sequence[str],
    occurred_at_us: int | None,
    evidence: Sequence[Evidence],
    check: Check | None,
    quiz: Quiz | None,
    client_key: str,
    now_us: int,
    client_key_required: bool,
    check_field: str = "check",
) -> NewEpisode:
    """Checks every field of an episode a client wants to append; raises InvalidArgument.

    `check_field` is where the request holds the check's fields ("check" in a NewEpisode; ""
    for RecordCheck, whose topic and predicted_mastery are top-level), so that an error names
    the field the caller actually sent."""
    check_prefix = f"{check_field}." if check_field else ""
    check_identifier("student_id", chain.student)
    check_identifier("subject_id", chain.subject)
    if kind is Kind.CONSOLIDATION:
        raise InvalidArgument(
            "kind", "consolidation episodes are written only by the nightly cycle"
        )
    check_line("summary", summary, MAX_SUMMARY_CHARS, required=True)
    check_text("text", text)

    if len(concepts) > MAX_CONCEPTS:
        raise InvalidArgument("concepts", f"{len(concepts)} given, at most {MAX_CONCEPTS}")
    seen: dict[str, int] = {}
    for i, name in enumerate(concepts):
        check_line(f"concepts[{i}]", name, MAX_CONCEPT_CHARS, required=True)
        if name in seen:
            raise InvalidArgument(f"concepts[{i}]", f"duplicate of concepts[{seen[name]}]")
        seen[name] = i

    given = occurred_at_us is not None
    occurred = now_us if occurred_at_us is None else occurred_at_us
    check_not_future("occurred_at", occurred, now_us)

    if len(evidence) > MAX_EVIDENCE:
        raise InvalidArgument("evidence", f"{len(evidence)} items, at most {MAX_EVIDENCE}")
    for i, item in enumerate(evidence):
        check_identifier(f"evidence[{i}].file_id", item.file_id, MAX_FILE_ID_CHARS)
        if item.page < 0:
            raise InvalidArgument(f"evidence[{i}].page", "must be 0 (whole file) or a 1-based page")
        if not _FINGERPRINT.fullmatch(item.file_fingerprint):
            raise InvalidArgument(
                f"evidence[{i}].file_fingerprint",
                "must be the sha256 of the file's bytes as 64 lowercase hex characters",
            )

    if kind is Kind.CHECK:
        if check is None:
            raise InvalidArgument("check", "required for a check episode (outcome and topic)")
        check_line(f"{check_prefix}topic", check.topic, MAX_TOPIC_CHARS, required=True)
        pm = check.predicted_mastery
        if pm is not None:
            if not (math.isfinite(pm) and 0.0 <= pm <= 1.0):
                raise InvalidArgument(
                    f"{check_prefix}predicted_mastery", "must be a number from 0 to 1"
                )
            # One stored and hashed form per value: -0.0 is 0.0 (a store may not keep the sign,
            # and the hash of a row must not depend on it).
            check = Check(check.outcome, check.topic, pm + 0.0)
    elif check is not None:
        raise InvalidArgument("check", f"only a check episode carries one, not a {kind} episode")
    if kind is Kind.QUIZ:
        if quiz is None:
            raise InvalidArgument("quiz", "required for a quiz episode (correct and total)")
        if quiz.total < 1:
            raise InvalidArgument("quiz.total", "must be at least 1")
        if quiz.correct > quiz.total:
            raise InvalidArgument("quiz.correct", f"{quiz.correct} is more than total {quiz.total}")
    elif quiz is not None:
        raise InvalidArgument("quiz", f"only a quiz episode carries one, not a {kind} episode")

    if client_key_required and not client_key:
        raise InvalidArgument(
            "client_key", "required in a batch, so that a retried batch never duplicates"
        )
    check_line("client_key", client_key, MAX_CLIENT_KEY_CHARS, required=False)

    return NewEpisode(
        chain=chain,
        kind=kind,
        summary=summary,
        text=text,
        concepts=tuple(concepts),
        occurred_at_us=occurred,
        occurred_at_given=given,
        evidence=tuple(evidence),
        check=check,
        quiz=quiz,
        client_key=client_key,
    )
