"""The console's door, made from the API's tokens: a person signs in with a token exactly as a
caller authenticates (`TokenBook.authenticate`), and sees that token's tenant within its scope.

The gate reads the API's current token book at each sign-in and at every request of a session, so
a tokens file reloaded on SIGHUP applies to the console at once: a removed token's sessions end,
a narrowed scope narrows them. A token's scope (`app.access.Scope`: student prefix, subjects) limits
what its viewer may read exactly as it limits its API calls: the console's one access check
(`console.access.may_read`) asks `Viewer.allows`, made here from the scope.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from tutor_memory.api.auth import DEV_TENANT, Caller, TokenBook, token_sha256
from tutor_memory.api.server import App
from tutor_memory.app.access import Named
from tutor_memory.console.access import Viewer
from tutor_memory.console.server import start_console
from tutor_memory.domain.errors import PermissionDenied, Unauthenticated


def _read_scope(caller: Caller) -> Callable[[str, str], bool]:
    """What the caller's token lets it read, as (student, subject) -> allowed."""
    scope = caller.scope

    def allows(student: str, subject: str) -> bool:
        try:
            scope.check_chain("the console", Named(student, subject))
        except PermissionDenied:
            return False
        return True

    return allows


def _viewer(caller: Caller, key: str) -> Viewer:
    return Viewer(caller.tenant, caller.name, _read_scope(caller), key)


class TokenGate:
    def __init__(self, tokens: Callable[[], TokenBook]) -> None:
        # The current book, read at each use: SIGHUP may have replaced it.
        self._tokens = tokens

    @property
    def is_development(self) -> bool:
        return self._tokens().is_development

    def sign_in(self, token: str) -> Viewer | None:
        try:
            caller = self._tokens().authenticate([("authorization", f"Bearer {token}")])
        except Unauthenticated:
            return None
        return _viewer(caller, token_sha256(token.strip()))

    def viewer(self, key: str) -> Viewer | None:
        caller = self._tokens().caller_of_sha256(key)
        return None if caller is None else _viewer(caller, key)

    def development_viewer(self) -> Viewer:
        return Viewer(DEV_TENANT, "development")


def console_beside(listen: str) -> Callable[[App], Awaitable[Callable[[], Awaitable[None]]]]:
    """Starts the console on `listen` beside a running API (`api.server.serve(alongside=)`)."""

    async def start(app: App) -> Callable[[], Awaitable[None]]:
        console = await start_console(listen, app.services, TokenGate(lambda: app.gate.tokens))
        return console.stop

    return start
