//! Verification of a stored hash chain: recompute every link from the content alone and name the
//! first place where the stored rows disagree.
//!
//! A chain is walked in `seq` order, in as many pieces as the caller likes: [`Walk`] is where a
//! walk stands after some episodes, and [`Walk::advance`] takes it over the next ones. Hashes are
//! recomputed from the genesis hash, never from a stored `prev_hash`, so a rewrite that re-hashed
//! every later row still ends at another head than a checkpoint taken before it. Mirrored by
//! `verify_chain` in `tutor_memory/native/_reference.py`.

use crate::chain::{EpisodeRecord, GENESIS_HASH, HASH_LEN};
use crate::errors::ChainError;

/// One stored episode: its hashed content and the link fields stored beside it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StoredEpisode<'a> {
    pub episode_id: i64,
    pub record: EpisodeRecord<'a>,
    /// As stored; a tampered row may hold anything, even bytes of another length.
    pub prev_hash: &'a [u8],
    pub hash: &'a [u8],
}

/// What kind of disagreement the first break is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BreakKind {
    /// The episode's `seq` is not its place in the walk: rows were removed or renumbered.
    Seq,
    /// Its stored `prev_hash` is not the stored hash of the episode before it.
    PrevHash,
    /// Its content does not hash to its stored hash: the row was edited.
    Content,
}

impl BreakKind {
    /// The name the Python side sees (`LinkBreak.kind`).
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Seq => "seq",
            Self::PrevHash => "prev_hash",
            Self::Content => "content",
        }
    }
}

/// The first break of a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Break {
    pub kind: BreakKind,
    /// The episode's place in the walk, from 1: the `seq` it should have.
    pub position: u64,
    pub seq: u64,
    pub episode_id: i64,
}

/// Where a walk over one chain stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    /// The walk reports the recomputed hash after this many episodes, if it gets there.
    pub stop_at: Option<u64>,
    /// Episodes walked so far.
    pub length: u64,
    /// The hash recomputed from the content of every episode walked, from the genesis hash.
    pub head_hash: [u8; HASH_LEN],
    /// The stored hash of the last episode walked: what the next one's `prev_hash` must be.
    pub last_stored_hash: Vec<u8>,
    pub first_break: Option<Break>,
    /// The recomputed hash after `stop_at` episodes, once walked.
    pub hash_at_stop: Option<[u8; HASH_LEN]>,
}

impl Walk {
    /// A walk that has not started: at the genesis hash.
    #[must_use]
    pub fn start(stop_at: Option<u64>) -> Self {
        Self {
            stop_at,
            length: 0,
            head_hash: GENESIS_HASH,
            last_stored_hash: GENESIS_HASH.to_vec(),
            first_break: None,
            hash_at_stop: (stop_at == Some(0)).then_some(GENESIS_HASH),
        }
    }

