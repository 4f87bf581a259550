//! Canonical byte encoding of a ledger episode and the SHA-256 that chains it to its predecessor.
//!
//! This is the ledger's tamper evidence: every stored hash depends on these exact bytes, so the
//! encoding must never change silently. It is versioned by its domain tag, mirrored in
//! `tutor_memory/native/_reference.py`, and pinned by the test vectors of
//! `rust_core/tests/vectors/episode_hash.json`, which `cargo test` and `tests/parity` both read.
//! A deliberate change needs a new domain tag, not an edit of this one.
//!
//! Every variable-length field carries a `u32` big-endian length (strings as UTF-8 bytes) and
//! every list a `u32` count, so no two distinct episodes share an encoding: without the prefix,
//! moving a character from `summary` to `text` would leave the bytes, and the hash, unchanged.
//! Floats are canonical (see [`canonical_f64`]), so a value that a store gives back in another
//! representation of the same number still hashes as it did.

use sha2::{Digest, Sha256};

use crate::errors::ChainError;

/// Prefixed to every encoding so that an episode hash can never collide with a hash of some
/// other structure, and so that the `v2` encoding is distinguishable.
pub const EPISODE_DOMAIN_TAG: &str = "tutor-memory/episode/v1";

/// The tag of a sealed episode's encoding: the words a person wrote are stored only encrypted,
/// in `sealed`, and the row's word fields are stored empty. The hash covers the row as stored:
/// every `v1` field (the word fields as stored, empty) and then the sealed bytes. Destroying the
/// key that opens them leaves the hash intact, and an edit of any stored column still shows.
pub const SEALED_EPISODE_DOMAIN_TAG: &str = "tutor-memory/episode/v2";

/// Length of `prev_hash` and of the returned digest (SHA-256).
pub const HASH_LEN: usize = 32;

/// The `prev_hash` of the first episode of every chain.
pub const GENESIS_HASH: [u8; HASH_LEN] = [0; HASH_LEN];

/// One citation of source material backing an episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evidence<'a> {
    pub file_id: &'a str,
    pub page: u32,
    pub fingerprint: &'a str,
}

/// Borrowed view of one ledger episode's hashed content, in canonical field order.
///
/// A struct rather than an 18-argument function so call sites name every field: two adjacent
/// `&str` or `i64` fields swapped by position would still compile and silently change the hash.
/// The link to the previous episode is not part of it: [`Self::hash`] takes it, so one record
/// can be hashed after the stored `prev_hash` or after a recomputed one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpisodeRecord<'a> {
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
    /// The ciphertext of the written words, for a sealed episode (encoding `v2`; its word fields
    /// are hashed as stored, empty). `None`: `v1`.
    pub sealed: Option<&'a [u8]>,
}

