"""A real server for a benchmark: a child process on a fresh data directory, on loopback."""

from __future__ import annotations

import socket
import tempfile
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import grpc
from tests.helpers.server_process import ServerProcess

from bench._proc import tree_cpu_seconds
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

# How long a benchmark waits for a large chain's index to move to its HNSW graph.
GRAPH_WAIT_S = 1_800.0
# A server counts as quiet once it used less than this share of one core over QUIET_WINDOW_S.
QUIET_CPU_SHARE = 0.05
QUIET_WINDOW_S = 2.0


@contextmanager
def fresh_server() -> Iterator[pb_grpc.MemoryStub]:
    """A stub for a server started on an empty data directory; stopped and removed after."""
    with fresh_server_process() as (_, channel):
        yield pb_grpc.MemoryStub(channel)


def free_port() -> int:
    """A port nothing listens on now (the server binds it next)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def fresh_server_process(
    workers: int = 1, extra: Sequence[str] = ()
) -> Iterator[tuple[ServerProcess, grpc.Channel]]:
    """As fresh_server, also giving the process (to read its memory) and the channel; `extra`
    are more `serve` options. With `workers` above 1, `serve --workers` on a free port (the
    process is their supervisor: read its CPU and memory with bench/_proc's tree_* functions)."""
    with tempfile.TemporaryDirectory() as tmp:
        if workers == 1:
            server = ServerProcess(Path(tmp) / "data", None, *extra)
            server.wait_ready()
        else:
            listen = f"127.0.0.1:{free_port()}"
            server = ServerProcess(
                Path(tmp) / "data", None, "--listen", listen, "--workers", str(workers), *extra
            )
            server.wait_workers(workers)
        try:
            options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
            with grpc.insecure_channel(server.target, options=options) as channel:
                yield server, channel
        finally:
            server.terminate()


def settle(
    server: ServerProcess,
    stub: pb_grpc.MemoryStub,
    chains: Iterable[tuple[str, str]],
    *,
    timeout_s: float,
) -> float:
    """Waits until no chain of (student, subject) reports episodes waiting for their embedding
    and the server has gone quiet (the embedding queue and background index builds done), and
    returns the seconds waited. An import is acknowledged before its embeddings, so a benchmark
    timed straight after one measures the catch-up beside it, with a dense set still filling."""
    started = time.monotonic()
    deadline = started + timeout_s
    for student, subject in chains:
        request = pb.BuildBlockRequest(
            student_id=student, subject_id=subject, query="settle", budget_tokens=100
        )
        while stub.BuildBlock(request, timeout=60).vectors_pending:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the embeddings of {student}/{subject} never caught up")
            time.sleep(0.5)
    while True:
        before = tree_cpu_seconds(server.proc.pid)
        time.sleep(QUIET_WINDOW_S)
        if tree_cpu_seconds(server.proc.pid) - before < QUIET_CPU_SHARE * QUIET_WINDOW_S:
            return round(time.monotonic() - started, 1)
        if time.monotonic() > deadline:
            raise RuntimeError("the server never went quiet after the fill")


def wait_for_graph(server: ServerProcess) -> None:
    """Waits until the server says a chain's index moved to its HNSW graph (built in the
    background after a large chain loads), so that the snapshot its stop writes holds the graph."""
    deadline = time.monotonic() + GRAPH_WAIT_S
    while not any("moved to HNSW" in line for line in server.lines):
        if time.monotonic() > deadline:
            raise RuntimeError("the HNSW graph was not built in time")
        time.sleep(1)
