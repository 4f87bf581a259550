"""What every call of the Memory service goes through, as one server interceptor: authenticate
the caller from its bearer token, run the handler, turn a project error into its status code, and
log one JSON line with the rpc, the code, the tenant and the milliseconds.

Health and reflection are not intercepted: they need no token. The caller reaches the handler
through a context variable (`current_caller`), set for the duration of the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from tutor_memory.api.auth import Caller, TokenBook
from tutor_memory.api.status import detail_of, status_of
from tutor_memory.domain.errors import TutorMemoryError

log = logging.getLogger("tutor_memory.rpc")

_CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("caller")

Behaviour = Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]
StreamBehaviour = Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]]


def current_caller() -> Caller:
    """The authenticated caller of the call being handled."""
    return _CALLER.get()


class CallGate(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, tokens: TokenBook, service: str) -> None:
        self._tokens = tokens
        self._prefix = f"/{service}/"
        # Wrapped handlers by method, built on first use: the handler table does not change.
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method: str = details.method
        if not method.startswith(self._prefix):
            return await continuation(details)
        wrapped = self._handlers.get(method)
        if wrapped is None:
            handler = await continuation(details)
            if handler is None:
                return handler
            wrapped = self._wrap(method[len(self._prefix) :], handler)
            self._handlers[method] = wrapped
        return wrapped

    def _wrap(self, rpc: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._guard(rpc, handler.unary_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                self._guard(rpc, handler.stream_unary),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                self._guard_stream(rpc, handler.stream_stream),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        raise TypeError(f"{rpc}: only unary, client-streaming and bidirectional methods are served")

    def _guard(self, rpc: str, behaviour: Behaviour) -> Behaviour:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            async with self._gate(rpc, context):
                return await behaviour(request, context)

        return guarded

    def _guard_stream(self, rpc: str, behaviour: StreamBehaviour) -> StreamBehaviour:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            async with self._gate(rpc, context):
                async for reply in behaviour(request, context):
                    yield reply

        return guarded

    @contextlib.asynccontextmanager
    async def _gate(self, rpc: str, context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
        """Authenticates the caller for the body, maps what it raises to a status, and logs the
        call's one line."""
        started = time.perf_counter()
        code = grpc.StatusCode.OK
        caller: Caller | None = None
        try:
            caller = self._tokens.authenticate(context.invocation_metadata() or ())
            token = _CALLER.set(caller)
            try:
                yield
            finally:
                _CALLER.reset(token)
        except TutorMemoryError as exc:
            code = status_of(exc)
            await context.abort(code, detail_of(exc))
            raise  # unreachable: abort raises
        except asyncio.CancelledError:
            code = grpc.StatusCode.CANCELLED
            raise
        except grpc.aio.AbortError:
            raise
        except Exception:
            code = grpc.StatusCode.INTERNAL
            log.exception("internal error", extra={"rpc": rpc})
            await context.abort(code, "internal error; the server log has the details")
            raise
        finally:
            log.info(
                "rpc",
                extra={
                    "rpc": rpc,
                    "code": code.name,
                    "tenant": caller.tenant if caller else None,
                    "ms": round((time.perf_counter() - started) * 1000, 3),
                },
            )
