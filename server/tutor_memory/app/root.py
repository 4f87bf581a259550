"""The one composition root: every part of the service built from a configuration, wired once.

`tutor-memory serve` (through `api.server`) and the offline CLI commands both build their parts
here, so there is one place that decides which store, model, pools, caches and use cases a
process runs with, and how the caches learn of changes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from tutor_memory.app.answers import AnswerTracer
from tutor_memory.app.beliefs import BeliefKeeper, current_beliefs_cache
from tutor_memory.app.blocks import BlockBuilder, Blocks
from tutor_memory.app.caches import ChainCache
from tutor_memory.app.changes import Change, ChangeHub
from tutor_memory.app.config import ServerConfig
from tutor_memory.app.embedding_queue import BACKLOG_RESCAN_SECONDS, EmbeddingQueue
from tutor_memory.app.episodes import Episodes
from tutor_memory.app.erasure import Eraser
from tutor_memory.app.executors import Executors, in_background, settle
from tutor_memory.app.file_reading import FileReader
from tutor_memory.app.files import FileIngest, passage_cache
from tutor_memory.app.import_facts import ImportFacts
from tutor_memory.app.ingest import BatchIngest
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.maps import MapCache
from tutor_memory.app.metrics import CacheReport, EntriesReport, Metrics
from tutor_memory.app.nightly import NightlyCycle
from tutor_memory.app.quotas import Quotas
from tutor_memory.app.reports import Reporter
from tutor_memory.app.resident import ResidentChains
from tutor_memory.app.shown_rows import ShownRows
from tutor_memory.app.sync import ChainSync
from tutor_memory.app.teaching import Teacher
from tutor_memory.app.telemetry import Telemetry
from tutor_memory.app.views import CachedSources
from tutor_memory.domain.recall.block_ids import BlockIds
from tutor_memory.domain.recall.block_text import DATES_KEPT, format_date
from tutor_memory.domain.recall.facts import FACTS_VERSION
from tutor_memory.domain.recall.timewords import warm_up as warm_up_time_words
from tutor_memory.domain.records import BeliefRow
from tutor_memory.domain.signing import ServerKey
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.index.recall_tables import RecallTables
from tutor_memory.index.snapshots import SnapshotFiles
from tutor_memory.index.vectors import VectorIndex
from tutor_memory.models.embedder import USE_DIM, USE_MODEL_ID, Embedder, load_embedder
from tutor_memory.models.tokenizers import load_counter
from tutor_memory.store.keyfile import load_or_create_server_key
from tutor_memory.store.masterkey import MasterKeyError, load_master_key
from tutor_memory.store.postgres.database import DatabaseUnreachable
from tutor_memory.store.postgres.store import PostgresStore
from tutor_memory.store.protocols import Store
from tutor_memory.store.sqlite.store import SqliteStore

log = logging.getLogger(__name__)


# What the block-id secret is derived for (domain.signing.ServerKey.secret_for).
BLOCK_ID_PURPOSE = "block-id"


class ConfigError(Exception):
    """The server cannot start with this configuration; the message says why."""


@dataclass(frozen=True, slots=True)
class Services:
    """The use cases, and the parts they share (exposed for start-up reporting and tests)."""

    episodes: Episodes
    ingest: BatchIngest
    blocks: Blocks
    files: FileIngest
    teacher: Teacher
    beliefs: BeliefKeeper
    reporter: Reporter
    nightly: NightlyCycle
    answers: AnswerTracer
    maps: MapCache
    store: Store
    embedder: Embedder
    vectors: VectorIndex
    tables: RecallTables
    counter: TokenCounter
    executors: Executors
    changes: ChangeHub
    key: ServerKey
    ledger: Ledger
    embedding: EmbeddingQueue
    resident: ResidentChains
    sync: ChainSync
    telemetry: Telemetry
    quotas: Quotas
    eraser: Eraser

    def close(self) -> None:
        """Stops the embedding queue (what it still holds is in the store without a vector and
        is embedded at the next start), waits for the work handed to the pools, stops the
        file-reading process, writes the snapshots of the large chains that changed, then closes
        the store."""
        self.resident.stop_warm_up()
        self.embedding.stop()
        self.ledger.close()
        self.executors.shutdown()
        self.files.close()
        self.vectors.close()
        self.resident.write_snapshots()
        self.store.close()


def open_store(config: ServerConfig, *, sealing: bool = True) -> Store:
    """The store a configuration names: PostgreSQL for a postgresql:// connection string, else the
    embedded SQLite file in the data directory; with the master key that opens its data keys
    (`sealing=False`: none, for verification only). Raises ConfigError when it cannot be used or
    the master key cannot be read."""
    if config.store is not None and not config.uses_postgres:
        raise ConfigError(
            f"--store takes a PostgreSQL connection string (postgresql://...), not "
            f"{config.store[:80]!r}; without --store the SQLite file in --data is used"
        )
    master = None
    if sealing:
        try:
            master = load_master_key(config.data_dir, config.master_key_file)
        except MasterKeyError as exc:
            raise ConfigError(str(exc)) from exc
    if config.store is None:
        return SqliteStore(config.database_path, master)
    try:
        return PostgresStore(config.store, master, pool_size=config.pool_size)
    except DatabaseUnreachable as exc:
        raise ConfigError(str(exc)) from exc


def _check_master_key(store: Store, config: ServerConfig) -> None:
    """Refuses to start with a master key that did not wrap every stored data key (a wrong key
    file, or a rotation not finished): every read of those students' words would fail."""
    given = load_master_key(config.data_dir, config.master_key_file).key_id
    others = {k: n for k, n in store.master_key_ids().items() if k != given}
    if others:
        store.close()
        found = ", ".join(f"{n} by master key {k}" for k, n in sorted(others.items()))
        raise ConfigError(
            f"data keys are wrapped by another master key than the one given ({given}): {found}; "
            "start with the master key the data was written with, or finish the rotation "
            "(tutor-memory rotate-master-key)"
        )


