"""The one map from the project's errors to gRPC status codes.

Every error class carries its code (`domain.errors`), so the map works by class hierarchy: a new
subclass of InvalidArgument is INVALID_ARGUMENT without being listed anywhere.
"""

from __future__ import annotations

import grpc

from tutor_memory.domain.errors import TutorMemoryError


def status_of(exc: TutorMemoryError) -> grpc.StatusCode:
    return grpc.StatusCode[exc.code]


# The longest status detail sent: errors quote callers' values briefly (domain.limits.quoted),
# and this bound keeps any message within gRPC's trailer limits whatever it says.
MAX_DETAIL_CHARS = 1_024


def detail_of(exc: TutorMemoryError) -> str:
    message = str(exc)
    return message if len(message) <= MAX_DETAIL_CHARS else message[:MAX_DETAIL_CHARS] + "…"
