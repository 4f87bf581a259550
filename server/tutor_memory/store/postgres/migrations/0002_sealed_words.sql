-- Sealed words and erasure (issue 16, domain/sealing.py), as the SQLite store's migration 0005.
-- Episodes written from now on keep what a person wrote (summary, text, concepts, check topic)
-- only as ciphertext in `sealed`, under a data key of their student; those columns then hold ''
-- ('[]' for concepts) and the hash covers the ciphertext (encoding v2). Rows written before keep
-- their plaintext and their v1 hash: history is never rewritten. Erasing a student destroys the
-- data key and deletes the derived rows that hold their words; the ledger rows stay, so every
-- chain still verifies.

ALTER TABLE episodes ADD COLUMN sealed bytea;

-- One data key per (tenant, student), wrapped by the master key named by master_key_id (never the
-- key itself: store/masterkey.py). Deleted when the student is erased. Distributed by student_key
-- like every other table (docs/DEPLOYMENT.md).
CREATE TABLE student_keys (
    student_key   bigint NOT NULL,
    tenant        text NOT NULL,
    student       text NOT NULL,
    master_key_id text NOT NULL,
    wrapped       bytea NOT NULL,
    created_at    bigint NOT NULL,
    PRIMARY KEY (student_key, tenant, student)
);

-- The record of every erasure: when, by whom (the caller's name), and what it covered; ids the
-- chains themselves carry (and hash), never a word of the student.
CREATE TABLE erasures (
    student_key        bigint NOT NULL,
    tenant             text NOT NULL,
    student            text NOT NULL,
    erased_at          bigint NOT NULL,
    erased_by          text NOT NULL,
    chains             bigint NOT NULL,
    episodes           bigint NOT NULL,
    -- Episodes written before sealing: their words stay in the ledger (docs/DESIGN.md).
    plaintext_episodes bigint NOT NULL,
    PRIMARY KEY (student_key, tenant, student)
);
CREATE TRIGGER erasures_never_changed BEFORE UPDATE OR DELETE ON erasures
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER erasures_never_truncated BEFORE TRUNCATE ON erasures
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- Annotations, file versions and beliefs stay append-only, except that an erased student's rows
-- are deleted (grounding quotes the student's answers, a file is their essay, beliefs name what
-- they struggled with). The erasure is recorded first, in the same transaction.
CREATE FUNCTION chain_erased(k bigint, c bigint) RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (
        SELECT 1 FROM chains ch JOIN erasures x ON x.student_key = ch.student_key
            AND x.tenant = ch.tenant AND x.student = ch.student
        WHERE ch.student_key = k AND ch.chain_id = c
    )
$$;

CREATE FUNCTION refuse_delete_unless_erased() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    chain bigint;
BEGIN
    IF TG_TABLE_NAME = 'annotations' THEN
        SELECT e.chain_id INTO chain FROM episodes e
        WHERE e.student_key = OLD.student_key AND e.episode_id = OLD.episode_id;
    ELSE
        chain := OLD.chain_id;
    END IF;
    IF chain_erased(OLD.student_key, chain) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION '% are append-only: never deleted (but for an erased student)', TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END;
$$;

DROP TRIGGER annotations_never_changed ON annotations;
CREATE TRIGGER annotations_never_changed BEFORE UPDATE ON annotations
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER annotations_never_deleted BEFORE DELETE ON annotations
    FOR EACH ROW EXECUTE FUNCTION refuse_delete_unless_erased();

DROP TRIGGER file_versions_never_changed ON file_versions;
CREATE TRIGGER file_versions_never_changed BEFORE UPDATE ON file_versions
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER file_versions_never_deleted BEFORE DELETE ON file_versions
    FOR EACH ROW EXECUTE FUNCTION refuse_delete_unless_erased();

DROP TRIGGER beliefs_never_deleted ON beliefs;
CREATE TRIGGER beliefs_never_deleted BEFORE DELETE ON beliefs
    FOR EACH ROW EXECUTE FUNCTION refuse_delete_unless_erased();
