"""Who is calling: the tenant comes from the caller's bearer token, never from the request body.

Tokens are configured in a TOML file that stores only their SHA-256, so the file itself grants
nothing if it leaks:

    [[tokens]]
    tenant = "school-a"
    sha256 = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    name = "chat-service"   # optional, shown in logs

`tutor-memory token new --tenant school-a` makes a token and prints its entry. Without a tokens
file the server runs in single-tenant development mode: every call is tenant DEV_TENANT, and the
server binds loopback only.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tutor_memory.domain.errors import InvalidArgument, Unauthenticated
from tutor_memory.domain.limits import check_identifier

# The tenant of every call in development mode (no tokens file).
DEV_TENANT = "dev"
# Bytes of randomness in a generated token (256 bits).
TOKEN_BYTES = 32

_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Caller:
    tenant: str
    name: str


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return "tm_" + secrets.token_urlsafe(TOKEN_BYTES)


class TokenBook:
    """Maps a presented bearer token to its caller. `TokenBook.development()` accepts every call."""

    def __init__(self, callers_by_hash: dict[str, Caller] | None) -> None:
        self._by_hash = callers_by_hash

    @classmethod
    def development(cls) -> TokenBook:
        return cls(None)

    @property
    def is_development(self) -> bool:
        return self._by_hash is None

    @classmethod
    def from_file(cls, path: Path) -> TokenBook:
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ValueError(f"tokens file {path}: {exc}") from exc
        entries = doc.get("tokens")
        if not isinstance(entries, list) or not entries:
            raise ValueError(f"tokens file {path}: needs at least one [[tokens]] entry")
        by_hash: dict[str, Caller] = {}
        for i, entry in enumerate(entries):
            where = f"tokens file {path}, entry {i + 1}"
            if not isinstance(entry, dict):
                raise ValueError(f"{where}: must be a table")
            tenant, digest = entry.get("tenant"), entry.get("sha256")
            if not isinstance(tenant, str):
                raise ValueError(f"{where}: tenant must be a string")
            try:
                check_identifier("tenant", tenant)
            except InvalidArgument as exc:
                raise ValueError(f"{where}: {exc}") from exc
            if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
                raise ValueError(f"{where}: sha256 must be 64 lowercase hex characters")
            if digest in by_hash:
                raise ValueError(f"{where}: the same token is listed twice")
            name = entry.get("name", tenant)
            by_hash[digest] = Caller(tenant, str(name))
        return cls(by_hash)

    def authenticate(self, metadata: Iterable[tuple[str, str | bytes]]) -> Caller:
        if self._by_hash is None:
            return Caller(DEV_TENANT, "development")
        values = [v for k, v in metadata if k == "authorization"]
        if not values:
            raise Unauthenticated("missing `authorization: Bearer <token>` metadata")
        if len(values) > 1:
            raise Unauthenticated("more than one authorization header")
        value = values[0] if isinstance(values[0], str) else values[0].decode("utf-8", "replace")
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("authorization must be `Bearer <token>`")
        caller = self._by_hash.get(token_sha256(token.strip()))
        if caller is None:
            raise Unauthenticated("unknown token")
        return caller
