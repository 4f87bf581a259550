"""Why a course file cannot be read into the map."""

from __future__ import annotations

from collections.abc import Callable

from tutor_memory.domain.errors import InvalidArgument


class FileRejected(InvalidArgument):
    """The file's bytes cannot become a Document; nothing was stored.

    `reason` says what is wrong in words a caller can act on ("encrypted PDF", "not valid UTF-8
    at byte 1234", ...). It is an InvalidArgument so the servicer reports it as INVALID_ARGUMENT
    with no extra mapping.
    """

    def __init__(self, reason: str) -> None:
        super().__init__("file", reason)
        self.reason = reason

    def __reduce__(self) -> tuple[Callable[..., InvalidArgument], tuple[str, ...]]:
        return type(self), (self.reason,)
