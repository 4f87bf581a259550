"""Baselines read from the server's own store, after the conversation was ingested through gRPC.

Each ranks every turn of one chain for a question; `BlockPacker` then packs the ranking into the
same block and budget the server fills, so all methods are compared at equal budget.

- BM25: the `bm25s` library's BM25 (its default Lucene variant, k1 = 1.5, b = 0.75) over each
  turn's summary as the server stored it (opened from its sealed words with the master key the
  bench's server made in the data directory), tokenised by bm25s with its English stop words and
  PyStemmer's English Snowball stemmer: a standard, independent lexical retriever (none of the
  server's text code is involved). Only turns sharing a stem with the question are ranked; ties
  go to the newer turn.
- Vector: FAISS IndexFlatIP (exact cosine; the vectors are unit length) over the embeddings the
  server stored, the question embedded by the project's embedder in this process.
- Hybrid: the BM25 and vector rankings fused by reciprocal rank (`bench.locomo.fusion`, k = 60),
  the usual strong baseline of lexical plus dense retrieval. It ranks every turn: those no BM25
  term matches still come in by their vector rank.
- Recency: the most recent turns first (occurred_at, then chain position), whatever the question.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import bm25s
import faiss
import numpy as np
import numpy.typing as npt
import Stemmer

from bench.locomo.packing import StoredTurn
from tutor_memory.domain.episodes import ChainKey, Kind
from tutor_memory.domain.sealing import DataKey, episode_ad
from tutor_memory.store.masterkey import MASTER_KEY_FILE_NAME, read_master_key_file

# How the BM25 baseline tokenises turns and questions: English stop words and Snowball stems.
_TOKENIZE = {"stopwords": "en", "stemmer": Stemmer.Stemmer("english")}

BM25 = "bm25"
VECTOR = "vector"
HYBRID = "hybrid"
RECENCY = "recency"


def _data_key(conn: sqlite3.Connection, database: Path, chain: ChainKey) -> DataKey:
    """The student's data key, unwrapped with the master key beside the database."""
    master = read_master_key_file(database.parent / MASTER_KEY_FILE_NAME)
    row = conn.execute(
        "SELECT wrapped FROM student_keys WHERE tenant = ? AND student = ?",
        (chain.tenant, chain.student),
    ).fetchone()
    if row is None:
        raise LookupError(f"no data key of {chain.student} in {database}")
    return DataKey(master.unwrap(chain.tenant, chain.student, row[0]))


class ChainReader:
    """One conversation's chain in a server's data directory, opened read-only."""

    def __init__(self, database: Path, student: str, subject: str, model_id: str) -> None:
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            row = conn.execute(
                "SELECT chain_id, tenant FROM chains WHERE student = ? AND subject = ?",
                (student, subject),
            ).fetchone()
            if row is None:
                raise LookupError(f"no chain ({student}, {subject}) in {database}")
            self.chain_id = int(row[0])
            chain = ChainKey(str(row[1]), student, subject)
            rows = conn.execute(
                "SELECT e.episode_id, e.seq, e.kind, e.summary, e.occurred_at, v.vector, e.sealed "
                "FROM episodes e JOIN episode_vectors v ON v.episode_id = e.episode_id "
                "WHERE e.chain_id = ? AND v.model = ? ORDER BY e.seq",
                (self.chain_id, model_id),
            ).fetchall()
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._bm25: bm25s.BM25 | None = None
        key = _data_key(conn, database, chain) if any(r[6] is not None for r in rows) else None
        self.turns = [
            StoredTurn(
                r[0],
                r[1],
                Kind(r[2]),
                r[3]
                if r[6] is None or key is None
                else key.open(episode_ad(chain, r[1], r[2]), r[6]).summary,
                r[4],
            )
            for r in rows
        ]
        self.position_of = {t.episode_id: i for i, t in enumerate(self.turns)}
        vectors = np.frombuffer(b"".join(r[5] for r in rows), dtype=np.float32)
        self.vectors = vectors.reshape(len(rows), -1).copy()

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> ChainReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def bm25_ranking(self, question: str) -> list[int]:
        if self._bm25 is None:
            corpus = bm25s.tokenize(
                [turn.summary for turn in self.turns], **_TOKENIZE, show_progress=False
            )
            self._bm25 = bm25s.BM25()
            self._bm25.index(corpus, show_progress=False)
        tokens = bm25s.tokenize([question], return_ids=False, **_TOKENIZE, show_progress=False)[0]
        if not tokens:
            return []
        scores = self._bm25.get_scores(tokens)
        hits = [i for i in range(len(self.turns)) if scores[i] > 0]
        return sorted(hits, key=lambda i: (-scores[i], -self.turns[i].occurred_at_us, -i))

    def vector_rankings(self, query_vectors: npt.NDArray[np.float32]) -> list[list[int]]:
        """For each query vector, every turn by cosine similarity, nearest first."""
        index = faiss.IndexFlatIP(self.vectors.shape[1])
        index.add(self.vectors)
        queries = np.ascontiguousarray(query_vectors, dtype=np.float32)
        _scores, positions = index.search(queries, len(self.turns))
        return [[int(p) for p in row if p >= 0] for row in positions]

    def recency_ranking(self) -> list[int]:
        return sorted(
            range(len(self.turns)),
            key=lambda i: (self.turns[i].occurred_at_us, self.turns[i].seq),
            reverse=True,
        )
