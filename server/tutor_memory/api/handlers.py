"""What every RPC handler shares: authentication, the one map from domain errors to status
codes, one JSON log line per call, and the caller's deadline."""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from tutor_memory.api.auth import Caller, TokenBook
from tutor_memory.domain.errors import (
    AlreadyExists,
    DeadlineExceeded,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    TutorMemoryError,
    Unauthenticated,
)

log = logging.getLogger("tutor_memory.rpc")


class Authenticated:
    """A servicer part: has the token book the `rpc` decorator authenticates with."""

    tokens: TokenBook


_STATUS: dict[type[TutorMemoryError], grpc.StatusCode] = {
    InvalidArgument: grpc.StatusCode.INVALID_ARGUMENT,
    NotFound: grpc.StatusCode.NOT_FOUND,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    ResourceExhausted: grpc.StatusCode.RESOURCE_EXHAUSTED,
    DeadlineExceeded: grpc.StatusCode.DEADLINE_EXCEEDED,
    FailedPrecondition: grpc.StatusCode.FAILED_PRECONDITION,
}

Req = TypeVar("Req")
Rep = TypeVar("Rep")
Handler = Callable[[Any, Req, grpc.aio.ServicerContext, Caller], Awaitable[Rep]]


def rpc(fn: Handler[Req, Rep]) -> Callable[[Any, Req, grpc.aio.ServicerContext], Awaitable[Rep]]:
    """Authenticates the caller, maps domain errors to status codes, logs one line per call."""

    @functools.wraps(fn)
    async def wrapper(self: Authenticated, request: Req, context: grpc.aio.ServicerContext) -> Rep:
        started = time.perf_counter()
        code = grpc.StatusCode.OK
        caller: Caller | None = None
        try:
            caller = self.tokens.authenticate(context.invocation_metadata() or ())
            return await fn(self, request, context, caller)
        except TutorMemoryError as exc:
            code = _STATUS[type(exc)]
            await context.abort(code, str(exc))
            raise  # unreachable: abort raises
        except asyncio.CancelledError:
            code = grpc.StatusCode.CANCELLED
            raise
        except grpc.aio.AbortError:
            raise
        except Exception:
            code = grpc.StatusCode.INTERNAL
            log.exception("internal error", extra={"rpc": fn.__name__})
            await context.abort(code, "internal error; the server log has the details")
            raise
        finally:
            log.info(
                "rpc",
                extra={
                    "rpc": fn.__name__,
                    "code": code.name,
                    "tenant": caller.tenant if caller else None,
                    "ms": round((time.perf_counter() - started) * 1000, 3),
                },
            )

    return wrapper


def deadline_of(context: grpc.aio.ServicerContext) -> float | None:
    remaining = context.time_remaining()
    return None if remaining is None else asyncio.get_running_loop().time() + remaining
