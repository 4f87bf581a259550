"""Assembles the server: store, embedder, vector cache, servicer, health, reflection, shutdown."""

from __future__ import annotations

import asyncio
import logging
import signal
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory._proto import memory_pb2_grpc as pb_grpc
from tutor_memory.api.auth import DEV_TENANT, TokenBook
from tutor_memory.api.servicer import MemoryServicer, Parts
from tutor_memory.app.answers import AnswerTracer
from tutor_memory.app.beliefs import BeliefKeeper
from tutor_memory.app.blocks import BlockBuilder
from tutor_memory.app.caches import CHAIN_CACHE_SIZE
from tutor_memory.app.config import BLOCK_THREADS, ServerConfig, is_loopback
from tutor_memory.app.files import FileIngest
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.maps import MapCache
from tutor_memory.app.nightly import NightlyCycle
from tutor_memory.app.passage_cache import passage_cache
from tutor_memory.app.reports import Reporter
from tutor_memory.app.teaching import Teacher
from tutor_memory.domain.conceptmap.chain_map import ChainMap
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.recall.sections import BeliefView, MapView, belief_view
from tutor_memory.domain.records import BeliefRow
from tutor_memory.domain.signing import ServerKey
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.index.vectors import VectorIndex
from tutor_memory.models.embedder import Embedder, UseOnnxEmbedder
from tutor_memory.models.fetch import MODEL_FILE_NAME, default_model_dir
from tutor_memory.models.tokenizers import load_counter
from tutor_memory.store.sqlite.store import SqliteLedgerStore

log = logging.getLogger("tutor_memory.app")

T = TypeVar("T")

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Memory"].full_name


class ConfigError(Exception):
    """The server cannot start with this configuration; the message says why."""


@dataclass
class App:
    server: grpc.aio.Server
    port: int
    ledger: Ledger
    health: health.aio.HealthServicer
    blocks: BlockBuilder
    block_pool: ThreadPoolExecutor

    async def stop(self, grace: float | None) -> None:
        """Stops taking calls, lets calls in flight finish for `grace` seconds, closes the store."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        self.block_pool.shutdown(wait=True)
        self.blocks.close()
        self.ledger.close()


class CachedSources:
    """What the block builder reads besides the episode log: the current beliefs and the map,
    from their caches, each turned into a view (rendered, counted) once per change: a view is
    kept while its cache hands out the very same rows or map object."""

    def __init__(self, beliefs: BeliefKeeper, maps: MapCache, counter: TokenCounter) -> None:
        self._beliefs = beliefs
        self._maps = maps
        self._counter = counter
        self._belief_views: dict[ChainKey, tuple[list[BeliefRow], BeliefView]] = {}
        self._map_views: dict[ChainKey, tuple[ChainMap, MapView]] = {}

    def belief_view(self, chain: ChainKey) -> BeliefView:
        rows = self._beliefs.current_rows.get(chain)
        cached = self._belief_views.get(chain)
        if cached is not None and cached[0] is rows:
            return cached[1]
        view = belief_view(rows, self._counter)
        _bounded_put(self._belief_views, chain, (rows, view))
        return view

    def map_view(self, chain: ChainKey) -> MapView:
        chain_map = self._maps.get(chain)
        cached = self._map_views.get(chain)
        if cached is not None and cached[0] is chain_map:
            return cached[1]
        view = MapView(chain_map, self._counter)
        _bounded_put(self._map_views, chain, (chain_map, view))
        return view


def _bounded_put(views: dict[ChainKey, T], chain: ChainKey, value: T) -> None:
    """Views live as long as their cached sources: at most CHAIN_CACHE_SIZE chains' worth."""
    if len(views) >= CHAIN_CACHE_SIZE and chain not in views:
        views.clear()
    views[chain] = value


def load_embedder(config: ServerConfig) -> Embedder:
    model_dir = config.model_dir or default_model_dir()
    return UseOnnxEmbedder(Path(model_dir) / MODEL_FILE_NAME)


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
    if config.tokens_file is None:
        if not is_loopback(config.listen):
            raise ConfigError(
                f"without --tokens the server runs in development mode, which binds loopback only; "
                f"{config.listen!r} is not a loopback address"
            )
        tokens = TokenBook.development()
    else:
        try:
            tokens = TokenBook.from_file(config.tokens_file)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
    credentials = _credentials(config)
    try:
        counter = load_counter(config.tokenizer)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc

    embedder = embedder or load_embedder(config)
    store = SqliteLedgerStore(config.database_path)
    key = ServerKey.load_or_create(config.data_dir)
    ledger = Ledger(store, embedder, VectorIndex(embedder.dim), key, counter)
    loaded, episodes = ledger.rebuild_caches()
    maps = MapCache(store, embedder)
    beliefs = BeliefKeeper(ledger, maps)
    passages = passage_cache(store, embedder.model_id)
    blocks = BlockBuilder(
        store,
        embedder,
        ledger.index,
        ledger.tables,
        counter,
        CachedSources(beliefs, maps, counter),
    )
    block_pool = ThreadPoolExecutor(BLOCK_THREADS, thread_name_prefix="block")
    stale = store.count_vectors_of_other_models(embedder.model_id)
    if stale:
        log.warning(
            "stored vectors of another embedding model are not searched",
            extra={"vectors": stale, "model": embedder.model_id},
        )

    options = [
        ("grpc.max_receive_message_length", config.max_message_bytes),
        ("grpc.max_send_message_length", config.max_message_bytes),
    ]
    server = grpc.aio.server(options=options)
    servicer = MemoryServicer(
        Parts(
            ledger=ledger,
            tokens=tokens,
            blocks=blocks,
            block_pool=block_pool,
            block_cap_seconds=config.block_cap_seconds,
            maps=maps,
            files=FileIngest(ledger, embedder, maps, passages),
            teacher=Teacher(ledger, maps),
            beliefs=beliefs,
            reporter=Reporter(ledger, maps),
            nightly=NightlyCycle(ledger, maps, beliefs.current_rows.invalidate),
            tracer=AnswerTracer(ledger, passages),
        )
    )
    pb_grpc.add_MemoryServicer_to_server(servicer, server)
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
        block_pool.shutdown()
        blocks.close()
        ledger.close()
        raise ConfigError(f"cannot listen on {config.listen}: {exc}") from exc
    await server.start()
    for name in ("", SERVICE_NAME):
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    log.info(
        "serving",
        extra={
            "listen": config.listen,
            "port": port,
            "tls": credentials is not None,
            "mode": "development" if tokens.is_development else "tokens",
            "data": str(config.data_dir),
            "model": embedder.model_id,
            "vectors_loaded": loaded,
            "episodes_loaded": episodes,
            "tokenizer": counter.name,
            "chains_indexed": ledger.index.chains(),
        },
    )
    if tokens.is_development:
        log.warning(
            f"development mode: no --tokens file, every call is tenant {DEV_TENANT!r}, "
            "loopback only; do not use it for real students"
        )
    return App(server, port, ledger, health_servicer, blocks, block_pool)


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
