"""The console's door, made from the API's tokens: a person signs in with a token exactly as a
caller authenticates (`TokenBook.authenticate`), and sees that token's tenant.

Scopes plug in here: `Viewer.allows` is the read scope of the token (every student and subject
until tokens carry scopes), and the console's one access check (`console.access.may_read`) asks it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tutor_memory.api.auth import DEV_TENANT, Caller, TokenBook
from tutor_memory.api.server import App
from tutor_memory.console.access import Viewer
from tutor_memory.console.server import start_console
from tutor_memory.domain.errors import Unauthenticated


def _read_scope(caller: Caller) -> Callable[[str, str], bool]:
    """What the caller's token lets it read, as (student, subject) -> allowed. Tokens carry no
    scopes yet, so a tenant's token reads every chain of its tenant."""

    def allows(student: str, subject: str) -> bool:
        return True

    return allows


class TokenGate:
    def __init__(self, tokens: TokenBook) -> None:
        self._tokens = tokens

    @property
    def is_development(self) -> bool:
        return self._tokens.is_development

    def sign_in(self, token: str) -> Viewer | None:
        try:
            caller = self._tokens.authenticate([("authorization", f"Bearer {token}")])
        except Unauthenticated:
            return None
        return Viewer(caller.tenant, caller.name, _read_scope(caller))

    def development_viewer(self) -> Viewer:
        return Viewer(DEV_TENANT, "development")


def console_beside(listen: str) -> Callable[[App], Awaitable[Callable[[], Awaitable[None]]]]:
    """Starts the console on `listen` beside a running API (`api.server.serve(alongside=)`)."""

    async def start(app: App) -> Callable[[], Awaitable[None]]:
        console = await start_console(listen, app.services, TokenGate(app.tokens))
        return console.stop

    return start
