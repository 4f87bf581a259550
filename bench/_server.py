"""A real server for a benchmark: a child process on a fresh data directory, on loopback."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
from tests.helpers.server_process import ServerProcess

from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc


@contextmanager
def fresh_server() -> Iterator[pb_grpc.MemoryStub]:
    """A stub for a server started on an empty data directory; stopped and removed after."""
    with fresh_server_process() as (_, channel):
        yield pb_grpc.MemoryStub(channel)


@contextmanager
def fresh_server_process() -> Iterator[tuple[ServerProcess, grpc.Channel]]:
    """As fresh_server, also giving the process (to read its memory) and the channel."""
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "data", None)
        server.wait_ready()
        try:
            options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
            with grpc.insecure_channel(server.target, options=options) as channel:
                yield server, channel
        finally:
            server.terminate()
