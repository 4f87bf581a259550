"""What a caller's token lets it do: the one scope check, shared by every front end (the gRPC call
gate in `api.interceptors`, and any other layer that serves the same tenants' data).

A scope narrows a token in three independent ways: to read-only calls, to students whose id
starts with a prefix, and to a list of subjects. A call is allowed when every chain it names is
inside all three; a call that names no particular student (a whole-tenant Consolidate) is inside
a student prefix only when the token has none, and likewise for subjects.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from tutor_memory.domain.errors import PermissionDenied
from tutor_memory.domain.limits import quoted


class Access(enum.Enum):
    """Whether a call can change what the server stores."""

    READ = "read"
    WRITE = "write"


@dataclass(frozen=True, slots=True)
class Named:
    """A chain a call names; None for "every student" / "every subject" of the tenant."""

    student: str | None
    subject: str | None


@dataclass(frozen=True, slots=True)
class Scope:
    """A token's limits. The default scope allows everything of its tenant."""

    read_only: bool = False
    # Empty: every student.
    student_prefix: str = ""
    # None: every subject.
    subjects: frozenset[str] | None = None

    @property
    def is_unlimited(self) -> bool:
        return not self.read_only and not self.student_prefix and self.subjects is None

    def check(self, what: str, access: Access, named: Iterable[Named]) -> None:
        """Raises PermissionDenied, naming the limit, when `what` (an RPC name, a page) with this
        access to these chains is outside the scope."""
        if access is Access.WRITE and self.read_only:
            raise PermissionDenied(f"{what} writes, and this token is read-only")
        for chain in named:
            self.check_chain(what, chain)

    def check_chain(self, what: str, chain: Named) -> None:
        if self.student_prefix:
            if chain.student is None:
                raise PermissionDenied(
                    f"{what} without a student_id covers every student, and this token is "
                    f"limited to student ids starting with {quoted(self.student_prefix)}"
                )
            if not chain.student.startswith(self.student_prefix):
                raise PermissionDenied(
                    f"student_id {quoted(chain.student)} is outside this token's scope "
                    f"(student ids starting with {quoted(self.student_prefix)})"
                )
        if self.subjects is not None:
            allowed = ", ".join(sorted(self.subjects))
            if chain.subject is None:
                raise PermissionDenied(
                    f"{what} without a subject_id covers every subject, and this token is "
                    f"limited to: {allowed}"
                )
            if chain.subject not in self.subjects:
                raise PermissionDenied(
                    f"subject_id {quoted(chain.subject)} is outside this token's scope "
                    f"(subjects: {allowed})"
                )

    def describe(self) -> str:
        """For logs: the limits, or "all"."""
        parts = ["read-only"] if self.read_only else []
        if self.student_prefix:
            parts.append(f"students {self.student_prefix}*")
        if self.subjects is not None:
            parts.append("subjects " + ",".join(sorted(self.subjects)))
        return "; ".join(parts) or "all"
