"""The server's Prometheus metrics, in one registry per server (`--metrics-listen` serves it).

Every name is defined here and listed in the README's "Operating" section. Latencies are in
seconds. Labels stay few and bounded: the RPC name and status code, a block stage, an ingest
status, a cache's name, a tenant (only where quotas and stored episodes are per tenant: tenants
come from the tokens file, so there are as many as the operator configured).

Hooks for parts that report their own numbers: `watch_cache` (a cache's chains, bytes and
evictions, read at each scrape), `watch_entries` (a cache of a fixed number of entries: held and
bound), `watch_embedding_backlog` (episodes waiting to be embedded),
`watch_import_processes` (processes deriving imports' recall facts), `watch_file_processes`
(processes reading course files) and `watch_writes_waiting` (single writes waiting for the writer
thread).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

# Bounds of the latency histograms, in seconds: from a cached read (0.5 ms) past the block cap
# (2.5 s) to the slowest batch and file calls.
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
# Bounds of the block stage histogram: stages take tens of microseconds to a few milliseconds.
STAGE_BUCKETS = (
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0,
)  # fmt: skip
PREFIX = "tutor_memory"


@dataclass(frozen=True, slots=True)
class CacheReport:
    """What a cache holds now. `bytes` None: the cache cannot measure itself cheaply."""

    chains: int
    bytes: int | None
    evictions: int


CacheSource = Callable[[], CacheReport]


@dataclass(frozen=True, slots=True)
class EntriesReport:
    """What a cache bounded by its number of entries (not per chain) holds now, and its bound."""

    entries: int
    limit: int


EntriesSource = Callable[[], EntriesReport]


class _Watched(Collector):
    """Reads the watched caches, the backlog and the per-tenant counts at each scrape."""

    def __init__(self) -> None:
        self.caches: dict[str, CacheSource] = {}
        self.entries: dict[str, EntriesSource] = {}
        self.backlog: Callable[[], int] | None = None
        self.writes_waiting: Callable[[], int] | None = None
        self.import_processes: Callable[[], int] | None = None
        self.file_processes: Callable[[], int] | None = None
        self.tenant_episodes: Callable[[], dict[str, int]] | None = None
        self._lock = threading.Lock()

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            caches, entries = dict(self.caches), dict(self.entries)
            backlog, tenants = self.backlog, self.tenant_episodes
            writes_waiting, import_processes = self.writes_waiting, self.import_processes
            file_processes = self.file_processes
        chains = GaugeMetricFamily(
            f"{PREFIX}_cache_chains", "Chains whose derived data a cache holds", labels=["cache"]
        )
        held = GaugeMetricFamily(
            f"{PREFIX}_cache_bytes",
            "Bytes a cache holds (caches that measure themselves)",
            labels=["cache"],
        )
        evictions = CounterMetricFamily(
            f"{PREFIX}_cache_evictions",
            "Entries a cache dropped to stay within its bound",
            labels=["cache"],
        )
        for name, source in sorted(caches.items()):
            report = source()
            chains.add_metric([name], report.chains)
            if report.bytes is not None:
                held.add_metric([name], report.bytes)
            evictions.add_metric([name], report.evictions)
        yield from (chains, held, evictions)
        if entries:
            held_entries = GaugeMetricFamily(
                f"{PREFIX}_cache_entries",
                "Entries a cache of a fixed number of entries holds (not counted per chain)",
                labels=["cache"],
            )
            limits = GaugeMetricFamily(
                f"{PREFIX}_cache_entries_limit",
                "The most entries such a cache holds",
                labels=["cache"],
            )
            for name, entries_source in sorted(entries.items()):
                now = entries_source()
                held_entries.add_metric([name], now.entries)
                limits.add_metric([name], now.limit)
            yield from (held_entries, limits)
        if backlog is not None:
            yield GaugeMetricFamily(
                f"{PREFIX}_embedding_backlog",
                "Episodes accepted and waiting to be embedded",
                value=backlog(),
            )
        if writes_waiting is not None:
            yield GaugeMetricFamily(
                f"{PREFIX}_writes_waiting",
                "Single episode writes waiting for the writer thread to commit them",
                value=writes_waiting(),
            )
        if import_processes is not None:
            yield GaugeMetricFamily(
                f"{PREFIX}_import_processes",
                "Processes deriving batch imports' recall facts (0: the ingest thread does)",
                value=import_processes(),
            )
        if file_processes is not None:
            yield GaugeMetricFamily(
                f"{PREFIX}_file_processes",
                "Processes reading course files (0: the file thread does)",
                value=file_processes(),
            )
        if tenants is not None:
            stored = GaugeMetricFamily(
                f"{PREFIX}_tenant_episodes",
                "Episodes a tenant stores (what max_episodes is checked against)",
                labels=["tenant"],
            )
            for tenant, count in sorted(tenants().items()):
                stored.add_metric([tenant], count)
            yield stored


class Metrics:
    """Every metric of one server. Thread-safe (prometheus-client's metrics are)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.rpc_requests = Counter(
            f"{PREFIX}_rpc_requests", "Calls of the Memory service", ["rpc", "code"], registry=r
        )
        self.rpc_seconds = Histogram(
            f"{PREFIX}_rpc_duration_seconds",
            "Time from a call's arrival to its status",
            ["rpc", "code"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.block_stage_seconds = Histogram(
            f"{PREFIX}_block_stage_duration_seconds",
            "Time of each stage of building a memory block",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=r,
        )
        self.blocks_dropped = Counter(
            f"{PREFIX}_blocks_dropped",
            "Blocks not ready within the hard cap, answered empty with dropped=true",
            registry=r,
        )
        self.ingest_items = Counter(
            f"{PREFIX}_ingest_items",
            "IngestEpisodes items by their result",
            ["status"],
            registry=r,
        )
        self.quota_denials = Counter(
            f"{PREFIX}_quota_denials",
            "Calls refused with RESOURCE_EXHAUSTED by a tenant's quota",
            ["tenant", "limit"],
            registry=r,
        )
        self.nightly_last_run = Gauge(
            f"{PREFIX}_nightly_last_run_timestamp_seconds",
            "When the last nightly cycle (Consolidate) finished, Unix time",
            registry=r,
        )
        self.nightly_last_duration = Gauge(
            f"{PREFIX}_nightly_last_run_duration_seconds",
            "How long the last nightly cycle took",
            registry=r,
        )
        self.nightly_runs = Counter(
            f"{PREFIX}_nightly_runs", "Nightly cycles by outcome", ["outcome"], registry=r
        )
        self.ready = Gauge(
            f"{PREFIX}_ready", "1 while the readiness health check answers SERVING", registry=r
        )
        self.token_reloads = Counter(
            f"{PREFIX}_tokens_reloads",
            "Reloads of the tokens file on SIGHUP by outcome (applied, rejected)",
            ["outcome"],
            registry=r,
        )
        self._watched = _Watched()
        r.register(self._watched)
        self._http: WSGIServer | None = None

    # -- hooks for parts that report their own numbers ------------------------------------------

    def watch_cache(self, name: str, source: CacheSource) -> None:
        """Reports `source()` at each scrape as cache `name` (chains, bytes, evictions)."""
        self._watched.caches[name] = source

    def watch_entries(self, name: str, source: EntriesSource) -> None:
        """Reports `source()` at each scrape as cache `name` (entries held, and its bound)."""
        self._watched.entries[name] = source

    def watch_embedding_backlog(self, source: Callable[[], int]) -> None:
        """Reports `source()` at each scrape as the embedding backlog."""
        self._watched.backlog = source

    def watch_import_processes(self, source: Callable[[], int]) -> None:
        """Reports `source()` at each scrape as the import processes ready to derive facts."""
        self._watched.import_processes = source

    def watch_file_processes(self, source: Callable[[], int]) -> None:
        """Reports `source()` at each scrape as the processes reading course files."""
        self._watched.file_processes = source

    def watch_writes_waiting(self, source: Callable[[], int]) -> None:
        """Reports `source()` at each scrape as the single writes waiting for the writer thread."""
        self._watched.writes_waiting = source

    def watch_tenant_episodes(self, source: Callable[[], dict[str, int]]) -> None:
        self._watched.tenant_episodes = source

    # -- the endpoint ----------------------------------------------------------------------------

    def serve(self, host: str, port: int) -> int:
        """Serves /metrics over HTTP on a daemon thread; returns the bound port (port 0 picks
        one)."""
        server, _thread = start_http_server(port, addr=host, registry=self.registry)
        self._http = server
        return int(server.server_port)

    def stop(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
            self._http = None
