//! `episode_hash` and `verify_chain`: the ledger's hash, with each episode read from a Python
//! object by attribute, as `tutor_memory.domain.episodes.StoredEpisode` spells them.

use pyo3::prelude::*;
use pyo3::pybacked::{PyBackedBytes, PyBackedStr};
use pyo3::types::{PyBytes, PyString};

use super::errors::in_item;
use super::extract::{WideInt, argument, utf8};
use crate::chain::{self, EpisodeRecord, Evidence, HASH_LEN};
use crate::errors::ChainError;
use crate::verify::{Break, StoredEpisode, Walk};

// The attributes read from an episode, in the order their types are checked. The names are the
// Python attributes'; the structs only say which attributes are read and as what.

#[derive(FromPyObject)]
struct ChainKeyAttrs<'py> {
    tenant: Bound<'py, PyString>,
    student: Bound<'py, PyString>,
    subject: Bound<'py, PyString>,
}

#[derive(FromPyObject)]
struct EvidenceAttrs<'py> {
    file_id: Bound<'py, PyString>,
    page: WideInt,
    file_fingerprint: Bound<'py, PyString>,
}

#[derive(FromPyObject)]
struct CheckAttrs<'py> {
    outcome: Bound<'py, PyString>,
    topic: Bound<'py, PyString>,
    predicted_mastery: Option<f64>,
}

#[derive(FromPyObject)]
struct QuizAttrs {
    correct: WideInt,
    total: WideInt,
}

/// Strings are taken as `str` objects and encoded only when values are checked, so that a lone
/// surrogate is a bad value (`NativeInputError`) rather than a failed extraction.
#[derive(FromPyObject)]
struct EpisodeAttrs<'py> {
    chain: ChainKeyAttrs<'py>,
    seq: WideInt,
    kind: Bound<'py, PyString>,
    summary: Bound<'py, PyString>,
    text: Bound<'py, PyString>,
    concepts: Vec<Bound<'py, PyString>>,
    salience: f64,
    occurred_at_us: WideInt,
    recorded_at_us: WideInt,
    evidence: Vec<EvidenceAttrs<'py>>,
    check: Option<CheckAttrs<'py>>,
    quiz: Option<QuizAttrs>,
    client_key: Bound<'py, PyString>,
    // Optional, so that an object without it is a plaintext (`v1`) episode, as before sealing.
    #[pyo3(default)]
    sealed: Option<Bound<'py, PyBytes>>,
}

/// The link fields stored beside the content, read after it.
#[derive(FromPyObject)]
struct LinkAttrs<'py> {
    episode_id: WideInt,
    prev_hash: Bound<'py, PyBytes>,
    hash: Bound<'py, PyBytes>,
}

/// One episode's hashed content with every value checked. The strings are borrowed from the
/// Python objects (kept alive here), so it can be used with the GIL released.
struct Content {
    tenant: PyBackedStr,
    student: PyBackedStr,
    subject: PyBackedStr,
    seq: u64,
    kind: PyBackedStr,
    summary: PyBackedStr,
    text: PyBackedStr,
    concepts: Vec<PyBackedStr>,
    salience: f64,
    occurred_at_us: i64,
    recorded_at_us: i64,
    evidence: Vec<(PyBackedStr, u32, PyBackedStr)>,
    check: Option<(PyBackedStr, PyBackedStr, Option<f64>)>,
    quiz: (u32, u32),
    client_key: PyBackedStr,
    sealed: Option<PyBackedBytes>,
}

