-- The whole store on PostgreSQL: the episode ledger (SPEC R1), its recall facts and embeddings,
-- annotations, files and passages (R3), beliefs (R5) and the nightly cycle's bookkeeping (R8).
-- Columns carry the names, types and meaning of the SQLite store's (store/sqlite/migrations), so
-- a row moves between the two byte for byte (`tutor-memory export` / `import`): times are integer
-- microseconds since the Unix epoch (UTC), JSON arrays are kept as the exact text written (text,
-- never jsonb, which would reformat it), hashes and vectors are bytea.
--
-- Sharding (docs/DEPLOYMENT.md): every table carries student_key, a 64-bit key derived from
-- (tenant, student) (store/postgres/keys.py), first in its primary key, in every unique key and
-- in every foreign key. That is Citus's rule for co-located distributed tables, so the schema can
-- be distributed by student_key as it is; no key or reference crosses students.

CREATE SEQUENCE chain_ids;
CREATE SEQUENCE episode_ids;
CREATE SEQUENCE annotation_ids;
CREATE SEQUENCE file_rows;
CREATE SEQUENCE passage_ids;
CREATE SEQUENCE belief_ids;

-- One row per (tenant, student, subject); its row lock serialises every write to the chain
-- across nodes (store/postgres/store.py), so two nodes can never append the same seq.
CREATE TABLE chains (
    student_key bigint NOT NULL,
    chain_id    bigint NOT NULL DEFAULT nextval('chain_ids'),
    tenant      text NOT NULL,
    student     text NOT NULL,
    subject     text NOT NULL,
    PRIMARY KEY (student_key, chain_id),
    UNIQUE (student_key, tenant, student, subject)
);

CREATE TABLE episodes (
    student_key       bigint NOT NULL,
    episode_id        bigint NOT NULL DEFAULT nextval('episode_ids'),
    chain_id          bigint NOT NULL,
    seq               bigint NOT NULL,
    kind              text NOT NULL,
    summary           text NOT NULL,
    text              text NOT NULL,
    concepts          text NOT NULL,
    salience          double precision NOT NULL,
    occurred_at       bigint NOT NULL,
    recorded_at       bigint NOT NULL,
    evidence          text NOT NULL,
    check_outcome     text NOT NULL,
    check_topic       text NOT NULL,
    predicted_mastery double precision,
    quiz_correct      bigint NOT NULL,
    quiz_total        bigint NOT NULL,
    client_key        text NOT NULL,
    prev_hash         bytea NOT NULL,
    hash              bytea NOT NULL,
    PRIMARY KEY (student_key, episode_id),
    -- A chain can never fork: one episode per (chain, seq), whatever node wrote it.
    UNIQUE (student_key, chain_id, seq),
    FOREIGN KEY (student_key, chain_id) REFERENCES chains (student_key, chain_id)
);
CREATE UNIQUE INDEX episodes_client_key ON episodes (student_key, chain_id, client_key)
    WHERE client_key <> '';
CREATE INDEX episodes_occurred ON episodes (student_key, chain_id, occurred_at, seq);
CREATE INDEX episodes_kind ON episodes (student_key, chain_id, kind, seq);

-- Append-only, enforced below the code too (R1.4): no UPDATE, DELETE or TRUNCATE of an episode.
-- This stops mistakes, not an operator with superuser rights: the hash chain is what shows that.
CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% are append-only: never %', TG_TABLE_NAME, lower(TG_OP)
        USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER episodes_never_changed BEFORE UPDATE OR DELETE ON episodes
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER episodes_never_truncated BEFORE TRUNCATE ON episodes
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- What recall derives from each episode (domain/recall/facts.py): its duplicate key (unsigned 64
-- bits, stored as the signed bigint of the same bits), the tokens of its line, whether it recounts
-- the record, its language and its stems with their counts ("stem:count" pairs). Derived data
-- written in the episode's transaction; `version` names the rules that made a row. Lexical recall
-- scores BM25 in the server over these stems, the same over both engines. Only
-- store/postgres/facts.py reads or writes it.
CREATE TABLE recall_facts (
    student_key bigint NOT NULL,
    episode_id  bigint NOT NULL,
    chain_id    bigint NOT NULL,
    version     bigint NOT NULL,
    dup_key     bigint NOT NULL,
    tokens      bigint NOT NULL,
    flagged     bigint NOT NULL,
    language    text NOT NULL,
    stems       text NOT NULL,
    PRIMARY KEY (student_key, episode_id),
    FOREIGN KEY (student_key, episode_id) REFERENCES episodes (student_key, episode_id)
);
CREATE INDEX recall_facts_chain ON recall_facts (student_key, chain_id, episode_id);

