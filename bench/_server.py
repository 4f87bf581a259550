"""A real server for a benchmark: a child process on a fresh data directory, on loopback."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import grpc
from tests.integration.server_process import ServerProcess

from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc


@contextmanager
def fresh_server() -> Iterator[pb_grpc.MemoryStub]:
    """A stub for a server started on an empty data directory; stopped and removed after."""
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "data", None)
        server.wait_ready()
        try:
            with grpc.insecure_channel(server.target) as channel:
                yield pb_grpc.MemoryStub(channel)
        finally:
            server.terminate()
