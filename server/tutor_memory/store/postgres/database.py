"""Connections to PostgreSQL: one pool per server process, the start-up check, and what a call sees
when the database is busy or gone.

The store's protocols are synchronous and are called from the server's thread pools
(`app.executors`), so the store uses psycopg's synchronous `ConnectionPool`: each store call
borrows a connection on the thread that runs it. An async pool would need an event loop on
every one of those threads, or protocols that are async from the use cases down; the threads
already keep the event loop free, which is what an async driver would be for (docs/DEPLOYMENT.md).

Failures, as a caller sees them:
- the database cannot be reached (at start: the server refuses to start; while serving:
  UNAVAILABLE, and the next call after it returns succeeds, with no restart);
- every connection of the pool is busy: the call waits up to just before its deadline, then
  RESOURCE_EXHAUSTED.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from tutor_memory.domain.errors import DeadlineExceeded, ResourceExhausted, Unavailable
from tutor_memory.store.deadlines import seconds_left
from tutor_memory.store.postgres.migrate import migrate

log = logging.getLogger("tutor_memory.store.postgres")

# Connections a server process keeps open at most: its writer, readers, block builders and file
# thread each hold one at a time (app/executors.py), with room for a chain walk beside them.
DEFAULT_POOL_SIZE = 10
# Connections kept open while idle, so that a quiet node answers its next call without a connect.
POOL_MIN_SIZE = 2
# Seconds a connection attempt may take, at start and when probing a database that was lost.
CONNECT_TIMEOUT_SECONDS = 5.0
# Seconds a call without a deadline waits for a free connection before RESOURCE_EXHAUSTED.
DEFAULT_POOL_WAIT_SECONDS = 30.0

# Every statement is planned for its own parameters. A generic plan (PostgreSQL's choice after
# five executions of a prepared statement) cannot see that a client-key lookup names one key, and
# on a growing table whose statistics lag it walked a whole chain per key: 1-3 s per batch of 256
# at 20k episodes, against 2 ms planned each time.
SESSION_OPTIONS = "-c plan_cache_mode=force_custom_plan"

Connection = psycopg.Connection[tuple[Any, ...]]


class DatabaseUnreachable(Exception):
    """The server cannot start: the database named by the connection string cannot be used."""


def redacted(url: str) -> str:
    """The connection string without its password, for messages and logs."""
    try:
        params = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "<unparsable connection string>"
    if "password" in params:
        params["password"] = "***"
    return make_conninfo("", **params)


def _reason(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class Database:
    """The pool, and whether the database was last seen reachable."""

    def __init__(self, url: str, pool_size: int = DEFAULT_POOL_SIZE) -> None:
        self.url = url
        self.shown_url = redacted(url)
        try:
            with psycopg.connect(
                url, autocommit=True, connect_timeout=int(CONNECT_TIMEOUT_SECONDS)
            ) as conn:
                migrate(conn)
        except (psycopg.Error, RuntimeError) as exc:
            raise DatabaseUnreachable(
                f"cannot use PostgreSQL at {self.shown_url}: {_reason(exc)}"
            ) from exc
        self.pool: ConnectionPool[Connection] = ConnectionPool(
            url,
            min_size=min(POOL_MIN_SIZE, pool_size),
            max_size=pool_size,
            kwargs={"autocommit": True, "options": SESSION_OPTIONS},
            timeout=DEFAULT_POOL_WAIT_SECONDS,
            name="tutor-memory",
            open=False,
        )
        try:
            self.pool.open(wait=True, timeout=CONNECT_TIMEOUT_SECONDS)
        except PoolTimeout as exc:
            self.pool.close()
            raise DatabaseUnreachable(
                f"cannot open connections to PostgreSQL at {self.shown_url}"
            ) from exc
        # Set when a call found the database gone: later calls probe with one fresh connection
        # (refused at once while it is down) instead of waiting for the pool to give up.
        self._lost = threading.Event()

    def close(self) -> None:
        self.pool.close()

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A pooled autocommit connection for one store operation. Connection failures come out
        as Unavailable, an exhausted pool or a full disk as ResourceExhausted; other errors pass
        unchanged."""
        if self._lost.is_set():
            self._probe()
        wait = seconds_left(DEFAULT_POOL_WAIT_SECONDS)
        try:
            conn = self.pool.getconn(timeout=wait)
        except PoolTimeout:
            if wait <= 0:
                # The call came within the answer margin of its deadline and no connection was
                # idle: its time ran out, the pool was never waited on (a batch import, which
                # embeds after its commit, reaches the store within milliseconds).
                raise DeadlineExceeded(
                    "the call's deadline left no time to wait for a database connection"
                ) from None
            stats = self.pool.get_stats()
            if stats.get("pool_size", 0) < stats.get("pool_max", 0):
                # Connections are missing, not busy: the database may be gone.
                self._probe()
            raise ResourceExhausted(
                "every database connection stayed busy until the call's deadline; "
                "retry later or raise --pool-size"
            ) from None
        try:
            yield conn
        except psycopg.errors.DiskFull as exc:
            # Class 53: the server is up and could not extend a file. Not an outage: the call
            # says so, and readiness stays as it is.
            raise ResourceExhausted(
                "store: the database's disk is full; nothing was written (free space, then retry)"
            ) from exc
        except psycopg.OperationalError as exc:
            if conn.broken or conn.closed:
                self._lost.set()
            raise Unavailable(f"the database is unavailable: {_reason(exc)}") from exc
        finally:
            self.pool.putconn(conn)

    def ping(self) -> None:
        """A readiness probe: one fresh connection and one statement, beside the pool (a busy
        pool is not an unreachable database); when the database was lost, this is also what
        brings the pool back."""
        self._probe(query=True)

    def _probe(self, *, query: bool = False) -> None:
        """One fresh connection: Unavailable if it fails; if it works, the pool drops the
        connections the outage broke and calls go on."""
        try:
            with psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=max(1, int(min(CONNECT_TIMEOUT_SECONDS, seconds_left(2.0)))),
            ) as conn:
                if query:
                    conn.execute("SELECT 1").fetchone()
        except psycopg.Error as exc:
            self._lost.set()
            raise Unavailable(f"the database is unavailable: {_reason(exc)}") from exc
        if self._lost.is_set():
            self._lost.clear()
            self.pool.check()
            log.info("database reachable again", extra={"database": self.shown_url})