-- Embeddings are derived data (a later model may re-embed), beside the ledger, not in the hashed
-- row: float32 little-endian, as SQLite stores them. The FAISS index is rebuilt from them.
CREATE TABLE episode_vectors (
    student_key bigint NOT NULL,
    episode_id  bigint NOT NULL,
    chain_id    bigint NOT NULL,
    model       text NOT NULL,
    vector      bytea NOT NULL,
    PRIMARY KEY (student_key, episode_id),
    FOREIGN KEY (student_key, episode_id) REFERENCES episodes (student_key, episode_id)
);
CREATE INDEX episode_vectors_chain ON episode_vectors (student_key, chain_id, model, episode_id);

-- Facts about an episode that arrive after it (R1.5); append-only as well.
CREATE TABLE annotations (
    student_key   bigint NOT NULL,
    annotation_id bigint NOT NULL DEFAULT nextval('annotation_ids'),
    episode_id    bigint NOT NULL,
    kind          text NOT NULL,
    body          text NOT NULL,
    created_at    bigint NOT NULL,
    PRIMARY KEY (student_key, annotation_id),
    FOREIGN KEY (student_key, episode_id) REFERENCES episodes (student_key, episode_id)
);
CREATE INDEX annotations_episode ON annotations (student_key, episode_id, kind);
CREATE TRIGGER annotations_never_changed BEFORE UPDATE OR DELETE ON annotations
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER annotations_never_truncated BEFORE TRUNCATE ON annotations
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- Every version of every file a chain was given, never edited; a removal is a version row with an
-- empty fingerprint.
CREATE TABLE file_versions (
    student_key  bigint NOT NULL,
    file_row     bigint NOT NULL DEFAULT nextval('file_rows'),
    chain_id     bigint NOT NULL,
    file_id      text NOT NULL,
    version      bigint NOT NULL,
    fingerprint  text NOT NULL,
    filename     text NOT NULL,
    kind         text NOT NULL,
    title        text NOT NULL,
    pages        bigint NOT NULL,
    size_bytes   bigint NOT NULL,
    extractor    text NOT NULL,
    concepts     text NOT NULL,
    name_vectors bytea NOT NULL,
    rejected     text NOT NULL,
    episode_id   bigint NOT NULL,
    ingested_at  bigint NOT NULL,
    PRIMARY KEY (student_key, file_row),
    UNIQUE (student_key, chain_id, file_id, version),
    FOREIGN KEY (student_key, chain_id) REFERENCES chains (student_key, chain_id),
    FOREIGN KEY (student_key, episode_id) REFERENCES episodes (student_key, episode_id)
);
CREATE TRIGGER file_versions_never_changed BEFORE UPDATE OR DELETE ON file_versions
    FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- Page-level chunks of each file version, embedded for SearchPassages and grounding.
CREATE TABLE passages (
    student_key bigint NOT NULL,
    passage_id  bigint NOT NULL DEFAULT nextval('passage_ids'),
    file_row    bigint NOT NULL,
    chain_id    bigint NOT NULL,
    page        bigint NOT NULL,
    text        text NOT NULL,
    model       text NOT NULL,
    vector      bytea NOT NULL,
    PRIMARY KEY (student_key, passage_id),
    FOREIGN KEY (student_key, file_row) REFERENCES file_versions (student_key, file_row)
);
CREATE INDEX passages_file ON passages (student_key, file_row);
CREATE INDEX passages_chain ON passages (student_key, chain_id, model, passage_id);

-- Beliefs (R5.2, R5.3): a row is never changed into another claim. The only two columns that may
-- change are set once, from NULL, when a newer row supersedes it or a re-derivation retires it.
CREATE TABLE beliefs (
    student_key          bigint NOT NULL,
    belief_id            bigint NOT NULL DEFAULT nextval('belief_ids'),
    chain_id             bigint NOT NULL,
    concept              text NOT NULL,
    concept_key          text NOT NULL,
    claim                text NOT NULL,
    confidence           double precision NOT NULL,
    supporting           text NOT NULL,
    reason               text NOT NULL,
    rules_version        text NOT NULL,
    needs_reconfirmation bigint NOT NULL,
    evidence_at          bigint NOT NULL,
    created_at           bigint NOT NULL,
    superseded_by        bigint,
    retired_at           bigint,
    decayed_as_of        bigint,
    PRIMARY KEY (student_key, belief_id),
    FOREIGN KEY (student_key, chain_id) REFERENCES chains (student_key, chain_id),
    FOREIGN KEY (student_key, superseded_by) REFERENCES beliefs (student_key, belief_id)
);
CREATE INDEX beliefs_current ON beliefs (student_key, chain_id, concept_key)
    WHERE superseded_by IS NULL AND retired_at IS NULL;
