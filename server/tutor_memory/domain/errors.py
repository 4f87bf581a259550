"""The errors the service reports to a caller. Each class carries the gRPC status code it maps to
(by name, so the domain does not import gRPC); `tutor_memory.api.status` turns any instance,
of any subclass, into that status. The messages are shown to callers verbatim, so they name the
field and the problem.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar


class TutorMemoryError(Exception):
    """Base of every error the service reports to a caller."""

    # The name of a `grpc.StatusCode` member. Subclasses inherit their parent's code unless they
    # set their own, so a new error class never falls through to an unknown status.
    code: ClassVar[str] = "INTERNAL"


class InvalidArgument(TutorMemoryError):
    """The request is malformed; nothing was changed."""

    code = "INVALID_ARGUMENT"

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem

    def __reduce__(self) -> tuple[Callable[..., InvalidArgument], tuple[str, ...]]:
        # Pickled as its own arguments (an error raised in a worker process reaches the server
        # as the same error); the default would call the class with the joined message alone.
        return type(self), (self.field, self.problem)


class NotFound(TutorMemoryError):
    code = "NOT_FOUND"


class AlreadyExists(TutorMemoryError):
    code = "ALREADY_EXISTS"


class Unauthenticated(TutorMemoryError):
    code = "UNAUTHENTICATED"


class PermissionDenied(TutorMemoryError):
    code = "PERMISSION_DENIED"


class ResourceExhausted(TutorMemoryError):
    code = "RESOURCE_EXHAUSTED"


class DeadlineExceeded(TutorMemoryError):
    code = "DEADLINE_EXCEEDED"


class FailedPrecondition(TutorMemoryError):
    """The server cannot do this in its present state (e.g. a model file that fails its check)."""

    code = "FAILED_PRECONDITION"


class Unavailable(TutorMemoryError):
    """A resource the call needs (the store) cannot be reached now; a retry may succeed."""

    code = "UNAVAILABLE"
