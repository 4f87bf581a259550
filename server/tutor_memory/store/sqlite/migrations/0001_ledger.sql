-- The episode ledger (SPEC R1): chains, episodes, their full-text index, their embeddings, and
-- annotation rows for facts that arrive later. Applied once, in one transaction, by migrate.py.

CREATE TABLE chains (
    chain_id INTEGER PRIMARY KEY,
    tenant   TEXT NOT NULL,
    student  TEXT NOT NULL,
    subject  TEXT NOT NULL,
    UNIQUE (tenant, student, subject)
) STRICT;

-- Times are integer microseconds since the Unix epoch, UTC. concepts and evidence are JSON arrays.
CREATE TABLE episodes (
    episode_id        INTEGER PRIMARY KEY,
    chain_id          INTEGER NOT NULL REFERENCES chains (chain_id),
    seq               INTEGER NOT NULL,
    kind              TEXT NOT NULL,
    summary           TEXT NOT NULL,
    text              TEXT NOT NULL,
    concepts          TEXT NOT NULL,
    salience          REAL NOT NULL,
    occurred_at       INTEGER NOT NULL,
    recorded_at       INTEGER NOT NULL,
    evidence          TEXT NOT NULL,
    check_outcome     TEXT NOT NULL,
    check_topic       TEXT NOT NULL,
    predicted_mastery REAL,
    quiz_correct      INTEGER NOT NULL,
    quiz_total        INTEGER NOT NULL,
    client_key        TEXT NOT NULL,
    prev_hash         BLOB NOT NULL,
    hash              BLOB NOT NULL,
    UNIQUE (chain_id, seq)
) STRICT;

CREATE UNIQUE INDEX episodes_client_key ON episodes (chain_id, client_key) WHERE client_key <> '';
CREATE INDEX episodes_occurred ON episodes (chain_id, occurred_at, seq);

-- Append-only, enforced below the code too: no code path may edit or delete an episode (R1.4).
-- This stops mistakes, not an operator with the file: the hash chain is what shows that.
CREATE TRIGGER episodes_never_updated BEFORE UPDATE ON episodes
BEGIN
    SELECT RAISE(ABORT, 'episodes are append-only: never updated');
END;
CREATE TRIGGER episodes_never_deleted BEFORE DELETE ON episodes
BEGIN
    SELECT RAISE(ABORT, 'episodes are append-only: never deleted');
END;

-- The words of each episode (summary and text, in recall's normal form), each prefixed with its
-- chain ('c<chain_id>_<word>'): every chain has its own vocabulary inside one index, so a search
-- reads only that chain's postings, with no join and no scan of other students' rows.
CREATE VIRTUAL TABLE episode_fts USING fts5 (
    terms,
    content = '',
    tokenize = "unicode61 remove_diacritics 2 tokenchars '_'"
);

-- Embeddings are derived data (a later model may re-embed), so they live beside the ledger, not
-- in the hashed row. The FAISS index is rebuilt from this table at start.
CREATE TABLE episode_vectors (
    episode_id INTEGER PRIMARY KEY REFERENCES episodes (episode_id),
    chain_id   INTEGER NOT NULL,
    model      TEXT NOT NULL,
    vector     BLOB NOT NULL
) STRICT;
CREATE INDEX episode_vectors_chain ON episode_vectors (chain_id);

-- Facts about an episode that arrive after it (grounding status, memories shown for an answer,
-- citation checks: R1.5). Also append-only: a newer fact is a newer row.
CREATE TABLE annotations (
    annotation_id INTEGER PRIMARY KEY,
    episode_id    INTEGER NOT NULL REFERENCES episodes (episode_id),
    kind          TEXT NOT NULL,
    body          TEXT NOT NULL,
    created_at    INTEGER NOT NULL
) STRICT;
CREATE INDEX annotations_episode ON annotations (episode_id, kind);
CREATE TRIGGER annotations_never_updated BEFORE UPDATE ON annotations
BEGIN
    SELECT RAISE(ABORT, 'annotations are append-only: never updated');
END;
CREATE TRIGGER annotations_never_deleted BEFORE DELETE ON annotations
BEGIN
    SELECT RAISE(ABORT, 'annotations are append-only: never deleted');
END;
