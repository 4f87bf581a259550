"""Who is calling: the tenant comes from the caller's bearer token, never from the request body.

Tokens, their scopes and each tenant's quotas are configured in a TOML file that stores only the
tokens' SHA-256 (`api.tokens_file` describes it). `tutor-memory token new --tenant school-a`
makes a token and prints its entry. Without a tokens file the server runs in single-tenant
development mode: every call is tenant DEV_TENANT, unlimited, and the server binds loopback only.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tutor_memory.api.tokens_file import TokensFile, load_tokens_file
from tutor_memory.app.access import Scope
from tutor_memory.app.quotas import TenantLimits
from tutor_memory.domain.errors import Unauthenticated

# The tenant of every call in development mode (no tokens file).
DEV_TENANT = "dev"
# Bytes of randomness in a generated token (256 bits).
TOKEN_BYTES = 32


@dataclass(frozen=True, slots=True)
class Caller:
    tenant: str
    name: str
    scope: Scope = field(default_factory=Scope)


def token_sha256(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def new_token() -> str:
    return "tm_" + secrets.token_urlsafe(TOKEN_BYTES)


class TokenBook:
    """Maps a presented bearer token to its caller. `TokenBook.development()` accepts every call."""

    def __init__(
        self,
        callers_by_hash: dict[str, Caller] | None,
        limits: Mapping[str, TenantLimits] | None = None,
    ) -> None:
        self._by_hash = callers_by_hash
        # Each tenant's quotas (tenants the file does not list have none).
        self.limits: dict[str, TenantLimits] = dict(limits or {})

    @classmethod
    def development(cls) -> TokenBook:
        return cls(None)

    @property
    def is_development(self) -> bool:
        return self._by_hash is None

    def __len__(self) -> int:
        return 0 if self._by_hash is None else len(self._by_hash)

    @classmethod
    def from_parsed(cls, parsed: TokensFile) -> TokenBook:
        by_hash = {e.sha256: Caller(e.tenant, e.name, e.scope) for e in parsed.entries}
        return cls(by_hash, parsed.limits)

    @classmethod
    def from_file(cls, path: Path) -> TokenBook:
        """Raises TokensFileError (a ValueError) naming the line of the problem."""
        return cls.from_parsed(load_tokens_file(path))

    def caller_of_sha256(self, sha256: str) -> Caller | None:
        """The caller of the token whose sha256 (hex) is `sha256`, as this book has it; None for
        a token it does not hold (and always in development mode, which holds none)."""
        return None if self._by_hash is None else self._by_hash.get(sha256)

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
