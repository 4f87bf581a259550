//! Canonical byte encoding of a ledger episode and the SHA-256 that chains it to its predecessor.
//!
//! This is the ledger's tamper evidence: every stored hash depends on these exact bytes, so the
//! encoding must never change silently. It is versioned by its domain tag, mirrored in
//! `tutor_memory/_reference.py`, and pinned by a fixed test vector here and in `tests/parity`.
//! A deliberate change needs a new domain tag, not an edit of this one.
//!
//! Every variable-length field carries a `u32` big-endian length (strings as UTF-8 bytes) and
//! every list a `u32` count, so no two distinct episodes share an encoding: without the prefix,
//! moving a character from `summary` to `text` would leave the bytes, and the hash, unchanged.

use sha2::{Digest, Sha256};

use crate::errors::ChainError;

/// Prefixed to every encoding so that an episode hash can never collide with a hash of some
/// other structure, and so that a future `v2` encoding is distinguishable.
pub const EPISODE_DOMAIN_TAG: &str = "tutor-memory/episode/v1";

/// Length of `prev_hash` and of the returned digest (SHA-256).
pub const HASH_LEN: usize = 32;

/// One citation of source material backing an episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evidence<'a> {
    pub file_id: &'a str,
    pub page: u32,
    pub fingerprint: &'a str,
}

/// Borrowed view of one ledger episode, in canonical field order.
///
/// A struct rather than a 19-argument function so call sites name every field: two adjacent
/// `&str` or `i64` fields swapped by position would still compile and silently change the hash.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpisodeRecord<'a> {
    pub prev_hash: &'a [u8; HASH_LEN],
    pub tenant: &'a str,
    pub student: &'a str,
    pub subject: &'a str,
    pub seq: u64,
    pub kind: &'a str,
    pub summary: &'a str,
    pub text: &'a str,
    pub concepts: &'a [&'a str],
    pub salience: f64,
    pub occurred_at_us: i64,
    pub recorded_at_us: i64,
    pub evidence: &'a [Evidence<'a>],
    pub check_outcome: &'a str,
    pub check_topic: &'a str,
    pub predicted_mastery: Option<f64>,
    pub quiz_correct: u32,
    pub quiz_total: u32,
    pub client_key: &'a str,
}

impl EpisodeRecord<'_> {
    /// The canonical byte encoding that [`Self::hash`] digests.
    ///
    /// # Errors
    /// [`ChainError::TooLong`] / [`ChainError::TooMany`] if a field or list exceeds what its
    /// `u32` prefix can express.
    pub fn encode(&self) -> Result<Vec<u8>, ChainError> {
        let mut enc = Encoder(Vec::with_capacity(self.size_hint()));
        enc.str(EPISODE_DOMAIN_TAG)?;
        enc.bytes(self.prev_hash)?;
        enc.str(self.tenant)?;
        enc.str(self.student)?;
        enc.str(self.subject)?;
        enc.raw(&self.seq.to_be_bytes());
        enc.str(self.kind)?;
        enc.str(self.summary)?;
        enc.str(self.text)?;
        enc.count(self.concepts.len())?;
        for concept in self.concepts {
            enc.str(concept)?;
        }
        enc.raw(&self.salience.to_bits().to_be_bytes());
        enc.raw(&self.occurred_at_us.to_be_bytes());
        enc.raw(&self.recorded_at_us.to_be_bytes());
        enc.count(self.evidence.len())?;
        for item in self.evidence {
            enc.str(item.file_id)?;
            enc.raw(&item.page.to_be_bytes());
            enc.str(item.fingerprint)?;
        }
        enc.str(self.check_outcome)?;
        enc.str(self.check_topic)?;
        match self.predicted_mastery {
            None => enc.raw(&[0x00]),
            Some(mastery) => {
                enc.raw(&[0x01]);
                enc.raw(&mastery.to_bits().to_be_bytes());
            }
        }
        enc.raw(&self.quiz_correct.to_be_bytes());
        enc.raw(&self.quiz_total.to_be_bytes());
        enc.str(self.client_key)?;
        Ok(enc.0)
    }

    /// SHA-256 of [`Self::encode`]: the episode's link in the ledger chain.
    ///
    /// # Errors
    /// As [`Self::encode`].
    pub fn hash(&self) -> Result<[u8; HASH_LEN], ChainError> {
        Ok(Sha256::digest(self.encode()?).into())
    }

    /// Exact encoded size, so encoding never reallocates.
    fn size_hint(&self) -> usize {
        const PREFIX: usize = 4;
        let strs = [
            EPISODE_DOMAIN_TAG,
            self.tenant,
            self.student,
            self.subject,
            self.kind,
            self.summary,
            self.text,
            self.check_outcome,
            self.check_topic,
            self.client_key,
        ];
        let concepts: usize = self.concepts.iter().map(|c| PREFIX + c.len()).sum();
        let evidence: usize = self
            .evidence
            .iter()
            .map(|e| PREFIX + e.file_id.len() + 4 + PREFIX + e.fingerprint.len())
            .sum();
        strs.iter().map(|s| PREFIX + s.len()).sum::<usize>()
            + PREFIX
            + HASH_LEN
            + 8 // seq
            + PREFIX
            + concepts
            + 8 // salience
            + 16 // timestamps
            + PREFIX
            + evidence
            + 1
            + self.predicted_mastery.map_or(0, |_| 8)
            + 8 // quiz counts
    }
}

