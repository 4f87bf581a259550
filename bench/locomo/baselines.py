"""Baselines read from the server's own store, after the conversation was ingested through gRPC.

Each ranks every turn of one chain for a question; `BlockPacker` then packs the ranking into the
same block and budget the server fills, so all methods are compared at equal budget.

- BM25: FTS5's bm25() over the store's own full-text index, i.e. over exactly the terms the server
  indexed (each episode's summary and text, normalised by `tutor_memory.recall.text`, prefixed
  with the chain). The query is every word of the question in the same normal form, ORed. The
  server indexes each episode's *set* of words, so a term's frequency in an episode is always 1:
  this BM25 is IDF with length normalisation. Only episodes sharing a word with the question are
  ranked; ties go to the newer turn.
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

import faiss
import numpy as np
import numpy.typing as npt

from bench.locomo.packing import StoredTurn
from tutor_memory.domain.episodes import Kind
from tutor_memory.domain.text.words import words

# The store's own quoting of a chain-prefixed term, so the query reads its index exactly as the
# server writes it (a private helper: a second copy of the format could drift from it silently).
from tutor_memory.store.sqlite.store import fts_phrase

BM25 = "bm25"
VECTOR = "vector"
HYBRID = "hybrid"
RECENCY = "recency"


class ChainReader:
    """One conversation's chain in a server's data directory, opened read-only."""

    def __init__(self, database: Path, student: str, subject: str, model_id: str) -> None:
        conn = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            row = conn.execute(
                "SELECT chain_id FROM chains WHERE student = ? AND subject = ?", (student, subject)
            ).fetchone()
            if row is None:
                raise LookupError(f"no chain ({student}, {subject}) in {database}")
            self.chain_id = int(row[0])
            rows = conn.execute(
                "SELECT e.episode_id, e.seq, e.kind, e.summary, e.occurred_at, v.vector "
                "FROM episodes e JOIN episode_vectors v ON v.episode_id = e.episode_id "
                "WHERE e.chain_id = ? AND v.model = ? ORDER BY e.seq",
                (self.chain_id, model_id),
            ).fetchall()
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self.turns = [StoredTurn(r[0], r[1], Kind(r[2]), r[3], r[4]) for r in rows]
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
        terms = list(dict.fromkeys(words(question)))
        if not terms:
            return []
        query = " OR ".join(fts_phrase(self.chain_id, t) for t in terms)
        rows = self._conn.execute(
            "SELECT rowid FROM episode_fts WHERE episode_fts MATCH ? "
            "ORDER BY bm25(episode_fts), rowid DESC",
            (query,),
        ).fetchall()
        return [self.position_of[r[0]] for r in rows if r[0] in self.position_of]

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
