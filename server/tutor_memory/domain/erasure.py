"""Erasing a student (issue 16): what an erasure record holds, and what it could not erase.

An erasure destroys the student's data key, so the sealed words of every episode of theirs no
longer open, and deletes the derived data that holds their words in the clear (docs/DESIGN.md,
"Erasure"). The ledger rows stay and every chain still verifies. The record holds when, by whom
and how much, never a word of the student.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from tutor_memory.domain.errors import FailedPrecondition, NotFound


@dataclass(frozen=True, slots=True)
class Erasure:
    tenant: str
    student: str
    erased_at_us: int
    # The caller that asked (its token's name; the operator's account for the CLI).
    erased_by: str
    chains: int
    episodes: int
    # Episodes written before sealing existed: their words stay readable in the ledger's rows,
    # because removing them would break the chain (history is never rewritten).
    plaintext_episodes: int

    @property
    def plaintext_history_kept(self) -> bool:
        return self.plaintext_episodes > 0


@dataclass(frozen=True, slots=True)
class ErasureOutcome:
    erasure: Erasure
    # True when the student had been erased before: nothing was done this time.
    already_erased: bool


def erased_message(student: str, erased_at_us: int) -> str:
    """What a write for an erased student is refused with (FAILED_PRECONDITION), on any store."""
    when = datetime.fromtimestamp(erased_at_us / 1e6, UTC).isoformat(timespec="seconds")
    return (
        f"student_id {student!r} was erased at {when}; nothing more is stored for an "
        "erased student (use a new student id)"
    )


def check_erasable(
    student: str, episodes: int, plaintext: int, *, allow_plaintext_history: bool
) -> None:
    """Refuses an erasure of a student with no stored episode (NotFound), or one with `plaintext`
    episodes written before sealing (their words stay in the ledger) unless the caller accepts
    that (FailedPrecondition), on any store."""
    if not episodes:
        raise NotFound(f"student_id {student!r}: no episode of this student is stored")
    if plaintext and not allow_plaintext_history:
        raise FailedPrecondition(
            f"student_id {student!r}: {plaintext} of their {episodes} episodes were written "
            "before episodes were sealed, and their words stay in the ledger (removing them "
            "would break the hash chain); erasure can delete every derived copy and the "
            "key of the sealed ones: ask again with allow_plaintext_history to do that"
        )
