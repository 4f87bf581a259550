"""The rows beside the ledger in SQLite: beliefs are never rewritten (R5.3), file versions are
kept (R7.4), and current passages are those of each file's newest version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode
from tutor_memory.domain.recall.facts import RecallFacts
from tutor_memory.domain.records import NewBelief, NewFileVersion, NewPassage
from tutor_memory.store.protocols import PreparedEpisode
from tutor_memory.store.sqlite.store import SqliteStore

CHAIN = ChainKey("t", "s", "biology")
DIM = 4


def file_episode(summary: str) -> PreparedEpisode:
    ep = NewEpisode(
        chain=CHAIN,
        kind=Kind.FILE,
        summary=summary,
        text="",
        concepts=(),
        occurred_at_us=1_000,
        occurred_at_given=True,
        evidence=(),
        check=None,
        quiz=None,
        client_key="",
    )
    return PreparedEpisode(ep, np.ones(DIM, np.float32), RecallFacts(0, 1, False, "en", ()))


def version(n: int, fingerprint: str, pages: tuple[str, ...]) -> NewFileVersion:
    return NewFileVersion(
        file_id="cells.md",
        version=n,
        fingerprint=fingerprint,
        filename="cells.md",
        kind="markdown",
        title="Cells",
        pages=len(pages),
        size_bytes=10,
        extractor="caller",
        concepts=(ExtractedConcept("Osmosis", "Osmosis moves water.", "", (), (1,)),),
        name_vectors=np.eye(1, DIM, dtype=np.float32),
        rejected=(("Introduction", "a section heading"),),
        passages=tuple(
            NewPassage(i + 1, text, np.full(DIM, 0.5, np.float32)) for i, text in enumerate(pages)
        ),
    )


def add_version(store: SqliteStore, row: NewFileVersion) -> None:
    with store.writing() as w:
        (outcome,) = w.append([file_episode(f"v{row.version}")], model_id="m", recorded_at_us=1)
        w.add_file_version(
            CHAIN, row, episode_id=outcome.episode.episode_id, model_id="m", ingested_at_us=1
        )


def belief(claim: str, confidence: float) -> NewBelief:
    return NewBelief(
        "Osmosis", "osmosis", claim, confidence, (1, 2), "check 2 wrong", "1", False, 5
    )


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    return SqliteStore(tmp_path / "db.sqlite3")


def test_a_newer_version_keeps_the_old_one_and_only_its_passages_are_current(
    store: SqliteStore,
) -> None:
    add_version(store, version(1, "a" * 64, ("old page",)))
    add_version(store, version(2, "b" * 64, ("new page one", "new page two")))
    every = store.file_versions(CHAIN, DIM, current_only=False)
    assert [(v.version, v.fingerprint) for v in every] == [(1, "a" * 64), (2, "b" * 64)]
    (current,) = store.file_versions(CHAIN, DIM)
    assert current.version == 2
    assert current.concepts[0].name == "Osmosis"
    assert current.name_vectors.shape == (1, DIM)
    passages, matrix = store.current_passages(CHAIN, "m")
    assert [p.text for p in passages] == ["new page one", "new page two"]
    assert matrix.shape == (2, DIM)
    assert store.latest_file_version(CHAIN, "cells.md") == (2, "b" * 64)


def test_a_removal_leaves_no_current_version(store: SqliteStore) -> None:
    from tutor_memory.domain.files.versions import removal_row

    add_version(store, version(1, "a" * 64, ("page",)))
    add_version(store, removal_row("cells.md", 2, DIM))
    assert store.file_versions(CHAIN, DIM) == []
    assert store.current_passages(CHAIN, "m")[0] == []
    assert store.latest_file_version(CHAIN, "cells.md") == (2, "")


def test_a_superseded_belief_keeps_its_claim_and_points_to_its_successor(
    store: SqliteStore,
) -> None:
    with store.writing() as w:
        w.append([file_episode("chain")], model_id="m", recorded_at_us=1)
        first = w.add_belief(CHAIN, belief("understands", 0.7), created_at_us=10)
        second = w.add_belief(CHAIN, belief("struggles with", 0.6), created_at_us=20)
        w.supersede_belief(CHAIN, first, second)
    rows = store.belief_rows(CHAIN)
    assert [(r.claim, r.superseded_by) for r in rows] == [
        ("understands", second),
        ("struggles with", None),
    ]
    assert [r.belief_id for r in store.current_beliefs(CHAIN)] == [second]


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE beliefs SET claim = 'struggles with'",
        "UPDATE beliefs SET confidence = 0.1",
        "UPDATE beliefs SET reason = 'edited'",
        "DELETE FROM beliefs",
    ],
)
def test_the_database_refuses_to_rewrite_or_delete_a_belief(
    store: SqliteStore, statement: str
) -> None:
    with store.writing() as w:
        w.append([file_episode("chain")], model_id="m", recorded_at_us=1)
        w.add_belief(CHAIN, belief("understands", 0.7), created_at_us=10)
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.IntegrityError, match="beliefs are never"):
        conn.execute(statement)
    conn.close()


def test_a_superseded_pointer_is_set_once(store: SqliteStore) -> None:
    with store.writing() as w:
        w.append([file_episode("chain")], model_id="m", recorded_at_us=1)
        a = w.add_belief(CHAIN, belief("understands", 0.7), created_at_us=10)
        b = w.add_belief(CHAIN, belief("understands", 0.8), created_at_us=20)
        c = w.add_belief(CHAIN, belief("understands", 0.9), created_at_us=30)
        w.supersede_belief(CHAIN, a, b)
    conn = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("UPDATE beliefs SET superseded_by = ? WHERE belief_id = ?", (c, a))
    conn.close()


def test_retiring_keeps_every_row(store: SqliteStore) -> None:
    with store.writing() as w:
        w.append([file_episode("chain")], model_id="m", recorded_at_us=1)
        w.add_belief(CHAIN, belief("understands", 0.7), created_at_us=10)
        assert w.retire_current_beliefs(CHAIN, 99) == 1
    assert store.current_beliefs(CHAIN) == []
    (row,) = store.belief_rows(CHAIN)
    assert row.retired_at_us == 99
    assert row.claim == "understands"


def test_numbered_caller_names_lose_their_numbering_and_headings_are_rejected() -> None:
    from tutor_memory.domain.conceptmap.screening import screen

    accepted, rejected = screen(
        [
            ExtractedConcept("2.1 Osmosis", "Osmosis moves water.", ""),
            ExtractedConcept("Chapter 3: The Cell", "", ""),
            ExtractedConcept("Introduction", "", ""),
            ExtractedConcept("osmosis", "again", ""),
        ]
    )
    assert [c.name for c in accepted] == ["Osmosis"]
    assert [name for name, _ in rejected] == ["Chapter 3: The Cell", "Introduction"]
