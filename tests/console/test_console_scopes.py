"""A person signed in to the console with a scoped token sees only what the token may read
(issue 16's scopes, issue 17's console): students outside its prefix and subjects outside its
list are neither listed nor shown."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.helpers.harness import Harness, auth, question, start_harness, stop_harness
from tests.helpers.scoped_tokens import BIOLOGY, CLASS_7B, FULL, TOKENS
from tutor_memory.app.config import ServerConfig
from tutor_memory.cli.console_gate import TokenGate
from tutor_memory.console.server import start_console
from tutor_memory.models.embedder import UseOnnxEmbedder

# (student, subject, what the chain's one episode says)
CHAINS = [
    ("7b-ada", "biology", "Ada asked about osmosis."),
    ("7b-ada", "chemistry", "Ada asked about covalent bonds."),
    ("7c-bob", "biology", "Bob asked about mitosis."),
]


@dataclass
class Console:
    base: str
    harness: Harness
    tokens: Path


@pytest.fixture
async def console(tmp_path: Path, embedder: UseOnnxEmbedder) -> AsyncIterator[Console]:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(TOKENS)
    config = ServerConfig(listen="127.0.0.1:0", data_dir=tmp_path / "data", tokens_file=tokens)
    h: Harness = await start_harness(config, embedder)
    for student, subject, says in CHAINS:
        await h.append(question(says, student=student, subject=subject), md=auth(FULL))
    served = await start_console(
        "127.0.0.1:0", h.app.services, TokenGate(lambda: h.app.gate.tokens)
    )
    try:
        yield Console(f"http://127.0.0.1:{served.port}", h, tokens)
    finally:
        await served.stop()
        await stop_harness(h)


@pytest.fixture
def console_base(console: Console) -> str:
    return console.base


@asynccontextmanager
async def _signed_in(base: str, token: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=base, follow_redirects=False) as client:
        reply = await client.post("/signin", data={"token": token})
        assert reply.status_code == 303, reply.text
        yield client


async def _timeline(client: httpx.AsyncClient, student: str, subject: str) -> httpx.Response:
    return await client.get("/timeline", params={"student": student, "subject": subject})


async def test_a_student_prefix_token_sees_only_its_students(console_base: str) -> None:
    async with _signed_in(console_base, CLASS_7B) as client:
        home = await client.get("/")
        assert "7b-ada" in home.text
        assert "7c-bob" not in home.text
        mine = await _timeline(client, "7b-ada", "biology")
        assert mine.status_code == 200
        assert "Ada asked about osmosis." in html.unescape(mine.text)
        other = await _timeline(client, "7c-bob", "biology")
        assert other.status_code == 403
        assert "scopes do not cover" in other.text
        assert "mitosis" not in other.text
        for path in ["/inspector", "/map", "/beliefs", "/chain"]:
            reply = await client.get(
                path, params={"student": "7c-bob", "subject": "biology", "q": "mitosis", "run": "1"}
            )
            assert reply.status_code == 403, path
            assert "mitosis" not in reply.text.lower(), path


async def test_a_subject_token_sees_only_its_subjects(console_base: str) -> None:
    async with _signed_in(console_base, BIOLOGY) as client:
        home = await client.get("/")
        assert "biology" in home.text
        assert "chemistry" not in home.text
        assert (await _timeline(client, "7c-bob", "biology")).status_code == 200
        other = await _timeline(client, "7b-ada", "chemistry")
        assert other.status_code == 403
        assert "covalent" not in other.text


async def test_an_unscoped_token_sees_every_chain_of_its_tenant(console_base: str) -> None:
    async with _signed_in(console_base, FULL) as client:
        home = await client.get("/")
        for student, subject, says in CHAINS:
            assert student in home.text
            assert subject in home.text
            reply = await _timeline(client, student, subject)
            assert says in html.unescape(reply.text)


async def test_a_reloaded_tokens_file_applies_to_sessions_already_signed_in(
    console: Console,
) -> None:
    """The tokens file reloaded (what SIGHUP does): a narrowed token narrows its open session at
    its next request, and a removed token's session ends, for good."""
    async with _signed_in(console.base, FULL) as full, _signed_in(console.base, CLASS_7B) as cls:
        assert (await _timeline(full, "7c-bob", "biology")).status_code == 200
        assert (await _timeline(cls, "7b-ada", "biology")).status_code == 200
        # The admin token narrowed to class 7b; the class-7b token removed.
        narrowed = TOKENS.replace('name = "admin"\n', 'name = "admin"\nstudent_prefix = "7b-"\n')
        removed = narrowed.split("[[tokens]]")
        kept = [part for part in removed if 'name = "class-7b"' not in part]
        console.tokens.write_text("[[tokens]]".join(kept))
        assert await console.harness.app.reload_tokens()

        other = await _timeline(full, "7c-bob", "biology")
        assert other.status_code == 403
        assert "mitosis" not in other.text
        assert (await _timeline(full, "7b-ada", "biology")).status_code == 200
        assert "7c-bob" not in (await full.get("/")).text

        gone = await _timeline(cls, "7b-ada", "biology")
        assert gone.status_code == 401
        assert 'id="token"' in gone.text
        assert "osmosis" not in gone.text
        # The token back in the file does not revive the ended session: sign in again.
        console.tokens.write_text(TOKENS)
        assert await console.harness.app.reload_tokens()
        assert (await _timeline(cls, "7b-ada", "biology")).status_code == 401