impl Content {
    /// Checks every value, in field order.
    fn check(a: EpisodeAttrs<'_>) -> PyResult<Self> {
        let tenant = utf8("chain.tenant", a.chain.tenant)?;
        let student = utf8("chain.student", a.chain.student)?;
        let subject = utf8("chain.subject", a.chain.subject)?;
        let seq = a.seq.checked("seq")?;
        let kind = utf8("kind", a.kind)?;
        let summary = utf8("summary", a.summary)?;
        let text = utf8("text", a.text)?;
        let concepts = a
            .concepts
            .into_iter()
            .enumerate()
            .map(|(i, c)| utf8(&format!("concepts[{i}]"), c))
            .collect::<PyResult<_>>()?;
        let salience = chain::canonical_f64("salience", a.salience)?;
        let occurred_at_us = a.occurred_at_us.checked("occurred_at_us")?;
        let recorded_at_us = a.recorded_at_us.checked("recorded_at_us")?;
        let evidence = a
            .evidence
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                Ok((
                    utf8(&format!("evidence[{i}].file_id"), e.file_id)?,
                    e.page.checked(&format!("evidence[{i}].page"))?,
                    utf8(
                        &format!("evidence[{i}].file_fingerprint"),
                        e.file_fingerprint,
                    )?,
                ))
            })
            .collect::<PyResult<_>>()?;
        let check = a
            .check
            .map(|c| -> PyResult<_> {
                Ok((
                    utf8("check.outcome", c.outcome)?,
                    utf8("check.topic", c.topic)?,
                    c.predicted_mastery
                        .map(|m| chain::canonical_f64("check.predicted_mastery", m))
                        .transpose()?,
                ))
            })
            .transpose()?;
        let quiz = match a.quiz {
            Some(q) => (
                q.correct.checked("quiz.correct")?,
                q.total.checked("quiz.total")?,
            ),
            None => (0, 0),
        };
        let client_key = utf8("client_key", a.client_key)?;
        let sealed = a.sealed.map(PyBackedBytes::from);
        Ok(Self {
            tenant,
            student,
            subject,
            seq,
            kind,
            summary,
            text,
            concepts,
            salience,
            occurred_at_us,
            recorded_at_us,
            evidence,
            check,
            quiz,
            client_key,
            sealed,
        })
    }

    /// The lists a record borrows, built beside it.
    fn lists(&self) -> (Vec<&str>, Vec<Evidence<'_>>) {
        let concepts = self.concepts.iter().map(|c| &**c).collect();
        let evidence = self
            .evidence
            .iter()
            .map(|(file_id, page, fingerprint)| Evidence {
                file_id,
                page: *page,
                fingerprint,
            })
            .collect();
        (concepts, evidence)
    }

    fn record<'a>(
        &'a self,
        concepts: &'a [&'a str],
        evidence: &'a [Evidence<'a>],
    ) -> EpisodeRecord<'a> {
        // A missing check is hashed as empty strings and no mastery, as it always was.
        let (check_outcome, check_topic, predicted_mastery) = match &self.check {
            Some((outcome, topic, mastery)) => (&**outcome, &**topic, *mastery),
            None => ("", "", None),
        };
        EpisodeRecord {
            tenant: &self.tenant,
            student: &self.student,
            subject: &self.subject,
            seq: self.seq,
            kind: &self.kind,
            summary: &self.summary,
            text: &self.text,
            concepts,
            salience: self.salience,
            occurred_at_us: self.occurred_at_us,
            recorded_at_us: self.recorded_at_us,
            evidence,
            check_outcome,
            check_topic,
            predicted_mastery,
            quiz_correct: self.quiz.0,
            quiz_total: self.quiz.1,
            client_key: &self.client_key,
            sealed: self.sealed.as_deref(),
        }
    }

    fn hash(&self, prev_hash: &[u8; HASH_LEN]) -> Result<[u8; HASH_LEN], ChainError> {
        let (concepts, evidence) = self.lists();
        self.record(&concepts, &evidence).hash(prev_hash)
    }
}

/// Return the 32-byte SHA-256 chaining `episode` to `prev_hash`.
///
/// See `tutor_memory/native/_core.pyi` for the attributes read and the encoding.
#[pyfunction]
pub fn episode_hash<'py>(
    py: Python<'py>,
    prev_hash: &Bound<'py, PyAny>,
    episode: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyBytes>> {
    let prev_hash: Bound<'py, PyBytes> = argument(prev_hash, "prev_hash")?;
    let attrs: EpisodeAttrs<'py> = argument(episode, "episode")?;
    let prev_hash = chain::parse_prev_hash(prev_hash.as_bytes())?;
    let content = Content::check(attrs)?;
    let digest = py.detach(|| content.hash(&prev_hash))?;
    Ok(PyBytes::new(py, &digest))
}

/// One stored episode with every value checked, usable with the GIL released.
struct Stored {
    episode_id: i64,
    content: Content,
    prev_hash: PyBackedBytes,
    hash: PyBackedBytes,
}

