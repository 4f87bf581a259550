"""Who is looking, and what they may see.

The console never decides a tenant itself: a `Gate` (built by the process that serves it, from the
same tokens file as the API) turns a presented token into a `Viewer`, again at every request of
a session (a token removed from the tokens file, or narrowed, applies at once), and every page
asks `may_read` before it reads a chain. That one function is where scopes apply: a viewer
carries the predicate its token allows (`Viewer.allows`), so a token limited to some students or
subjects limits the console exactly as it limits the API.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from tutor_memory.domain.episodes import ChainKey


def _everything(student: str, subject: str) -> bool:
    return True


@dataclass(frozen=True, slots=True)
class Viewer:
    """A signed-in person: the tenant of their token, its name, and what it may read. `key`
    names the token (its sha256; "" in development mode) without holding it: a session keeps
    the key and asks the gate for the viewer again at every request."""

    tenant: str
    name: str
    allows: Callable[[str, str], bool] = _everything
    key: str = ""


class Gate(Protocol):
    """Turns a token into a viewer (None for a token the tokens file does not hold)."""

    @property
    def is_development(self) -> bool:
        """No tokens file: every visitor is the development viewer, as every API call is the
        development tenant."""
        ...

    def sign_in(self, token: str) -> Viewer | None: ...

    def viewer(self, key: str) -> Viewer | None:
        """The viewer of the token `key` names (`Viewer.key`) as the tokens are now: None once
        the token has left the tokens file, its current scopes if they changed."""
        ...

    def development_viewer(self) -> Viewer: ...


def may_read(viewer: Viewer, chain: ChainKey) -> bool:
    """The one access check of the console: the chain is of the viewer's tenant and within the
    scopes of the viewer's token."""
    return chain.tenant == viewer.tenant and viewer.allows(chain.student, chain.subject)
