"""The console as an ASGI app (Starlette): the pages, sign-in and sign-out, the stylesheet, and
the door every request passes.

The door: with a tokens file, a request without a live session gets the sign-in page and nothing
else (status 401); without one (development mode) every visitor is the development viewer, as
every API call is the development tenant. Every response forbids scripts, framing and sniffing.
Only sign-in and sign-out are POSTs; they change the session table in memory, never the store.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp

from tutor_memory.app.root import Services
from tutor_memory.console.access import Gate
from tutor_memory.console.pages import Pages, Problem, when
from tutor_memory.console.sessions import COOKIE, SESSION_SECONDS, Sessions
from tutor_memory.domain.errors import TutorMemoryError

HERE = Path(__file__).parent
# The HTTP status a page answers with when a use case refuses it, by the error's gRPC code (as the
# API would have answered); any other is 500.
HTTP_STATUS_OF_CODE = {
    "INVALID_ARGUMENT": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "FAILED_PRECONDITION": 409,
    "RESOURCE_EXHAUSTED": 429,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
}
# The longest token the sign-in form reads; real ones are 46 characters.
MAX_TOKEN_CHARS = 256
# Paths served without a session: the sign-in page and the stylesheet it uses.
OPEN_PATHS = ("/signin", "/static/")
# Sent with every response: nothing runs but what the server sent (and it sends no script), no
# other site may frame the console, and a browser takes every type as declared.
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


def templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        # Every value is escaped, in every template, whatever its file name.
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    return Jinja2Templates(env=env)


class _Door(BaseHTTPMiddleware):
    def __init__(self, app: ASGIApp, gate: Gate, sessions: Sessions, pages: Pages) -> None:
        super().__init__(app)
        self._gate = gate
        self._sessions = sessions
        self._pages = pages

    async def dispatch(
        self, request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        if self._gate.is_development:
            request.state.viewer = self._gate.development_viewer()
        else:
            session_id = request.cookies.get(COOKIE)
            key = self._sessions.key(session_id)
            request.state.viewer = None if key is None else self._gate.viewer(key)
            if key is not None and request.state.viewer is None:
                self._sessions.close(session_id)  # its token left the tokens file
        open_path = request.url.path.startswith(OPEN_PATHS)
        if request.state.viewer is None and not open_path:
            response = self._pages.render(request, "signin.html", {"error": ""}, 401)
        elif request.method not in ("GET", "HEAD") and request.url.path not in (
            "/signin",
            "/signout",
        ):
            response = Response("The console only reads.", status_code=405)
        elif request.method == "POST" and not _same_origin(request):
            response = Response("Cross-site form refused.", status_code=403)
        else:
            response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response


def _same_origin(request: Request) -> bool:
    """Whether a POST comes from the console's own pages: a browser names the page's origin,
    which must be this host ("null", an opaque origin, is refused); a client that is no browser
    sends none, and a token is all it can present."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return origin != "null" and urlsplit(origin).netloc == request.headers.get("host", "")


def build_console(services: Services, gate: Gate) -> Starlette:
    sessions = Sessions()
    pages = Pages(services, templates(), gate.is_development)

    async def signin_page(request: Request) -> Response:
        if getattr(request.state, "viewer", None) is not None:
            return RedirectResponse("/", status_code=303)
        return pages.render(request, "signin.html", {"error": ""})

    async def signin(request: Request) -> Response:
        if gate.is_development:
            return RedirectResponse("/", status_code=303)
        form = await request.form(max_files=0, max_fields=4, max_part_size=MAX_TOKEN_CHARS * 4)
        token = form.get("token")
        viewer = (
            gate.sign_in(token.strip())
            if isinstance(token, str) and 0 < len(token) <= MAX_TOKEN_CHARS
            else None
        )
        if viewer is None:
            return pages.render(request, "signin.html", {"error": "Unknown token."}, 401)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            COOKIE,
            sessions.open(viewer.key),
            max_age=SESSION_SECONDS,
            httponly=True,
            samesite="strict",
            path="/",
        )
        return response

    async def signout(request: Request) -> Response:
        sessions.close(request.cookies.get(COOKIE))
        response = RedirectResponse("/signin", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    routes = [
        Route("/", pages.home, methods=["GET"]),
        Route("/timeline", pages.timeline, methods=["GET"]),
        Route("/inspector", pages.inspector, methods=["GET"]),
        Route("/map", pages.concept_map, methods=["GET"]),
        Route("/beliefs", pages.beliefs, methods=["GET"]),
        Route("/chain", pages.chain, methods=["GET"]),
        Route("/signin", signin_page, methods=["GET"]),
        Route("/signin", signin, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]

    async def cannot_show(request: Request, exc: Exception) -> Response:
        # A page's own refusal (`Problem`: a malformed student, a chain outside the token's
        # scopes), or a use case's (an erased student's episodes, a store that cannot be
        # reached), is a page that says so; a use case's with the status the API would give.
        if not isinstance(exc, Problem):
            assert isinstance(exc, TutorMemoryError)
            exc = Problem(HTTP_STATUS_OF_CODE.get(exc.code, 500), str(exc))
        return pages.problem(request, exc)

    return Starlette(
        routes=routes,
        middleware=[Middleware(_Door, gate=gate, sessions=sessions, pages=pages)],
        exception_handlers={Problem: cannot_show, TutorMemoryError: cannot_show},
    )
