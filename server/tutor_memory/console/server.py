"""Serves the console from the process that serves the API, in the same event loop: uvicorn's
`Server.serve()` runs as a task beside grpc.aio, and reads through the same use cases."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import uvicorn

from tutor_memory.app.config import is_loopback
from tutor_memory.app.root import ConfigError, Services
from tutor_memory.console.access import Gate
from tutor_memory.console.web import build_console

log = logging.getLogger("tutor_memory.console")

# The console's host when `--console-listen` names only a port: loopback.
DEFAULT_CONSOLE_HOST = "127.0.0.1"
# Seconds a stopping console waits for requests in flight.
STOP_GRACE_SECONDS = 2.0


class _Server(uvicorn.Server):
    """uvicorn's server without its signal handlers: the process's own (`api.server.serve`)
    stop the API and the console together."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.ready = asyncio.Event()

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            await super().startup(sockets)
        finally:
            self.ready.set()


@dataclass
class Console:
    server: uvicorn.Server
    task: asyncio.Task[None]
    port: int

    async def stop(self) -> None:
        self.server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(self.task), STOP_GRACE_SECONDS)
        except TimeoutError:
            self.task.cancel()
            with suppress(asyncio.CancelledError):
                await self.task


def _bind(listen: str) -> socket.socket:
    host, sep, port = listen.rpartition(":")
    if not sep or not port.isdigit():
        raise ConfigError(f"--console-listen must be HOST:PORT, not {listen!r}")
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, int(port)))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {listen} for the console: {exc}") from exc
    sock.listen(128)
    sock.setblocking(False)
    return sock


async def start_console(listen: str, services: Services, gate: Gate) -> Console:
    """Binds `listen` (port 0: any free port, for tests) and serves the console until stopped.
    Without a tokens file the console, like the API, binds loopback only."""
    if gate.is_development and not is_loopback(listen):
        raise ConfigError(
            "without --tokens the console runs in development mode, which binds loopback only; "
            f"{listen!r} is not a loopback address"
        )
    sock = _bind(listen)
    config = uvicorn.Config(
        build_console(services, gate),
        log_config=None,
        access_log=False,
        lifespan="off",
        server_header=False,
    )
    server = _Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]), name="console")
    ready = asyncio.create_task(server.ready.wait())
    await asyncio.wait((task, ready), return_when=asyncio.FIRST_COMPLETED)
    ready.cancel()
    if task.done() or not server.started:
        if task.done():
            task.result()  # raises what stopped it
        task.cancel()
        raise ConfigError(f"the console stopped while starting on {listen}")
    port = int(sock.getsockname()[1])
    log.info(
        "console serving",
        extra={
            "listen": listen,
            "port": port,
            "mode": "development" if gate.is_development else "tokens",
        },
    )
    return Console(server, task, port)
