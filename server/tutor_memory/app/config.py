"""Server configuration: one place for every setting and its default."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from tutor_memory.domain.recall.levers import ALL_ON, RecallLevers
from tutor_memory.store.postgres.database import DEFAULT_POOL_SIZE

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_DATA_DIR = Path("data")
# Largest request or reply message; a larger one is refused with RESOURCE_EXHAUSTED by gRPC.
# Bounds what one call can make the server hold (an episode's text is at most 64 KiB); set above
# files.read.MAX_FILE_BYTES so that an IngestFile call up to that limit reaches the reader and an
# oversized file gets its precise INVALID_ARGUMENT.
DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024
# Seconds that calls in flight get to finish on SIGTERM before they are cancelled.
DEFAULT_GRACE_SECONDS = 10.0
DATABASE_FILE_NAME = "tutor_memory.sqlite3"
SNAPSHOT_DIR_NAME = "snapshots"
# Connection strings that select the PostgreSQL store (`--store`).
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
# The hard cap on building one memory block (SPEC R6.1, the design document's 2.5 s): past it the
# block is dropped rather than awaited. A call's own shorter deadline wins.
DEFAULT_BLOCK_CAP_SECONDS = 2.5
MIB = 1024 * 1024
# Memory for the chains' recall tables and vector indexes (app/resident.py): beyond it the least
# recently used chains are evicted. A 10k-episode chain takes about 25 MiB, a 100k one about 250
# (bench/results/memory.md), so the default holds a few large chains or many small ones.
DEFAULT_CACHE_BUDGET_MIB = 1024
# Processes that derive batch imports' recall facts (app/import_facts.py): one, on a machine of two
# cores, leaves the other to the server's own threads; the embedding queue works with what both
# leave (app/embedding_queue.py).
DEFAULT_IMPORT_PROCESSES = 1
# Processes that read course files (app/file_reading.py): one, since IngestFile reads one file at a
# time (executors.FILE_THREADS).
DEFAULT_FILE_PROCESSES = 1
# Seconds between two readiness probes of the store: how soon a load balancer hears that the
# store went away (or came back).
DEFAULT_READINESS_PROBE_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class ServerConfig:
    listen: str = DEFAULT_LISTEN
    data_dir: Path = DEFAULT_DATA_DIR
    # None: single-tenant development mode, loopback only.
    tokens_file: Path | None = None
    model_dir: Path | None = None
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    grace_seconds: float = DEFAULT_GRACE_SECONDS
    # PEM certificate chain and private key; both or neither (then plaintext, for loopback or
    # behind a TLS-terminating proxy).
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # The chat model's tokenizer.json; None counts with cl100k_base (see tokens.py).
    tokenizer: Path | None = None
    block_cap_seconds: float = DEFAULT_BLOCK_CAP_SECONDS
    cache_budget_bytes: int = DEFAULT_CACHE_BUDGET_MIB * MIB
    # A PostgreSQL connection string (postgresql://...); None: the SQLite file in data_dir. The
    # data directory still holds the server's signing key, which every node of one service
    # shares (docs/DEPLOYMENT.md).
    store: str | None = None
    # Whether reads first catch the caches up with writes of other processes (app/sync.py).
    # None: on for PostgreSQL, off for SQLite (on with several processes over one file).
    sync: bool | None = None
    # PostgreSQL connections this process keeps at most.
    pool_size: int = DEFAULT_POOL_SIZE
    # HOST:PORT of the Prometheus metrics endpoint (/metrics); None: not served.
    metrics_listen: str | None = None
    readiness_probe_seconds: float = DEFAULT_READINESS_PROBE_SECONDS
    # The file holding the master key that wraps the students' data keys; None: the
    # environment, else master.key in the data directory (store.masterkey).
    master_key_file: Path | None = None
    # Recall's levers turned off, to measure what each adds (benchmarks only; all on by default).
    recall_levers: RecallLevers = ALL_ON
    # Processes that derive batch imports' recall facts (app/import_facts.py); 0: the ingest
    # thread does.
    import_processes: int = DEFAULT_IMPORT_PROCESSES
    # Processes that read course files (app/file_reading.py), 0 or 1; 0: the file thread does.
    file_processes: int = DEFAULT_FILE_PROCESSES
    # This process's index among the processes of `serve --workers N`, which share its port;
    # None: a server alone on its port (a second one there fails to start).
    worker: int | None = None

    @property
    def database_path(self) -> Path:
        return self.data_dir / DATABASE_FILE_NAME

    @property
    def snapshot_dir(self) -> Path:
        """Where the chains' snapshot files are kept (index/snapshots.py)."""
        return self.data_dir / SNAPSHOT_DIR_NAME

    @property
    def uses_postgres(self) -> bool:
        return self.store is not None and self.store.startswith(POSTGRES_SCHEMES)

    @property
    def checks_other_writers(self) -> bool:
        return self.uses_postgres if self.sync is None else self.sync


def split_host_port(listen: str) -> tuple[str, int]:
    """HOST:PORT (IPv6 in brackets) as (host, port); raises ValueError naming the problem."""
    host, sep, port = listen.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{listen!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


def is_loopback(listen: str) -> bool:
    """Whether HOST:PORT names only this machine (127.0.0.0/8, ::1, localhost)."""
    host = listen.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