impl EpisodeRecord<'_> {
    /// The canonical byte encoding that [`Self::hash`] digests.
    ///
    /// `v1` (`sealed` is `None`) hashes every field in the order of the struct. `v2` hashes the
    /// same fields in the same order under its own tag, then the `sealed` bytes, length-prefixed.
    ///
    /// # Errors
    /// [`ChainError::NotANumber`] for a NaN float; [`ChainError::TooLong`] /
    /// [`ChainError::TooMany`] if a field or list exceeds what its `u32` prefix can express.
    pub fn encode(&self, prev_hash: &[u8; HASH_LEN]) -> Result<Vec<u8>, ChainError> {
        let salience = canonical_f64("salience", self.salience)?;
        let mastery = self
            .predicted_mastery
            .map(|m| canonical_f64("check.predicted_mastery", m))
            .transpose()?;
        let mut enc = Encoder(Vec::with_capacity(self.size_hint()));
        let tag = match self.sealed {
            None => EPISODE_DOMAIN_TAG,
            Some(_) => SEALED_EPISODE_DOMAIN_TAG,
        };
        enc.str("domain tag", tag)?;
        enc.bytes("prev_hash", prev_hash)?;
        enc.str("chain.tenant", self.tenant)?;
        enc.str("chain.student", self.student)?;
        enc.str("chain.subject", self.subject)?;
        enc.raw(&self.seq.to_be_bytes());
        enc.str("kind", self.kind)?;
        enc.str("summary", self.summary)?;
        enc.str("text", self.text)?;
        enc.count("concepts", self.concepts.len())?;
        for concept in self.concepts {
            enc.str("concepts", concept)?;
        }
        enc.raw(&salience.to_bits().to_be_bytes());
        enc.raw(&self.occurred_at_us.to_be_bytes());
        enc.raw(&self.recorded_at_us.to_be_bytes());
        enc.count("evidence", self.evidence.len())?;
        for item in self.evidence {
            enc.str("evidence.file_id", item.file_id)?;
            enc.raw(&item.page.to_be_bytes());
            enc.str("evidence.file_fingerprint", item.fingerprint)?;
        }
        enc.str("check.outcome", self.check_outcome)?;
        enc.str("check.topic", self.check_topic)?;
        match mastery {
            None => enc.raw(&[0x00]),
            Some(mastery) => {
                enc.raw(&[0x01]);
                enc.raw(&mastery.to_bits().to_be_bytes());
            }
        }
        enc.raw(&self.quiz_correct.to_be_bytes());
        enc.raw(&self.quiz_total.to_be_bytes());
        enc.str("client_key", self.client_key)?;
        if let Some(sealed) = self.sealed {
            enc.bytes("sealed", sealed)?;
        }
        Ok(enc.0)
    }

    /// SHA-256 of [`Self::encode`]: the episode's link in the ledger chain after `prev_hash`.
    ///
    /// # Errors
    /// As [`Self::encode`].
    pub fn hash(&self, prev_hash: &[u8; HASH_LEN]) -> Result<[u8; HASH_LEN], ChainError> {
        Ok(Sha256::digest(self.encode(prev_hash)?).into())
    }

    /// Exact encoded size, so encoding never reallocates.
    fn size_hint(&self) -> usize {
        const PREFIX: usize = 4;
        let tag = match self.sealed {
            None => EPISODE_DOMAIN_TAG,
            Some(_) => SEALED_EPISODE_DOMAIN_TAG,
        };
        let strs = [
            tag,
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
            + self.sealed.map_or(0, |sealed| PREFIX + sealed.len())
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

/// The one value of a float that the encoding hashes: `-0.0` becomes `0.0`, NaN is refused.
///
/// `0.0` and `-0.0` are the same number with different bits, and a store need not keep the
/// sign of a zero: `SQLite` gives `-0.0` back as `0.0`, so hashing the bits as given made a chain
/// that stored a check with `predicted_mastery = -0.0` fail verification (issue 12). NaN has
/// many bit patterns and equals nothing, so no episode may carry one. Infinities are kept as
/// they are (the server's validation refuses them before they reach the ledger).
///
/// # Errors
/// [`ChainError::NotANumber`] for NaN.
pub fn canonical_f64(field: &str, value: f64) -> Result<f64, ChainError> {
    if value.is_nan() {
        return Err(ChainError::NotANumber {
            field: field.to_owned(),
        });
    }
    // `-0.0 == 0.0`, so this maps both zeros to the positive one and leaves the rest alone.
    Ok(if value == 0.0 { 0.0 } else { value })
}

struct Encoder(Vec<u8>);

impl Encoder {
    fn raw(&mut self, data: &[u8]) {
        self.0.extend_from_slice(data);
    }

    fn bytes(&mut self, field: &'static str, data: &[u8]) -> Result<(), ChainError> {
        let len = u32::try_from(data.len()).map_err(|_| ChainError::TooLong {
            field,
            len: data.len(),
        })?;
        self.raw(&len.to_be_bytes());
        self.raw(data);
        Ok(())
    }

    fn str(&mut self, field: &'static str, s: &str) -> Result<(), ChainError> {
        self.bytes(field, s.as_bytes())
    }

    fn count(&mut self, field: &'static str, count: usize) -> Result<(), ChainError> {
        let n = u32::try_from(count).map_err(|_| ChainError::TooMany { field, count })?;
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
pub fn checked_int<T: FixedWidthInt>(field: &str, value: Option<i128>) -> Result<T, ChainError> {
    value
        .and_then(|v| T::try_from(v).ok())
        .ok_or_else(|| ChainError::OutOfRange {
            field: field.to_owned(),
            value,
            min: T::MIN_I128,
            max: T::MAX_I128,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    // The digests themselves are pinned by `rust_core/tests/vectors/episode_hash.json` (read by
    // `tests/episode_vectors.rs` and by `tests/parity`); these tests pin the layout and the
    // properties the digests rest on.

    fn sequential_hash() -> [u8; HASH_LEN] {
        std::array::from_fn(|i| u8::try_from(i).expect("HASH_LEN fits in u8"))
    }

    fn with_record<R>(f: impl FnOnce(EpisodeRecord<'_>) -> R) -> R {
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
            sealed: None,
        })
    }

    fn fixed_hash() -> [u8; HASH_LEN] {
        with_record(|r| r.hash(&sequential_hash())).expect("fixed record encodes")
    }

    fn empty_record() -> EpisodeRecord<'static> {
        EpisodeRecord {
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
            sealed: None,
        }
    }

    #[test]
    fn size_hint_is_exact() {
        let prev = sequential_hash();
        with_record(|r| {
            assert_eq!(r.encode(&prev).expect("encodes").len(), r.size_hint());
            let empty = EpisodeRecord {
                concepts: &[],
                evidence: &[],
                predicted_mastery: None,
                ..r
            };
            assert_eq!(
                empty.encode(&prev).expect("encodes").len(),
                empty.size_hint()
            );
        });
    }

    #[test]
    fn layout_of_empty_episode() {
        let prev = [0xAB; HASH_LEN];
        let record = EpisodeRecord {
            seq: 1,
            salience: 1.0,
            occurred_at_us: -1,
            recorded_at_us: 2,
            quiz_correct: 3,
            quiz_total: 4,
            client_key: "k",
            ..empty_record()
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
        assert_eq!(record.encode(&prev).expect("encodes"), expected);
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
            .hash(&sequential_hash())
        });
        assert_ne!(moved.expect("encodes"), base);
    }

    #[test]
    fn every_field_is_hashed() {
        let base = fixed_hash();
        let prev = sequential_hash();
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
            let changed = with_record(|r| variant(r).hash(&prev)).expect("encodes");
            assert_ne!(changed, base, "variant {i} did not change the hash");
        }
        let others = with_record(|r| {
            [
                r.hash(&GENESIS_HASH),
                EpisodeRecord {
                    concepts: &swapped,
                    ..r
                }
                .hash(&prev),
                EpisodeRecord {
                    evidence: &one,
                    ..r
                }
                .hash(&prev),
            ]
            .map(|h| h.expect("encodes"))
        });
        for changed in others {
            assert_ne!(changed, base);
        }
    }

    #[test]
    fn size_hint_is_exact_when_sealed() {
        let prev = sequential_hash();
        let sealed = [7u8; 45];
        with_record(|r| {
            let r = EpisodeRecord {
                sealed: Some(&sealed),
                ..r
            };
            assert_eq!(r.encode(&prev).expect("encodes").len(), r.size_hint());
        });
    }

    #[test]
    fn layout_of_sealed_episode() {
        let prev = [0xAB; HASH_LEN];
        let record = EpisodeRecord {
            seq: 1,
            salience: 1.0,
            occurred_at_us: -1,
            recorded_at_us: 2,
            quiz_correct: 3,
            quiz_total: 4,
            client_key: "k",
            sealed: Some(&[0xC0, 0xFF, 0xEE]),
            ..empty_record()
        };
        let plain = EpisodeRecord {
            sealed: None,
            ..record
        }
        .encode(&prev)
        .expect("encodes");
        let mut expected = Vec::new();
        expected.extend_from_slice(&23u32.to_be_bytes());
        expected.extend_from_slice(b"tutor-memory/episode/v2");
        // Everything after the tag as v1 encodes it, then the sealed bytes.
        expected.extend_from_slice(&plain[4 + 23..]);
        expected.extend_from_slice(&[0, 0, 0, 3, 0xC0, 0xFF, 0xEE]);
        assert_eq!(record.encode(&prev).expect("encodes"), expected);
    }

    fn stored(r: EpisodeRecord<'_>) -> EpisodeRecord<'_> {
        EpisodeRecord {
            summary: "",
            text: "",
            concepts: &[],
            check_topic: "",
            sealed: Some(&[1, 2, 3]),
            ..r
        }
    }

    #[test]
    fn a_sealed_hash_covers_the_ciphertext_and_the_row_as_stored() {
        let prev = sequential_hash();
        let hash = |r: EpisodeRecord<'_>| r.hash(&prev).expect("encodes");
        let base = with_record(|r| hash(stored(r)));
        assert_ne!(
            with_record(|r| hash(EpisodeRecord {
                sealed: Some(&[1, 2, 4]),
                ..stored(r)
            })),
            base
        );
        // A word written into a stored column beside the ciphertext is an edit like any other.
        assert_ne!(
            with_record(|r| hash(EpisodeRecord {
                text: "x",
                ..stored(r)
            })),
            base
        );
        assert_ne!(
            with_record(|r| hash(EpisodeRecord {
                seq: 8,
                ..stored(r)
            })),
            base
        );
        // An empty ciphertext is still v2, never the plaintext encoding.
        let empty = with_record(|r| {
            hash(EpisodeRecord {
                sealed: Some(&[]),
                ..stored(r)
            })
        });
        let unsealed = with_record(|r| {
            hash(EpisodeRecord {
                sealed: None,
                ..stored(r)
            })
        });
        assert_ne!(empty, unsealed);
    }

    #[test]
    fn negative_zero_hashes_as_zero() {
        let prev = sequential_hash();
        let hash = |salience: f64, mastery: Option<f64>| {
            with_record(|r| {
                EpisodeRecord {
                    salience,
                    predicted_mastery: mastery,
                    ..r
                }
                .hash(&prev)
            })
            .expect("encodes")
        };
        assert_eq!(hash(-0.0, Some(-0.0)), hash(0.0, Some(0.0)));
        assert_eq!(hash(0.5, Some(-0.0)), hash(0.5, Some(0.0)));
        assert_eq!(hash(-0.0, None), hash(0.0, None));
        // Only the zero is canonicalised: other negatives keep their sign.
        assert_ne!(hash(-0.5, None), hash(0.5, None));
        assert_ne!(hash(0.5, Some(-0.0)), hash(0.5, None));
    }

    #[test]
    fn nan_is_refused_wherever_a_float_is_hashed() {
        let prev = sequential_hash();
        for nan in [f64::NAN, -f64::NAN, f64::from_bits(0x7FF0_0000_0000_0001)] {
            let salience = with_record(|r| EpisodeRecord { salience: nan, ..r }.hash(&prev));
            assert_eq!(
                salience.unwrap_err().to_string(),
                "salience must not be NaN"
            );
            let mastery = with_record(|r| {
                EpisodeRecord {
                    predicted_mastery: Some(nan),
                    ..r
                }
                .hash(&prev)
            });
            assert_eq!(
                mastery.unwrap_err().to_string(),
                "check.predicted_mastery must not be NaN"
            );
        }
        assert_eq!(canonical_f64("x", f64::INFINITY), Ok(f64::INFINITY));
        assert_eq!(canonical_f64("x", -0.0).map(f64::to_bits), Ok(0));
        assert_eq!(canonical_f64("x", -1.5), Ok(-1.5));
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
