-- Sealed words and erasure (issue 16, domain/sealing.py). Episodes written from now on keep what a
-- person wrote (summary, text, concepts, check topic) only as ciphertext in `sealed`, under a data
-- key of their student; those columns then hold '' ('[]' for concepts), and the hash covers the
-- ciphertext (encoding v2). Rows written before keep their plaintext and their v1 hash: history
-- is never rewritten. Erasing a student destroys the data key and deletes the derived data that
-- holds their words; the ledger rows stay, so every chain still verifies.

ALTER TABLE episodes ADD COLUMN sealed BLOB;

-- One data key per (tenant, student), wrapped by the master key named by master_key_id (never
-- the key itself: see store/masterkey.py). Deleted, with secure_delete on, when the student is
-- erased.
CREATE TABLE student_keys (
    tenant        TEXT NOT NULL,
    student       TEXT NOT NULL,
    master_key_id TEXT NOT NULL,
    wrapped       BLOB NOT NULL,
    created_at    INTEGER NOT NULL,
    PRIMARY KEY (tenant, student)
) STRICT;

-- The record of every erasure: when, by whom (the caller's name), and what it covered. No words
-- of the student: the ids are the ones the chains themselves carry (and hash).
CREATE TABLE erasures (
    erasure_id         INTEGER PRIMARY KEY,
    tenant             TEXT NOT NULL,
    student            TEXT NOT NULL,
    erased_at          INTEGER NOT NULL,
    erased_by          TEXT NOT NULL,
    chains             INTEGER NOT NULL,
    episodes           INTEGER NOT NULL,
    -- Episodes written before sealing: their words stay in the ledger (see DESIGN.md).
    plaintext_episodes INTEGER NOT NULL,
    UNIQUE (tenant, student)
) STRICT;
CREATE TRIGGER erasures_never_updated BEFORE UPDATE ON erasures
BEGIN
    SELECT RAISE(ABORT, 'erasures are a record: never updated');
END;
CREATE TRIGGER erasures_never_deleted BEFORE DELETE ON erasures
BEGIN
    SELECT RAISE(ABORT, 'erasures are a record: never deleted');
END;

-- Annotations and beliefs stay append-only, except that an erased student's rows are deleted
-- (grounding annotations quote the student's answers; beliefs name what they struggled with).
DROP TRIGGER annotations_never_deleted;
CREATE TRIGGER annotations_never_deleted BEFORE DELETE ON annotations
WHEN NOT EXISTS (
    SELECT 1 FROM episodes e
    JOIN chains c ON c.chain_id = e.chain_id
    JOIN erasures x ON x.tenant = c.tenant AND x.student = c.student
    WHERE e.episode_id = OLD.episode_id
)
BEGIN
    SELECT RAISE(ABORT, 'annotations are append-only: never deleted');
END;

DROP TRIGGER beliefs_never_deleted;
CREATE TRIGGER beliefs_never_deleted BEFORE DELETE ON beliefs
WHEN NOT EXISTS (
    SELECT 1 FROM chains c
    JOIN erasures x ON x.tenant = c.tenant AND x.student = c.student
    WHERE c.chain_id = OLD.chain_id
)
BEGIN
    SELECT RAISE(ABORT, 'beliefs are never deleted: retire them');
END;
