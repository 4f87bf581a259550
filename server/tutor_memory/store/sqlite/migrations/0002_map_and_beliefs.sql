-- Course files and their passages (SPEC R3), beliefs (R5), and the nightly cycle's bookkeeping
-- (R8). The episode ledger stays the record: everything here is either a file's content or derived
-- from episodes, and is written next to the episode that records it, in the same transaction.

-- Every version of every file a chain was given, never edited: a citation check needs the
-- fingerprint of each version, including versions that were replaced or removed since. A removal
-- is a version row with an empty fingerprint.
CREATE TABLE file_versions (
    file_row     INTEGER PRIMARY KEY,
    chain_id     INTEGER NOT NULL REFERENCES chains (chain_id),
    file_id      TEXT NOT NULL,
    version      INTEGER NOT NULL,
    fingerprint  TEXT NOT NULL,
    filename     TEXT NOT NULL,
    kind         TEXT NOT NULL,
    title        TEXT NOT NULL,
    pages        INTEGER NOT NULL,
    size_bytes   INTEGER NOT NULL,
    -- "builtin" or "caller"; the accepted concepts as JSON, in extraction order, and the embedding
    -- of each name (rows of float32, same order), which merging across files compares.
    extractor    TEXT NOT NULL,
    concepts     TEXT NOT NULL,
    name_vectors BLOB NOT NULL,
    rejected     TEXT NOT NULL,
    episode_id   INTEGER NOT NULL REFERENCES episodes (episode_id),
    ingested_at  INTEGER NOT NULL,
    UNIQUE (chain_id, file_id, version)
) STRICT;
CREATE TRIGGER file_versions_never_updated BEFORE UPDATE ON file_versions
BEGIN
    SELECT RAISE(ABORT, 'file versions are append-only: never updated');
END;

-- Page-level chunks of each file version, embedded for SearchPassages and grounding.
CREATE TABLE passages (
    passage_id INTEGER PRIMARY KEY,
    file_row   INTEGER NOT NULL REFERENCES file_versions (file_row),
    chain_id   INTEGER NOT NULL,
    page       INTEGER NOT NULL,
    text       TEXT NOT NULL,
    model      TEXT NOT NULL,
    vector     BLOB NOT NULL
) STRICT;
CREATE INDEX passages_file ON passages (file_row);
CREATE INDEX passages_chain ON passages (chain_id);

-- Beliefs (R5.2, R5.3). A row is never changed into another claim: the only two columns that may
-- ever change are set once, from NULL, when a newer row supersedes it or a re-derivation retires it.
CREATE TABLE beliefs (
    belief_id            INTEGER PRIMARY KEY,
    chain_id             INTEGER NOT NULL REFERENCES chains (chain_id),
    concept              TEXT NOT NULL,
    concept_key          TEXT NOT NULL,
    claim                TEXT NOT NULL,
    confidence           REAL NOT NULL,
    supporting           TEXT NOT NULL,
    reason               TEXT NOT NULL,
    rules_version        TEXT NOT NULL,
    needs_reconfirmation INTEGER NOT NULL,
    evidence_at          INTEGER NOT NULL,
    created_at           INTEGER NOT NULL,
    superseded_by        INTEGER REFERENCES beliefs (belief_id),
    retired_at           INTEGER
) STRICT;
CREATE INDEX beliefs_current ON beliefs (chain_id, concept_key) WHERE superseded_by IS NULL
    AND retired_at IS NULL;
CREATE INDEX beliefs_chain ON beliefs (chain_id, concept_key, belief_id);
CREATE TRIGGER beliefs_never_rewritten BEFORE UPDATE ON beliefs
WHEN OLD.belief_id IS NOT NEW.belief_id OR OLD.chain_id IS NOT NEW.chain_id
    OR OLD.concept IS NOT NEW.concept OR OLD.concept_key IS NOT NEW.concept_key
    OR OLD.claim IS NOT NEW.claim OR OLD.confidence IS NOT NEW.confidence
    OR OLD.supporting IS NOT NEW.supporting OR OLD.reason IS NOT NEW.reason
    OR OLD.rules_version IS NOT NEW.rules_version
    OR OLD.needs_reconfirmation IS NOT NEW.needs_reconfirmation
    OR OLD.evidence_at IS NOT NEW.evidence_at OR OLD.created_at IS NOT NEW.created_at
    OR (OLD.superseded_by IS NOT NULL AND OLD.superseded_by IS NOT NEW.superseded_by)
    OR (OLD.retired_at IS NOT NULL AND OLD.retired_at IS NOT NEW.retired_at)
BEGIN
    SELECT RAISE(ABORT, 'beliefs are never rewritten: insert a new row that supersedes this one');
END;
CREATE TRIGGER beliefs_never_deleted BEFORE DELETE ON beliefs
BEGIN
    SELECT RAISE(ABORT, 'beliefs are never deleted: retire them');
END;

-- One row per (chain, window) the nightly cycle has processed: running it again for the same
-- window finds the row and writes nothing (R8 idempotence). episode_id is the consolidation
-- episode, or NULL for a quiet day.
CREATE TABLE consolidations (
    chain_id     INTEGER NOT NULL REFERENCES chains (chain_id),
    window_start INTEGER NOT NULL,
    window_end   INTEGER NOT NULL,
    episode_id   INTEGER REFERENCES episodes (episode_id),
    decayed      INTEGER NOT NULL,
    done_at      INTEGER NOT NULL,
    PRIMARY KEY (chain_id, window_start, window_end)
) STRICT;

-- The working set and self-model the nightly cycle last composed for each chain (R8.5): derived,
-- replaced on every run.
CREATE TABLE self_models (
    chain_id    INTEGER PRIMARY KEY REFERENCES chains (chain_id),
    working_set TEXT NOT NULL,
    calibration TEXT NOT NULL,
    composed_at INTEGER NOT NULL
) STRICT;
