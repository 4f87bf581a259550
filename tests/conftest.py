"""Fixtures shared by every test: the real embedding model, loaded once per session."""

from __future__ import annotations

import pytest

from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.models.fetch import MODEL_FILE_NAME, default_model_dir, fetch_model


@pytest.fixture(scope="session")
def embedder() -> UseOnnxEmbedder:
    fetch_model(default_model_dir())
    return UseOnnxEmbedder(default_model_dir() / MODEL_FILE_NAME)
