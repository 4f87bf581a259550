-- file_versions had row triggers against UPDATE and DELETE but none against TRUNCATE, which
-- fires no row trigger: `TRUNCATE file_versions CASCADE` emptied it and its passages, while
-- the other append-only tables (episodes, annotations, beliefs, erasures) refused. It refuses
-- now as they do.
CREATE TRIGGER file_versions_never_truncated BEFORE TRUNCATE ON file_versions
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_change();