struct Encoder(Vec<u8>);

impl Encoder {
    fn raw(&mut self, data: &[u8]) {
        self.0.extend_from_slice(data);
    }

    fn bytes(&mut self, data: &[u8]) -> Result<(), ChainError> {
        let len = u32::try_from(data.len()).map_err(|_| ChainError::TooLong { len: data.len() })?;
        self.raw(&len.to_be_bytes());
        self.raw(data);
        Ok(())
    }

    fn str(&mut self, s: &str) -> Result<(), ChainError> {
        self.bytes(s.as_bytes())
    }

    fn count(&mut self, count: usize) -> Result<(), ChainError> {
        let n = u32::try_from(count).map_err(|_| ChainError::TooMany { count })?;
        self.raw(&n.to_be_bytes());
        Ok(())
    }
}

/// Checks that `prev_hash` is a SHA-256 digest.
///
/// # Errors
/// [`ChainError::PrevHashLength`] if it is not exactly [`HASH_LEN`] bytes.
pub fn parse_prev_hash(prev_hash: &[u8]) -> Result<[u8; HASH_LEN], ChainError> {
    prev_hash
        .try_into()
        .map_err(|_| ChainError::PrevHashLength {
            got: prev_hash.len(),
        })
}

/// A fixed-width integer field of the encoding, with its range spelled as `i128` for messages.
pub trait FixedWidthInt: TryFrom<i128> {
    const MIN_I128: i128;
    const MAX_I128: i128;
}

impl FixedWidthInt for u32 {
    const MIN_I128: i128 = 0;
    const MAX_I128: i128 = 0xFFFF_FFFF;
}

impl FixedWidthInt for u64 {
    const MIN_I128: i128 = 0;
    const MAX_I128: i128 = 0xFFFF_FFFF_FFFF_FFFF;
}

impl FixedWidthInt for i64 {
    const MIN_I128: i128 = -(1 << 63);
    const MAX_I128: i128 = (1 << 63) - 1;
}

