"""The gRPC server: the services from the composition root (`app.root`) behind the servicer and
the call gate, with health, reflection, TLS, message limits, metrics, optional tracing, a tokens
file reloaded on SIGHUP, and a graceful shutdown.

Start-up listens first and loads second, so health answers from the first moment: liveness
(service `liveness`) is SERVING as long as the process answers; readiness (service `""` and
`tutor_memory.v1.Memory`) is NOT_SERVING while the data loads and whenever the store cannot be
reached, and Memory calls get UNAVAILABLE until the load is done.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from opentelemetry.instrumentation.grpc import aio_server_interceptor, filters
from opentelemetry.sdk.trace import TracerProvider

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory._proto import memory_pb2_grpc as pb_grpc
from tutor_memory.api.auth import DEV_TENANT, TokenBook
from tutor_memory.api.interceptors import CallGate
from tutor_memory.api.servicer import MemoryServicer
from tutor_memory.app.config import MIB, ServerConfig, is_loopback, split_host_port
from tutor_memory.app.metrics import Metrics
from tutor_memory.app.quotas import Quotas
from tutor_memory.app.root import ConfigError, Services, build_services
from tutor_memory.app.telemetry import Telemetry
from tutor_memory.app.tracing import TracingConfigError, tracer_provider_from_env
from tutor_memory.models.embedder import Embedder

log = logging.getLogger("tutor_memory.server")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Memory"].full_name
# Health service names: readiness (may this server take calls now?) and liveness (is the process
# alive?). "" is the server as a whole, which is what load balancers ask by default.
READINESS_SERVICES = ("", SERVICE_NAME)
LIVENESS_SERVICE = "liveness"
# Seconds one readiness probe of the store may take before it counts as unreachable.
PROBE_TIMEOUT_SECONDS = 2.0

__all__ = ["Alongside", "App", "ConfigError", "create_server", "serve"]


class Readiness:
    """Keeps the readiness services true: NOT_SERVING until `start`, then the store's
    reachability, probed every `interval` seconds on the probe thread."""

    def __init__(self, servicer: health.aio.HealthServicer, metrics: Metrics) -> None:
        self._health = servicer
        self._metrics = metrics
        self._ready: bool | None = None
        self._task: asyncio.Task[None] | None = None

    async def set(self, ready: bool, reason: str = "") -> None:
        if ready == self._ready:
            return
        if self._ready is not None:
            if ready:
                log.info("ready again: the store answers")
            else:
                log.error("not ready: the store cannot be reached", extra={"reason": reason})
        self._ready = ready
        self._metrics.ready.set(1 if ready else 0)
        status = health_pb2.HealthCheckResponse.SERVING if ready else (
            health_pb2.HealthCheckResponse.NOT_SERVING
        )  # fmt: skip
        for name in READINESS_SERVICES:
            await self._health.set(name, status)

    async def probe(self, services: Services) -> None:
        executors = services.executors
        try:
            await asyncio.wait_for(
                executors.run(executors.probe, services.store.ping), PROBE_TIMEOUT_SECONDS
            )
        except Exception as exc:
            await self.set(False, f"{type(exc).__name__}: {exc}")
        else:
            await self.set(True)

    async def start(self, services: Services, interval: float) -> None:
        await self.probe(services)

        async def loop() -> None:
            while True:
                await asyncio.sleep(interval)
                await self.probe(services)

        self._task = asyncio.create_task(loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None


@dataclass
class App:
    server: grpc.aio.Server
    port: int
    services: Services
    health: health.aio.HealthServicer
    gate: CallGate
    config: ServerConfig
    telemetry: Telemetry
    readiness: Readiness
    # The bound port of the metrics endpoint, when --metrics-listen is set.
    metrics_port: int | None = None
    _stopped: bool = field(default=False, repr=False)

    async def stop(self, grace: float | None) -> None:
        """Stops taking calls, lets calls in flight finish for `grace` seconds, closes the store,
        stops the metrics endpoint and flushes the spans."""
        if self._stopped:
            return
        self._stopped = True
        await self.readiness.stop()
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        self.services.close()
        self.telemetry.close()

    async def reload_tokens(self) -> bool:
        """Reads the tokens file again (SIGHUP). A file that does not parse changes nothing: the
        old tokens stay, and the log says why."""
        path = self.config.tokens_file
        counter = self.telemetry.metrics.token_reloads
        if path is None:
            log.warning("SIGHUP: no tokens file to reload (development mode)")
            return False
        loop = asyncio.get_running_loop()
        try:
            book = await loop.run_in_executor(None, TokenBook.from_file, path)
        except ValueError as exc:
            counter.labels("rejected").inc()
            log.error("tokens file not reloaded; the old tokens stay", extra={"reason": str(exc)})
            return False
        self.gate.replace_tokens(book)
        counter.labels("applied").inc()
        log.info(
            "tokens file reloaded",
            extra={"tokens": len(book), "tenants_with_limits": sorted(book.limits)},
        )
        return True


def _tokens(config: ServerConfig) -> TokenBook:
    if config.tokens_file is None:
        if not is_loopback(config.listen):
            raise ConfigError(
                f"without --tokens the server runs in development mode, which binds loopback only; "
                f"{config.listen!r} is not a loopback address"
            )
        return TokenBook.development()
    try:
        return TokenBook.from_file(config.tokens_file)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc


def _credentials(config: ServerConfig) -> grpc.ServerCredentials | None:
    if config.tls_cert is None and config.tls_key is None:
        return None
    if config.tls_cert is None or config.tls_key is None:
        raise ConfigError("TLS needs both --tls-cert and --tls-key")
    return grpc.ssl_server_credentials(
        [(config.tls_key.read_bytes(), config.tls_cert.read_bytes())]
    )


def _telemetry(tracer_provider: TracerProvider | None) -> Telemetry:
    if tracer_provider is None:
        try:
            tracer_provider = tracer_provider_from_env(os.environ)
        except TracingConfigError as exc:
            raise ConfigError(str(exc)) from exc
    return Telemetry(Metrics(), tracer_provider)


def _serve_metrics(config: ServerConfig, metrics: Metrics) -> int | None:
    if config.metrics_listen is None:
        return None
    try:
        host, port = split_host_port(config.metrics_listen)
        return metrics.serve(host, port)
    except (ValueError, OSError) as exc:
        raise ConfigError(f"--metrics-listen {config.metrics_listen}: {exc}") from exc


def _load(
    config: ServerConfig,
    embedder: Embedder | Future[Embedder] | None,
    telemetry: Telemetry,
    quotas: Quotas,
) -> Services:
    """Opens the store and loads the model (blocking, before serving). Chains load on their first
    call, and those with a snapshot in the background from now on, beside the model's load and
    after SERVING (app/resident.py). Episodes an earlier run acknowledged without their embedding
    are embedded in the background (app/embedding_queue.py)."""
    services = build_services(
        config, embedder=embedder, telemetry=telemetry, quotas=quotas, warm_up=True
    )
    try:
        services.embedding.start()
        quotas.set_episode_counts(services.store.episode_counts())
        stale = services.store.count_vectors_of_other_models(services.embedder.model_id)
    except BaseException:
        services.close()
        raise
    if stale:
        log.warning(
            "stored vectors of another embedding model are not searched",
            extra={"vectors": stale, "model": services.embedder.model_id},
        )
    return services


async def create_server(
    config: ServerConfig,
    *,
    embedder: Embedder | Future[Embedder] | None = None,
    tracer_provider: TracerProvider | None = None,
) -> App:
    """Builds and starts a server and returns once it is ready; `config.listen` may use port 0
    (tests) and the bound port is returned. `embedder` lets tests share one loaded model between
    servers, and `serve` start the model's load before the server's modules are imported;
    `tracer_provider` replaces the one the OTEL_* variables would make (tests)."""
    tokens = _tokens(config)
    credentials = _credentials(config)
    telemetry = _telemetry(tracer_provider)
    quotas = Quotas()
    gate = CallGate(tokens, SERVICE_NAME, quotas=quotas, metrics=telemetry.metrics)
    interceptors: list[grpc.aio.ServerInterceptor] = [gate]
    if telemetry.tracer_provider is not None:
        # Outermost, so the call's span covers the gate (refused calls are traced too); only the
        # Memory service, not health checks and reflection.
        interceptors.insert(
            0,
            aio_server_interceptor(
                tracer_provider=telemetry.tracer_provider,
                filter_=filters.service_name(SERVICE_NAME),
            ),
        )

    options = [
        ("grpc.max_receive_message_length", config.max_message_bytes),
        ("grpc.max_send_message_length", config.max_message_bytes),
        # The workers of `serve --workers` share one port (the kernel spreads connections over
        # them); a lone server does not, so that a second server started on its port by mistake
        # fails instead of silently taking half of its callers.
        ("grpc.so_reuseport", 1 if config.worker is not None else 0),
    ]
    server = grpc.aio.server(options=options, interceptors=interceptors)
    servicer = MemoryServicer()
    pb_grpc.add_MemoryServicer_to_server(servicer, server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    readiness = Readiness(health_servicer, telemetry.metrics)
    await readiness.set(False)
    await health_servicer.set(LIVENESS_SERVICE, health_pb2.HealthCheckResponse.SERVING)
    try:
        if credentials is None:
            port = server.add_insecure_port(config.listen)
        else:
            port = server.add_secure_port(config.listen, credentials)
    except RuntimeError as exc:
        telemetry.close()
        raise ConfigError(f"cannot listen on {config.listen}: {exc}") from exc
    try:
        metrics_port = _serve_metrics(config, telemetry.metrics)
        await server.start()
        log.info("listening; loading the data", extra={"port": port, "metrics_port": metrics_port})
        # Loading blocks for seconds (model, caches); the server's own pools are part of what it
        # builds, so it runs on the loop's default executor while health answers NOT_SERVING.
        loop = asyncio.get_running_loop()
        services = await loop.run_in_executor(None, _load, config, embedder, telemetry, quotas)
    except BaseException:
        await server.stop(None)
        telemetry.close()
        raise
    servicer.attach(services)
    gate.open = True
    await readiness.start(services, config.readiness_probe_seconds)
    log.info(
        "serving",
        extra={
            "listen": config.listen,
            "port": port,
            "metrics_port": metrics_port,
            "tracing": telemetry.tracing,
            "tls": credentials is not None,
            "worker": config.worker,
            "mode": "development" if tokens.is_development else "tokens",
            "data": str(config.data_dir),
            "model": services.embedder.model_id,
            "tokenizer": services.counter.name,
            "cache_budget_mib": config.cache_budget_bytes // MIB,
            # Chains load on their first call; those with a snapshot also in the background,
            # from before SERVING on: what that load has held so far.
            "episodes_loaded": services.resident.resident_episodes(),
        },
    )
    if tokens.is_development:
        log.warning(
            f"development mode: no --tokens file, every call is tenant {DEV_TENANT!r}, "
            "loopback only; do not use it for real students"
        )
    return App(
        server,
        port,
        services,
        health_servicer,
        gate,
        config,
        telemetry,
        readiness,
        metrics_port,
    )


# Something served beside the API in the same loop (the console): started with the running
# app, it returns the coroutine function that stops it.
Alongside = Callable[[App], Awaitable[Callable[[], Awaitable[None]]]]


# How often a worker of `serve --workers` checks that its supervisor still runs.
PARENT_CHECK_SECONDS = 1.0


async def _stop_when_orphaned(parent: int, stop: asyncio.Event) -> None:
    # Polled: nothing signals a process that its parent died (short of prctl, which Python's
    # standard library does not offer).
    while os.getppid() == parent:  # noqa: ASYNC110
        await asyncio.sleep(PARENT_CHECK_SECONDS)
    log.error("the supervisor of the workers is gone: stopping")
    stop.set()


async def serve(
    config: ServerConfig,
    alongside: Alongside | None = None,
    model: Future[Embedder] | None = None,
) -> None:
    """Runs until SIGTERM or SIGINT, then shuts down gracefully (what runs alongside first);
    SIGHUP reloads the tokens file. `model`: the model's load, if started already."""
    # Handlers first: a SIGTERM that arrives while the server starts still stops it gracefully,
    # and a SIGHUP then is applied once it serves rather than killing it.
    stop = asyncio.Event()
    reload = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.add_signal_handler(signal.SIGHUP, reload.set)
    app = await create_server(config, embedder=model)
    # What the start-up made (modules, language data, phrase indexes: about 130,000 objects)
    # lives as long as the process, so it is kept out of every later collection. A full
    # collection holds the GIL, stalling every call in flight; serving a 100k-episode chain, one
    # took 185-212 ms before and 22-27 ms after (docs/DESIGN.md P10). Chains loaded by then are
    # freed by their reference counts when evicted (they hold no reference cycles), so nothing
    # they hold waits for a collection that will not come.
    gc.freeze()

    async def reloader() -> None:
        while True:
            await reload.wait()
            reload.clear()
            await app.reload_tokens()

    try:
        stop_alongside = await alongside(app) if alongside is not None else None
    except BaseException:
        await app.stop(0)
        raise
    reloading = asyncio.create_task(reloader())
    # A worker of `serve --workers` stops when its supervisor is gone (killed without the chance
    # to stop it), rather than serving on unsupervised.
    orphaned = (
        asyncio.create_task(_stop_when_orphaned(os.getppid(), stop))
        if config.worker is not None
        else None
    )
    await stop.wait()
    reloading.cancel()
    if orphaned is not None:
        orphaned.cancel()
    log.info("stopping", extra={"grace_seconds": config.grace_seconds})
    if stop_alongside is not None:
        await stop_alongside()
    await app.stop(config.grace_seconds)
    log.info("stopped")
