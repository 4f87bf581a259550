-- What recall derives from each episode (domain/recall/facts.py): its duplicate key, the tokens of
-- its line, whether it recounts the record, its language and its stems with their counts. Derived
-- data, kept so that a restart reads it instead of computing it again for every episode; `version`
-- names the rules that made a row, and the server remakes rows of an older version at start (the
-- reindex a change of those rules needs). Stems replace the word sets of the full-text index,
-- which nothing reads any more: lexical recall scores BM25 in the server over these stems.

CREATE TABLE recall_facts (
    episode_id INTEGER PRIMARY KEY REFERENCES episodes (episode_id),
    chain_id   INTEGER NOT NULL,
    version    INTEGER NOT NULL,
    dup_key    INTEGER NOT NULL,
    tokens     INTEGER NOT NULL,
    flagged    INTEGER NOT NULL,
    language   TEXT NOT NULL,
    stems      TEXT NOT NULL
) STRICT;
CREATE INDEX recall_facts_chain ON recall_facts (chain_id, episode_id);

DROP TABLE episode_fts;