def build_services(
    config: ServerConfig,
    *,
    embedder: Embedder | Future[Embedder] | None = None,
    telemetry: Telemetry | None = None,
    quotas: Quotas | None = None,
    warm_up: bool = False,
) -> Services:
    """Opens the store and loads the model and the caches. `embedder` is a model loaded already
    (tests share one between servers) or one loading (`serve` starts that load before it imports
    the server); `telemetry` is where the use cases report and `quotas` the per-tenant
    limits the server's call gate applies (fresh ones by default). With `warm_up` (a server
    starting), the chains that have a snapshot start loading as soon as the store is open
    (`ResidentChains.warm_up`), beside the model's load. Raises ConfigError for a configuration
    that cannot work."""
    # The tokenizer and the model load side by side (both mostly native code): start-up waits
    # for the slower of the two instead of their sum. The pinned model's id and dimension are
    # known before it loads, so the store and the chains' caches open meanwhile.
    if config.import_processes < 0:
        raise ConfigError(f"--import-processes must be at least 0, got {config.import_processes}")
    if config.file_processes not in (0, 1):
        raise ConfigError(f"--file-processes must be 0 or 1, got {config.file_processes}")
    counting = in_background(load_counter, config.tokenizer)
    loading: Future[Embedder] | None = None
    if isinstance(embedder, Future):
        loading, embedder = embedder, None
    elif embedder is None:
        loading = in_background(load_embedder, config.model_dir)
    model_id, dim = (
        (USE_MODEL_ID, USE_DIM) if embedder is None else (embedder.model_id, embedder.dim)
    )
    telemetry = telemetry or Telemetry()
    try:
        try:
            counter = counting.result()
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        store = open_store(config)
        try:
            _check_master_key(store, config)
            key = load_or_create_server_key(config.data_dir)
        except BaseException:
            store.close()
            raise
    except BaseException:
        # The process exits after a failed start; exiting while the model still loads on
        # another thread can abort it (SIGABRT from the runtime's threads) instead of exiting
        # with the start's status.
        settle(loading)
        raise
    executors = Executors()
    changes = ChangeHub()
    vectors = VectorIndex(dim)
    tables = RecallTables()
    resident = ResidentChains(
        store,
        tables,
        vectors,
        counter,
        model_id,
        executors.bulk_writer,
        budget_bytes=config.cache_budget_bytes,
        # Of the workers sharing a data directory, only the first writes snapshots.
        snapshots=SnapshotFiles(
            config.snapshot_dir, model_id, FACTS_VERSION, writes=not config.worker
        ),
    )
    sync = ChainSync(
        store, resident, counter, changes, model_id, check_store=config.checks_other_writers
    )
    if warm_up:
        resident.warm_up()
    # The date library compiles each language's patterns on first use: here, not in a turn.
    warm_up_time_words()
    if loading is not None:
        try:
            embedder = loading.result()
        except BaseException:
            resident.stop_warm_up()
            executors.shutdown()
            store.close()
            raise
    assert embedder is not None
    assert embedder.model_id == model_id
    # With other writers, an idle queue also takes up what a dead node left unembedded.
    rescan = BACKLOG_RESCAN_SECONDS if config.checks_other_writers else None
    embedding = EmbeddingQueue(
        store, embedder, executors, resident.add_vectors, rescan_seconds=rescan
    )
    import_facts = ImportFacts(
        counter, executors.ingest, tokenizer=config.tokenizer, processes=config.import_processes
    )
    ledger = Ledger(store, embedder, sync, counter, executors, changes, embedding, import_facts)

    # With other writers, every read of a derived cache first checks the chain's head.
    fresh = sync.refresh if sync.check_store else None
    maps = MapCache(store, embedder, fresh=fresh)
    current_beliefs = current_beliefs_cache(store, fresh)
    passages = passage_cache(store, embedder.model_id, fresh)
    # Every cache of derived data, with the changes that make it stale.
    changes.subscribe(
        Change.FILES | Change.TEACHING | Change.CONFIRMATIONS | Change.ERASED, maps.invalidate
    )
    changes.subscribe(Change.BELIEFS | Change.ERASED, current_beliefs.invalidate)
    changes.subscribe(Change.FILES | Change.ERASED, passages.invalidate)

    # Block ids carry what their block showed, sealed under a secret of the server's key.
    block_ids = BlockIds(key.secret_for(BLOCK_ID_PURPOSE))
    beliefs = BeliefKeeper(ledger, store, maps, executors)
    teacher = Teacher(ledger, maps, executors)
    sources = CachedSources(current_beliefs, maps, counter)
    builder = BlockBuilder(
        store,
        embedder,
        vectors,
        tables,
        counter,
        executors,
        block_ids,
        sources,
        config.recall_levers,
    )
    answers = AnswerTracer(ledger, store, passages, block_ids, executors)
    # Caches that are not per-chain ChainCaches, dropped when a student is erased (the held
    # recall table, vector index and snapshot files by ResidentChains.forget; the blocks' views
    # of maps and beliefs leave with them).
    for forget in (beliefs.forget, answers.forget, builder.forget, resident.forget):
        changes.subscribe(Change.ERASED, forget)
    # Stored episodes per tenant, for the quotas: counted from the store at start
    # (`Quotas.set_episode_counts`), then by every commit.
    quotas = quotas or Quotas()
    ledger.on_commit(quotas.count_inserted)
    _watch(telemetry.metrics, vectors, tables, resident, maps, current_beliefs, passages, quotas)
    _watch_entries(telemetry.metrics, builder.shown_rows)
    groups = beliefs.check_groups
    telemetry.metrics.watch_cache(
        "check_groups", lambda: CacheReport(len(groups), groups.weight, groups.evictions)
    )
    if sync.check_store:
        telemetry.metrics.watch_cache(
            "followed_chains", lambda: CacheReport(sync.followed(), None, sync.unfollowed)
        )
    telemetry.metrics.watch_embedding_backlog(embedding.pending)
    telemetry.metrics.watch_import_processes(import_facts.ready_processes)
    file_reader = FileReader(processes=config.file_processes)
    telemetry.metrics.watch_file_processes(file_reader.running_processes)
    telemetry.metrics.watch_writes_waiting(ledger.writes_waiting)
    return Services(
        episodes=Episodes(ledger, store, key, beliefs, teacher, executors),
        ingest=BatchIngest(ledger, beliefs, telemetry),
        blocks=Blocks(builder, executors, config.block_cap_seconds, telemetry, sync=sync),
        files=FileIngest(
            ledger,
            store,
            embedder,
            maps,
            passages,
            executors,
            file_reader,
        ),
        teacher=teacher,
        beliefs=beliefs,
        reporter=Reporter(store, maps, executors),
        nightly=NightlyCycle(ledger, store, maps, executors, telemetry),
        answers=answers,
        maps=maps,
        store=store,
        embedder=embedder,
        vectors=vectors,
        tables=tables,
        counter=counter,
        executors=executors,
        changes=changes,
        key=key,
        ledger=ledger,
        embedding=embedding,
        resident=resident,
        sync=sync,
        telemetry=telemetry,
        quotas=quotas,
        eraser=Eraser(store, vectors, tables, changes, executors),
    )


