"""`serve` freezes what the start-up made once the server is created: a later full collection,
which holds the GIL and so stalls every call in flight, scans only what serving made
(docs/DESIGN.md P10)."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tutor_memory.api import server
from tutor_memory.app.config import ServerConfig


class _CreatedApp:
    """Stands for the App `create_server` returns: `serve` only stops it or reloads its tokens."""

    async def stop(self, grace: float | None) -> None:
        pass

    async def reload_tokens(self) -> None:
        pass


@pytest.fixture
def unfrozen() -> Iterator[None]:
    """The test process's objects as they were: nothing frozen before, nothing left frozen."""
    gc.unfreeze()
    yield
    gc.unfreeze()


async def test_serve_freezes_the_start_ups_objects_once_the_server_is_created(
    unfrozen: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    frozen_at_creation: list[int] = []

    async def create_server(config: ServerConfig, **options: Any) -> Any:
        frozen_at_creation.append(gc.get_freeze_count())
        return _CreatedApp()

    monkeypatch.setattr(server, "create_server", create_server)
    serving = asyncio.create_task(server.serve(ServerConfig(data_dir=tmp_path)))
    try:
        for _ in range(200):
            if gc.get_freeze_count():
                break
            await asyncio.sleep(0.01)
        # Nothing was frozen while the server was being created (its start-up still ran with
        # every collection), and what lived once it was created is frozen now.
        assert frozen_at_creation == [0]
        assert gc.get_freeze_count() > 0
        assert not serving.done()
    finally:
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await serving
