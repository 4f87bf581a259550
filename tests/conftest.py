"""Fixtures shared by every test: the real embedding model (loaded once per session), a throwaway
PostgreSQL cluster (started once per session), and a real server with two tenants on a fresh
store of each kind: every test that takes `server_config` or `harness` runs on SQLite and on
PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.helpers.harness import Harness, start_harness, stop_harness, write_tokens_file
from tests.helpers.postgres import PostgresCluster
from tests.helpers.stores import STORE_KINDS
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.models.fetch import MODEL_FILE_NAME, default_model_dir, fetch_model


@pytest.fixture(scope="session")
def embedder() -> UseOnnxEmbedder:
    fetch_model(default_model_dir())
    return UseOnnxEmbedder(default_model_dir() / MODEL_FILE_NAME)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    """One cluster for the session; each test gets its own database in it. Without PostgreSQL
    this fails (PostgresMissing says how to install it): the suite never skips a store."""
    cluster = PostgresCluster()
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.destroy()


@pytest.fixture
def postgres_url(postgres: PostgresCluster) -> Iterator[str]:
    """A fresh, empty database, dropped after the test."""
    url = postgres.create_database()
    try:
        yield url
    finally:
        postgres.drop_database(url)


@pytest.fixture
def postgres_url_2(postgres: PostgresCluster) -> Iterator[str]:
    """A second fresh database, for tests that need two stores."""
    url = postgres.create_database()
    try:
        yield url
    finally:
        postgres.drop_database(url)


@pytest.fixture(params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


@pytest.fixture
def server_config(tmp_path: Path, store_kind: str, request: pytest.FixtureRequest) -> ServerConfig:
    store = request.getfixturevalue("postgres_url") if store_kind == "postgres" else None
    return ServerConfig(
        listen="127.0.0.1:0",
        data_dir=tmp_path / "data",
        tokens_file=write_tokens_file(tmp_path / "tokens.toml"),
        store=store,
    )


@pytest.fixture
async def harness(server_config: ServerConfig, embedder: UseOnnxEmbedder) -> AsyncIterator[Harness]:
    h = await start_harness(server_config, embedder)
    try:
        yield h
    finally:
        await stop_harness(h)
