"""The embedded SQLite ledger store: every SQLite-specific statement of the project lives here.

Durability: WAL journal with synchronous=FULL, so a committed transaction survives a power cut or
a kill -9, and the service acknowledges a write only after its transaction committed.

Sealing (domain/sealing.py): an episode's words are sealed with its student's data key before the
row is hashed and inserted, and opened when a row is read for its content; `iter_links` reads rows
as the hash sees them and opens nothing (verification needs no key). An erased student's chains
are absent to every content read and refuse writes.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.chain import GENESIS_HASH, recompute
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import (
    ChainKey,
    Check,
    Evidence,
    Kind,
    Outcome,
    Quiz,
    StoredEpisode,
    embedding_text,
)
from tutor_memory.domain.erasure import (
    Erasure,
    ErasureOutcome,
    check_erasable,
    erased_message,
)
from tutor_memory.domain.errors import (
    FailedPrecondition,
    NotFound,
    ResourceExhausted,
    TutorMemoryError,
    Unavailable,
)
from tutor_memory.domain.recall.facts import FACTS_VERSION, RecallFacts, stems_from_text
from tutor_memory.domain.records import (
    BeliefRow,
    ChainVectors,
    DayDigest,
    FileVersion,
    MemoryRow,
    NewBelief,
    NewFileVersion,
    NightlyState,
    StoredPassage,
    WrittenDigest,
)
from tutor_memory.domain.sealing import NO_WORDS, DataKey, MasterKey, Words, episode_ad
from tutor_memory.store import codec
from tutor_memory.store.keyring import KeyRing
from tutor_memory.store.lru import CHAIN_IDS_KEPT, LruCache
from tutor_memory.store.protocols import (
    Annotation,
    AppendOutcome,
    AppendStatus,
    ChainHead,
    ChainRecall,
    PreparedEpisode,
    StoredRecall,
    Unembedded,
)
from tutor_memory.store.sqlite import side_rows as side
from tutor_memory.store.sqlite import transfer
from tutor_memory.store.sqlite.migrate import migrate

log = logging.getLogger("tutor_memory.store.sqlite")

# The primary result code in SQLite's extended ones (SQLITE_BUSY_RECOVERY is SQLITE_BUSY | 1<<8).
PRIMARY_CODE = 0xFF

# How long a connection waits for another's lock before failing (another server process of
# `serve --workers`, or an offline CLI tool).
BUSY_TIMEOUT_MS = 10_000
# A write transaction that finds another process holding the write lock retries after this
# pause, doubled up to WRITE_RETRY_MAX_S (see `_begin_write`).
WRITE_RETRY_FIRST_S = 0.000_5
WRITE_RETRY_MAX_S = 0.005

_EPISODE_COLUMNS = (
    "e.episode_id, c.tenant, c.student, c.subject, e.seq, e.kind, e.summary, e.text, e.concepts, "
    "e.salience, e.occurred_at, e.recorded_at, e.evidence, e.check_outcome, e.check_topic, "
    "e.predicted_mastery, e.quiz_correct, e.quiz_total, e.client_key, e.prev_hash, e.hash, "
    "e.sealed"
)
_EPISODE_FROM = "episodes e JOIN chains c ON c.chain_id = e.chain_id"
# Rows of _EPISODE_FROM whose student was not erased: an erasure deletes the vectors, and the
# embedding queue must not take the student's episodes for ones still waiting for theirs.
_NOT_ERASED = (
    "NOT EXISTS (SELECT 1 FROM erasures x WHERE x.tenant = c.tenant AND x.student = c.student)"
)


def _begin_write(conn: sqlite3.Connection) -> None:
    """BEGIN IMMEDIATE, waiting for another process's write lock in steps of at most
    WRITE_RETRY_MAX_S. SQLite's own busy handler sleeps in steps that grow to 100 ms, which,
    with several server processes on one file, gave appends a tail of hundreds of milliseconds
    behind transactions that hold the lock for a few."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = WRITE_RETRY_FIRST_S
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        while True:
            try:
                conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                busy = exc.sqlite_errorcode & PRIMARY_CODE == sqlite3.SQLITE_BUSY
                if not busy or time.monotonic() > deadline:
                    raise
            time.sleep(pause)
            pause = min(2 * pause, WRITE_RETRY_MAX_S)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")


def _write_refused(exc: sqlite3.OperationalError) -> TutorMemoryError | None:
    """What a caller is told when SQLite refused a write for a reason of the machine, not of the
    request (None: any other error, a fault of the server). Nothing of the transaction stays."""
    code = exc.sqlite_errorcode & PRIMARY_CODE
    if code == sqlite3.SQLITE_FULL:
        return ResourceExhausted(
            "store: the database's disk is full; nothing was written (free space, then retry)"
        )
    if code == sqlite3.SQLITE_BUSY:
        return Unavailable(
            f"store: another process held the database's write lock for over "
            f"{BUSY_TIMEOUT_MS // 1000} s; nothing was written (retry)"
        )
    if code == sqlite3.SQLITE_IOERR:
        return Unavailable(
            "store: the database file could not be written (an I/O error; the server log has "
            "it); nothing was written"
        )
    return None


def _refuse(exc: sqlite3.OperationalError) -> None:
    """Raises the status `_write_refused` gives `exc`, logged; returns for any other error."""
    refused = _write_refused(exc)
    if refused is not None:
        log.warning("store refused a write", extra={"reason": str(exc)})
        raise refused from exc


@contextmanager
def _write_transaction(conn: sqlite3.Connection, undo: Callable[[], None]) -> Iterator[None]:
    """BEGIN IMMEDIATE, the block, COMMIT; or ROLLBACK and `undo()` (what the block did outside
    the database) when it raises. A write the machine refused comes out as its status."""
    try:
        _begin_write(conn)
    except sqlite3.OperationalError as exc:
        _refuse(exc)
        raise
    try:
        yield
        conn.execute("COMMIT")
    except BaseException as exc:
        try:
            # SQLite ends the transaction itself on some errors (a full disk): a ROLLBACK then
            # would fail, and hide the error.
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        finally:
            undo()
        if isinstance(exc, sqlite3.OperationalError):
            _refuse(exc)
        raise


def _nothing_to_undo() -> None:
    """For a transaction that changes nothing outside the database."""


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _to_i64(value: int) -> int:
    """A 64-bit unsigned key as SQLite's signed INTEGER holds it."""
    return value - (1 << 64) if value >= 1 << 63 else value


def _from_i64(value: int) -> int:
    return value + (1 << 64) if value < 0 else value