def _watch(
    metrics: Metrics,
    vectors: VectorIndex,
    tables: RecallTables,
    resident: ResidentChains,
    maps: MapCache,
    current_beliefs: ChainCache[list[BeliefRow]],
    passages: ChainCache[Any],
    quotas: Quotas,
) -> None:
    """Every cache the metrics report (tutor_memory_cache_*), and the per-tenant counts. The
    vector index and the recall tables hold the chains in memory (app/resident.py), which leave
    together under the memory budget: both report its evictions; the per-chain caches of derived
    data are bounded in chains and in bytes, and report both."""
    metrics.watch_cache(
        "vectors",
        lambda: CacheReport(vectors.chains(), vectors.vector_bytes(), resident.evictions()),
    )
    metrics.watch_cache(
        "recall_tables",
        lambda: CacheReport(len(tables), tables.array_bytes(), resident.evictions()),
    )
    for name, cache in (
        ("maps", maps.cache),
        ("beliefs", current_beliefs),
        ("passages", passages),
    ):
        metrics.watch_cache(name, _lru_report(cache))
    metrics.watch_tenant_episodes(quotas.episode_counts)


def _watch_entries(metrics: Metrics, shown_rows: ShownRows) -> None:
    """The caches of a fixed number of entries that blocks fill across all chains
    (tutor_memory_cache_entries): the rows they showed and those rows' dates. Outside the memory
    budget, they fill as blocks show new turns until their bound."""
    metrics.watch_entries("shown_rows", lambda: EntriesReport(len(shown_rows), shown_rows.limit))
    metrics.watch_entries(
        "dates", lambda: EntriesReport(format_date.cache_info().currsize, DATES_KEPT)
    )


def _lru_report(cache: ChainCache[Any]) -> Callable[[], CacheReport]:
    return lambda: CacheReport(len(cache), cache.bytes, cache.evictions)