impl Stored {
    /// Types of the content, then of the link fields; values in the same order.
    fn check(item: &Bound<'_, PyAny>) -> PyResult<Self> {
        let attrs: EpisodeAttrs<'_> = argument(item, "episode")?;
        let link: LinkAttrs<'_> = argument(item, "episode")?;
        let content = Content::check(attrs)?;
        let episode_id = link.episode_id.checked("episode_id")?;
        Ok(Self {
            episode_id,
            content,
            prev_hash: link.prev_hash.into(),
            hash: link.hash.into(),
        })
    }
}

/// Where the verification of one chain stands: see `_core.pyi`.
#[pyclass(frozen, module = "tutor_memory.native._core")]
pub struct ChainWalk(Walk);

#[pymethods]
impl ChainWalk {
    #[new]
    #[pyo3(signature = (*, stop_at = None))]
    fn new(stop_at: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let stop_at = stop_at
            .map(|v| argument::<WideInt>(v, "stop_at")?.checked::<u64>("stop_at"))
            .transpose()?;
        Ok(Self(Walk::start(stop_at)))
    }

    #[getter]
    fn stop_at(&self) -> Option<u64> {
        self.0.stop_at
    }

    #[getter]
    fn length(&self) -> u64 {
        self.0.length
    }

    #[getter]
    fn head_hash<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.head_hash)
    }

    #[getter]
    fn last_stored_hash<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.0.last_stored_hash)
    }

    #[getter]
    fn first_break(&self) -> Option<LinkBreak> {
        self.0.first_break.map(LinkBreak)
    }

    #[getter]
    fn hash_at_stop<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
        self.0.hash_at_stop.map(|h| PyBytes::new(py, &h))
    }

    fn __repr__(&self) -> String {
        let w = &self.0;
        let stop_at = w
            .stop_at
            .map_or_else(|| "None".to_owned(), |s| s.to_string());
        let first_break = w
            .first_break
            .map_or_else(|| "None".to_owned(), |b| LinkBreak(b).__repr__());
        format!(
            "ChainWalk(stop_at={stop_at}, length={}, first_break={first_break})",
            w.length
        )
    }
}

/// The first break found by a walk: see `_core.pyi`.
#[pyclass(frozen, module = "tutor_memory.native._core")]
pub struct LinkBreak(Break);

#[pymethods]
impl LinkBreak {
    #[getter]
    fn kind(&self) -> &'static str {
        self.0.kind.name()
    }

    #[getter]
    fn position(&self) -> u64 {
        self.0.position
    }

    #[getter]
    fn seq(&self) -> u64 {
        self.0.seq
    }

    #[getter]
    fn episode_id(&self) -> i64 {
        self.0.episode_id
    }

    fn __repr__(&self) -> String {
        let b = &self.0;
        format!(
            "LinkBreak(kind={:?}, position={}, seq={}, episode_id={})",
            b.kind.name(),
            b.position,
            b.seq,
            b.episode_id
        )
    }
}

/// Walk `walk` over the next `episodes` of its chain; see `_core.pyi`.
///
/// Every episode is extracted and checked first; then the hashing and comparing run with the
/// GIL released.
#[pyfunction]
pub fn verify_chain<'py>(
    py: Python<'py>,
    episodes: &Bound<'py, PyAny>,
    walk: &Bound<'py, PyAny>,
) -> PyResult<ChainWalk> {
    let items = argument::<Bound<'py, PyAny>>(episodes, "episodes")?;
    let walk: Bound<'py, ChainWalk> = argument(walk, "walk")?;
    let iter = items
        .try_iter()
        .map_err(|err| super::errors::extraction_error(py, "episodes", err))?;
    let mut stored = Vec::with_capacity(items.len().unwrap_or(0));
    for (i, item) in iter.enumerate() {
        let item = item?;
        stored
            .push(Stored::check(&item).map_err(|err| in_item(py, &format!("episodes[{i}]"), err))?);
    }
    let mut next = walk.get().0.clone();
    py.detach(|| {
        let lists: Vec<_> = stored.iter().map(|s| s.content.lists()).collect();
        let episodes: Vec<StoredEpisode<'_>> = stored
            .iter()
            .zip(&lists)
            .map(|(s, (concepts, evidence))| StoredEpisode {
                episode_id: s.episode_id,
                record: s.content.record(concepts, evidence),
                prev_hash: &s.prev_hash,
                hash: &s.hash,
            })
            .collect();
        next.advance(&episodes)
    })?;
    Ok(ChainWalk(next))
}