_INSERT_FACTS = (
    "INSERT INTO recall_facts (episode_id, chain_id, version, dup_key, tokens, flagged, "
    "language, stems) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (episode_id) DO UPDATE SET "
    "version = excluded.version, dup_key = excluded.dup_key, tokens = excluded.tokens, "
    "flagged = excluded.flagged, language = excluded.language, stems = excluded.stems"
)


def _facts_row(episode_id: int, chain_id: int, facts: RecallFacts) -> tuple[object, ...]:
    return (
        episode_id,
        chain_id,
        FACTS_VERSION,
        _to_i64(facts.dup_key),
        facts.tokens,
        int(facts.flagged),
        facts.language,
        facts.stems_text(),
    )


def _insert_facts(
    conn: sqlite3.Connection, episode_id: int, chain_id: int, facts: RecallFacts
) -> None:
    """Stores one episode's recall facts (the import of store/transfer.py)."""
    conn.execute(_INSERT_FACTS, _facts_row(episode_id, chain_id, facts))


def _json_list(values: Sequence[object]) -> str:
    """A JSON array as stored; most episodes have no concepts and no evidence."""
    return json.dumps(list(values), ensure_ascii=False) if values else "[]"


def _stored(
    episode_id: int,
    item: PreparedEpisode,
    seq: int,
    prev_hash: bytes,
    recorded_at_us: int,
    sealed: bytes,
) -> StoredEpisode:
    """The episode with its words, its hash linked to `prev_hash` over the row as it is stored:
    its word columns empty, the words in `sealed` only (the id is not hashed)."""
    ep = item.episode
    unsaved = StoredEpisode(
        episode_id=0,
        chain=ep.chain,
        seq=seq,
        kind=ep.kind,
        summary=ep.summary,
        text=ep.text,
        concepts=ep.concepts,
        salience=ep.salience,
        occurred_at_us=ep.occurred_at_us,
        recorded_at_us=recorded_at_us,
        evidence=ep.evidence,
        check=ep.check,
        quiz=ep.quiz,
        client_key=ep.client_key,
        prev_hash=prev_hash,
        hash=b"",
        sealed=sealed,
    )
    as_stored = codec.without_words(unsaved)
    return dataclasses.replace(unsaved, episode_id=episode_id, hash=recompute(as_stored, prev_hash))


def _episode_row(ep: StoredEpisode, chain_id: int) -> tuple[object, ...]:
    """The row to insert: the words are in `sealed` only."""
    check, quiz = ep.check, ep.quiz
    return (
        ep.episode_id,
        chain_id,
        ep.seq,
        ep.kind.value,
        NO_WORDS.summary,
        NO_WORDS.text,
        _json_list(NO_WORDS.concepts),
        ep.salience,
        ep.occurred_at_us,
        ep.recorded_at_us,
        _json_list([[e.file_id, e.page, e.file_fingerprint] for e in ep.evidence]),
        check.outcome.value if check else "",
        "",
        check.predicted_mastery if check else None,
        quiz.correct if quiz else 0,
        quiz.total if quiz else 0,
        ep.client_key,
        ep.prev_hash,
        ep.hash,
        ep.sealed,
    )


def _cited(evidence_json: str) -> tuple[tuple[str, str], ...]:
    return tuple(dict.fromkeys((f, h) for f, _page, h in json.loads(evidence_json)))


def _row_to_episode(row: Sequence[Any], words: Words | None = None) -> StoredEpisode:
    """The row as stored (a sealed row's words empty), or with `words` opened from it."""
    (
        episode_id, tenant, student, subject, seq, kind, summary, text, concepts, salience,
        occurred_at, recorded_at, evidence, check_outcome, check_topic, predicted_mastery,
        quiz_correct, quiz_total, client_key, prev_hash, hash_, sealed,
    ) = row  # fmt: skip
    kind_ = Kind(kind)
    if words is None:
        words = Words(summary, text, tuple(json.loads(concepts)), check_topic)
    return StoredEpisode(
        episode_id=episode_id,
        chain=ChainKey(tenant, student, subject),
        seq=seq,
        kind=kind_,
        summary=words.summary,
        text=words.text,
        concepts=words.concepts,
        salience=salience,
        occurred_at_us=occurred_at,
        recorded_at_us=recorded_at,
        evidence=tuple(Evidence(f, p, h) for f, p, h in json.loads(evidence)),
        check=Check(Outcome(check_outcome), words.topic, predicted_mastery)
        if check_outcome
        else None,
        quiz=Quiz(quiz_correct, quiz_total) if kind_ is Kind.QUIZ else None,
        client_key=client_key,
        prev_hash=prev_hash,
        hash=hash_,
        sealed=sealed,
    )


def _derived_rows_of(table: str) -> str:
    """The condition naming one chain's rows of a table an erasure empties (codec.DERIVED_TABLES),
    with the chain id as its parameter."""
    if table == codec.ROWS_BY_EPISODE:
        return "episode_id IN (SELECT episode_id FROM episodes WHERE chain_id = ?)"
    return "chain_id = ?"


