"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb and pg_ctl in a temporary
directory, on a free loopback port, run as an unprivileged user (PostgreSQL refuses to run as root,
and CI runs as root: then the commands run as the `postgres` system user the Debian package
creates, through runuser).

A missing PostgreSQL is an error with the way to install it, never a skip: the suite runs against
both stores or it fails.
"""

from __future__ import annotations

import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg

# Where Debian's postgresql-15 puts its server binaries; TUTOR_MEMORY_PG_BIN overrides it.
PG_BIN = Path(os.environ.get("TUTOR_MEMORY_PG_BIN", "/usr/lib/postgresql/15/bin"))
# The user the cluster runs as when the tests run as root.
PG_SYSTEM_USER = "postgres"
# Seconds pg_ctl waits for the cluster to start or stop.
PG_CTL_TIMEOUT = 60
# Enough for every node and pool a test opens at once, plus the harness's own connections.
MAX_CONNECTIONS = 300

MISSING = (
    "PostgreSQL 15 is needed by the test suite (both stores are tested) and was not found at "
    f"{PG_BIN}: run `make postgres` (apt-get install postgresql-15), or point "
    "TUTOR_MEMORY_PG_BIN at its bin directory"
)


class PostgresMissing(RuntimeError):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


# How many ports `free_ports` tries before giving up.
FREE_PORT_TRIES = 50


def free_ports(count: int) -> int:
    """The first of `count` consecutive ports that are all free now (several server workers each
    listen on the given metrics port plus their index: a free first port says nothing of the
    next, which another process may hold)."""
    for _ in range(FREE_PORT_TRIES):
        first = free_port()
        held: list[socket.socket] = []
        try:
            for port in range(first, first + count):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                held.append(s)
                s.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise RuntimeError(f"no {count} consecutive free ports in {FREE_PORT_TRIES} tries")


class PostgresCluster:
    """One cluster in its own temporary directory. `durable=False` (tests) turns fsync off: the
    tests kill server processes, never the machine, so what PostgreSQL acknowledged survives
    anyway. Benchmarks use `durable=True`, PostgreSQL's defaults, to compare fairly with SQLite's
    synchronous=FULL."""

    def __init__(self, *, durable: bool = False) -> None:
        if not (PG_BIN / "initdb").exists() or not (PG_BIN / "pg_ctl").exists():
            raise PostgresMissing(MISSING)
        self.durable = durable
        self.port = free_port()
        self._as_root = os.geteuid() == 0
        if self._as_root:
            try:
                self._user = pwd.getpwnam(PG_SYSTEM_USER)
            except KeyError:
                raise PostgresMissing(
                    f"running as root, the tests start PostgreSQL as the {PG_SYSTEM_USER!r} "
                    "system user, which does not exist: install postgresql-15 (make postgres)"
                ) from None
        self.root = Path(tempfile.mkdtemp(prefix="tutor-memory-pg-"))
        self.data = self.root / "data"
        self.socket_dir = self.root / "socket"
        self.socket_dir.mkdir()
        if self._as_root:
            for path in (self.root, self.socket_dir):
                os.chown(path, self._user.pw_uid, self._user.pw_gid)
        self._names = itertools.count(1)
        self._initdb()

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        command = list(args)
        if self._as_root:
            command = ["runuser", "-u", PG_SYSTEM_USER, "--", *command]
        return subprocess.run(command, capture_output=True, text=True, check=False, cwd=self.root)

    def _check(self, result: subprocess.CompletedProcess[str], what: str) -> None:
        if result.returncode != 0:
            raise RuntimeError(
                f"{what} failed ({result.returncode}):\n{result.stdout}{result.stderr}"
            )

    def _initdb(self) -> None:
        result = self._run(
            str(PG_BIN / "initdb"), "-D", str(self.data), "--auth=trust", "--encoding=UTF8",
            "--locale=C", "--username=postgres", "--no-sync",
        )  # fmt: skip
        self._check(result, "initdb")
        settings = [
            "listen_addresses = '127.0.0.1'",
            f"port = {self.port}",
            f"unix_socket_directories = '{self.socket_dir}'",
            f"max_connections = {MAX_CONNECTIONS}",
            "shared_buffers = 128MB",
        ]
        if not self.durable:
            settings += ["fsync = off", "synchronous_commit = off", "full_page_writes = off"]
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("\n# tutor-memory test cluster\n" + "\n".join(settings) + "\n")

    def start(self) -> None:
        result = self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
            "-w", "-t", str(PG_CTL_TIMEOUT), "start",
        )  # fmt: skip
        self._check(result, "pg_ctl start")

    def stop(self, mode: str = "fast") -> None:
        result = self._run(
            str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w",
            "-t", str(PG_CTL_TIMEOUT), "stop",
        )  # fmt: skip
        self._check(result, "pg_ctl stop")

    def running(self) -> bool:
        return self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "status").returncode == 0

    def url(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def create_database(self, prefix: str = "t") -> str:
        """A new empty database; returns its connection string."""
        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def destroy(self) -> None:
        if self.running():
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def wait_until_accepting(url: str, timeout: float = 30.0) -> None:
    """Blocks until a connection to `url` succeeds (after a restart)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(url, connect_timeout=2):
                return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
