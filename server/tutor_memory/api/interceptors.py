"""What every call of the Memory service goes through, as one server interceptor: refuse it while
the server is still loading, authenticate the caller from its bearer token, admit it under its
tenant's rate, check its token's scope and its tenant's episode ceiling (per message of a
stream), run the handler, turn a project error into its status code, count it in the metrics and
log one JSON line with the rpc, the code, the tenant and the milliseconds.

Health and reflection are not intercepted: they need no token. The caller reaches the handler
through a context variable (`current_caller`), set for the duration of the call.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf import duration_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from tutor_memory.api.auth import Caller, TokenBook
from tutor_memory.api.rpc_access import RPC_POLICIES, RpcPolicy, items_in, named_chains
from tutor_memory.api.status import detail_of, status_of
from tutor_memory.app.metrics import Metrics
from tutor_memory.app.quotas import QuotaExceeded, Quotas
from tutor_memory.domain.errors import TutorMemoryError, Unavailable
from tutor_memory.store.deadlines import CALL_DEADLINE

log = logging.getLogger("tutor_memory.rpc")

_CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("caller")

Behaviour = Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]

# Longest a refusal for the rate is held before it is sent (see CallGate._paced), and how many of
# one tenant's refusals are held at once; a held refusal is a sleeping coroutine.
REFUSAL_HOLD_SECONDS = 1.0
HELD_REFUSALS_PER_TENANT = 64
# A held refusal is sent this long before the call's deadline, so the caller hears it.
DEADLINE_MARGIN_SECONDS = 0.05


def _writing(
    replies: Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]],
) -> Behaviour:
    """A bidirectional handler (an async generator of replies) as a coroutine that writes each
    reply to the call, so the guard awaits it like any other handler."""

    async def written(request: Any, context: grpc.aio.ServicerContext) -> None:
        async for reply in replies(request, context):
            await context.write(reply)

    return written


def current_caller() -> Caller:
    """The authenticated caller of the call being handled."""
    return _CALLER.get()


def quota_status(exc: QuotaExceeded) -> grpc.Status:
    """RESOURCE_EXHAUSTED with google.rpc details in the `grpc-status-details-bin` trailer: a
    QuotaFailure naming the tenant and the limit, and a RetryInfo when waiting helps (the rate;
    the episode ceiling only moves when the operator raises it)."""
    failure = error_details_pb2.QuotaFailure(
        violations=[
            error_details_pb2.QuotaFailure.Violation(
                subject=f"tenant:{exc.tenant}", description=exc.limit
            )
        ]
    )
    details = [failure]
    if exc.retry_after is not None:
        # Whole milliseconds, rounded up: a client that waits exactly this long finds a token.
        millis = max(1, math.ceil(exc.retry_after * 1000))
        delay = duration_pb2.Duration(seconds=millis // 1000, nanos=(millis % 1000) * 1_000_000)
        details.insert(0, error_details_pb2.RetryInfo(retry_delay=delay))
    status = status_pb2.Status(code=code_pb2.RESOURCE_EXHAUSTED, message=detail_of(exc))
    for detail in details:
        status.details.add().Pack(detail)
    converted: grpc.Status = rpc_status.to_status(status)
    return converted


class CallGate(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(
        self,
        tokens: TokenBook,
        service: str,
        *,
        quotas: Quotas | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self._tokens = tokens
        self._prefix = f"/{service}/"
        self._quotas = quotas or Quotas()
        self._quotas.replace_limits(tokens.limits)
        self._metrics = metrics
        # False until the server has loaded its caches: calls get UNAVAILABLE meanwhile.
        self.open = False
        # Refusals for the rate being held now, per tenant (see _paced).
        self._held: dict[str, int] = {}
        # Wrapped handlers by method, built on first use: the handler table does not change.
        self._handlers: dict[str, grpc.RpcMethodHandler] = {}

    @property
    def tokens(self) -> TokenBook:
        return self._tokens

    def replace_tokens(self, tokens: TokenBook) -> None:
        """A reloaded tokens file: calls that start from now on see it (one assignment, so a
        call sees either the old book or the new one, never a mix)."""
        self._quotas.replace_limits(tokens.limits)
        self._tokens = tokens

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
        policy = RPC_POLICIES.get(rpc)
        if policy is None:
            # api.rpc_access must classify every RPC (a test holds it to the proto).
            raise LookupError(f"{rpc} is not classified in api.rpc_access.RPC_POLICIES")
        if handler.unary_unary is not None:
            return grpc.unary_unary_rpc_method_handler(
                self._guard(rpc, policy, handler.unary_unary, streaming=False),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_unary is not None:
            return grpc.stream_unary_rpc_method_handler(
                self._guard(rpc, policy, handler.stream_unary, streaming=True),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream is not None:
            return grpc.stream_stream_rpc_method_handler(
                self._guard(rpc, policy, _writing(handler.stream_stream), streaming=True),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        raise TypeError(f"{rpc}: only unary, client-streaming and bidirectional methods are served")

    async def _paced(self, exc: QuotaExceeded, context: grpc.aio.ServicerContext) -> QuotaExceeded:
        """Holds a refusal for the rate until a retry could succeed (at most REFUSAL_HOLD_SECONDS,
        never past the call's deadline), then returns it with the wait that is left. A client
        that retries at once, ignoring the hint, is thereby paced to about its rate instead of
        making the server refuse it thousands of times a second: each refusal costs the event
        loop what a cheap call costs, which is what other tenants would feel. Only
        HELD_REFUSALS_PER_TENANT refusals of one tenant are held at once; more are answered at
        once."""
        if exc.retry_after is None:
            return exc
        hold = min(exc.retry_after, REFUSAL_HOLD_SECONDS)
        remaining = context.time_remaining()
        if remaining is not None:
            hold = min(hold, max(0.0, remaining - DEADLINE_MARGIN_SECONDS))
        held = self._held.get(exc.tenant, 0)
        if hold <= 0 or held >= HELD_REFUSALS_PER_TENANT:
            return exc
        self._held[exc.tenant] = held + 1
        try:
            await asyncio.sleep(hold)
        finally:
            self._held[exc.tenant] -= 1
        return exc.after(hold)

    def _admit(self, rpc: str, policy: RpcPolicy, caller: Caller, request: Any) -> None:
        """Scope, then the episode ceiling, for one request message."""
        caller.scope.check(rpc, policy.access, named_chains(request))
        if policy.adds_episodes:
            self._quotas.check_room(caller.tenant, policy.adds_episodes * items_in(request))

    def _checked_stream(
        self, rpc: str, policy: RpcPolicy, caller: Caller, messages: AsyncIterator[Any]
    ) -> AsyncIterator[Any]:
        """The request stream, each message checked before the handler sees any of it: a
        message outside the scope ends the call, and nothing of it or after it is written."""
        quotas = self._quotas

        async def checked() -> AsyncIterator[Any]:
            async for message in messages:
                caller.scope.check(rpc, policy.access, named_chains(message))
                if policy.adds_episodes:
                    # The stored count already holds what this stream committed so far.
                    quotas.check_room(caller.tenant, policy.adds_episodes * items_in(message))
                yield message

        return checked()

    def _guard(
        self, rpc: str, policy: RpcPolicy, behaviour: Behaviour, *, streaming: bool
    ) -> Behaviour:
        async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
            started = time.perf_counter()
            code = grpc.StatusCode.OK
            caller: Caller | None = None
            try:
                if not self.open:
                    raise Unavailable("the server is loading its data; retry shortly")
                caller = self._tokens.authenticate(context.invocation_metadata() or ())
                self._quotas.admit(caller.tenant)
                if streaming:
                    request = self._checked_stream(rpc, policy, caller, request)
                else:
                    self._admit(rpc, policy, caller, request)
                token = _CALLER.set(caller)
                remaining = context.time_remaining()
                # What the store may wait for (a pooled connection) within this call.
                deadline = CALL_DEADLINE.set(
                    None if remaining is None else time.monotonic() + remaining
                )
                try:
                    return await behaviour(request, context)
                finally:
                    CALL_DEADLINE.reset(deadline)
                    _CALLER.reset(token)
            except QuotaExceeded as exc:
                code = grpc.StatusCode.RESOURCE_EXHAUSTED
                if self._metrics is not None:
                    self._metrics.quota_denials.labels(exc.tenant, exc.limit).inc()
                status = quota_status(await self._paced(exc, context))
                await context.abort(status.code, status.details, status.trailing_metadata)
                raise  # unreachable: abort raises
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
                seconds = time.perf_counter() - started
                if self._metrics is not None:
                    self._metrics.rpc_requests.labels(rpc, code.name).inc()
                    self._metrics.rpc_seconds.labels(rpc, code.name).observe(seconds)
                log.info(
                    "rpc",
                    extra={
                        "rpc": rpc,
                        "code": code.name,
                        "tenant": caller.tenant if caller else None,
                        "caller": caller.name if caller else None,
                        "ms": round(seconds * 1000, 3),
                    },
                )

        return guarded
