"""How the stores encode what they keep as text or bytes: one definition for every engine, so a row
written by SQLite and one written by PostgreSQL hold the same bytes (the hash chain does not read
these encodings, but `tutor-memory export` / `import` carries rows verbatim between engines and a
byte-for-byte round trip is what shows that nothing was re-encoded on the way)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.episodes import (
    ChainKey,
    Check,
    Evidence,
    Kind,
    Outcome,
    Quiz,
    StoredEpisode,
)
from tutor_memory.domain.erasure import Erasure
from tutor_memory.domain.records import BeliefRow
from tutor_memory.domain.sealing import NO_WORDS, DataKey, Words, episode_ad

# The columns of an episode row, in the order `episode_from_row` reads them (chain key first,
# then the ledger's own columns).
EPISODE_FIELDS = (
    "episode_id", "tenant", "student", "subject", "seq", "kind", "summary", "text", "concepts",
    "salience", "occurred_at", "recorded_at", "evidence", "check_outcome", "check_topic",
    "predicted_mastery", "quiz_correct", "quiz_total", "client_key", "prev_hash", "hash",
)  # fmt: skip

BELIEF_FIELDS = (
    "belief_id", "concept", "concept_key", "claim", "confidence", "supporting", "reason",
    "rules_version", "needs_reconfirmation", "evidence_at", "created_at", "superseded_by",
    "retired_at", "decayed_as_of",
)  # fmt: skip


def recall_concepts(
    rows: Sequence[Sequence[Any]], chain: ChainKey, key_of: Callable[[], DataKey]
) -> list[tuple[str, ...]]:
    """The concepts of a chain's recall rows, whose kind and concepts column are at positions 3
    and 4 and whose seq and sealed words end the row: a sealed row's concepts are opened from
    its words (`key_of` is called once, and only if some row is sealed), a plaintext row's read
    from its column."""
    key: DataKey | None = None
    out: list[tuple[str, ...]] = []
    for r in rows:
        sealed = r[-1]
        if sealed is None:
            out.append(tuple(json.loads(r[4])) if r[4] != "[]" else ())
            continue
        if key is None:
            key = key_of()
        out.append(key.open(episode_ad(chain, int(r[-2]), r[3]), bytes(sealed)).concepts)
    return out


def concepts_json(concepts: Sequence[str]) -> str:
    return json.dumps(list(concepts), ensure_ascii=False)


def evidence_json(evidence: Sequence[Evidence]) -> str:
    return json.dumps(
        [[e.file_id, e.page, e.file_fingerprint] for e in evidence], ensure_ascii=False
    )


def ids_json(ids: Sequence[int]) -> str:
    return json.dumps(list(ids))


def vector_bytes(vector: npt.NDArray[np.float32]) -> bytes:
    """A float32 vector or matrix as stored: little-endian rows, no header."""
    return np.ascontiguousarray(vector, dtype="<f4").tobytes()


def cited_files(evidence: str) -> tuple[tuple[str, str], ...]:
    """(file_id, fingerprint) of every file an episode's evidence cites, once each, in order."""
    if evidence == "[]":
        return ()
    return tuple(dict.fromkeys((f, h) for f, _page, h in json.loads(evidence)))


def episode_from_row(row: Sequence[Any]) -> StoredEpisode:
    """A stored episode from its columns in EPISODE_FIELDS order."""
    (
        episode_id, tenant, student, subject, seq, kind, summary, text, concepts, salience,
        occurred_at, recorded_at, evidence, check_outcome, check_topic, predicted_mastery,
        quiz_correct, quiz_total, client_key, prev_hash, hash_,
    ) = row  # fmt: skip
    kind_ = Kind(kind)
    return StoredEpisode(
        episode_id=int(episode_id),
        chain=ChainKey(tenant, student, subject),
        seq=int(seq),
        kind=kind_,
        summary=summary,
        text=text,
        concepts=tuple(json.loads(concepts)),
        salience=salience,
        occurred_at_us=int(occurred_at),
        recorded_at_us=int(recorded_at),
        evidence=tuple(Evidence(f, p, h) for f, p, h in json.loads(evidence)),
        check=Check(Outcome(check_outcome), check_topic, predicted_mastery)
        if check_outcome
        else None,
        quiz=Quiz(int(quiz_correct), int(quiz_total)) if kind_ is Kind.QUIZ else None,
        client_key=client_key,
        prev_hash=bytes(prev_hash),
        hash=bytes(hash_),
    )