/// Narrows a caller-supplied integer to its field's width.
///
/// `value` is `None` for an integer the caller could not fit in 128 bits, which is out of range
/// for every field.
///
/// # Errors
/// [`ChainError::OutOfRange`] if the value does not fit `T`.
pub fn checked_int<T: FixedWidthInt>(
    field: &'static str,
    value: Option<i128>,
) -> Result<T, ChainError> {
    value
        .and_then(|v| T::try_from(v).ok())
        .ok_or(ChainError::OutOfRange {
            field,
            value,
            min: T::MIN_I128,
            max: T::MAX_I128,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same vectors are asserted in `tests/parity/test_chain_hash_parity.py`; if this test
    /// fails, the encoding changed and every stored ledger hash with it.
    const FIXED_VECTOR_HEX: &str =
        "599826d912f0c74b4674bbd301ee6ec4f9487b0a13d188d42cafa3ef98be8f54";
    const EMPTY_VECTOR_HEX: &str =
        "eb10d19ad3e4c0f9c0d53ebaf98f46f4fadde3bd18399d49417f7b4714628cea";

    fn hex(bytes: &[u8]) -> String {
        use std::fmt::Write;
        bytes.iter().fold(String::new(), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
    }

    fn sequential_hash() -> [u8; HASH_LEN] {
        std::array::from_fn(|i| u8::try_from(i).expect("HASH_LEN fits in u8"))
    }

    fn with_record<R>(f: impl FnOnce(EpisodeRecord<'_>) -> R) -> R {
        let prev = sequential_hash();
        let concepts = ["fractions", "common-denominator"];
        let evidence = [
            Evidence {
                file_id: "file-1",
                page: 3,
                fingerprint: "sha256:abc",
            },
            Evidence {
                file_id: "file-2",
                page: 0,
                fingerprint: "",
            },
        ];
        f(EpisodeRecord {
            prev_hash: &prev,
            tenant: "acme-school",
            student: "student-42",
            subject: "math",
            seq: 7,
            kind: "lesson",
            summary: "Fractions: ½ + ¼ = ¾",
            text: "Étudiant a confondu numérateur et dénominateur 🤔 — مرحبا",
            concepts: &concepts,
            salience: 0.75,
            occurred_at_us: 1_700_000_000_000_000,
            recorded_at_us: 1_700_000_000_123_456,
            evidence: &evidence,
            check_outcome: "passed",
            check_topic: "fractions",
            predicted_mastery: Some(0.625),
            quiz_correct: 4,
            quiz_total: 5,
            client_key: "req-0001",
        })
    }

    fn fixed_hash() -> [u8; HASH_LEN] {
        with_record(|r| r.hash()).expect("fixed record encodes")
    }

    #[test]
    fn fixed_test_vector() {
        assert_eq!(hex(&fixed_hash()), FIXED_VECTOR_HEX);
    }

    #[test]
    fn empty_test_vector() {
        let prev = [0; HASH_LEN];
        let record = EpisodeRecord {
            prev_hash: &prev,
            tenant: "",
            student: "",
            subject: "",
            seq: 0,
            kind: "",
            summary: "",
            text: "",
            concepts: &[],
            salience: 0.0,
            occurred_at_us: 0,
            recorded_at_us: 0,
            evidence: &[],
            check_outcome: "",
            check_topic: "",
            predicted_mastery: None,
            quiz_correct: 0,
            quiz_total: 0,
            client_key: "",
        };
        assert_eq!(hex(&record.hash().expect("encodes")), EMPTY_VECTOR_HEX);
    }

    #[test]
    fn size_hint_is_exact() {
        with_record(|r| {
            assert_eq!(r.encode().expect("encodes").len(), r.size_hint());
            let empty = EpisodeRecord {
                concepts: &[],
                evidence: &[],
                predicted_mastery: None,
                ..r
            };
            assert_eq!(empty.encode().expect("encodes").len(), empty.size_hint());
        });
    }

    #[test]
    fn layout_of_empty_episode() {
        let prev = [0xAB; HASH_LEN];
        let record = EpisodeRecord {
            prev_hash: &prev,
            tenant: "",
            student: "",
            subject: "",
            seq: 1,
            kind: "",
            summary: "",
            text: "",
            concepts: &[],
            salience: 1.0,
            occurred_at_us: -1,
            recorded_at_us: 2,
            evidence: &[],
            check_outcome: "",
            check_topic: "",
            predicted_mastery: None,
            quiz_correct: 3,
            quiz_total: 4,
            client_key: "k",
        };
        let mut expected = Vec::new();
        expected.extend_from_slice(&23u32.to_be_bytes());
        expected.extend_from_slice(b"tutor-memory/episode/v1");
        expected.extend_from_slice(&32u32.to_be_bytes());
        expected.extend_from_slice(&prev);
        expected.extend_from_slice(&[0; 12]); // three empty strings
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 1]); // seq
        expected.extend_from_slice(&[0; 12]); // three empty strings
        expected.extend_from_slice(&[0; 4]); // no concepts
        expected.extend_from_slice(&[0x3F, 0xF0, 0, 0, 0, 0, 0, 0]); // 1.0
        expected.extend_from_slice(&[0xFF; 8]); // -1
        expected.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 2]);
        expected.extend_from_slice(&[0; 4]); // no evidence
        expected.extend_from_slice(&[0; 8]); // two empty strings
        expected.push(0x00); // no predicted mastery
        expected.extend_from_slice(&[0, 0, 0, 3, 0, 0, 0, 4]);
        expected.extend_from_slice(&[0, 0, 0, 1, b'k']);
        assert_eq!(record.encode().expect("encodes"), expected);
    }

    #[test]
    fn moving_a_character_between_fields_changes_the_hash() {
        let base = fixed_hash();
        let moved = with_record(|r| {
            EpisodeRecord {
                summary: "Fractions: ½ + ¼ = ¾É",
                text: "tudiant a confondu numérateur et dénominateur 🤔 — مرحبا",
                ..r
            }
            .hash()
        });
        assert_ne!(moved.expect("encodes"), base);
    }

    #[test]
    fn every_field_is_hashed() {
        let base = fixed_hash();
        let prev = [0u8; HASH_LEN];
        let swapped = ["common-denominator", "fractions"];
        let one = [Evidence {
            file_id: "file-1",
            page: 3,
            fingerprint: "sha256:abc",
        }];
        let variants: Vec<fn(EpisodeRecord<'_>) -> EpisodeRecord<'_>> = vec![
            |r| EpisodeRecord { tenant: "x", ..r },
            |r| EpisodeRecord { student: "x", ..r },
            |r| EpisodeRecord { subject: "x", ..r },
            |r| EpisodeRecord { seq: 8, ..r },
            |r| EpisodeRecord { kind: "x", ..r },
            |r| EpisodeRecord { summary: "x", ..r },
            |r| EpisodeRecord { text: "x", ..r },
            |r| EpisodeRecord { salience: 0.5, ..r },
            |r| EpisodeRecord {
                occurred_at_us: 1,
                ..r
            },
            |r| EpisodeRecord {
                recorded_at_us: 1,
                ..r
            },
            |r| EpisodeRecord {
                check_outcome: "x",
                ..r
            },
            |r| EpisodeRecord {
                check_topic: "x",
                ..r
            },
            |r| EpisodeRecord {
                predicted_mastery: None,
                ..r
            },
            |r| EpisodeRecord {
                predicted_mastery: Some(0.0),
                ..r
            },
            |r| EpisodeRecord {
                quiz_correct: 5,
                ..r
            },
            |r| EpisodeRecord { quiz_total: 6, ..r },
            |r| EpisodeRecord {
                client_key: "x",
                ..r
            },
        ];
        for (i, variant) in variants.into_iter().enumerate() {
            let changed = with_record(|r| variant(r).hash()).expect("encodes");
            assert_ne!(changed, base, "variant {i} did not change the hash");
        }
        let others = with_record(|r| {
            [
                EpisodeRecord {
                    prev_hash: &prev,
                    ..r
                },
                EpisodeRecord {
                    concepts: &swapped,
                    ..r
                },
                EpisodeRecord {
                    evidence: &one,
                    ..r
                },
            ]
            .map(|v| v.hash().expect("encodes"))
        });
        for changed in others {
            assert_ne!(changed, base);
        }
    }

    #[test]
    fn prev_hash_must_be_32_bytes() {
        assert_eq!(
            parse_prev_hash(&[0; 31]),
            Err(ChainError::PrevHashLength { got: 31 })
        );
        assert_eq!(
            parse_prev_hash(&[0; 31]).unwrap_err().to_string(),
            "prev_hash must be 32 bytes, got 31"
        );
        assert_eq!(parse_prev_hash(&[7; 32]), Ok([7; 32]));
    }

    #[test]
    fn integer_ranges() {
        assert_eq!(checked_int::<u64>("seq", Some(0)), Ok(0));
        assert_eq!(
            checked_int::<u64>("seq", Some(i128::from(u64::MAX))),
            Ok(u64::MAX)
        );
        let err = checked_int::<u64>("seq", Some(-1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "seq must be in 0..=18446744073709551615, got -1"
        );
        assert!(checked_int::<u64>("seq", Some(i128::from(u64::MAX) + 1)).is_err());
        assert_eq!(
            checked_int::<u32>("page", None).unwrap_err().to_string(),
            "page must be in 0..=4294967295, got an integer wider than 128 bits"
        );
        assert!(checked_int::<u32>("page", Some(1 << 32)).is_err());
        assert_eq!(
            checked_int::<i64>("t", Some(i128::from(i64::MIN))),
            Ok(i64::MIN)
        );
        assert!(checked_int::<i64>("t", Some(i128::from(i64::MAX) + 1)).is_err());
    }

    #[test]
    fn declared_ranges_match_the_types() {
        assert_eq!(u32::MAX_I128, i128::from(u32::MAX));
        assert_eq!(u64::MAX_I128, i128::from(u64::MAX));
        assert_eq!(i64::MIN_I128, i128::from(i64::MIN));
        assert_eq!(i64::MAX_I128, i128::from(i64::MAX));
    }
}
