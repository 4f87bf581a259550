"""The lexical index of the PostgreSQL store: one row per (chain, word, episode) in
`episode_terms`, where SQLite has FTS5 with chain-prefixed terms. Only this module reads or writes
that table, so a change of what is indexed (stems instead of words) stays here and in a
migration.

Recall scores in the server (domain/recall/candidates.py) from what `matches` returns, exactly as
it does over SQLite: for each word, the newest episodes holding it. PostgreSQL's own text search
ranks by its own formula, which is not what recall needs, so it is not used.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from tutor_memory.store.postgres.database import Connection


def add(conn: Connection, rows: Iterable[tuple[int, int, int, frozenset[str]]]) -> None:
    """Indexes episodes: (student_key, chain_id, episode_id, distinct words) each."""
    with conn.cursor().copy(
        "COPY episode_terms (student_key, chain_id, term, episode_id) FROM STDIN"
    ) as copy:
        for student_key, chain_id, episode_id, terms in rows:
            for term in sorted(terms):
                copy.write_row((student_key, chain_id, term, episode_id))


def matches(
    conn: Connection, student_key: int, chain_id: int, terms: Sequence[str], limit: int
) -> list[npt.NDArray[np.int64]]:
    """For each term, the ids of the chain's episodes holding it, newest first, at most `limit`:
    one round trip, each term one backwards walk of the primary key's range."""
    if not terms:
        return []
    rows = conn.execute(
        "SELECT t.i, m.episode_id FROM unnest(%s::text[]) WITH ORDINALITY AS t(term, i) "
        "CROSS JOIN LATERAL (SELECT episode_id FROM episode_terms "
        "WHERE student_key = %s AND chain_id = %s AND term = t.term "
        "ORDER BY episode_id DESC LIMIT %s) m ORDER BY t.i, m.episode_id DESC",
        (list(terms), student_key, chain_id, limit),
    ).fetchall()
    found: list[list[int]] = [[] for _ in terms]
    for i, episode_id in rows:
        found[int(i) - 1].append(int(episode_id))
    return [np.asarray(ids, dtype=np.int64) for ids in found]
