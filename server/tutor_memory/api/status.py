"""The one map from the project's errors to gRPC status codes.

Every error class carries its code (`domain.errors`), so the map works by class hierarchy: a new
subclass of InvalidArgument is INVALID_ARGUMENT without being listed anywhere.
"""

from __future__ import annotations

import grpc

from tutor_memory.domain.errors import TutorMemoryError


def status_of(exc: TutorMemoryError) -> grpc.StatusCode:
    return grpc.StatusCode[exc.code]
