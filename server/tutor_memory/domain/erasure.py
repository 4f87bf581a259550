"""Erasing a student (issue 16): what an erasure record holds, and what it could not erase.

An erasure destroys the student's data key, so the sealed words of every episode of theirs no
longer open, and deletes the derived data that holds their words in the clear (docs/DESIGN.md,
"Erasure"). The ledger rows stay and every chain still verifies. The record holds when, by whom
and how much, never a word of the student.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


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