CREATE INDEX beliefs_chain ON beliefs (student_key, chain_id, concept_key, belief_id);
-- What a node reads to tell whether another node changed a chain's beliefs (app/sync.py): the
-- newest row and the latest retirement, each the end of one index range.
CREATE INDEX beliefs_newest ON beliefs (student_key, chain_id, belief_id);
CREATE INDEX beliefs_retired ON beliefs (student_key, chain_id, retired_at)
    WHERE retired_at IS NOT NULL;

CREATE FUNCTION beliefs_set_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF (NEW.student_key, NEW.belief_id, NEW.chain_id, NEW.concept, NEW.concept_key, NEW.claim,
        NEW.confidence, NEW.supporting, NEW.reason, NEW.rules_version, NEW.needs_reconfirmation,
        NEW.evidence_at, NEW.created_at, NEW.decayed_as_of)
       IS DISTINCT FROM
       (OLD.student_key, OLD.belief_id, OLD.chain_id, OLD.concept, OLD.concept_key, OLD.claim,
        OLD.confidence, OLD.supporting, OLD.reason, OLD.rules_version, OLD.needs_reconfirmation,
        OLD.evidence_at, OLD.created_at, OLD.decayed_as_of)
       OR (OLD.superseded_by IS NOT NULL AND NEW.superseded_by IS DISTINCT FROM OLD.superseded_by)
       OR (OLD.retired_at IS NOT NULL AND NEW.retired_at IS DISTINCT FROM OLD.retired_at)
    THEN
        RAISE EXCEPTION 'beliefs are never rewritten: insert a new row that supersedes this one'
            USING ERRCODE = 'restrict_violation';
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER beliefs_never_rewritten BEFORE UPDATE ON beliefs
    FOR EACH ROW EXECUTE FUNCTION beliefs_set_once();
CREATE TRIGGER beliefs_never_deleted BEFORE DELETE ON beliefs
    FOR EACH ROW EXECUTE FUNCTION refuse_change();
CREATE TRIGGER beliefs_never_truncated BEFORE TRUNCATE ON beliefs
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();

-- The earlier nightly cycle's windows (kept for databases imported from SQLite stores that ran it).
CREATE TABLE consolidations (
    student_key  bigint NOT NULL,
    chain_id     bigint NOT NULL,
    window_start bigint NOT NULL,
    window_end   bigint NOT NULL,
    episode_id   bigint,
    decayed      bigint NOT NULL,
    done_at      bigint NOT NULL,
    PRIMARY KEY (student_key, chain_id, window_start, window_end),
    FOREIGN KEY (student_key, chain_id) REFERENCES chains (student_key, chain_id)
);

-- The working set and self-model the nightly cycle last composed for each chain (R8.5).
CREATE TABLE self_models (
    student_key bigint NOT NULL,
    chain_id    bigint NOT NULL,
    working_set text NOT NULL,
    calibration text NOT NULL,
    composed_at bigint NOT NULL,
    PRIMARY KEY (student_key, chain_id),
    FOREIGN KEY (student_key, chain_id) REFERENCES chains (student_key, chain_id)
);

-- How far the nightly cycle has read each chain, and the zone of its days (R8, exactly once).
CREATE TABLE nightly_state (
    student_key bigint NOT NULL,
    chain_id    bigint NOT NULL,
    zone        text NOT NULL,
    scanned_seq bigint NOT NULL,
    generation  bigint NOT NULL,
    updated_at  bigint NOT NULL,
    PRIMARY KEY (student_key, chain_id),
    FOREIGN KEY (student_key, chain_id) REFERENCES chains (student_key, chain_id)
);

CREATE TABLE day_digests (
    student_key bigint NOT NULL,
    chain_id    bigint NOT NULL,
    day_start   bigint NOT NULL,
    day_end     bigint NOT NULL,
    first_seq   bigint NOT NULL,
    last_seq    bigint NOT NULL,
    episodes    bigint NOT NULL,
    covered_seq bigint NOT NULL,
    episode_id  bigint NOT NULL,
    done_at     bigint NOT NULL,
    PRIMARY KEY (student_key, chain_id, day_start, first_seq),
    FOREIGN KEY (student_key, chain_id) REFERENCES chains (student_key, chain_id),
    FOREIGN KEY (student_key, episode_id) REFERENCES episodes (student_key, episode_id)
);
