-- The embedding queue (app/embedding_queue.py) reads episodes stored without an embedding by
-- ascending id across all chains, a page at a time, and the highest id at start: both walk this
-- index instead of the whole table. Not unique (the primary key holds student_key first), so it
-- fits Citus's rules as it is: each shard indexes its own rows.
CREATE INDEX episodes_by_id ON episodes (episode_id);