    /// Walks over the next episodes of the chain, in `seq` order.
    ///
    /// Every episode is hashed, also after the first break: the head and the hash at `stop_at`
    /// are those of the content as it is, which is what a checkpoint is compared with.
    ///
    /// # Errors
    /// As [`EpisodeRecord::hash`] (a NaN float); the walk is then left where it was.
    pub fn advance(&mut self, episodes: &[StoredEpisode<'_>]) -> Result<(), ChainError> {
        let mut next = self.clone();
        for ep in episodes {
            next.step(ep)?;
        }
        *self = next;
        Ok(())
    }

    fn step(&mut self, ep: &StoredEpisode<'_>) -> Result<(), ChainError> {
        self.length += 1;
        let found = |kind| Break {
            kind,
            position: self.length,
            seq: ep.record.seq,
            episode_id: ep.episode_id,
        };
        if self.first_break.is_none() {
            if ep.record.seq != self.length {
                self.first_break = Some(found(BreakKind::Seq));
            } else if ep.prev_hash != self.last_stored_hash {
                self.first_break = Some(found(BreakKind::PrevHash));
            }
        }
        self.head_hash = ep.record.hash(&self.head_hash)?;
        if self.first_break.is_none() && ep.hash != self.head_hash {
            self.first_break = Some(found(BreakKind::Content));
        }
        if self.stop_at == Some(self.length) {
            self.hash_at_stop = Some(self.head_hash);
        }
        ep.hash.clone_into(&mut self.last_stored_hash);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXTS: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

    fn record(seq: u64, text: &'static str) -> EpisodeRecord<'static> {
        EpisodeRecord {
            tenant: "t",
            student: "s",
            subject: "biology",
            seq,
            kind: "question",
            summary: "",
            text,
            concepts: &[],
            salience: 0.35,
            occurred_at_us: 0,
            recorded_at_us: 0,
            evidence: &[],
            check_outcome: "",
            check_topic: "",
            predicted_mastery: None,
            quiz_correct: 0,
            quiz_total: 0,
            client_key: "",
            sealed: None,
        }
    }

    /// The hashes of a well-formed chain of `n` episodes: (`prev_hash`, hash) per episode.
    fn links(n: usize) -> Vec<([u8; HASH_LEN], [u8; HASH_LEN])> {
        let mut prev = GENESIS_HASH;
        (1..)
            .zip(&TEXTS[..n])
            .map(|(seq, text)| {
                let hash = record(seq, text).hash(&prev).expect("hashes");
                let link = (prev, hash);
                prev = hash;
                link
            })
            .collect()
    }

    /// The stored rows of `links`: seq from 1, episode ids from 100.
    fn chain(links: &[([u8; HASH_LEN], [u8; HASH_LEN])]) -> Vec<StoredEpisode<'_>> {
        (1..)
            .zip(links.iter().zip(TEXTS))
            .map(|(seq, ((prev, hash), text))| StoredEpisode {
                episode_id: 99 + i64::try_from(seq).expect("small"),
                record: record(seq, text),
                prev_hash: prev,
                hash,
            })
            .collect()
    }

    fn walk(episodes: &[StoredEpisode<'_>], stop_at: Option<u64>) -> Walk {
        let mut walk = Walk::start(stop_at);
        walk.advance(episodes).expect("walks");
        walk
    }

    #[test]
    fn an_untouched_chain_verifies_in_any_number_of_pieces() {
        let links = links(6);
        let episodes = chain(&links);
        let whole = walk(&episodes, Some(4));
        assert_eq!(whole.first_break, None);
        assert_eq!(whole.length, 6);
        assert_eq!(whole.head_hash, links[5].1);
        assert_eq!(whole.last_stored_hash, links[5].1);
        assert_eq!(whole.hash_at_stop, Some(links[3].1));
        for split in 0..=6 {
            let mut pieces = Walk::start(Some(4));
            pieces.advance(&episodes[..split]).expect("walks");
            pieces.advance(&episodes[split..]).expect("walks");
            assert_eq!(pieces, whole, "split at {split}");
        }
    }

    #[test]
    fn an_empty_chain_is_the_genesis() {
        let empty = walk(&[], Some(0));
        assert_eq!(empty.length, 0);
        assert_eq!(empty.head_hash, GENESIS_HASH);
        assert_eq!(empty.hash_at_stop, Some(GENESIS_HASH));
        assert_eq!(walk(&[], None).hash_at_stop, None);
        assert_eq!(walk(&[], Some(1)).hash_at_stop, None);
    }

    #[test]
    fn an_edited_row_is_the_first_break_and_the_head_follows_the_content() {
        let links = links(4);
        let mut episodes = chain(&links);
        episodes[2].record.text = "rewritten";
        let w = walk(&episodes, None);
        let expected = Break {
            kind: BreakKind::Content,
            position: 3,
            seq: 3,
            episode_id: 102,
        };
        assert_eq!(w.first_break, Some(expected));
        assert_ne!(w.head_hash, links[3].1);
        assert_eq!(w.length, 4);
    }

    #[test]
    fn a_removed_row_breaks_the_sequence() {
        let links = links(5);
        let mut episodes = chain(&links);
        episodes.remove(1);
        let first = walk(&episodes, None).first_break.expect("breaks");
        assert_eq!(
            (first.kind, first.position, first.seq),
            (BreakKind::Seq, 2, 3)
        );
    }

    #[test]
    fn a_broken_link_is_named_before_the_content() {
        let links = links(3);
        let mut episodes = chain(&links);
        let other = [9; 5];
        episodes[1].prev_hash = &other;
        let first = walk(&episodes, None).first_break.expect("breaks");
        assert_eq!((first.kind, first.episode_id), (BreakKind::PrevHash, 101));
    }

    #[test]
    fn a_nan_leaves_the_walk_where_it_was() {
        let links = links(3);
        let mut episodes = chain(&links);
        episodes[2].record.salience = f64::NAN;
        let mut w = Walk::start(None);
        w.advance(&episodes[..1]).expect("walks");
        let before = w.clone();
        assert!(w.advance(&episodes[1..]).is_err());
        assert_eq!(w, before);
    }
}