def file_concepts_json(concepts: Sequence[ExtractedConcept]) -> str:
    return json.dumps(
        [[c.name, c.summary, c.definition, list(c.builds_on), list(c.pages)] for c in concepts],
        ensure_ascii=False,
    )


def file_concepts_from_json(raw: str) -> tuple[ExtractedConcept, ...]:
    return tuple(
        ExtractedConcept(name, summary, definition, tuple(builds_on), tuple(pages))
        for name, summary, definition, builds_on, pages in json.loads(raw)
    )


def rejected_json(rejected: Sequence[tuple[str, str]]) -> str:
    return json.dumps([list(r) for r in rejected], ensure_ascii=False)


def working_set_json(working_set: Sequence[str]) -> str:
    return json.dumps(list(working_set), ensure_ascii=False)


def belief_from_row(row: Sequence[Any]) -> BeliefRow:
    """A belief from its columns in BELIEF_FIELDS order."""
    (
        belief_id, concept, key, claim, confidence, supporting, reason, rules, reconfirm,
        evidence_at, created_at, superseded_by, retired_at, decayed_as_of,
    ) = row  # fmt: skip
    return BeliefRow(
        int(belief_id), concept, key, claim, confidence, tuple(json.loads(supporting)), reason,
        rules, bool(reconfirm), int(evidence_at), int(created_at),
        None if superseded_by is None else int(superseded_by),
        None if retired_at is None else int(retired_at),
        None if decayed_as_of is None else int(decayed_as_of),
    )  # fmt: skip


# The columns of an erasure record, in the order `erasure_from_row` reads them.
ERASURE_COLUMNS = "tenant, student, erased_at, erased_by, chains, episodes, plaintext_episodes"
# The tables of derived rows that hold an erased student's words (or are made from them), which
# an erasure empties chain by chain, in an order the foreign keys allow (passages before their
# file versions). Their rows name their chain, but those of ROWS_BY_EPISODE name their episode.
DERIVED_TABLES = (
    "recall_facts",
    "episode_vectors",
    "passages",
    "file_versions",
    "annotations",
    "beliefs",
    "self_models",
)
ROWS_BY_EPISODE = "annotations"


def erasure_from_row(row: Sequence[Any]) -> Erasure:
    """An erasure record read in ERASURE_COLUMNS' order."""
    tenant, student, erased_at, erased_by, chains, episodes, plaintext = row
    return Erasure(
        tenant, student, int(erased_at), erased_by, int(chains), int(episodes), int(plaintext)
    )


def with_words(ep: StoredEpisode, sealed: bytes, key: DataKey) -> StoredEpisode:
    """A sealed row read as stored, with its words opened from `sealed`."""
    words = key.open(episode_ad(ep.chain, ep.seq, ep.kind.value), sealed)
    return _worded(ep, words, sealed)


def without_words(ep: StoredEpisode) -> StoredEpisode:
    """The episode as its row is stored and hashed: its words only in `sealed`."""
    return _worded(ep, NO_WORDS, ep.sealed)


def _worded(ep: StoredEpisode, words: Words, sealed: bytes | None) -> StoredEpisode:
    """The episode with `words` for its summary, text, concepts and check topic."""
    check = None if ep.check is None else dataclasses.replace(ep.check, topic=words.topic)
    return dataclasses.replace(
        ep,
        summary=words.summary,
        text=words.text,
        concepts=words.concepts,
        check=check,
        sealed=sealed,
    )
