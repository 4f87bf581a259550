"""Signed-in sessions, held in the process's memory: a random id in an HttpOnly cookie, mapped to
the key of the token that signed in (`Viewer.key`, its sha256: never the token), from which the
gate makes the viewer at every request. Nothing is written anywhere; a restart signs everyone
out."""

from __future__ import annotations

import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass

# The session cookie's name.
COOKIE = "tm_console"
# A session lasts this long after sign-in (a working day), then the token is asked again.
SESSION_SECONDS = 8 * 3600
# Sessions held at once; signing in past this forgets the oldest (memory stays bounded however
# often someone signs in).
MAX_SESSIONS = 10_000
# Bytes of randomness in a session id (256 bits).
SESSION_ID_BYTES = 32


@dataclass(frozen=True, slots=True)
class _Session:
    key: str
    expires_at: float


class Sessions:
    def __init__(self, *, lifetime: float = SESSION_SECONDS, limit: int = MAX_SESSIONS) -> None:
        self._lifetime = lifetime
        self._limit = limit
        self._by_id: OrderedDict[str, _Session] = OrderedDict()

    def open(self, key: str) -> str:
        session_id = secrets.token_urlsafe(SESSION_ID_BYTES)
        self._by_id[session_id] = _Session(key, time.monotonic() + self._lifetime)
        while len(self._by_id) > self._limit:
            self._by_id.popitem(last=False)
        return session_id

    def key(self, session_id: str | None) -> str | None:
        """The key of the token that opened the session; None for no live session."""
        if not session_id:
            return None
        session = self._by_id.get(session_id)
        if session is None:
            return None
        if session.expires_at < time.monotonic():
            del self._by_id[session_id]
            return None
        return session.key

    def close(self, session_id: str | None) -> None:
        if session_id:
            self._by_id.pop(session_id, None)
