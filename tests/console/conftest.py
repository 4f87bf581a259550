"""A seeded server with the console beside it, in the test's own event loop."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest

from tests.helpers.harness import Harness
from tests.helpers.seeded import seed
from tutor_memory.cli.console_gate import TokenGate
from tutor_memory.console.server import Console, start_console


@dataclass
class Site:
    harness: Harness
    console: Console
    base: str

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base, follow_redirects=False)


@pytest.fixture
async def site(harness: Harness) -> AsyncIterator[Site]:
    await seed(harness)
    console = await start_console(
        "127.0.0.1:0", harness.app.services, TokenGate(lambda: harness.app.gate.tokens)
    )
    try:
        yield Site(harness, console, f"http://127.0.0.1:{console.port}")
    finally:
        await console.stop()
