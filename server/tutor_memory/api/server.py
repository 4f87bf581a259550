"""The gRPC server: the services from the composition root (`app.root`) behind the servicer and
the call gate, with health, reflection, TLS, message limits and a graceful shutdown."""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import dataclass

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory._proto import memory_pb2_grpc as pb_grpc
from tutor_memory.api.auth import DEV_TENANT, TokenBook
from tutor_memory.api.interceptors import CallGate
from tutor_memory.api.servicer import MemoryServicer
from tutor_memory.app.config import MIB, ServerConfig, is_loopback
from tutor_memory.app.root import ConfigError, Services, build_services
from tutor_memory.models.embedder import Embedder

log = logging.getLogger("tutor_memory.server")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Memory"].full_name

__all__ = ["App", "ConfigError", "create_server", "serve"]


@dataclass
class App:
    server: grpc.aio.Server
    port: int
    services: Services
    health: health.aio.HealthServicer

    async def stop(self, grace: float | None) -> None:
        """Stops taking calls, lets calls in flight finish for `grace` seconds, closes the store."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        self.services.close()


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


async def create_server(config: ServerConfig, *, embedder: Embedder | None = None) -> App:
    """Builds and starts a server; `config.listen` may use port 0 (tests) and the bound port is
    returned. `embedder` lets tests share one loaded model between servers."""
    tokens = _tokens(config)
    credentials = _credentials(config)
    services = build_services(config, embedder=embedder)
    # Nothing is loaded here: each chain loads on its first call (app/resident.py). Episodes an
    # earlier run acknowledged without their embedding are embedded in the background.
    services.embedding.start()
    stale = services.store.count_vectors_of_other_models(services.embedder.model_id)
    if stale:
        log.warning(
            "stored vectors of another embedding model are not searched",
            extra={"vectors": stale, "model": services.embedder.model_id},
        )

    options = [
        ("grpc.max_receive_message_length", config.max_message_bytes),
        ("grpc.max_send_message_length", config.max_message_bytes),
    ]
    server = grpc.aio.server(options=options, interceptors=[CallGate(tokens, SERVICE_NAME)])
    pb_grpc.add_MemoryServicer_to_server(MemoryServicer(services), server)
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable_server_reflection(
        (SERVICE_NAME, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    try:
        if credentials is None:
            port = server.add_insecure_port(config.listen)
        else:
            port = server.add_secure_port(config.listen, credentials)
    except RuntimeError as exc:
        services.close()
        raise ConfigError(f"cannot listen on {config.listen}: {exc}") from exc
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    # After SERVING: the chains with a snapshot load in the background (app/resident.py).
    services.resident.warm_up()
    log.info(
        "serving",
        extra={
            "listen": config.listen,
            "port": port,
            "tls": credentials is not None,
            "mode": "development" if tokens.is_development else "tokens",
            "data": str(config.data_dir),
            "model": services.embedder.model_id,
            "tokenizer": services.counter.name,
            "cache_budget_mib": config.cache_budget_bytes // MIB,
            # Nothing is loaded before serving: chains load on their first call.
            "episodes_loaded": 0,
        },
    )
    if tokens.is_development:
        log.warning(
            f"development mode: no --tokens file, every call is tenant {DEV_TENANT!r}, "
            "loopback only; do not use it for real students"
        )
    return App(server, port, services, health_servicer)


async def serve(config: ServerConfig) -> None:
    """Runs until SIGTERM or SIGINT, then shuts down gracefully."""
    # Handlers first: a SIGTERM that arrives while the server starts still stops it gracefully.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    app = await create_server(config)
    await stop.wait()
    log.info("stopping", extra={"grace_seconds": config.grace_seconds})
    await app.stop(config.grace_seconds)
    log.info("stopped")
