"""Lexical recall over PostgreSQL gives what it gives over SQLite (issue 15): for the same history,
the two stores return the same ranking inputs (every episode's stored recall facts: its stems and
their counts, its language, its duplicate key, its size) and the server builds the same blocks."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.helpers.harness import A, Harness, question, start_harness, stop_harness
from tutor_memory.app.config import ServerConfig
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory_client._proto import memory_pb2 as pb

NOW = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
START = int(datetime(2026, 1, 5, 9, 0, tzinfo=UTC).timestamp())
CHAIN = ChainKey("tenant-a", "s1", "biology")

# Sentences in the supported languages and scripts, with accents, apostrophes, hyphens, digits and
# letters outside Latin-1: every way a word can differ between two engines' tokenisers.
PHRASES = [
    "How does osmosis move water across a membrane?",
    "Osmosis moves water toward the side with more dissolved solute.",
    "L'osmose déplace l'eau à travers une membrane semi-perméable.",
    "¿Qué es la ósmosis y por qué importa en las células?",
    "Die Zellatmung findet in den Mitochondrien statt; Straße, Größe, Übung.",
    "La fotosintesi avviene nei cloroplasti: perché è così importante?",
    "ما هو التناضح وكيف ينتقل الماء عبر الغشاء؟",
    "Søren asked about Łódź, İstanbul and a naïve co-operative model in 2026.",
    "Mitochondria release energy from glucose (ATP x2, step 3).",
    "Photosynthesis in chloroplasts turns light into sugar — chlorophyll absorbs red and blue.",
    "O que é a difusão facilitada? Transporte através de proteínas.",
    "Diffusion is the movement of particles from high to low concentration.",
]
QUERIES = [
    "what did we say about osmosis?",
    "l'eau et la membrane",
    "ósmosis células",
    "Mitochondrien Größe",
    "التناضح الماء",
    "Łódź naïve",
    "chlorophyll red blue",
    "proteínas difusão",
    "glucose ATP",
    "something never discussed",
]


def history() -> list[pb.NewEpisode]:
    out = []
    for i in range(240):
        phrase = PHRASES[(i * 7) % len(PHRASES)]
        ep = question(f"{phrase} ({i % 17})", key=f"p{i}", seconds=START + 3600 * i)
        if i % 5 == 0:
            ep.kind = pb.EPISODE_KIND_ANSWER
        if i % 11 == 0:
            ep.concepts.append("Osmosis")
        out.append(ep)
    return out


@pytest.fixture
async def both(
    tmp_path: Path, server_config: ServerConfig, embedder: UseOnnxEmbedder
) -> AsyncIterator[tuple[Harness, Harness]]:
    """A SQLite server and a PostgreSQL server holding the same history."""
    assert server_config.store is not None
    sqlite = await start_harness(
        replace(server_config, store=None, data_dir=tmp_path / "sqlite"), embedder
    )
    postgres = await start_harness(server_config, embedder)
    try:
        for h in (sqlite, postgres):
            reply = await h.ingest(history())
            assert reply.inserted == len(history())
        yield sqlite, postgres
    finally:
        await stop_harness(sqlite)
        await stop_harness(postgres)


@pytest.fixture
def store_kind() -> str:
    return "postgres"


async def test_both_stores_return_the_same_ranking_inputs(
    both: tuple[Harness, Harness],
) -> None:
    listed = [await h.list_all() for h in both]
    assert [e.episode_id for e in listed[0]] == [e.episode_id for e in listed[1]]
    left, right = (h.app.services.store.recall_facts(CHAIN) for h in both)
    assert len(left) == len(history())
    assert left == right
    # The stems hold every script of the history, and BM25 reads them the same either way.
    languages = {facts.language for _, facts in left.values()}
    assert len(languages) >= 4
    assert all(facts.stems for _, facts in left.values())


async def test_both_stores_build_the_same_blocks(both: tuple[Harness, Harness]) -> None:
    for query in QUERIES:
        replies = []
        for h in both:
            request = pb.BuildBlockRequest(
                student_id="s1", subject_id="biology", query=query, budget_tokens=900,
                time_zone="Europe/Rome",
            )  # fmt: skip
            request.now.seconds = int(NOW.timestamp())
            replies.append(await h.stub.BuildBlock(request, metadata=A))
        left, right = replies
        assert left.memories, query
        assert left.text == right.text, query
        assert [(m.episode_id, m.repeats, m.score) for m in left.memories] == [
            (m.episode_id, m.repeats, m.score) for m in right.memories
        ], query
