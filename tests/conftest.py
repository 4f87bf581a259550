"""Fixtures shared by every test: the real embedding model (loaded once per session), and a real
server with two tenants on a fresh data directory."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.helpers.harness import Harness, start_harness, stop_harness, write_tokens_file
from tutor_memory.app.config import ServerConfig
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.models.fetch import MODEL_FILE_NAME, default_model_dir, fetch_model


@pytest.fixture(scope="session")
def embedder() -> UseOnnxEmbedder:
    fetch_model(default_model_dir())
    return UseOnnxEmbedder(default_model_dir() / MODEL_FILE_NAME)


@pytest.fixture
def server_config(tmp_path: Path) -> ServerConfig:
    return ServerConfig(
        listen="127.0.0.1:0",
        data_dir=tmp_path / "data",
        tokens_file=write_tokens_file(tmp_path / "tokens.toml"),
    )


@pytest.fixture
async def harness(server_config: ServerConfig, embedder: UseOnnxEmbedder) -> AsyncIterator[Harness]:
    h = await start_harness(server_config, embedder)
    try:
        yield h
    finally:
        await stop_harness(h)