class SqliteStore:
    """One database file per server. Safe for one writer thread and many reader threads."""

    def __init__(self, path: Path, master_key: MasterKey | None = None) -> None:
        """`master_key` opens the students' data keys; without it the store can verify chains
        (`iter_links`) but neither write episodes nor read their words."""
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._writer = _connect(path)
        # What a delete frees is overwritten with zeros, not left in the file's free pages: an
        # erasure's deletes must not leave the words they removed readable on disk.
        self._writer.execute("PRAGMA secure_delete = ON")
        migrate(self._writer)
        self._keys = KeyRing(master_key)
        self._erased: dict[tuple[str, str], Erasure] = {
            (r[0], r[1]): codec.erasure_from_row(r)
            for r in self._writer.execute(f"SELECT {codec.ERASURE_COLUMNS} FROM erasures")
        }
        self._write_lock = threading.Lock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        # Chains are never removed, so a chain id once seen stays valid; the recently used ones
        # are kept (one indexed read brings back one that left).
        self._chain_ids: LruCache[ChainKey, int] = LruCache(CHAIN_IDS_KEPT)

    # -- connections ---------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = _connect(self.path)
            self._local.conn = conn
            with self._readers_lock:
                self._readers.append(conn)
        return conn

    def close(self) -> None:
        with self._readers_lock:
            for conn in self._readers:
                conn.close()
            self._readers.clear()
        with self._write_lock:
            self._writer.close()

    def _chain_id(
        self,
        conn: sqlite3.Connection,
        chain: ChainKey,
        *,
        made: dict[ChainKey, int] | None = None,
    ) -> int | None:
        """The chain's id; None when it has none or its student was erased (then every content
        read finds nothing, and a write is refused). A write passes `made`, the chains its
        transaction made: a chain without a row is made and recorded there, and kept with the
        others only after COMMIT (a rolled-back chain row must not be reused)."""
        erased = self._erased.get((chain.tenant, chain.student))
        if erased is not None:
            if made is not None:
                raise FailedPrecondition(erased_message(erased.student, erased.erased_at_us))
            return None
        known = made.get(chain) if made is not None else None
        if known is None:
            known = self._chain_ids.get(chain)
        if known is not None:
            return known
        row = conn.execute(
            "SELECT chain_id FROM chains WHERE tenant = ? AND student = ? AND subject = ?",
            (chain.tenant, chain.student, chain.subject),
        ).fetchone()
        if row is None:
            if made is None:
                return None
            cur = conn.execute(
                "INSERT INTO chains (tenant, student, subject) VALUES (?, ?, ?)",
                (chain.tenant, chain.student, chain.subject),
            )
            chain_id = cur.lastrowid
            assert chain_id is not None
            made[chain] = chain_id
            return chain_id
        self._chain_ids.put(chain, int(row[0]))
        return int(row[0])

    # -- writes --------------------------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[SqliteWriter]:
        """One write transaction: everything done through the writer commits together at the
        end of the block, or nothing does."""
        with self._write_lock:
            conn = self._writer
            # A refused write must not leave the data keys it made cached as if stored.
            with _write_transaction(conn, self._keys.rollback):
                writer = SqliteWriter(self, conn)
                yield writer
            self._keys.commit()
            self._chain_ids.put_many(list(writer.new_chains.items()))

    def append(
        self, items: Sequence[PreparedEpisode], *, model_id: str, recorded_at_us: int
    ) -> list[AppendOutcome]:
        with self.writing() as w:
            return w.append(items, model_id=model_id, recorded_at_us=recorded_at_us)

    def _append_in_transaction(
        self,
        conn: sqlite3.Connection,
        items: Sequence[PreparedEpisode],
        model_id: str,
        recorded_at_us: int,
        known_new: dict[ChainKey, int],
    ) -> tuple[list[AppendOutcome], dict[ChainKey, int]]:
        """The rows of every item are built first and written with one statement per table:
        an import's chunk costs a few statements, not three per episode. Episode ids are given
        here, from the table's highest (this transaction holds the only write lock)."""
        new_chains: dict[ChainKey, int] = dict(known_new)
        chain_ids: list[int] = []
        for item in items:
            chain = item.episode.chain
            chain_id = self._chain_id(conn, chain, made=new_chains)
            assert chain_id is not None
            chain_ids.append(chain_id)
        # Stored episodes by (chain, client key): those stored before, and those of this call.
        keyed = self._by_client_keys(conn, chain_ids, items)
        heads: dict[int, tuple[int, bytes]] = {}
        (next_id,) = conn.execute(
            "SELECT coalesce(max(episode_id), 0) + 1 FROM episodes"
        ).fetchone()
        episode_rows: list[tuple[object, ...]] = []
        fact_rows: list[tuple[object, ...]] = []
        vector_rows: list[tuple[object, ...]] = []
        outcomes: list[AppendOutcome] = []
        for item, chain_id in zip(items, chain_ids, strict=True):
            ep = item.episode
            existing = keyed.get((chain_id, ep.client_key)) if ep.client_key else None
            if existing is not None:
                if ep.same_content(existing):
                    outcomes.append(AppendOutcome(AppendStatus.DUPLICATE, existing))
                else:
                    outcomes.append(
                        AppendOutcome(
                            AppendStatus.CONFLICT,
                            existing,
                            f"client_key: {ep.client_key!r} is already stored with different "
                            f"content (episode {existing.episode_id})",
                        )
                    )
                continue
            if chain_id not in heads:
                row = conn.execute(
                    "SELECT seq, hash FROM episodes WHERE chain_id = ? ORDER BY seq DESC LIMIT 1",
                    (chain_id,),
                ).fetchone()
                heads[chain_id] = (0, GENESIS_HASH) if row is None else (row[0], row[1])
            last_seq, prev_hash = heads[chain_id]
            key = self._data_key(conn, ep.chain.tenant, ep.chain.student, create=True)
            words = Words(ep.summary, ep.text, ep.concepts, ep.check.topic if ep.check else "")
            sealed = key.seal(episode_ad(ep.chain, last_seq + 1, ep.kind.value), words)
            stored = _stored(next_id, item, last_seq + 1, prev_hash, recorded_at_us, sealed)
            next_id += 1
            heads[chain_id] = (stored.seq, stored.hash)
            episode_rows.append(_episode_row(stored, chain_id))
            fact_rows.append(_facts_row(stored.episode_id, chain_id, item.facts))
            if item.vector is not None:
                vector = np.ascontiguousarray(item.vector, dtype=np.float32)
                vector_rows.append((stored.episode_id, chain_id, model_id, vector.tobytes()))
            if ep.client_key:
                keyed[(chain_id, ep.client_key)] = stored
            outcomes.append(AppendOutcome(AppendStatus.INSERTED, stored))
        conn.executemany(
            "INSERT INTO episodes (episode_id, chain_id, seq, kind, summary, text, concepts, "
            "salience, occurred_at, recorded_at, evidence, check_outcome, check_topic, "
            "predicted_mastery, quiz_correct, quiz_total, client_key, prev_hash, hash, sealed) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            episode_rows,
        )
        conn.executemany(_INSERT_FACTS, fact_rows)
        if vector_rows:
            conn.executemany(
                "INSERT INTO episode_vectors (episode_id, chain_id, model, vector) "
                "VALUES (?, ?, ?, ?)",
                vector_rows,
            )
        return outcomes, new_chains

    def _by_client_keys(
        self, conn: sqlite3.Connection, chain_ids: Sequence[int], items: Sequence[PreparedEpisode]
    ) -> dict[tuple[int, str], StoredEpisode]:
        """The stored episodes of the items' client keys, by (chain id, key): one statement per
        chain."""
        keys: dict[int, set[str]] = {}
        for item, chain_id in zip(items, chain_ids, strict=True):
            if item.episode.client_key:
                keys.setdefault(chain_id, set()).add(item.episode.client_key)
        found: dict[tuple[int, str], StoredEpisode] = {}
        for chain_id, wanted in keys.items():
            rows = conn.execute(
                f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} "
                # The `<> ''` term lets the planner use the partial unique index on client keys.
                "WHERE e.chain_id = ? AND e.client_key IN (SELECT value FROM json_each(?)) "
                "AND e.client_key <> ''",
                (chain_id, json.dumps(sorted(wanted))),
            ).fetchall()
            for row in rows:
                stored = self._episode(conn, row)
                found[(chain_id, stored.client_key)] = stored
        return found

    # -- sealed words --------------------------------------------------------------------------

    def _data_key(
        self, conn: sqlite3.Connection, tenant: str, student: str, *, create: bool = False
    ) -> DataKey:
        """The student's data key: from memory, else unwrapped from its row; made and stored
        (in the open write transaction) when `create` and the student has none yet."""
        who = (tenant, student)
        cached = self._keys.cached(who)
        if cached is not None:
            return cached
        row = conn.execute(
            "SELECT master_key_id, wrapped FROM student_keys WHERE tenant = ? AND student = ?",
            who,
        ).fetchone()
        if row is not None:
            return self._keys.open_wrapped(who, row[0], row[1])
        if not create:
            # Only an erasure removes a key, and an erased student's rows are never opened: a
            # read that raced the erasure finds the student gone.
            raise NotFound(f"student_id {student!r} has no readable episodes (erased)")
        key, wrapped = self._keys.make(who)
        conn.execute(
            "INSERT INTO student_keys (tenant, student, master_key_id, wrapped, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (tenant, student, self._keys.master.key_id, wrapped, now_us()),
        )
        return key

    def _episode(self, conn: sqlite3.Connection, row: Sequence[Any]) -> StoredEpisode:
        """A row with its words: opened from `sealed`, or as stored for a plaintext row."""
        sealed = row[-1]
        if sealed is None:
            return _row_to_episode(row)
        chain = ChainKey(row[1], row[2], row[3])
        key = self._data_key(conn, chain.tenant, chain.student)
        return _row_to_episode(row, key.open(episode_ad(chain, row[4], row[5]), sealed))

    # -- erasure -------------------------------------------------------------------------------

    def _forget_erased(self, who: tuple[str, str], erasure: Erasure) -> None:
        """An erasure made here or found made by another process: the student's data key and
        chain ids leave memory, and every later read finds the student gone."""
        self._erased[who] = erasure
        self._keys.forget(who)
        self._chain_ids.drop_where(lambda c: (c.tenant, c.student) == who)

    def erasure_of(self, tenant: str, student: str) -> Erasure | None:
        return self._erased.get((tenant, student))

    def erase_student(
        self, tenant: str, student: str, *, by: str, at_us: int, allow_plaintext_history: bool
    ) -> ErasureOutcome:
        with self._write_lock:
            conn = self._writer
            with _write_transaction(conn, _nothing_to_undo):
                outcome = self._erase_in_transaction(
                    conn, tenant, student, by, at_us, allow_plaintext_history
                )
            self._forget_erased((tenant, student), outcome.erasure)
            if not outcome.already_erased:
                # The deletes' old page images sit in the WAL until a checkpoint copies the
                # zeroed pages over them; TRUNCATE then empties the WAL file. A reader holding an
                # old snapshot can keep it from completing: the next checkpoint finishes it.
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return outcome

    def _erase_in_transaction(
        self,
        conn: sqlite3.Connection,
        tenant: str,
        student: str,
        by: str,
        at_us: int,
        allow_plaintext_history: bool,
    ) -> ErasureOutcome:
        done = conn.execute(
            f"SELECT {codec.ERASURE_COLUMNS} FROM erasures WHERE tenant = ? AND student = ?",
            (tenant, student),
        ).fetchone()
        if done is not None:
            return ErasureOutcome(codec.erasure_from_row(done), already_erased=True)
        chain_ids = [
            int(r[0])
            for r in conn.execute(
                "SELECT chain_id FROM chains WHERE tenant = ? AND student = ?", (tenant, student)
            )
        ]
        episodes, plaintext = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE sealed IS NULL) FROM episodes "
            "WHERE chain_id IN (SELECT value FROM json_each(?))",
            (json.dumps(chain_ids),),
        ).fetchone()
        check_erasable(
            student, int(episodes), int(plaintext), allow_plaintext_history=allow_plaintext_history
        )
        erasure = Erasure(tenant, student, at_us, by, len(chain_ids), int(episodes), int(plaintext))
        # The record first: the guards on annotations and beliefs let an erased student's rows
        # go, and only theirs.
        conn.execute(
            f"INSERT INTO erasures ({codec.ERASURE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (tenant, student, at_us, by, len(chain_ids), episodes, plaintext),
        )
        conn.execute("DELETE FROM student_keys WHERE tenant = ? AND student = ?", (tenant, student))
        for chain_id in chain_ids:
            for table in codec.DERIVED_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE {_derived_rows_of(table)}", (chain_id,))
        return ErasureOutcome(erasure, already_erased=False)

    def rewrap_data_keys(self, new_master: MasterKey) -> int:
        """Re-wraps every data key under `new_master` in one transaction (the store was opened
        with the current master key); keys already under it are left as they are, so a rotation
        that was interrupted can be run again. Returns how many were re-wrapped."""
        old = self._keys.master
        done = 0
        with self._write_lock:
            conn = self._writer
            with _write_transaction(conn, _nothing_to_undo):
                rows = conn.execute(
                    "SELECT tenant, student, master_key_id, wrapped FROM student_keys"
                ).fetchall()
                for tenant, student, key_id, wrapped in rows:
                    if key_id == new_master.key_id:
                        continue
                    if key_id != old.key_id:
                        raise FailedPrecondition(
                            f"the data key of {tenant}/{student} is wrapped by master key "
                            f"{key_id}, neither the current ({old.key_id}) nor the new one"
                        )
                    raw = old.unwrap(tenant, student, wrapped)
                    conn.execute(
                        "UPDATE student_keys SET master_key_id = ?, wrapped = ? "
                        "WHERE tenant = ? AND student = ?",
                        (new_master.key_id, new_master.wrap(tenant, student, raw), tenant, student),
                    )
                    done += 1
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        return done

    def check_data_keys(self) -> int:
        """Unwraps every stored data key with the master key (nothing is kept); returns how many.
        Raises FailedPrecondition or SealBroken, naming the student, for one that does not open."""
        rows = (
            self._reader()
            .execute("SELECT tenant, student, master_key_id, wrapped FROM student_keys")
            .fetchall()
        )
        ring = KeyRing(self._keys.master)
        for tenant, student, key_id, wrapped in rows:
            ring.open_wrapped((tenant, student), key_id, wrapped)
        return len(rows)

    def master_key_ids(self) -> dict[str, int]:
        """How many data keys each master key wraps (by key id)."""
        rows = self._reader().execute(
            "SELECT master_key_id, count(*) FROM student_keys GROUP BY master_key_id"
        )
        return {str(k): int(n) for k, n in rows}

    def annotate(
        self, chain: ChainKey, episode_id: int, kind: str, body: str, *, created_at_us: int
    ) -> int:
        with self.writing() as w:
            return w.annotate(chain, episode_id, kind, body, created_at_us=created_at_us)

    def _annotate_in_transaction(
        self,
        conn: sqlite3.Connection,
        chain: ChainKey,
        episode_id: int,
        kind: str,
        body: str,
        created_at_us: int,
    ) -> int:
        chain_id = self._chain_id(conn, chain)
        found = (
            chain_id is not None
            and conn.execute(
                "SELECT 1 FROM episodes WHERE episode_id = ? AND chain_id = ?",
                (episode_id, chain_id),
            ).fetchone()
        )
        if not found:
            raise NotFound(f"episode {episode_id} is not in this student's chain")
        cur = conn.execute(
            "INSERT INTO annotations (episode_id, kind, body, created_at) VALUES (?, ?, ?, ?)",
            (episode_id, kind, body, created_at_us),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    # -- reads ---------------------------------------------------------------------------------

    def list_episodes(
        self,
        chain: ChainKey,
        *,
        occurred_from_us: int | None,
        occurred_to_us: int | None,
        after: tuple[int, int] | None,
        limit: int,
        newest_first: bool = False,
    ) -> list[StoredEpisode]:
        conn = self._reader()
        chain_id = self._chain_id(conn, chain)
        if chain_id is None:
            return []
        where = ["e.chain_id = ?"]
        args: list[object] = [chain_id]
        if occurred_from_us is not None:
            where.append("e.occurred_at >= ?")
            args.append(occurred_from_us)
        if occurred_to_us is not None:
            where.append("e.occurred_at < ?")
            args.append(occurred_to_us)
        beyond, order = ("<", "DESC") if newest_first else (">", "ASC")
        if after is not None:
            where.append(f"(e.occurred_at, e.seq) {beyond} (?, ?)")
            args.extend(after)
        args.append(limit)
        rows = conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} WHERE {' AND '.join(where)} "
            f"ORDER BY e.occurred_at {order}, e.seq {order} LIMIT ?",
            args,
        ).fetchall()
        return [self._episode(conn, r) for r in rows]

    def iter_chain(self, chain: ChainKey) -> Iterator[StoredEpisode]:
        # A dedicated connection holds one read transaction for the whole walk, so a chain being
        # appended to meanwhile is seen as of one moment.
        conn = _connect(self.path)
        try:
            conn.execute("BEGIN")
            chain_id = self._chain_id(conn, chain)
            if chain_id is None:
                return
            cur = conn.execute(
                f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} WHERE e.chain_id = ? "
                "ORDER BY e.seq",
                (chain_id,),
            )
            for row in cur:
                yield self._episode(conn, row)
        finally:
            conn.close()

    def iter_links(self, chain: ChainKey) -> Iterator[StoredEpisode]:
        # As iter_chain, but rows are read as the hash sees them (nothing is opened), and an
        # erased student's chains are read too: their hashes still link.
        conn = _connect(self.path)
        try:
            conn.execute("BEGIN")
            row = conn.execute(
                "SELECT chain_id FROM chains WHERE tenant = ? AND student = ? AND subject = ?",
                (chain.tenant, chain.student, chain.subject),
            ).fetchone()
            if row is None:
                return
            cur = conn.execute(
                f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} WHERE e.chain_id = ? "
                "ORDER BY e.seq",
                (row[0],),
            )
            for found in cur:
                yield _row_to_episode(found)
        finally:
            conn.close()

    def chains(self) -> list[ChainKey]:
        rows = (
            self._reader()
            .execute(
                "SELECT tenant, student, subject FROM chains c "
                "WHERE EXISTS (SELECT 1 FROM episodes e WHERE e.chain_id = c.chain_id) "
                "ORDER BY tenant, student, subject"
            )
            .fetchall()
        )
        return [ChainKey(*r) for r in rows]

    def iter_vectors(self, model_id: str) -> Iterator[ChainVectors]:
        conn = self._reader()
        chains = conn.execute("SELECT chain_id, tenant, student, subject FROM chains").fetchall()
        for chain_id, tenant, student, subject in chains:
            rows = conn.execute(
                "SELECT episode_id, vector FROM episode_vectors WHERE chain_id = ? AND model = ? "
                "ORDER BY episode_id",
                (chain_id, model_id),
            ).fetchall()
            if not rows:
                continue
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            yield ChainVectors(
                ChainKey(tenant, student, subject), ids, vectors.reshape(len(rows), -1).copy()
            )

    def chain_recall(
        self, chain: ChainKey, model_id: str, *, after_id: int, vectors_of: Sequence[int] = ()
    ) -> ChainRecall:
        # A dedicated connection holds one read transaction, so rows and vectors agree.
        conn = _connect(self.path)
        try:
            conn.execute("BEGIN")
            chain_id = self._chain_id(conn, chain)
            if chain_id is None:
                return ChainRecall([], np.empty(0, np.int64), np.empty((0, 0), np.float32), 0)
            # Within a chain seq and episode id grow together, and seq counts the chain's
            # episodes from 1 without a gap (the hash chain): the episodes after `after_id` are
            # a range of the (chain_id, seq) index, and the seq of `after_id` is how many come
            # up to it. (An `after_id` that is not this chain's: none, which the caller takes
            # for a snapshot that does not match.)
            before = 0
            if after_id > 0:
                found = conn.execute(
                    "SELECT seq FROM episodes WHERE episode_id = ? AND chain_id = ?",
                    (after_id, chain_id),
                ).fetchone()
                before = int(found[0]) if found is not None else -1
            rows = conn.execute(
                "SELECT e.episode_id, e.occurred_at, e.salience, e.kind, e.concepts, f.version, "
                "f.dup_key, f.tokens, f.flagged, f.language, f.stems, e.seq, e.sealed "
                "FROM episodes e LEFT JOIN recall_facts f ON f.episode_id = e.episode_id "
                "WHERE e.chain_id = ? AND e.seq > ? ORDER BY e.seq",
                (chain_id, max(before, 0)),
            ).fetchall()
            concepts = codec.recall_concepts(
                rows, chain, lambda: self._data_key(conn, chain.tenant, chain.student)
            )
            # Two lookups rather than one with OR, which SQLite answers by reading every vector
            # row of the chain: a range of the chain's index, and the ids asked for by key (the
            # unary + keeps the planner from scanning the chain's index for the second).
            vectors = conn.execute(
                "SELECT episode_id, vector FROM episode_vectors WHERE chain_id = ? AND model = ? "
                "AND episode_id > ? UNION ALL SELECT episode_id, vector FROM episode_vectors "
                "WHERE episode_id IN (SELECT value FROM json_each(?)) AND +episode_id <= ? "
                "AND +chain_id = ? AND model = ? ORDER BY episode_id",
                (
                    chain_id,
                    model_id,
                    after_id,
                    json.dumps([int(i) for i in vectors_of]),
                    after_id,
                    chain_id,
                    model_id,
                ),
            ).fetchall()
        finally:
            conn.close()
        recall = [
            StoredRecall(
                episode_id=r[0],
                occurred_at_us=r[1],
                salience=r[2],
                kind=Kind(r[3]),
                concepts=c,
                facts=RecallFacts(
                    _from_i64(r[6]), int(r[7]), bool(r[8]), r[9], stems_from_text(r[10])
                )
                if r[5] == FACTS_VERSION
                else None,
            )
            for r, c in zip(rows, concepts, strict=True)
        ]
        ids = np.fromiter((v[0] for v in vectors), dtype=np.int64, count=len(vectors))
        flat = np.frombuffer(b"".join(v[1] for v in vectors), dtype=np.float32)
        matrix = flat.reshape(len(vectors), -1) if vectors else np.empty((0, 0), np.float32)
        return ChainRecall(recall, ids, matrix, int(before))

    def last_episode_id(self) -> int:
        row = self._reader().execute("SELECT max(episode_id) FROM episodes").fetchone()
        return int(row[0] or 0)

    def unembedded(self, *, after_id: int, up_to_id: int, limit: int) -> list[Unembedded]:
        conn = self._reader()
        rows = conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} "
            "WHERE e.episode_id > ? AND e.episode_id <= ? AND NOT EXISTS "
            "(SELECT 1 FROM episode_vectors v WHERE v.episode_id = e.episode_id) "
            f"AND {_NOT_ERASED} ORDER BY e.episode_id LIMIT ?",
            (after_id, up_to_id, limit),
        ).fetchall()
        episodes = [self._episode(conn, r) for r in rows]
        return [
            Unembedded(ep.chain, ep.episode_id, embedding_text(ep.summary, ep.text))
            for ep in episodes
        ]

    def unembedded_counts(self, up_to_id: int) -> dict[ChainKey, int]:
        rows = (
            self._reader()
            .execute(
                "SELECT c.tenant, c.student, c.subject, count(*) FROM "
                f"{_EPISODE_FROM} WHERE e.episode_id <= ? AND NOT EXISTS "
                "(SELECT 1 FROM episode_vectors v WHERE v.episode_id = e.episode_id) "
                f"AND {_NOT_ERASED} GROUP BY e.chain_id",
                (up_to_id,),
            )
            .fetchall()
        )
        return {ChainKey(r[0], r[1], r[2]): int(r[3]) for r in rows}

    def episode_counts(self) -> dict[str, int]:
        rows = (
            self._reader()
            .execute(
                "SELECT c.tenant, count(*) FROM episodes e JOIN chains c "
                "ON c.chain_id = e.chain_id GROUP BY c.tenant"
            )
            .fetchall()
        )
        return {str(tenant): int(count) for tenant, count in rows}

    def ping(self) -> None:
        # A fresh connection that may not create the file: an open one keeps working on a file
        # that was deleted or whose disk went away, and would hide exactly what this looks for.
        uri = f"{self.path.resolve().as_uri()}?mode=rw"
        conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()

    def count_vectors_of_other_models(self, model_id: str) -> int:
        row = (
            self._reader()
            .execute("SELECT count(*) FROM episode_vectors WHERE model <> ?", (model_id,))
            .fetchone()
        )
        return int(row[0])

    def episodes_by_id(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, StoredEpisode]:
        conn = self._reader()
        chain_id = self._chain_id(conn, chain)
        if chain_id is None or not ids:
            return {}
        # json_each keeps the statement the same for any number of ids (docs/DESIGN.md P4: a plain
        # IN list or json_each reads 300 rows in under a millisecond; a temp table does not).
        rows = conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} "
            # `+e.chain_id`: look rows up by id, and only check the chain (an index on the
            # chain would make SQLite scan the whole chain instead).
            "WHERE e.episode_id IN (SELECT value FROM json_each(?)) AND +e.chain_id = ?",
            (json.dumps([int(i) for i in ids]), chain_id),
        ).fetchall()
        return {r[0]: self._episode(conn, r) for r in rows}

    def memory_rows(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, MemoryRow]:
        conn = self._reader()
        chain_id = self._chain_id(conn, chain)
        if chain_id is None or not ids:
            return {}
        rows = conn.execute(
            "SELECT episode_id, seq, kind, summary, occurred_at, evidence, sealed FROM episodes "
            "WHERE episode_id IN (SELECT value FROM json_each(?)) AND +chain_id = ?",
            (json.dumps([int(i) for i in ids]), chain_id),
        ).fetchall()
        # Only the rows a block shows are opened (a dozen or so per turn).
        key = (
            self._data_key(conn, chain.tenant, chain.student)
            if any(r[6] is not None for r in rows)
            else None
        )
        return {
            r[0]: MemoryRow(
                r[0],
                r[1],
                Kind(r[2]),
                r[3]
                if key is None or r[6] is None
                else key.open(episode_ad(chain, r[1], r[2]), r[6]).summary,
                r[4],
                _cited(r[5]) if r[5] != "[]" else (),
            )
            for r in rows
        }

    def recall_facts(self, chain: ChainKey) -> dict[int, tuple[int, RecallFacts]]:
        conn = self._reader()
        chain_id = self._chain_id(conn, chain)
        if chain_id is None:
            return {}
        rows = conn.execute(
            "SELECT episode_id, version, dup_key, tokens, flagged, language, stems "
            "FROM recall_facts WHERE chain_id = ?",
            (chain_id,),
        )
        return {
            int(r[0]): (
                int(r[1]),
                RecallFacts(_from_i64(r[2]), int(r[3]), bool(r[4]), r[5], stems_from_text(r[6])),
            )
            for r in rows
        }

    def annotations(
        self, chain: ChainKey, episode_id: int, kind: str | None = None
    ) -> list[Annotation]:
        conn = self._reader()
        chain_id = self._chain_id(conn, chain)
        if chain_id is None:
            return []
        sql = (
            "SELECT a.annotation_id, a.episode_id, a.kind, a.body, a.created_at FROM annotations a "
            "JOIN episodes e ON e.episode_id = a.episode_id "
            "WHERE a.episode_id = ? AND e.chain_id = ?"
        )
        args: list[object] = [episode_id, chain_id]
        if kind is not None:
            sql += " AND a.kind = ?"
            args.append(kind)
        rows = conn.execute(sql + " ORDER BY a.annotation_id", args).fetchall()
        return [Annotation(*r) for r in rows]

    # -- export and import (store/transfer.py) -------------------------------------------------

    def dump_table(self, table: str) -> Iterator[tuple[object, ...]]:
        yield from transfer.dump_table(self._reader(), table)

    def is_empty(self) -> bool:
        return transfer.is_empty(self._reader())

    def load_tables(
        self,
        rows: Iterable[tuple[str, tuple[object, ...]]],
        derived: Iterable[tuple[int, int, RecallFacts]],
    ) -> None:
        with self.writing():
            transfer.load_tables(self._writer, rows, derived, _insert_facts)
        # The erasures the load brought: their students are absent to every content read.
        self._erased.update(
            ((r[0], r[1]), codec.erasure_from_row(r))
            for r in self._reader().execute(f"SELECT {codec.ERASURE_COLUMNS} FROM erasures")
        )

    # -- what other processes changed (app/sync.py) --------------------------------------------

    def chain_head(self, chain: ChainKey) -> ChainHead:
        conn = self._reader()
        who = (chain.tenant, chain.student)
        if who not in self._erased:
            # Another process over the same file (--sync) may have erased the student.
            found = conn.execute(
                f"SELECT {codec.ERASURE_COLUMNS} FROM erasures WHERE tenant = ? AND student = ?",
                who,
            ).fetchone()
            if found is not None:
                self._forget_erased(who, codec.erasure_from_row(found))
        if who in self._erased:
            return ChainHead(0, (0, 0), erased=True)
        chain_id = self._chain_id(conn, chain)
        if chain_id is None:
            return ChainHead(0, (0, 0))
        row = conn.execute(
            "SELECT (SELECT max(seq) FROM episodes WHERE chain_id = ?1), "
            "(SELECT max(belief_id) FROM beliefs WHERE chain_id = ?1), "
            "(SELECT max(retired_at) FROM beliefs WHERE chain_id = ?1)",
            (chain_id,),
        ).fetchone()
        return ChainHead(int(row[0] or 0), (int(row[1] or 0), int(row[2] or 0)))

    def episodes_since(self, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        conn = self._reader()
        chain_id = self._chain_id(conn, chain)
        if chain_id is None:
            return []
        rows = conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} WHERE e.chain_id = ? AND e.seq > ? "
            "ORDER BY e.seq",
            (chain_id, seq),
        ).fetchall()
        return [self._episode(conn, r) for r in rows]

    def vectors_of(
        self, chain: ChainKey, model_id: str, ids: Sequence[int]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        conn = self._reader()
        chain_id = self._chain_id(conn, chain)
        rows = (
            []
            if chain_id is None or not len(ids)
            else conn.execute(
                "SELECT episode_id, vector FROM episode_vectors "
                "WHERE episode_id IN (SELECT value FROM json_each(?)) AND chain_id = ? "
                "AND model = ? ORDER BY episode_id",
                (json.dumps([int(i) for i in ids]), chain_id, model_id),
            ).fetchall()
        )
        if not rows:
            return np.empty(0, np.int64), np.empty((0, 0), np.float32)
        vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        ids_ = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        return ids_, vectors.reshape(len(rows), -1).copy()

    # -- files, passages, beliefs, the nightly cycle -------------------------------------------

    def _existing_chain_id(self, chain: ChainKey) -> int | None:
        return self._chain_id(self._reader(), chain)

    def file_versions(
        self, chain: ChainKey, dim: int, *, current_only: bool = True
    ) -> list[FileVersion]:
        chain_id = self._existing_chain_id(chain)
        if chain_id is None:
            return []
        return side.file_versions(self._reader(), chain_id, dim, current_only=current_only)

    def latest_file_version(self, chain: ChainKey, file_id: str) -> tuple[int, str] | None:
        chain_id = self._existing_chain_id(chain)
        return None if chain_id is None else side.latest_version(self._reader(), chain_id, file_id)

    def current_passages(
        self, chain: ChainKey, model_id: str
    ) -> tuple[list[StoredPassage], npt.NDArray[np.float32]]:
        chain_id = self._existing_chain_id(chain)
        if chain_id is None:
            return [], np.empty((0, 0), np.float32)
        return side.current_passages(self._reader(), chain_id, model_id)

    def current_beliefs(self, chain: ChainKey) -> list[BeliefRow]:
        chain_id = self._existing_chain_id(chain)
        return [] if chain_id is None else side.current_beliefs(self._reader(), chain_id)

    def belief_rows(self, chain: ChainKey, concept_key: str | None = None) -> list[BeliefRow]:
        chain_id = self._existing_chain_id(chain)
        return [] if chain_id is None else side.belief_rows(self._reader(), chain_id, concept_key)

    def episodes_of_kind(self, chain: ChainKey, kinds: Sequence[Kind]) -> list[StoredEpisode]:
        """The chain's episodes of these kinds, in seq order."""
        conn = self._reader()
        chain_id = self._chain_id(conn, chain)
        if chain_id is None:
            return []
        rows = conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} WHERE e.chain_id = ? "
            "AND e.kind IN (SELECT value FROM json_each(?)) ORDER BY e.seq",
            (chain_id, json.dumps([k.value for k in kinds])),
        ).fetchall()
        return [self._episode(conn, r) for r in rows]

    def nightly_state(self, chain: ChainKey) -> NightlyState | None:
        chain_id = self._existing_chain_id(chain)
        return None if chain_id is None else side.nightly_state(self._reader(), chain_id)

    def day_coverage(self, chain: ChainKey) -> dict[int, int]:
        chain_id = self._existing_chain_id(chain)
        return {} if chain_id is None else side.day_coverage(self._reader(), chain_id)

    def recent_digests(self, chain: ChainKey, limit: int) -> list[WrittenDigest]:
        chain_id = self._existing_chain_id(chain)
        return [] if chain_id is None else side.recent_digests(self._reader(), chain_id, limit)

    def episodes_after(self, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        """The chain's episodes after `seq`, digests left out, in seq order."""
        conn = self._reader()
        chain_id = self._chain_id(conn, chain)
        if chain_id is None:
            return []
        rows = conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} WHERE e.chain_id = ? "
            "AND e.seq > ? AND e.kind <> 'consolidation' ORDER BY e.seq",
            (chain_id, seq),
        ).fetchall()
        return [self._episode(conn, r) for r in rows]

    def nightly_candidates(self) -> list[tuple[ChainKey, int, int | None]]:
        conn = self._reader()
        found = side.nightly_candidates(conn)
        keys = self._chain_keys(conn, [chain_id for chain_id, _, _ in found])
        # An erased student's chains have nothing left to digest, and take no more writes.
        return [
            (keys[chain_id], top, scanned)
            for chain_id, top, scanned in found
            if (keys[chain_id].tenant, keys[chain_id].student) not in self._erased
        ]

    def latest_annotations(self, chain: ChainKey, kind: str) -> dict[int, str]:
        """episode id -> body of its newest annotation of `kind`, for the whole chain at once."""
        chain_id = self._existing_chain_id(chain)
        if chain_id is None:
            return {}
        rows = self._reader().execute(
            "SELECT a.episode_id, a.body FROM annotations a JOIN episodes e "
            "ON e.episode_id = a.episode_id WHERE e.chain_id = ? AND a.kind = ? "
            "ORDER BY a.annotation_id",
            (chain_id, kind),
        )
        return {int(episode_id): str(body) for episode_id, body in rows}

    def self_model_composed_at(self, chain: ChainKey) -> int | None:
        chain_id = self._existing_chain_id(chain)
        return None if chain_id is None else side.self_model_composed_at(self._reader(), chain_id)

    def _chain_keys(self, conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, ChainKey]:
        rows = conn.execute(
            "SELECT chain_id, tenant, student, subject FROM chains "
            "WHERE chain_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids)),),
        ).fetchall()
        return {r[0]: ChainKey(r[1], r[2], r[3]) for r in rows}

    def citation_batch(self, chain: ChainKey, kind: str, limit: int) -> list[int]:
        """Episodes to verify next: never-checked first, then those checked longest ago."""
        chain_id = self._existing_chain_id(chain)
        if chain_id is None:
            return []
        conn = self._reader()
        batch = side.never_checked_citations(conn, chain_id, kind, limit)
        if len(batch) < limit:
            batch += side.oldest_checked_citations(conn, chain_id, kind, limit - len(batch))
        return batch


