"""Tokens file parsing and bearer-token authentication."""

from __future__ import annotations

from pathlib import Path

import pytest

from tutor_memory.api.auth import DEV_TENANT, TokenBook, new_token, token_sha256
from tutor_memory.domain.errors import Unauthenticated


def _book(tmp_path: Path, body: str) -> TokenBook:
    path = tmp_path / "tokens.toml"
    path.write_text(body)
    return TokenBook.from_file(path)


def test_token_maps_to_its_tenant(tmp_path: Path) -> None:
    token = new_token()
    book = _book(tmp_path, f'[[tokens]]\ntenant = "school"\nsha256 = "{token_sha256(token)}"\n')
    caller = book.authenticate([("authorization", f"Bearer {token}")])
    assert caller.tenant == "school"
    assert not book.is_development


def test_generated_tokens_are_unique_and_long() -> None:
    tokens = {new_token() for _ in range(100)}
    assert len(tokens) == 100
    assert all(len(t) > 40 for t in tokens)


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("", "at least one"),
        ('[[tokens]]\ntenant = "a"\nsha256 = "nothex"\n', "sha256"),
        ('[[tokens]]\nsha256 = "' + "a" * 64 + '"\n', "tenant"),
        ('[[tokens]]\ntenant = ""\nsha256 = "' + "a" * 64 + '"\n', "tenant"),
        ("[[tokens]\n", "tokens file"),
    ],
)
def test_malformed_tokens_file_is_refused_with_the_reason(
    tmp_path: Path, body: str, problem: str
) -> None:
    with pytest.raises(ValueError, match=problem):
        _book(tmp_path, body)


def test_same_token_twice_is_refused(tmp_path: Path) -> None:
    entry = f'[[tokens]]\ntenant = "a"\nsha256 = "{"b" * 64}"\n'
    with pytest.raises(ValueError, match="twice"):
        _book(tmp_path, entry + entry)


def test_development_book_gives_every_call_the_dev_tenant() -> None:
    book = TokenBook.development()
    assert book.authenticate([]).tenant == DEV_TENANT


def test_two_authorization_headers_are_refused(tmp_path: Path) -> None:
    token = new_token()
    book = _book(tmp_path, f'[[tokens]]\ntenant = "a"\nsha256 = "{token_sha256(token)}"\n')
    with pytest.raises(Unauthenticated, match="more than one"):
        book.authenticate([("authorization", f"Bearer {token}"), ("authorization", "Bearer x")])
