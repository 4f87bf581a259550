"""bench_block's chain on disk, and the server's parts opened on it in this process, for
benchmarks that build blocks without gRPC (bench/test_block_build.py, profiling).

A chain of n episodes is filled once through a real server (a child process, IngestEpisodes,
exactly as `bench.bench_block` fills it) into a data directory under CACHE_DIR, and reused by
later runs: filling 100k episodes takes minutes, opening them seconds. The directory is keyed by
size, seed and FIXTURE_VERSION; the store opens data written by earlier versions of the server
and recomputes recall facts made by older rules, so a cached chain stays valid as the code moves.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from pathlib import Path

import grpc
from tests.helpers.server_process import ServerProcess

from bench import bench_block
from bench._server import settle
from tutor_memory.app.config import ServerConfig
from tutor_memory.app.root import Services, build_services
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.block import BlockRequest, Mode
from tutor_memory.models.embedder import Embedder
from tutor_memory.store.sqlite.migrate import migrations
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

# Where filled chains are kept between runs ($TUTOR_MEMORY_BENCH_CACHE overrides it).
CACHE_DIR = Path(
    os.environ.get("TUTOR_MEMORY_BENCH_CACHE", Path(tempfile.gettempdir()) / "tutor-memory-bench")
)
# Bumped when the history bench_block generates changes, so that old chains are not reused.
FIXTURE_VERSION = 1
# bench_block's chain, in the development tenant its server runs as.
CHAIN = ChainKey("dev", "bench", "science")
NOW_US = int(bench_block.NOW.timestamp() * 1_000_000)
TIME_ZONE = "Europe/Rome"
# Seconds the fill may take (100k episodes through the embedder).
FILL_TIMEOUT_S = 1_800.0


def chain_data_dir(n: int) -> Path:
    """A data directory holding bench_block's chain of `n` episodes (filled on first use)."""
    # Named by the store's schema version too: the cache outlives checkouts, and a server refuses
    # a data directory written by a newer schema (another branch's, or a later commit's).
    schema = len(migrations())
    target = CACHE_DIR / f"block-chain-{n}-seed{bench_block.SEED}-v{FIXTURE_VERSION}-s{schema}"
    if (target / "complete").exists():
        return target
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    # Filled beside the target and renamed, so that an interrupted fill is never taken as done.
    filling = Path(tempfile.mkdtemp(prefix=f"filling-{n}-", dir=CACHE_DIR))
    server = ServerProcess(filling / "data", None)
    try:
        server.wait_ready()
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            episodes = bench_block.history(n, random.Random(bench_block.SEED + n))
            reply = stub.IngestEpisodes(ingest_messages(episodes), timeout=FILL_TIMEOUT_S)
            if reply.inserted != n:
                raise RuntimeError(f"filled {reply.inserted} of {n} episodes")
            # The import is acknowledged before its embeddings (app/embedding_queue.py): the
            # directory is complete once the queue has stored every vector.
            settle(server, stub, [(CHAIN.student, CHAIN.subject)], timeout_s=FILL_TIMEOUT_S)
    finally:
        server.terminate()
    (filling / "complete").touch()
    shutil.rmtree(target, ignore_errors=True)
    filling.rename(target)
    return target


def open_services(data_dir: Path, embedder: Embedder | None = None) -> Services:
    """The server's parts on `data_dir`, the chain loaded, as `serve` holds it after its first
    call (no gRPC)."""
    services = build_services(ServerConfig(data_dir=data_dir / "data"), embedder=embedder)
    services.resident.ensure(CHAIN)
    return services


def block_requests(n: int, count: int) -> list[BlockRequest]:
    """bench_block's mixed FULL queries for the chain of `n` episodes, `count` of them."""
    # The same mix as bench_block asks (not the same draw: that would need the history first).
    asked = bench_block.queries(random.Random(bench_block.SEED + n + 1))
    return [
        BlockRequest(
            chain=CHAIN,
            query=query,
            budget_tokens=bench_block.BUDGET,
            now_us=NOW_US,
            time_zone=TIME_ZONE,
            mode=Mode.FULL,
        )
        for query in (asked * (count // len(asked) + 1))[:count]
    ]
