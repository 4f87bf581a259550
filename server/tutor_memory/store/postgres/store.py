"""The PostgreSQL store: every PostgreSQL statement of the ledger lives here and beside it
(side_rows.py, facts.py). The same protocols, rows and guarantees as the SQLite store, for several
server nodes over one database.

Appends never fork a chain, whatever node sends them: a write transaction first locks the row of
every chain it touches (`SELECT ... FOR UPDATE`, in one fixed order, so two transactions never
wait on each other in a circle), then reads the head, and UNIQUE (chain, seq) would refuse a
second episode at one seq even if that lock were bypassed. Every other read-then-write of a chain
(a belief's successor, a file's next version, the nightly cycle's generation check) happens
under the same lock, so what one node reads inside its transaction is still true when it commits.

Durability is PostgreSQL's: a write is acknowledged after COMMIT returned (synchronous_commit on,
the default).

Sealing (domain/sealing.py), as the SQLite store: an episode's words are sealed with its student's
data key before the row is hashed and inserted, and opened when a row is read for its content;
`iter_links` reads rows as the hash sees them. Every read that opens words reads the wrapped data
key in the same statement (unwrapped once per process, remembered by its bytes), so a key another
node destroyed stops opening words here at once. An erasure takes the student's advisory lock
exclusively and every append takes it shared before checking `erasures`, so no episode of an erased
student is stored by any node once the erasure committed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.chain import GENESIS_HASH, recompute
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import ChainKey, Kind, StoredEpisode, embedding_text
from tutor_memory.domain.erasure import (
    Erasure,
    ErasureOutcome,
    check_erasable,
    erased_message,
)
from tutor_memory.domain.errors import FailedPrecondition, NotFound
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
from tutor_memory.domain.sealing import DataKey, MasterKey, Words, episode_ad
from tutor_memory.store import codec
from tutor_memory.store.keyring import KeyRing
from tutor_memory.store.lru import CHAIN_IDS_KEPT, LruCache
from tutor_memory.store.postgres import facts as fact_rows
from tutor_memory.store.postgres import side_rows as side
from tutor_memory.store.postgres import transfer
from tutor_memory.store.postgres.database import DEFAULT_POOL_SIZE, Connection, Database
from tutor_memory.store.postgres.keys import student_key
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

# Rows a chain walk (iter_chain, iter_vectors) fetches per round trip from its server-side cursor.
WALK_BATCH = 2_000
# Statistics of a young database: this process runs ANALYZE on the tables appends grow once it
# has inserted ANALYZE_FIRST episodes, and again each time it has doubled them, up to
# ANALYZE_UNTIL; from there autovacuum's own analyses (at 10% growth) keep up. Without it, a table
# the planner has never seen analyzed (reltuples -1) looks empty, and a client-key lookup was
# planned as a walk of the whole chain: 2.8 s per batch of 256 at 15k episodes, against 2 ms.
ANALYZE_FIRST = 1_000
ANALYZE_UNTIL = 1_000_000
ANALYZED_TABLES = "chains, episodes, recall_facts, episode_vectors, annotations, beliefs"

_EPISODE_COLUMNS = ", ".join(
    f"c.{f}" if f in ("tenant", "student", "subject") else f"e.{f}" for f in codec.EPISODE_FIELDS
)
_EPISODE_FROM = (
    "episodes e JOIN chains c ON c.student_key = e.student_key AND c.chain_id = e.chain_id"
)
# What a read that opens words adds to _EPISODE_COLUMNS and _EPISODE_FROM: the sealed words and
# the student's wrapped data key (none once the student was erased).
_SEALED_COLUMNS = ", e.sealed, k.master_key_id, k.wrapped"
_KEY_JOIN = (
    " LEFT JOIN student_keys k ON k.student_key = c.student_key AND k.tenant = c.tenant "
    "AND k.student = c.student"
)
# Rows of _EPISODE_FROM whose student was not erased: an erasure deletes the vectors, and the
# embedding queue must not take the student's episodes for ones still waiting for theirs.
_NOT_ERASED = (
    "NOT EXISTS (SELECT 1 FROM erasures x WHERE x.student_key = c.student_key "
    "AND x.tenant = c.tenant AND x.student = c.student)"
)
# Rows read by id look them up by primary key and only check their chain: `chain_id + 0` keeps
# the planner from walking the chain's whole index range instead, which it prefers while a new
# table's statistics are stale (docs/DESIGN.md P4 makes the same point for SQLite).
_CHAIN_FIELDS = ("tenant", "student", "subject")
# Columns of an episode row between chain_id and prev_hash, in insert order.
_INSERT_COLUMNS = (
    "student_key, episode_id, chain_id, seq, kind, summary, text, concepts, salience, occurred_at, "
    "recorded_at, evidence, check_outcome, check_topic, predicted_mastery, quiz_correct, "
    "quiz_total, client_key, prev_hash, hash, sealed"
)

Key = tuple[int, int]  # (student_key, chain_id)
Student = tuple[str, str]  # (tenant, student)


class PostgresStore:
    """One pool per server process; safe for one writer thread and many reader threads (and
    for other processes writing the same database)."""

    def __init__(
        self, url: str, master_key: MasterKey | None = None, *, pool_size: int = DEFAULT_POOL_SIZE
    ) -> None:
        """`master_key` opens the students' data keys; without it the store can verify chains
        (`iter_links`) but neither write episodes nor read their words."""
        self.db = Database(url, pool_size)
        self._ring = KeyRing(master_key)
        # Erasures this process knows of: made here, or stored when it started. Another node's
        # erasure is found by every read that opens words (the key is gone) and every append.
        with self.db.connection() as conn:
            self._erased: dict[tuple[str, str], Erasure] = {
                (r[0], r[1]): codec.erasure_from_row(r)
                for r in conn.execute(f"SELECT {codec.ERASURE_COLUMNS} FROM erasures").fetchall()
            }
        # Chains are never removed, so a chain id once seen stays valid; the recently used ones
        # are kept (one indexed read brings back one that left).
        self._keys: LruCache[ChainKey, Key] = LruCache(CHAIN_IDS_KEPT)
        # Episodes this process inserted, and how many when it last ran ANALYZE.
        self._inserted = 0
        self._analyzed_at = 0

    def close(self) -> None:
        self.db.close()

    # -- chains --------------------------------------------------------------------------------

    def _known(self, conn: Connection, chain: ChainKey) -> Key | None:
        cached = self._keys.get(chain)
        if cached is not None:
            return cached
        sk = student_key(chain.tenant, chain.student)
        row = conn.execute(
            "SELECT chain_id FROM chains WHERE student_key = %s AND tenant = %s "
            "AND student = %s AND subject = %s",
            (sk, chain.tenant, chain.student, chain.subject),
        ).fetchone()
        if row is None:
            return None
        key = (sk, int(row[0]))
        self._keys.put(chain, key)
        return key

    def _key(self, chain: ChainKey) -> Key | None:
        """The chain's key; None when it has none or its student was erased (every content read
        then finds nothing)."""
        if (chain.tenant, chain.student) in self._erased:
            return None
        return self._any_key(chain)

    def _any_key(self, chain: ChainKey) -> Key | None:
        cached = self._keys.get(chain)
        if cached is not None:
            return cached
        with self.db.connection() as conn:
            return self._known(conn, chain)

    def remember(self, chains: dict[ChainKey, Key]) -> None:
        self._keys.put_many(list(chains.items()))

    # -- writes --------------------------------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[PostgresWriter]:
        """One write transaction: everything done through the writer commits together at the end
        of the block, or nothing does."""
        with self.db.connection() as conn, conn.transaction():
            writer = PostgresWriter(self, conn)
            yield writer
        self.remember(writer.locked)
        self._inserted += writer.inserted
        if self._inserted <= ANALYZE_UNTIL and self._inserted >= max(
            ANALYZE_FIRST, 2 * self._analyzed_at
        ):
            self._analyzed_at = self._inserted
            with self.db.connection() as conn:
                conn.execute(f"ANALYZE {ANALYZED_TABLES}")

    def append(
        self, items: Sequence[PreparedEpisode], *, model_id: str, recorded_at_us: int
    ) -> list[AppendOutcome]:
        with self.writing() as w:
            return w.append(items, model_id=model_id, recorded_at_us=recorded_at_us)

    def annotate(
        self, chain: ChainKey, episode_id: int, kind: str, body: str, *, created_at_us: int
    ) -> int:
        with self.writing() as w:
            return w.annotate(chain, episode_id, kind, body, created_at_us=created_at_us)

    # -- reads ---------------------------------------------------------------------------------

    def _episodes(self, where: str, args: Sequence[object], order: str) -> list[StoredEpisode]:
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT {_EPISODE_COLUMNS}{_SEALED_COLUMNS} FROM {_EPISODE_FROM}{_KEY_JOIN} "
                f"WHERE {where} ORDER BY {order}",
                args,
            ).fetchall()
        return [self._opened(r) for r in rows]

    def _opened(self, row: Sequence[Any]) -> StoredEpisode:
        """An episode row (_EPISODE_COLUMNS + _SEALED_COLUMNS) with its words: opened from
        `sealed`, or as stored for a plaintext row."""
        *fields, sealed, key_id, wrapped = row
        ep = codec.episode_from_row(fields)
        if sealed is None:
            return ep
        if wrapped is None:
            # Only an erasure removes a key (here or on another node).
            raise NotFound(f"student_id {ep.chain.student!r} has no readable episodes (erased)")
        key = self._ring.open_stored((ep.chain.tenant, ep.chain.student), key_id, bytes(wrapped))
        return codec.with_words(ep, bytes(sealed), key)

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
        key = self._key(chain)
        if key is None:
            return []
        where = ["e.student_key = %s AND e.chain_id = %s"]
        args: list[object] = [*key]
        if occurred_from_us is not None:
            where.append("e.occurred_at >= %s")
            args.append(occurred_from_us)
        if occurred_to_us is not None:
            where.append("e.occurred_at < %s")
            args.append(occurred_to_us)
        beyond, order = ("<", "DESC") if newest_first else (">", "ASC")
        if after is not None:
            where.append(f"(e.occurred_at, e.seq) {beyond} (%s, %s)")
            args.extend(after)
        args.append(limit)
        return self._episodes(
            " AND ".join(where), args, f"e.occurred_at {order}, e.seq {order} LIMIT %s"
        )

    def iter_chain(self, chain: ChainKey) -> Iterator[StoredEpisode]:
        key = self._key(chain)
        if key is None:
            return
        columns = f"{_EPISODE_COLUMNS}{_SEALED_COLUMNS} FROM {_EPISODE_FROM}{_KEY_JOIN}"
        for row in self._walk(key, columns):
            yield self._opened(row)

    def iter_links(self, chain: ChainKey) -> Iterator[StoredEpisode]:
        # As iter_chain, but rows are read as the hash sees them (nothing is opened), and an
        # erased student's chains are read too: their hashes still link.
        key = self._any_key(chain)
        if key is None:
            return
        for *fields, sealed in self._walk(
            key, f"{_EPISODE_COLUMNS}, e.sealed FROM {_EPISODE_FROM}"
        ):
            ep = codec.episode_from_row(fields)
            yield ep if sealed is None else dataclasses.replace(ep, sealed=bytes(sealed))

    def _walk(self, key: Key, columns_from: str) -> Iterator[tuple[Any, ...]]:
        """`SELECT columns_from` over one chain's episodes in seq order, in one REPEATABLE READ
        transaction (a chain appended to meanwhile is seen as of one moment), through a
        server-side cursor (memory stays bounded however long the chain)."""
        with self.db.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            with conn.cursor(name="chain_walk") as cur:
                cur.itersize = WALK_BATCH
                cur.execute(
                    f"SELECT {columns_from} "
                    "WHERE e.student_key = %s AND e.chain_id = %s ORDER BY e.seq",
                    key,
                )
                yield from cur

    def chains(self) -> list[ChainKey]:
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT tenant, student, subject FROM chains c WHERE EXISTS (SELECT 1 FROM "
                "episodes e WHERE e.student_key = c.student_key AND e.chain_id = c.chain_id) "
                "ORDER BY tenant, student, subject"
            ).fetchall()
        return [ChainKey(*r) for r in rows]

    def iter_vectors(self, model_id: str) -> Iterator[ChainVectors]:
        with self.db.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            with conn.cursor(name="vector_walk") as cur:
                cur.itersize = WALK_BATCH
                cur.execute(
                    "SELECT c.tenant, c.student, c.subject, v.episode_id, v.vector "
                    "FROM episode_vectors v JOIN chains c ON c.student_key = v.student_key "
                    "AND c.chain_id = v.chain_id WHERE v.model = %s "
                    "ORDER BY v.student_key, v.chain_id, v.episode_id",
                    (model_id,),
                )
                chain: ChainKey | None = None
                ids: list[int] = []
                blobs: list[bytes] = []
                for tenant, student, subject, episode_id, vector in cur:
                    this = ChainKey(tenant, student, subject)
                    if this != chain and ids:
                        assert chain is not None
                        yield _chain_vectors(chain, ids, blobs)
                        ids, blobs = [], []
                    chain = this
                    ids.append(int(episode_id))
                    blobs.append(bytes(vector))
                if ids:
                    assert chain is not None
                    yield _chain_vectors(chain, ids, blobs)

    def chain_recall(
        self, chain: ChainKey, model_id: str, *, after_id: int, vectors_of: Sequence[int] = ()
    ) -> ChainRecall:
        key = self._key(chain)
        if key is None:
            return ChainRecall([], np.empty(0, np.int64), np.empty((0, 0), np.float32), 0)
        # One REPEATABLE READ transaction, so rows, vectors and the count agree.
        with self.db.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            rows = conn.execute(
                "SELECT e.episode_id, e.occurred_at, e.salience, e.kind, e.concepts, f.version, "
                "f.dup_key, f.tokens, f.flagged, f.language, f.stems, e.seq, e.sealed "
                "FROM episodes e LEFT JOIN recall_facts f ON f.student_key = e.student_key "
                "AND f.episode_id = e.episode_id "
                "WHERE e.student_key = %s AND e.chain_id = %s AND e.episode_id > %s "
                "ORDER BY e.episode_id",
                (*key, after_id),
            ).fetchall()
            wrapped = conn.execute(
                "SELECT master_key_id, wrapped FROM student_keys WHERE student_key = %s "
                "AND tenant = %s AND student = %s",
                (key[0], chain.tenant, chain.student),
            ).fetchone()
            vectors = conn.execute(
                "SELECT episode_id, vector FROM episode_vectors WHERE student_key = %s "
                "AND chain_id = %s AND model = %s "
                "AND (episode_id > %s OR episode_id = ANY(%s::bigint[])) ORDER BY episode_id",
                (*key, model_id, after_id, [int(i) for i in vectors_of]),
            ).fetchall()
            counted = conn.execute(
                "SELECT count(*) FROM episodes WHERE student_key = %s AND chain_id = %s "
                "AND episode_id <= %s",
                (*key, after_id),
            ).fetchone()

        def data_key() -> DataKey:
            if wrapped is None:
                # Only an erasure removes a key (here or on another node).
                raise NotFound(f"student_id {chain.student!r} has no readable episodes (erased)")
            who = (chain.tenant, chain.student)
            return self._ring.open_stored(who, wrapped[0], bytes(wrapped[1]))

        concepts = codec.recall_concepts(rows, chain, data_key)
        recall = [
            StoredRecall(
                episode_id=int(r[0]),
                occurred_at_us=int(r[1]),
                salience=float(r[2]),
                kind=Kind(r[3]),
                concepts=c,
                facts=RecallFacts(
                    fact_rows.from_i64(int(r[6])),
                    int(r[7]),
                    bool(r[8]),
                    r[9],
                    stems_from_text(r[10]),
                )
                if r[5] == FACTS_VERSION
                else None,
            )
            for r, c in zip(rows, concepts, strict=True)
        ]
        ids, matrix = _arrays([int(v[0]) for v in vectors], [bytes(v[1]) for v in vectors])
        return ChainRecall(recall, ids, matrix, 0 if counted is None else int(counted[0]))

    def last_episode_id(self) -> int:
        with self.db.connection() as conn:
            row = conn.execute(
                "SELECT episode_id FROM episodes ORDER BY episode_id DESC LIMIT 1"
            ).fetchone()
        return 0 if row is None else int(row[0])

    def unembedded(self, *, after_id: int, up_to_id: int, limit: int) -> list[Unembedded]:
        with self.db.connection() as conn:
            rows = conn.execute(
                f"SELECT {_EPISODE_COLUMNS}{_SEALED_COLUMNS} FROM {_EPISODE_FROM}{_KEY_JOIN} "
                "WHERE e.episode_id > %s AND e.episode_id <= %s "
                "AND NOT EXISTS (SELECT 1 FROM episode_vectors v "
                "WHERE v.student_key = e.student_key AND v.episode_id = e.episode_id) "
                f"AND {_NOT_ERASED} ORDER BY e.episode_id LIMIT %s",
                (after_id, up_to_id, limit),
            ).fetchall()
        episodes = [self._opened(r) for r in rows]
        return [
            Unembedded(ep.chain, ep.episode_id, embedding_text(ep.summary, ep.text))
            for ep in episodes
        ]

    def unembedded_counts(self, up_to_id: int) -> dict[ChainKey, int]:
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT c.tenant, c.student, c.subject, count(*) "
                f"FROM {_EPISODE_FROM} WHERE e.episode_id <= %s AND NOT EXISTS "
                "(SELECT 1 FROM episode_vectors v "
                "WHERE v.student_key = e.student_key AND v.episode_id = e.episode_id) "
                f"AND {_NOT_ERASED} GROUP BY c.tenant, c.student, c.subject",
                (up_to_id,),
            ).fetchall()
        return {ChainKey(r[0], r[1], r[2]): int(r[3]) for r in rows}

    def ping(self) -> None:
        self.db.ping()

    def episode_counts(self) -> dict[str, int]:
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT c.tenant, count(*) FROM episodes e JOIN chains c "
                "ON c.student_key = e.student_key AND c.chain_id = e.chain_id GROUP BY c.tenant"
            ).fetchall()
        return {str(tenant): int(count) for tenant, count in rows}

    def count_vectors_of_other_models(self, model_id: str) -> int:
        with self.db.connection() as conn:
            row = conn.execute(
                "SELECT count(*) FROM episode_vectors WHERE model <> %s", (model_id,)
            ).fetchone()
        return 0 if row is None else int(row[0])

    def episodes_by_id(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, StoredEpisode]:
        key = self._key(chain)
        if key is None or not len(ids):
            return {}
        found = self._episodes(
            "e.student_key = %s AND e.episode_id = ANY(%s::bigint[]) AND e.chain_id + 0 = %s",
            (key[0], [int(i) for i in ids], key[1]),
            "e.episode_id",
        )
        return {ep.episode_id: ep for ep in found}

    def memory_rows(self, chain: ChainKey, ids: Sequence[int]) -> dict[int, MemoryRow]:
        key = self._key(chain)
        if key is None or not len(ids):
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT e.episode_id, e.seq, e.kind, e.summary, e.occurred_at, e.evidence, "
                "e.sealed, k.master_key_id, k.wrapped FROM episodes e LEFT JOIN student_keys k "
                "ON k.student_key = e.student_key AND k.tenant = %s AND k.student = %s "
                "WHERE e.student_key = %s AND e.episode_id = ANY(%s::bigint[]) "
                "AND e.chain_id + 0 = %s",
                (chain.tenant, chain.student, key[0], [int(i) for i in ids], key[1]),
            ).fetchall()
        found = {}
        # Only the rows a block shows are opened (a dozen or so per turn).
        for episode_id, seq, kind, summary, occurred_at, evidence, sealed, key_id, wrapped in rows:
            if sealed is not None:
                if wrapped is None:
                    raise NotFound(
                        f"student_id {chain.student!r} has no readable episodes (erased)"
                    )
                data_key = self._ring.open_stored(
                    (chain.tenant, chain.student), str(key_id), bytes(wrapped)
                )
                summary = data_key.open(episode_ad(chain, int(seq), kind), bytes(sealed)).summary
            found[int(episode_id)] = MemoryRow(
                int(episode_id), int(seq), Kind(kind), summary, int(occurred_at),
                codec.cited_files(evidence),
            )  # fmt: skip
        return found

    def recall_facts(self, chain: ChainKey) -> dict[int, tuple[int, RecallFacts]]:
        key = self._key(chain)
        if key is None:
            return {}
        with self.db.connection() as conn:
            return fact_rows.read(conn, key)

    def annotations(
        self, chain: ChainKey, episode_id: int, kind: str | None = None
    ) -> list[Annotation]:
        key = self._key(chain)
        if key is None:
            return []
        sql = (
            "SELECT a.annotation_id, a.episode_id, a.kind, a.body, a.created_at FROM annotations a "
            "JOIN episodes e ON e.student_key = a.student_key AND e.episode_id = a.episode_id "
            "WHERE a.student_key = %s AND a.episode_id = %s AND e.chain_id = %s"
        )
        args: list[object] = [key[0], episode_id, key[1]]
        if kind is not None:
            sql += " AND a.kind = %s"
            args.append(kind)
        with self.db.connection() as conn:
            rows = conn.execute(sql + " ORDER BY a.annotation_id", args).fetchall()
        return [Annotation(int(r[0]), int(r[1]), r[2], r[3], int(r[4])) for r in rows]

    def latest_annotations(self, chain: ChainKey, kind: str) -> dict[int, str]:
        key = self._key(chain)
        if key is None:
            return {}
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT a.episode_id, a.body FROM annotations a JOIN episodes e "
                "ON e.student_key = a.student_key AND e.episode_id = a.episode_id "
                "WHERE e.student_key = %s AND e.chain_id = %s AND a.kind = %s "
                "ORDER BY a.annotation_id",
                (*key, kind),
            ).fetchall()
        return {int(episode_id): str(body) for episode_id, body in rows}

    # -- erasure -------------------------------------------------------------------------------

    def erasure_of(self, tenant: str, student: str) -> Erasure | None:
        return self._erased.get((tenant, student))

    def erase_student(
        self, tenant: str, student: str, *, by: str, at_us: int, allow_plaintext_history: bool
    ) -> ErasureOutcome:
        with self.db.connection() as conn:
            with conn.transaction():
                outcome = self._erase_in_transaction(
                    conn, tenant, student, by, at_us, allow_plaintext_history
                )
            if not outcome.already_erased:
                # The deleted key row stays in a dead tuple until a VACUUM reclaims it; do it now
                # for this small table. PostgreSQL does not promise to overwrite the bytes, and
                # the WAL keeps them: DESIGN.md ("Erasure") says what that leaves.
                conn.execute("VACUUM student_keys")
        who = (tenant, student)
        self._erased[who] = outcome.erasure
        self._ring.forget(who)
        return outcome

    def _erase_in_transaction(
        self,
        conn: Connection,
        tenant: str,
        student: str,
        by: str,
        at_us: int,
        allow_plaintext_history: bool,
    ) -> ErasureOutcome:
        sk = student_key(tenant, student)
        # Exclusive, before the chain rows (as every writer takes it shared before them): waits
        # for every write of the student in flight on any node, and makes later ones find the
        # erasure.
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (sk,))
        done = conn.execute(
            f"SELECT {codec.ERASURE_COLUMNS} FROM erasures WHERE student_key = %s AND tenant = %s "
            "AND student = %s",
            (sk, tenant, student),
        ).fetchone()
        if done is not None:
            return ErasureOutcome(codec.erasure_from_row(done), already_erased=True)
        chain_ids = [
            int(r[0])
            for r in conn.execute(
                "SELECT chain_id FROM chains WHERE student_key = %s AND tenant = %s "
                "AND student = %s ORDER BY subject FOR UPDATE",
                (sk, tenant, student),
            ).fetchall()
        ]
        counted = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE sealed IS NULL) FROM episodes "
            "WHERE student_key = %s AND chain_id = ANY(%s::bigint[])",
            (sk, chain_ids),
        ).fetchone()
        assert counted is not None
        episodes, plaintext = int(counted[0]), int(counted[1])
        check_erasable(
            student, int(episodes), int(plaintext), allow_plaintext_history=allow_plaintext_history
        )
        erasure = Erasure(tenant, student, at_us, by, len(chain_ids), episodes, plaintext)
        # The record first: the guards on annotations, file versions and beliefs let an erased
        # student's rows go, and only theirs.
        conn.execute(
            f"INSERT INTO erasures (student_key, {codec.ERASURE_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (sk, tenant, student, at_us, by, len(chain_ids), episodes, plaintext),
        )
        conn.execute(
            "DELETE FROM student_keys WHERE student_key = %s AND tenant = %s AND student = %s",
            (sk, tenant, student),
        )
        for chain_id in chain_ids:
            for table in codec.DERIVED_TABLES:
                where, keys = _derived_rows_of(table)
                conn.execute(f"DELETE FROM {table} WHERE {where}", (*[sk] * keys, chain_id))
        return ErasureOutcome(erasure, already_erased=False)

    def rewrap_data_keys(self, new_master: MasterKey) -> int:
        """Re-wraps every data key under `new_master` in one transaction (the store was opened
        with the current master key); keys already under it are left as they are, so a rotation
        that was interrupted can be run again. Returns how many were re-wrapped."""
        old = self._ring.master
        done = 0
        with self.db.connection() as conn, conn.transaction():
            rows = conn.execute(
                "SELECT student_key, tenant, student, master_key_id, wrapped FROM student_keys "
                "ORDER BY student_key, tenant, student FOR UPDATE"
            ).fetchall()
            for sk, tenant, student, key_id, wrapped in rows:
                if key_id == new_master.key_id:
                    continue
                if key_id != old.key_id:
                    raise FailedPrecondition(
                        f"the data key of {tenant}/{student} is wrapped by master key "
                        f"{key_id}, neither the current ({old.key_id}) nor the new one"
                    )
                raw = old.unwrap(tenant, student, bytes(wrapped))
                conn.execute(
                    "UPDATE student_keys SET master_key_id = %s, wrapped = %s "
                    "WHERE student_key = %s AND tenant = %s AND student = %s",
                    (new_master.key_id, new_master.wrap(tenant, student, raw), sk, tenant, student),
                )
                done += 1
        return done

    def check_data_keys(self) -> int:
        """Unwraps every stored data key with the master key (nothing is kept); returns how many.
        Raises FailedPrecondition or SealBroken, naming the student, for one that does not open."""
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT tenant, student, master_key_id, wrapped FROM student_keys"
            ).fetchall()
        ring = KeyRing(self._ring.master)
        for tenant, student, key_id, wrapped in rows:
            ring.open_wrapped((tenant, student), key_id, bytes(wrapped))
        return len(rows)

    def master_key_ids(self) -> dict[str, int]:
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT master_key_id, count(*) FROM student_keys GROUP BY master_key_id"
            ).fetchall()
        return {str(k): int(n) for k, n in rows}

    # -- export and import (store/transfer.py) -------------------------------------------------

    def dump_table(self, table: str) -> Iterator[tuple[object, ...]]:
        with self.db.connection() as conn:
            yield from transfer.dump_table(conn, table)

    def is_empty(self) -> bool:
        with self.db.connection() as conn:
            return transfer.is_empty(conn)

    def load_tables(
        self,
        rows: Iterable[tuple[str, tuple[object, ...]]],
        derived: Iterable[tuple[int, int, RecallFacts]],
    ) -> None:
        with self.db.connection() as conn:
            with conn.transaction():
                transfer.load_tables(conn, rows, derived)
            # The erasures the load brought: their students are absent to every content read.
            self._erased.update(
                ((r[0], r[1]), codec.erasure_from_row(r))
                for r in conn.execute(f"SELECT {codec.ERASURE_COLUMNS} FROM erasures").fetchall()
            )

    # -- what other nodes changed (app/sync.py) ------------------------------------------------

    def chain_head(self, chain: ChainKey) -> ChainHead:
        if (chain.tenant, chain.student) in self._erased:
            return ChainHead(0, (0, 0), erased=True)
        key = self._key(chain)
        if key is None:
            return ChainHead(0, (0, 0))
        with self.db.connection() as conn:
            # Another node may have erased the student: this node learns it here, before its
            # next read of the chain's caches (app/sync.py drops them).
            found = conn.execute(
                f"SELECT {codec.ERASURE_COLUMNS} FROM erasures WHERE student_key = %s "
                "AND tenant = %s AND student = %s",
                (key[0], chain.tenant, chain.student),
            ).fetchone()
            if found is not None:
                self._erased[(chain.tenant, chain.student)] = codec.erasure_from_row(found)
                self._ring.forget((chain.tenant, chain.student))
                return ChainHead(0, (0, 0), erased=True)
            # Each part reads the end of one index range: ORDER BY ... LIMIT 1 spells that out,
            # where max() may be planned as a scan of the whole chain while statistics are stale.
            row = conn.execute(
                "SELECT (SELECT seq FROM episodes WHERE student_key = %(k)s AND chain_id = %(c)s "
                "ORDER BY seq DESC LIMIT 1), (SELECT belief_id FROM beliefs "
                "WHERE student_key = %(k)s AND chain_id = %(c)s ORDER BY belief_id DESC LIMIT 1), "
                "(SELECT retired_at FROM beliefs WHERE student_key = %(k)s AND chain_id = %(c)s "
                "AND retired_at IS NOT NULL ORDER BY retired_at DESC LIMIT 1)",
                {"k": key[0], "c": key[1]},
            ).fetchone()
        assert row is not None
        return ChainHead(int(row[0] or 0), (int(row[1] or 0), int(row[2] or 0)))

    def episodes_since(self, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        key = self._key(chain)
        if key is None:
            return []
        return self._episodes(
            "e.student_key = %s AND e.chain_id = %s AND e.seq > %s", (*key, seq), "e.seq"
        )

    def vectors_of(
        self, chain: ChainKey, model_id: str, ids: Sequence[int]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        key = self._key(chain)
        if key is None or not len(ids):
            return np.empty(0, np.int64), np.empty((0, 0), np.float32)
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT episode_id, vector FROM episode_vectors WHERE student_key = %s "
                "AND episode_id = ANY(%s::bigint[]) AND chain_id + 0 = %s AND model = %s "
                "ORDER BY episode_id",
                (key[0], [int(i) for i in ids], key[1], model_id),
            ).fetchall()
        return _arrays([int(r[0]) for r in rows], [bytes(r[1]) for r in rows])

    # -- files, passages, beliefs, the nightly cycle -------------------------------------------

    def file_versions(
        self, chain: ChainKey, dim: int, *, current_only: bool = True
    ) -> list[FileVersion]:
        key = self._key(chain)
        if key is None:
            return []
        with self.db.connection() as conn:
            return side.file_versions(conn, key, dim, current_only=current_only)

    def latest_file_version(self, chain: ChainKey, file_id: str) -> tuple[int, str] | None:
        key = self._key(chain)
        if key is None:
            return None
        with self.db.connection() as conn:
            return side.latest_version(conn, key, file_id)

    def current_passages(
        self, chain: ChainKey, model_id: str
    ) -> tuple[list[StoredPassage], npt.NDArray[np.float32]]:
        key = self._key(chain)
        if key is None:
            return [], np.empty((0, 0), np.float32)
        with self.db.connection() as conn:
            return side.current_passages(conn, key, model_id)

    def current_beliefs(self, chain: ChainKey) -> list[BeliefRow]:
        key = self._key(chain)
        if key is None:
            return []
        with self.db.connection() as conn:
            return side.current_beliefs(conn, key)

    def belief_rows(self, chain: ChainKey, concept_key: str | None = None) -> list[BeliefRow]:
        key = self._key(chain)
        if key is None:
            return []
        with self.db.connection() as conn:
            return side.belief_rows(conn, key, concept_key)

    def episodes_of_kind(self, chain: ChainKey, kinds: Sequence[Kind]) -> list[StoredEpisode]:
        key = self._key(chain)
        if key is None:
            return []
        return self._episodes(
            "e.student_key = %s AND e.chain_id = %s AND e.kind = ANY(%s::text[])",
            (*key, [k.value for k in kinds]),
            "e.seq",
        )

    def nightly_state(self, chain: ChainKey) -> NightlyState | None:
        key = self._key(chain)
        if key is None:
            return None
        with self.db.connection() as conn:
            return side.nightly_state(conn, key)

    def day_coverage(self, chain: ChainKey) -> dict[int, int]:
        key = self._key(chain)
        if key is None:
            return {}
        with self.db.connection() as conn:
            return side.day_coverage(conn, key)

    def recent_digests(self, chain: ChainKey, limit: int) -> list[WrittenDigest]:
        key = self._key(chain)
        if key is None:
            return []
        with self.db.connection() as conn:
            return side.recent_digests(conn, key, limit)

    def episodes_after(self, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        key = self._key(chain)
        if key is None:
            return []
        return self._episodes(
            "e.student_key = %s AND e.chain_id = %s AND e.seq > %s AND e.kind <> 'consolidation'",
            (*key, seq),
            "e.seq",
        )

    def nightly_candidates(self) -> list[tuple[ChainKey, int, int | None]]:
        with self.db.connection() as conn:
            found = side.nightly_candidates(conn)
            rows = conn.execute(
                "SELECT chain_id, tenant, student, subject FROM chains "
                "WHERE chain_id = ANY(%s::bigint[])",
                ([chain_id for chain_id, _, _ in found],),
            ).fetchall()
        keys = {int(r[0]): ChainKey(r[1], r[2], r[3]) for r in rows}
        # An erased student's chains have nothing left to digest, and take no more writes.
        return [
            (keys[chain_id], top, scanned)
            for chain_id, top, scanned in found
            if (keys[chain_id].tenant, keys[chain_id].student) not in self._erased
        ]

    def self_model_composed_at(self, chain: ChainKey) -> int | None:
        key = self._key(chain)
        if key is None:
            return None
        with self.db.connection() as conn:
            return side.self_model_composed_at(conn, key)

    def citation_batch(self, chain: ChainKey, kind: str, limit: int) -> list[int]:
        key = self._key(chain)
        if key is None:
            return []
        with self.db.connection() as conn:
            batch = side.never_checked_citations(conn, key, kind, limit)
            if len(batch) < limit:
                batch += side.oldest_checked_citations(conn, key, kind, limit - len(batch))
        return batch


def _derived_rows_of(table: str) -> tuple[str, int]:
    """The condition naming one chain's rows of a table an erasure empties (codec.DERIVED_TABLES)
    and how many times it takes the student key before the chain id (Citus needs the
    distribution column in every condition)."""
    if table == codec.ROWS_BY_EPISODE:
        return (
            "student_key = %s AND episode_id IN (SELECT episode_id FROM episodes "
            "WHERE student_key = %s AND chain_id = %s)",
            2,
        )
    return "student_key = %s AND chain_id = %s", 1


def _arrays(
    ids: list[int], blobs: list[bytes]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    if not ids:
        return np.empty(0, np.int64), np.empty((0, 0), np.float32)
    vectors = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(ids), -1)
    return np.asarray(ids, dtype=np.int64), vectors.astype(np.float32)


def _chain_vectors(chain: ChainKey, ids: list[int], blobs: list[bytes]) -> ChainVectors:
    arr_ids, vectors = _arrays(ids, blobs)
    return ChainVectors(chain, arr_ids, vectors)


class PostgresWriter:
    """Writes inside one transaction of `PostgresStore.writing()`. The first write that touches
    a chain locks its row until the transaction ends (see the module's docstring)."""

    def __init__(self, store: PostgresStore, conn: Connection) -> None:
        self._store = store
        self._conn = conn
        # Chains this transaction holds the lock of.
        self.locked: dict[ChainKey, Key] = {}
        # Episodes this transaction inserted.
        self.inserted = 0
        # Student keys whose advisory lock this transaction holds shared (`_share`).
        self._shared: set[int] = set()

    def _share(self, keys: Iterable[int]) -> None:
        """Takes the students' advisory locks shared, before any of their chain rows: an
        erasure takes its student's exclusively, then the chain rows, so both orders agree and
        an append and an erasure of one student never wait on each other in a circle."""
        wanted = sorted(set(keys) - self._shared)
        if wanted:
            self._conn.execute(
                "SELECT pg_advisory_xact_lock_shared(k) FROM unnest(%s::bigint[]) AS w(k) "
                "ORDER BY k",
                (wanted,),
            )
            self._shared.update(wanted)

    def _refuse_erased(self, chain: ChainKey) -> None:
        """Writes for a student this process knows erased are refused before any lock; appends
        also check the table (`_data_keys`) for erasures made by other nodes."""
        erased = self._store._erased.get((chain.tenant, chain.student))
        if erased is not None:
            raise FailedPrecondition(erased_message(erased.student, erased.erased_at_us))

    def _data_keys(self, students: Iterable[Student]) -> dict[Student, DataKey]:
        """The data key of each student, made and stored (in this transaction) for those without
        one. Takes each student's advisory lock shared first (an erasure takes it exclusively),
        then refuses a student erased by any node."""
        ordered = sorted(set(students))
        keys_of = [student_key(t, s) for t, s in ordered]
        self._share(keys_of)
        columns = (keys_of, [t for t, _ in ordered], [s for _, s in ordered])
        rows = self._conn.execute(
            "SELECT w.t, w.s, x.erased_at, k.master_key_id, k.wrapped "
            "FROM unnest(%s::bigint[], %s::text[], %s::text[]) AS w(sk, t, s) "
            "LEFT JOIN erasures x ON x.student_key = w.sk AND x.tenant = w.t AND x.student = w.s "
            "LEFT JOIN student_keys k ON k.student_key = w.sk AND k.tenant = w.t "
            "AND k.student = w.s",
            columns,
        ).fetchall()
        ring = self._store._ring
        keys: dict[Student, DataKey] = {}
        missing: list[Student] = []
        for tenant, student, erased_at, key_id, wrapped in rows:
            if erased_at is not None:
                raise FailedPrecondition(erased_message(student, int(erased_at)))
            if wrapped is None:
                missing.append((tenant, student))
            else:
                keys[(tenant, student)] = ring.open_stored(
                    (tenant, student), key_id, bytes(wrapped)
                )
        if missing:
            keys.update(self._make_data_keys(missing))
        return keys

    def _make_data_keys(self, students: Sequence[Student]) -> dict[Student, DataKey]:
        master = self._store._ring.master
        made: dict[Student, tuple[DataKey, bytes]] = {}
        for tenant, student in students:
            key, raw = DataKey.generate()
            made[(tenant, student)] = (key, master.wrap(tenant, student, raw))
        at = now_us()
        # Another node may make a student's key at the same moment (an append to another of
        # their chains): the primary key lets one insert win, the other waits for it and then
        # reads the winner's key.
        inserted = self._conn.execute(
            "INSERT INTO student_keys (student_key, tenant, student, master_key_id, wrapped, "
            "created_at) SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], "
            "%s::bytea[], %s::bigint[]) ON CONFLICT DO NOTHING RETURNING tenant, student",
            (
                [student_key(t, s) for t, s in students],
                [t for t, _ in students],
                [s for _, s in students],
                [master.key_id] * len(students),
                [made[w][1] for w in students],
                [at] * len(students),
            ),
        ).fetchall()
        keys = {(t, s): made[(t, s)][0] for t, s in inserted}
        for tenant, student in students:
            if (tenant, student) in keys:
                continue
            row = self._conn.execute(
                "SELECT master_key_id, wrapped FROM student_keys WHERE student_key = %s "
                "AND tenant = %s AND student = %s",
                (student_key(tenant, student), tenant, student),
            ).fetchone()
            assert row is not None
            keys[(tenant, student)] = self._store._ring.open_stored(
                (tenant, student), row[0], bytes(row[1])
            )
        return keys

    def _lock(self, chain: ChainKey) -> Key:
        held = self.locked.get(chain)
        if held is not None:
            return held
        self._refuse_erased(chain)
        sk = student_key(chain.tenant, chain.student)
        self._share([sk])
        args = (sk, chain.tenant, chain.student, chain.subject)
        select = (
            "SELECT chain_id FROM chains WHERE student_key = %s AND tenant = %s AND student = %s "
            "AND subject = %s FOR UPDATE"
        )
        row = self._conn.execute(select, args).fetchone()
        if row is None:
            # Another node may create the chain at the same moment: the unique key lets one
            # insert win and the other wait for it, then both lock the one row.
            self._conn.execute(
                "INSERT INTO chains (student_key, tenant, student, subject) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                args,
            )
            row = self._conn.execute(select, args).fetchone()
        assert row is not None
        key = (sk, int(row[0]))
        self.locked[chain] = key
        return key

    def _lock_all(self, chains: Iterable[ChainKey]) -> None:
        """Locks every chain of a batch in one order (creating the missing ones): two batches
        over the same chains on two nodes queue instead of deadlocking. One statement for the
        chains that exist, one for those that do not, one to lock those."""
        wanted = sorted({c for c in chains if c not in self.locked}, key=_order)
        for chain in wanted:
            self._refuse_erased(chain)
        self._share(student_key(c.tenant, c.student) for c in wanted)
        if len(wanted) <= 1:
            for chain in wanted:
                self._lock(chain)
            return
        columns = (
            [student_key(c.tenant, c.student) for c in wanted],
            [c.tenant for c in wanted],
            [c.student for c in wanted],
            [c.subject for c in wanted],
        )
        select = (
            "SELECT c.student_key, c.chain_id, c.tenant, c.student, c.subject FROM chains c "
            "JOIN unnest(%s::bigint[], %s::text[], %s::text[], %s::text[]) AS w(k, t, s, j) "
            "ON c.student_key = w.k AND c.tenant = w.t AND c.student = w.s AND c.subject = w.j "
            "ORDER BY c.tenant, c.student, c.subject FOR UPDATE OF c"
        )
        found = self._conn.execute(select, columns).fetchall()
        if len(found) < len(wanted):
            # Rows inserted in the same order; another node creating one of them at the same
            # moment makes this wait for it, then the select below locks it.
            self._conn.execute(
                "INSERT INTO chains (student_key, tenant, student, subject) "
                "SELECT * FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[]) "
                "ON CONFLICT DO NOTHING",
                columns,
            )
            found = self._conn.execute(select, columns).fetchall()
        for sk, chain_id, tenant, student, subject in found:
            self.locked[ChainKey(tenant, student, subject)] = (int(sk), int(chain_id))
        assert all(c in self.locked for c in wanted)

    def append(
        self, items: Sequence[PreparedEpisode], *, model_id: str, recorded_at_us: int
    ) -> list[AppendOutcome]:
        conn = self._conn
        self._lock_all(i.episode.chain for i in items)
        data_keys = self._data_keys(
            (i.episode.chain.tenant, i.episode.chain.student) for i in items
        )
        keyed = [(i.episode.chain, i.episode.client_key) for i in items if i.episode.client_key]
        stored = self._by_client_keys(keyed, data_keys)
        # Which items insert: the first of each new client key (a later one in the same batch
        # is judged against it, as against a stored episode).
        seen: set[tuple[ChainKey, str]] = set(stored)
        inserting = []
        for i, item in enumerate(items):
            ep = item.episode
            if ep.client_key:
                if (ep.chain, ep.client_key) in seen:
                    continue
                seen.add((ep.chain, ep.client_key))
            inserting.append(i)
        ids = self._new_episode_ids(len(inserting))
        heads = self._heads()
        outcomes: list[AppendOutcome] = []
        new_rows: list[tuple[object, ...]] = []
        vectors: list[tuple[object, ...]] = []
        derived: list[tuple[int, int, int, RecallFacts]] = []
        next_id = iter(ids)
        insert_set = set(inserting)
        for i, item in enumerate(items):
            ep = item.episode
            existing = stored.get((ep.chain, ep.client_key)) if ep.client_key else None
            if i not in insert_set:
                assert existing is not None
                outcomes.append(_repeat(ep.same_content(existing), existing, ep.client_key))
                continue
            sk, chain_id = self.locked[ep.chain]
            last_seq, prev_hash = heads[ep.chain]
            words = Words(ep.summary, ep.text, ep.concepts, ep.check.topic if ep.check else "")
            sealed = data_keys[(ep.chain.tenant, ep.chain.student)].seal(
                episode_ad(ep.chain, last_seq + 1, ep.kind.value), words
            )
            unsaved = StoredEpisode(
                episode_id=next(next_id), chain=ep.chain, seq=last_seq + 1, kind=ep.kind,
                summary=ep.summary, text=ep.text, concepts=ep.concepts, salience=ep.salience,
                occurred_at_us=ep.occurred_at_us, recorded_at_us=recorded_at_us,
                evidence=ep.evidence, check=ep.check, quiz=ep.quiz, client_key=ep.client_key,
                prev_hash=prev_hash, hash=b"", sealed=sealed,
            )  # fmt: skip
            # Hashed as the row is stored: its word columns empty, the words in `sealed` only.
            episode = dataclasses.replace(
                unsaved, hash=recompute(codec.without_words(unsaved), prev_hash)
            )
            heads[ep.chain] = (episode.seq, episode.hash)
            if ep.client_key:
                stored[(ep.chain, ep.client_key)] = episode
            new_rows.append(_episode_row(sk, chain_id, codec.without_words(episode)))
            if item.vector is not None:
                vectors.append(
                    (sk, episode.episode_id, chain_id, model_id, codec.vector_bytes(item.vector))
                )
            derived.append((sk, chain_id, episode.episode_id, item.facts))
            outcomes.append(AppendOutcome(AppendStatus.INSERTED, episode))
        self.inserted += len(new_rows)
        if new_rows:
            with conn.cursor().copy(f"COPY episodes ({_INSERT_COLUMNS}) FROM STDIN") as copy:
                for row in new_rows:
                    copy.write_row(row)
            if vectors:
                with conn.cursor().copy(
                    "COPY episode_vectors (student_key, episode_id, chain_id, model, vector) "
                    "FROM STDIN"
                ) as copy:
                    for row in vectors:
                        copy.write_row(row)
            fact_rows.add(conn, derived)
        return outcomes

    def _new_episode_ids(self, n: int) -> list[int]:
        """n fresh episode ids, ascending. Drawn while this transaction holds its chains' locks,
        so each chain's ids grow with its seq (the recall tables rely on it)."""
        if n == 0:
            return []
        rows = self._conn.execute(
            "SELECT nextval('episode_ids') FROM generate_series(1, %s)", (n,)
        ).fetchall()
        return sorted(int(r[0]) for r in rows)

    def _heads(self) -> dict[ChainKey, tuple[int, bytes]]:
        """(last seq, its hash) of every chain this transaction holds, in one statement."""
        chains = list(self.locked)
        rows = self._conn.execute(
            "SELECT w.i, h.seq, h.hash FROM unnest(%s::bigint[], %s::bigint[]) "
            "WITH ORDINALITY AS w(k, c, i) LEFT JOIN LATERAL (SELECT seq, hash FROM episodes "
            "WHERE student_key = w.k AND chain_id = w.c ORDER BY seq DESC LIMIT 1) h ON true",
            ([self.locked[c][0] for c in chains], [self.locked[c][1] for c in chains]),
        ).fetchall()
        heads = {}
        for i, seq, hash_ in rows:
            chain = chains[int(i) - 1]
            heads[chain] = (0, GENESIS_HASH) if seq is None else (int(seq), bytes(hash_))
        return heads

    def _by_client_keys(
        self, keyed: Sequence[tuple[ChainKey, str]], data_keys: dict[Student, DataKey]
    ) -> dict[tuple[ChainKey, str], StoredEpisode]:
        """The stored episodes of these (chain, client key) pairs, in one statement."""
        pairs = sorted(set(keyed), key=lambda p: (_order(p[0]), p[1]))
        if not pairs:
            return {}
        # Each pair is one lookup of the client-key index (LATERAL makes the key part of the
        # index condition, whatever the planner estimates of a table whose statistics are stale).
        own = ", ".join(f"x.{f}" for f in codec.EPISODE_FIELDS if f not in _CHAIN_FIELDS)
        rows = self._conn.execute(
            f"SELECT w.i, {own}, x.sealed FROM unnest(%s::bigint[], %s::bigint[], %s::text[]) "
            "WITH ORDINALITY AS w(k, c, ck, i) CROSS JOIN LATERAL (SELECT * FROM episodes e "
            "WHERE e.student_key = w.k AND e.chain_id = w.c AND e.client_key = w.ck "
            "AND e.client_key <> '') x",
            (
                [self.locked[c][0] for c, _ in pairs],
                [self.locked[c][1] for c, _ in pairs],
                [key for _, key in pairs],
            ),
        ).fetchall()
        found: dict[tuple[ChainKey, str], StoredEpisode] = {}
        for i, episode_id, *rest, sealed in rows:
            chain = pairs[int(i) - 1][0]
            ep = codec.episode_from_row(
                (episode_id, chain.tenant, chain.student, chain.subject, *rest)
            )
            if sealed is not None:
                ep = codec.with_words(ep, bytes(sealed), data_keys[(chain.tenant, chain.student)])
            found[(chain, ep.client_key)] = ep
        return found

    def annotate(
        self, chain: ChainKey, episode_id: int, kind: str, body: str, *, created_at_us: int
    ) -> int:
        key = self.locked.get(chain) or (
            None
            if (chain.tenant, chain.student) in self._store._erased
            else self._store._known(self._conn, chain)
        )
        found = (
            key is not None
            and self._conn.execute(
                "SELECT 1 FROM episodes WHERE student_key = %s AND episode_id = %s "
                "AND chain_id = %s",
                (key[0], episode_id, key[1]),
            ).fetchone()
        )
        if not found:
            raise NotFound(f"episode {episode_id} is not in this student's chain")
        assert key is not None
        row = self._conn.execute(
            "INSERT INTO annotations (student_key, episode_id, kind, body, created_at) "
            "VALUES (%s, %s, %s, %s, %s) RETURNING annotation_id",
            (key[0], episode_id, kind, body, created_at_us),
        ).fetchone()
        assert row is not None
        return int(row[0])

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
            self._lock(chain),
            row,
            episode_id=episode_id,
            model_id=model_id,
            ingested_at_us=ingested_at_us,
        )

    def latest_file_version(self, chain: ChainKey, file_id: str) -> tuple[int, str] | None:
        """As the store's, but read inside this transaction, under the chain's lock."""
        return side.latest_version(self._conn, self._lock(chain), file_id)

    def add_belief(self, chain: ChainKey, belief: NewBelief, *, created_at_us: int) -> int:
        return side.insert_belief(
            self._conn, self._lock(chain), belief, created_at_us=created_at_us
        )

    def supersede_belief(self, chain: ChainKey, old_id: int, new_id: int) -> None:
        side.supersede_belief(self._conn, self._lock(chain), old_id, new_id)

    def retire_current_beliefs(self, chain: ChainKey, at_us: int) -> int:
        return side.retire_current_beliefs(self._conn, self._lock(chain), at_us)

    def current_beliefs(self, chain: ChainKey) -> list[BeliefRow]:
        return side.current_beliefs(self._conn, self._lock(chain))

    def save_vectors(
        self, model_id: str, rows: Sequence[tuple[ChainKey, int, npt.NDArray[np.float32]]]
    ) -> None:
        by_chain: dict[ChainKey, list[tuple[int, npt.NDArray[np.float32]]]] = {}
        for chain, episode_id, vector in rows:
            by_chain.setdefault(chain, []).append((episode_id, vector))
        for chain, of_chain in by_chain.items():
            # Derived data beside the ledger: no chain lock; the key is only looked up.
            key = self.locked.get(chain) or self._store._known(self._conn, chain)
            if key is None:
                continue
            self._conn.execute(
                "INSERT INTO episode_vectors (student_key, episode_id, chain_id, model, vector) "
                "SELECT e.student_key, e.episode_id, e.chain_id, %s, w.v "
                "FROM unnest(%s::bigint[], %s::bytea[]) AS w(id, v) JOIN episodes e "
                "ON e.student_key = %s AND e.episode_id = w.id AND e.chain_id + 0 = %s "
                "ON CONFLICT (student_key, episode_id) DO NOTHING",
                (
                    model_id,
                    [int(i) for i, _ in of_chain],
                    [codec.vector_bytes(v) for _, v in of_chain],
                    *key,
                ),
            )

    def save_recall_facts(self, chain: ChainKey, facts: Sequence[tuple[int, RecallFacts]]) -> None:
        fact_rows.save(self._conn, self._lock(chain), facts)

    def checks_after(self, chain: ChainKey, seq: int) -> list[StoredEpisode]:
        key = self._lock(chain)
        rows = self._conn.execute(
            f"SELECT {_EPISODE_COLUMNS}{_SEALED_COLUMNS} FROM {_EPISODE_FROM}{_KEY_JOIN} "
            "WHERE e.student_key = %s AND e.chain_id = %s AND e.kind = 'check' AND e.seq > %s "
            "ORDER BY e.seq",
            (*key, seq),
        ).fetchall()
        return [self._store._opened(r) for r in rows]

    def nightly_state(self, chain: ChainKey) -> NightlyState | None:
        """As the store's, but read inside this transaction, under the chain's lock: a run on
        another node that wrote first is seen here (app/nightly.py's generation check)."""
        return side.nightly_state(self._conn, self._lock(chain))

    def save_nightly_state(self, chain: ChainKey, state: NightlyState, *, at_us: int) -> None:
        side.save_nightly_state(self._conn, self._lock(chain), state, at_us=at_us)

    def add_day_digest(self, chain: ChainKey, digest: DayDigest, *, done_at_us: int) -> None:
        side.insert_day_digest(self._conn, self._lock(chain), digest, done_at_us=done_at_us)

    def save_self_model(
        self, chain: ChainKey, working_set: Sequence[str], calibration: str, *, at_us: int
    ) -> None:
        side.save_self_model(self._conn, self._lock(chain), working_set, calibration, at_us=at_us)


def _order(chain: ChainKey) -> tuple[str, str, str]:
    return (chain.tenant, chain.student, chain.subject)


def _repeat(same: bool, existing: StoredEpisode, client_key: str) -> AppendOutcome:
    if same:
        return AppendOutcome(AppendStatus.DUPLICATE, existing)
    return AppendOutcome(
        AppendStatus.CONFLICT,
        existing,
        f"client_key: {client_key!r} is already stored with different content "
        f"(episode {existing.episode_id})",
    )


def _episode_row(sk: int, chain_id: int, ep: StoredEpisode) -> tuple[object, ...]:
    check, quiz = ep.check, ep.quiz
    return (
        sk, ep.episode_id, chain_id, ep.seq, ep.kind.value, ep.summary, ep.text,
        codec.concepts_json(ep.concepts), ep.salience, ep.occurred_at_us, ep.recorded_at_us,
        codec.evidence_json(ep.evidence), check.outcome.value if check else "",
        check.topic if check else "", check.predicted_mastery if check else None,
        quiz.correct if quiz else 0, quiz.total if quiz else 0, ep.client_key, ep.prev_hash,
        ep.hash, ep.sealed,
    )  # fmt: skip
