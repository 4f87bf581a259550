"""Domain exceptions. The servicer maps each onto one gRPC status code, in one place (service.py).

The messages are shown to callers verbatim, so they name the field and the problem.
"""

from __future__ import annotations


class TutorMemoryError(Exception):
    """Base of every error the service reports to a caller."""


class InvalidArgument(TutorMemoryError):
    """The request is malformed; nothing was changed."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


class NotFound(TutorMemoryError):
    pass


class AlreadyExists(TutorMemoryError):
    pass


class Unauthenticated(TutorMemoryError):
    pass


class PermissionDenied(TutorMemoryError):
    pass


class ResourceExhausted(TutorMemoryError):
    pass


class DeadlineExceeded(TutorMemoryError):
    pass


class FailedPrecondition(TutorMemoryError):
    """The server cannot do this in its present state (e.g. a model file that fails its check)."""
