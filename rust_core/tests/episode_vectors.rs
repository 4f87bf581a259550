//! The episode-hash test vectors shared with the Python parity tests: every case of
//! `tests/vectors/episode_hash.json` must hash to its `expected_hex`.
//!
//! The same file is read by `tests/parity/test_episode_vectors.py`, so the Rust core, the
//! pure-Python reference and this pure-Rust path are all held to one set of digests. A digest in
//! the file never changes: every stored ledger hash depends on it.

use std::fmt::Write;

use _core::chain::{EpisodeRecord, Evidence, HASH_LEN, parse_prev_hash};
use serde_json::Value;

const VECTORS: &str = include_str!("vectors/episode_hash.json");

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key]
        .as_str()
        .unwrap_or_else(|| panic!("{key} is a string"))
}

fn int<T: TryFrom<i128>>(value: &Value, key: &str) -> T {
    let n = value[key]
        .as_i64()
        .map(i128::from)
        .or_else(|| value[key].as_u64().map(i128::from))
        .unwrap_or_else(|| panic!("{key} is an integer"));
    T::try_from(n).unwrap_or_else(|_| panic!("{key} fits its field"))
}

/// Hashes one case's episode, read with the attribute names of a Python `StoredEpisode`.
fn hash_case(ep: &Value) -> [u8; HASH_LEN] {
    let prev = parse_prev_hash(&unhex(text(ep, "prev_hash"))).expect("32 bytes");
    let concepts: Vec<&str> = ep["concepts"]
        .as_array()
        .expect("concepts is a list")
        .iter()
        .map(|c| c.as_str().expect("a concept is a string"))
        .collect();
    let evidence: Vec<Evidence<'_>> = ep["evidence"]
        .as_array()
        .expect("evidence is a list")
        .iter()
        .map(|e| Evidence {
            file_id: text(e, "file_id"),
            page: int(e, "page"),
            fingerprint: text(e, "file_fingerprint"),
        })
        .collect();
    let check = &ep["check"];
    let quiz = &ep["quiz"];
    // A sealed case carries its ciphertext as `sealed_hex` (JSON has no bytes).
    let sealed = ep.get("sealed_hex").and_then(Value::as_str).map(unhex);
    let record = EpisodeRecord {
        tenant: text(&ep["chain"], "tenant"),
        student: text(&ep["chain"], "student"),
        subject: text(&ep["chain"], "subject"),
        seq: int(ep, "seq"),
        kind: text(ep, "kind"),
        summary: text(ep, "summary"),
        text: text(ep, "text"),
        concepts: &concepts,
        salience: ep["salience"].as_f64().expect("salience is a number"),
        occurred_at_us: int(ep, "occurred_at_us"),
        recorded_at_us: int(ep, "recorded_at_us"),
        evidence: &evidence,
        check_outcome: if check.is_null() {
            ""
        } else {
            text(check, "outcome")
        },
        check_topic: if check.is_null() {
            ""
        } else {
            text(check, "topic")
        },
        predicted_mastery: if check.is_null() {
            None
        } else {
            check["predicted_mastery"].as_f64()
        },
        quiz_correct: if quiz.is_null() {
            0
        } else {
            int(quiz, "correct")
        },
        quiz_total: if quiz.is_null() {
            0
        } else {
            int(quiz, "total")
        },
        client_key: text(ep, "client_key"),
        sealed: sealed.as_deref(),
    };
    record.hash(&prev).expect("encodes")
}

fn cases() -> Vec<Value> {
    let doc: Value = serde_json::from_str(VECTORS).expect("valid JSON");
    doc["cases"].as_array().expect("a list of cases").clone()
}

#[test]
fn every_vector_hashes_to_its_expected_digest() {
    let cases = cases();
    assert!(cases.len() >= 10, "the vector file lost its cases");
    for case in &cases {
        let name = text(case, "name");
        assert_eq!(
            hex(&hash_case(&case["episode"])),
            text(case, "expected_hex"),
            "case {name:?}"
        );
    }
}

#[test]
fn the_negative_zero_cases_are_really_negative_zero() {
    // serde_json keeps the sign of `-0.0`; without it the canonical-float cases would test
    // nothing.
    let cases = cases();
    let mastery = cases
        .iter()
        .find(|c| text(c, "name") == "check, mastery -0.0")
        .expect("the -0.0 mastery case");
    let value = mastery["episode"]["check"]["predicted_mastery"]
        .as_f64()
        .expect("a number");
    assert!(value == 0.0 && value.is_sign_negative());
    let salience = cases
        .iter()
        .find(|c| text(c, "name") == "empty, salience -0.0")
        .expect("the -0.0 salience case");
    assert!(
        salience["episode"]["salience"]
            .as_f64()
            .expect("a number")
            .is_sign_negative()
    );
}
