-- The nightly cycle by whole days (R8, exactly once): each chain's days are digested in the time
-- zone its first run named; the cycle remembers how far it has read each chain (scanned_seq), and
-- every digest it wrote for a day. Episodes that arrive late for a digested day get a follow-up
-- digest of their own. The `consolidations` table of the earlier cycle keeps its rows.

CREATE TABLE nightly_state (
    chain_id    INTEGER PRIMARY KEY REFERENCES chains (chain_id),
    zone        TEXT NOT NULL,
    -- Every non-digest episode of the chain with seq <= scanned_seq was in a day that had ended
    -- when a run read it, and is digested.
    scanned_seq INTEGER NOT NULL,
    -- Bumped by every run that wrote: a run whose reads are older than the last write retries.
    generation  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE day_digests (
    chain_id   INTEGER NOT NULL REFERENCES chains (chain_id),
    day_start  INTEGER NOT NULL,
    day_end    INTEGER NOT NULL,
    -- The seqs of the first and last episodes the digest covers, and how many it covers.
    first_seq  INTEGER NOT NULL,
    last_seq   INTEGER NOT NULL,
    episodes   INTEGER NOT NULL,
    -- The highest seq the run had read: every episode of the day up to it is digested.
    covered_seq INTEGER NOT NULL,
    episode_id INTEGER NOT NULL REFERENCES episodes (episode_id),
    done_at    INTEGER NOT NULL,
    PRIMARY KEY (chain_id, day_start, first_seq)
) STRICT;

-- Chains the earlier cycle consolidated: what occurred before the end of their last window was
-- digested then, and is not digested again (their days were UTC windows).
INSERT INTO nightly_state (chain_id, zone, scanned_seq, generation, updated_at)
SELECT c.chain_id, 'UTC',
       coalesce((SELECT max(e.seq) FROM episodes e
                 WHERE e.chain_id = c.chain_id AND e.occurred_at < c.last_end), 0),
       1, c.last_done
FROM (SELECT chain_id, max(window_end) AS last_end, max(done_at) AS last_done
      FROM consolidations GROUP BY chain_id) AS c;

-- When a decay row decayed, on the evidence clock (the end of the day the cycle was digesting),
-- so that the next decay is due 45 days of evidence later however the history was replayed.
-- NULL for every row that is not a decay.
ALTER TABLE beliefs ADD COLUMN decayed_as_of INTEGER;

-- The append-only guard of beliefs, now covering the new column too.
DROP TRIGGER beliefs_never_rewritten;
CREATE TRIGGER beliefs_never_rewritten BEFORE UPDATE ON beliefs
WHEN OLD.belief_id IS NOT NEW.belief_id OR OLD.chain_id IS NOT NEW.chain_id
    OR OLD.concept IS NOT NEW.concept OR OLD.concept_key IS NOT NEW.concept_key
    OR OLD.claim IS NOT NEW.claim OR OLD.confidence IS NOT NEW.confidence
    OR OLD.supporting IS NOT NEW.supporting OR OLD.reason IS NOT NEW.reason
    OR OLD.rules_version IS NOT NEW.rules_version
    OR OLD.needs_reconfirmation IS NOT NEW.needs_reconfirmation
    OR OLD.evidence_at IS NOT NEW.evidence_at OR OLD.created_at IS NOT NEW.created_at
    OR OLD.decayed_as_of IS NOT NEW.decayed_as_of
    OR (OLD.superseded_by IS NOT NULL AND OLD.superseded_by IS NOT NEW.superseded_by)
    OR (OLD.retired_at IS NOT NULL AND OLD.retired_at IS NOT NEW.retired_at)
BEGIN
    SELECT RAISE(ABORT, 'beliefs are never rewritten: insert a new row that supersedes this one');
END;