class SqliteWriter:
    """Writes inside one transaction of `SqliteStore.writing()`."""

    def __init__(self, store: SqliteStore, conn: sqlite3.Connection) -> None:
        self._store = store
        self._conn = conn
        self.new_chains: dict[ChainKey, int] = {}

    def _chain(self, chain: ChainKey) -> int:
        chain_id = self._store._chain_id(self._conn, chain, made=self.new_chains)
        assert chain_id is not None
        return chain_id

    def append(
        self, items: Sequence[PreparedEpisode], *, model_id: str, recorded_at_us: int
    ) -> list[AppendOutcome]:
        outcomes, new_chains = self._store._append_in_transaction(
            self._conn, items, model_id, recorded_at_us, self.new_chains
        )
        self.new_chains.update(new_chains)
        return outcomes

    def annotate(
        self, chain: ChainKey, episode_id: int, kind: str, body: str, *, created_at_us: int
    ) -> int:
        return self._store._annotate_in_transaction(
            self._conn, chain, episode_id, kind, body, created_at_us
        )

    def add_file_version(
        self,
        chain: ChainKey,
        row: NewFileVersion,
        *,
        episode_id: int,
        model_id: str,
        ingested_at_us: int,
    ) -> int:
        return side.insert_file_version(
            self._conn,
            self._chain(chain),
            row,
            episode_id=episode_id,
            model_id=model_id,
            ingested_at_us=ingested_at_us,
        )

    def latest_file_version(self, chain: ChainKey, file_id: str) -> tuple[int, str] | None:
        """As the store's, but read inside this transaction (no race with another ingest)."""
        return side.latest_version(self._conn, self._chain(chain), file_id)

    def add_belief(self, chain: ChainKey, belief: NewBelief, *, created_at_us: int) -> int:
        chain_id = self._chain(chain)
        return side.insert_belief(self._conn, chain_id, belief, created_at_us=created_at_us)

    def supersede_belief(self, chain: ChainKey, old_id: int, new_id: int) -> None:
        side.supersede_belief(self._conn, self._chain(chain), old_id, new_id)

    def retire_current_beliefs(self, chain: ChainKey, at_us: int) -> int:
        return side.retire_current_beliefs(self._conn, self._chain(chain), at_us)

    def current_beliefs(self, chain: ChainKey) -> list[BeliefRow]:
        return side.current_beliefs(self._conn, self._chain(chain))

    def save_vectors(
        self, model_id: str, rows: Sequence[tuple[ChainKey, int, npt.NDArray[np.float32]]]
    ) -> None:
        chain_ids = {chain: self._store._chain_id(self._conn, chain) for chain, _, _ in rows}
        self._conn.executemany(
            "INSERT OR IGNORE INTO episode_vectors (episode_id, chain_id, model, vector) "
            "SELECT episode_id, chain_id, ?, ? FROM episodes WHERE episode_id = ? "
            "AND chain_id = ?",
            (
                (
                    model_id,
                    np.ascontiguousarray(v, dtype=np.float32).tobytes(),
                    episode_id,
                    chain_ids[chain],
                )
                for chain, episode_id, v in rows
                if chain_ids[chain] is not None
            ),
        )

    def save_recall_facts(self, chain: ChainKey, facts: Sequence[tuple[int, RecallFacts]]) -> None:
        chain_id = self._chain(chain)
        self._conn.executemany(
            _INSERT_FACTS, [_facts_row(episode_id, chain_id, made) for episode_id, made in facts]
        )

    def checks_after(self, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        rows = self._conn.execute(
            f"SELECT {_EPISODE_COLUMNS} FROM {_EPISODE_FROM} WHERE e.chain_id = ? "
            "AND e.kind = 'check' AND e.seq > ? ORDER BY e.seq",
            (self._chain(chain), seq),
        ).fetchall()
        return [self._store._episode(self._conn, r) for r in rows]

    def nightly_state(self, chain: ChainKey) -> NightlyState | None:
        """As the store's, but read inside this transaction."""
        return side.nightly_state(self._conn, self._chain(chain))

    def save_nightly_state(self, chain: ChainKey, state: NightlyState, *, at_us: int) -> None:
        side.save_nightly_state(self._conn, self._chain(chain), state, at_us=at_us)

    def add_day_digest(self, chain: ChainKey, digest: DayDigest, *, done_at_us: int) -> None:
        side.insert_day_digest(self._conn, self._chain(chain), digest, done_at_us=done_at_us)

    def save_self_model(
        self, chain: ChainKey, working_set: Sequence[str], calibration: str, *, at_us: int
    ) -> None:
        side.save_self_model(self._conn, self._chain(chain), working_set, calibration, at_us=at_us)
