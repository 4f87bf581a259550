"""The console over HTTP (issue 17): the door, the escaping, the empty states, and that it only
reads. The browser tests (test_console_browser.py) check what a person sees."""

from __future__ import annotations

import html
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import httpx
import psycopg
import pytest
from starlette.routing import Mount, Route

from tests.console.conftest import Site
from tests.helpers.harness import TOKEN_A, TOKEN_B, A, Harness, question
from tests.helpers.seeded import B_SECRET, B_STUDENT, SCRIPT_TEXT, STUDENT
from tutor_memory.api.auth import TokenBook
from tutor_memory.app.config import ServerConfig
from tutor_memory.app.episodes import EpisodePage
from tutor_memory.app.root import ConfigError
from tutor_memory.cli.console_gate import TokenGate
from tutor_memory.console.pages import TIMELINE_PAGE, TIMELINE_SCAN_ROWS
from tutor_memory.console.server import start_console
from tutor_memory.console.web import SECURITY_HEADERS, build_console
from tutor_memory_client._proto import memory_pb2 as pb

CHAIN = {"student": STUDENT, "subject": "biology"}
PAGES = ["/timeline", "/inspector", "/map", "/beliefs", "/chain"]


@asynccontextmanager
async def signed_in(site: Site, token: str) -> AsyncIterator[httpx.AsyncClient]:
    async with site.client() as client:
        reply = await client.post("/signin", data={"token": token})
        assert reply.status_code == 303, reply.text
        yield client


def _dump(config: ServerConfig) -> list[str]:
    """Every row of every table, read through a read-only connection (SQLite: as SQL)."""
    if config.store is not None:
        with psycopg.connect(config.store) as pg:
            pg.execute("SET TRANSACTION READ ONLY")
            tables = pg.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' "
                "ORDER BY 1"
            ).fetchall()
            return [
                f"{table}: {row}"
                for (table,) in tables
                for row in pg.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            ]
    db = sqlite3.connect(f"file:{config.database_path}?mode=ro", uri=True)
    try:
        return list(db.iterdump())
    finally:
        db.close()


async def test_without_a_session_only_the_sign_in_page_is_served(site: Site) -> None:
    async with site.client() as client:
        for path in ["/", *PAGES, "/map?concept=osmosis"]:
            reply = await client.get(path, params=CHAIN)
            assert reply.status_code == 401, path
            assert 'id="token"' in reply.text
            assert "osmosis" not in reply.text.lower(), path
        reply = await client.post("/signin", data={"token": "not-a-token"})
        assert reply.status_code == 401
        assert "Unknown token" in reply.text
        assert "set-cookie" not in reply.headers
        # A cookie that is no session is no session.
        client.cookies.set("tm_console", "forged")
        assert (await client.get("/timeline", params=CHAIN)).status_code == 401


async def test_a_token_signs_in_and_out(site: Site) -> None:
    async with signed_in(site, TOKEN_A) as client:
        home = await client.get("/")
        assert home.status_code == 200
        assert STUDENT in home.text
        assert B_STUDENT not in home.text
        out = await client.post("/signout")
        assert out.status_code == 303
        assert (await client.get("/")).status_code == 401


async def test_every_page_reads_and_sends_the_security_headers(site: Site) -> None:
    async with signed_in(site, TOKEN_A) as client:
        for path in PAGES:
            reply = await client.get(path, params={**CHAIN, "q": "osmosis", "run": "1"})
            assert reply.status_code == 200, (path, reply.text[:500])
            for name, value in SECURITY_HEADERS.items():
                assert reply.headers[name] == value


async def test_every_route_is_a_get_but_signing_in_and_out(site: Site) -> None:
    app = build_console(site.harness.app.services, TokenGate(lambda: site.harness.app.gate.tokens))
    methods: dict[str, set[str]] = {}
    for route in app.routes:
        if isinstance(route, Route):
            methods.setdefault(route.path, set()).update(route.methods or ())
        else:
            assert isinstance(route, Mount)
            assert route.path == "/static"
    writes = {path: m - {"GET", "HEAD"} for path, m in methods.items() if m - {"GET", "HEAD"}}
    assert writes == {"/signin": {"POST"}, "/signout": {"POST"}}
    async with signed_in(site, TOKEN_A) as client:
        for path in PAGES:
            for method in ("POST", "PUT", "DELETE", "PATCH"):
                reply = await client.request(method, path, params=CHAIN)
                assert reply.status_code == 405, (method, path)


async def test_a_cross_site_form_is_refused(site: Site) -> None:
    async with site.client() as client:
        reply = await client.post(
            "/signin", data={"token": TOKEN_A}, headers={"origin": "http://evil.example"}
        )
        assert reply.status_code == 403
        assert "set-cookie" not in reply.headers


async def test_the_console_never_writes(site: Site) -> None:
    before = _dump(site.harness.config)
    async with signed_in(site, TOKEN_A) as client:
        for path in PAGES:
            await client.get(path, params=CHAIN)
        for query in ("osmosis", "what did we do last week?", "how am I doing?", ""):
            reply = await client.get("/inspector", params={**CHAIN, "q": query, "run": "1"})
            assert reply.status_code == 200
        await client.get("/map", params={**CHAIN, "concept": "osmosis"})
        await client.get("/timeline", params={**CHAIN, "kind": "check"})
    assert _dump(site.harness.config) == before


async def test_the_inspector_says_how_the_sets_found_by_words_and_by_meaning_were_weighed(
    site: Site,
) -> None:
    async with signed_in(site, TOKEN_A) as client:
        reply = await client.get("/inspector", params={**CHAIN, "q": "osmosis", "run": "1"})
    assert reply.status_code == 200
    assert 'id="set-weights"' in reply.text
    assert re.search(r"found by words \u00d7 [01]\.\d\d, by meaning \u00d7 [01]\.\d\d", reply.text)


async def test_an_episode_that_is_a_script_renders_as_text(site: Site) -> None:
    async with signed_in(site, TOKEN_A) as client:
        reply = await client.get("/timeline", params={**CHAIN, "from": "2026-03-15"})
    assert reply.status_code == 200
    assert "<script>" not in reply.text
    assert "&lt;script&gt;document.title=&#39;pwned&#39;&lt;/script&gt;" in reply.text
    assert SCRIPT_TEXT not in reply.text


async def test_every_input_comes_back_escaped(site: Site) -> None:
    hostile = '"><script>alert(1)</script>'
    async with signed_in(site, TOKEN_A) as client:
        for path in PAGES:
            reply = await client.get(
                path, params={**CHAIN, "q": hostile, "tz": hostile, "run": "1", "concept": hostile}
            )
            assert "<script>" not in reply.text, path
        reply = await client.get("/timeline", params={"student": hostile, "subject": "x"})
        assert "<script>" not in reply.text


async def test_an_unknown_student_is_an_empty_state(site: Site) -> None:
    async with signed_in(site, TOKEN_A) as client:
        for path in PAGES:
            reply = await client.get(
                path, params={"student": "nobody", "subject": "biology", "run": "1"}
            )
            assert reply.status_code == 200, path
            assert 'class="empty"' in reply.text, path


async def test_an_erased_student_is_a_page_that_says_so_not_an_error(site: Site) -> None:
    await site.harness.stub.ForgetStudent(pb.ForgetStudentRequest(student_id=STUDENT), metadata=A)
    async with signed_in(site, TOKEN_A) as client:
        for path in PAGES:
            reply = await client.get(path, params={**CHAIN, "q": "osmosis", "run": "1"})
            assert reply.status_code in (200, 404), (path, reply.status_code)
            assert "Osmosis" not in reply.text, path
        timeline = await client.get("/timeline", params=CHAIN)
        assert timeline.status_code == 404
        assert f"student_id {STUDENT!r} was erased at" in html.unescape(timeline.text)
        assert 'id="problem"' in timeline.text
        assert (
            timeline.headers["content-security-policy"]
            == (SECURITY_HEADERS["content-security-policy"])
        )


async def test_bad_input_is_a_message_not_an_error_page(site: Site) -> None:
    async with signed_in(site, TOKEN_A) as client:
        reply = await client.get("/timeline", params={"student": "", "subject": "biology"})
        assert reply.status_code == 400
        assert "student: must not be empty" in reply.text
        cases = [
            ({"tz": "Mars/Olympus"}, "time_zone: unknown IANA time zone"),
            ({"budget": "lots"}, "budget: must be a whole number"),
            ({"budget": "0"}, "budget: must be from 1 to"),
            ({"mode": "everything"}, "mode: unknown mode"),
            ({"now": "yesterday"}, "now: must be a date and time"),
        ]
        for params, message in cases:
            reply = await client.get("/inspector", params={**CHAIN, "run": "1", **params})
            assert reply.status_code == 400, params
            assert message in reply.text, (params, reply.text[-2000:])
        for params, message in [
            ({"kind": "gossip"}, "kind: unknown kind"),
            ({"from": "March"}, "from: must be a date"),
            ({"after": "!!!"}, "after: malformed page position"),
            ({"before": "!!!"}, "before: malformed page position"),
            ({"after": "MTox", "before": "MToy"}, "before: not with after"),
            ({"from": "2026-03-10", "to": "2026-03-01"}, "to: must not be before from"),
            ({"tz": "Nowhere/Else"}, "time_zone: unknown IANA time zone"),
            ({"from": "1969-12-31"}, "from: before 1970-01-01"),
            ({"order": "sideways"}, "order: must be one of oldest, newest"),
        ]:
            reply = await client.get("/timeline", params={**CHAIN, **params})
            assert reply.status_code == 400, params
            assert message in reply.text


async def test_tenant_b_sees_nothing_of_tenant_a(site: Site) -> None:
    async with signed_in(site, TOKEN_B) as client:
        home = await client.get("/")
        assert B_STUDENT in home.text
        assert STUDENT not in home.text.replace(B_STUDENT, "")
        for path in PAGES:
            reply = await client.get(path, params={**CHAIN, "q": "osmosis", "run": "1"})
            assert reply.status_code == 200
            assert "Osmosis" not in reply.text, path
            assert "Diffusion" not in reply.text, path
        mine = await client.get("/timeline", params={"student": B_STUDENT, "subject": "biology"})
        assert B_SECRET in mine.text
    async with signed_in(site, TOKEN_A) as client:
        for path in PAGES:
            reply = await client.get(path, params={"student": B_STUDENT, "subject": "biology"})
            assert B_SECRET not in reply.text


async def _pages(client: httpx.AsyncClient, params: dict[str, str]) -> list[str]:
    """The episode ids of every timeline page from `params` on, following "Next page"."""
    seen: list[str] = []
    for _ in range(20):
        reply = await client.get("/timeline", params=params)
        assert reply.status_code == 200
        seen.extend(part.split('"')[0] for part in reply.text.split('id="episode-')[1:])
        marker = 'id="next-page"'
        if marker not in reply.text:
            return seen
        href = reply.text.split(marker)[0].rsplit('href="', 1)[1].split('"')[0]
        params = dict(httpx.QueryParams(href.split("?", 1)[1].replace("&amp;", "&")))
    raise AssertionError("more than 20 pages")


async def test_the_timeline_pages_newest_first_when_asked(site: Site) -> None:
    everything = [str(e.episode_id) for e in await site.harness.list_all()]
    async with signed_in(site, TOKEN_A) as client:
        newest = await _pages(client, {**CHAIN, "order": "newest"})
        first = await client.get("/timeline", params={**CHAIN, "order": "newest"})
        checks = await _pages(client, {**CHAIN, "order": "newest", "kind": "check"})
        march = await _pages(
            client, {**CHAIN, "order": "newest", "from": "2026-03-05", "to": "2026-03-08"}
        )
        oldest_march = await _pages(client, {**CHAIN, "from": "2026-03-05", "to": "2026-03-08"})
    assert len(everything) > 50  # more than one page
    assert newest == everything[::-1]
    assert "Newest first" in first.text
    assert '<option value="newest" selected>' in first.text
    by_id = {str(e.episode_id): e for e in await site.harness.list_all()}
    assert checks
    assert checks == [i for i in everything[::-1] if by_id[i].kind == pb.EPISODE_KIND_CHECK]
    assert march
    assert march == oldest_march[::-1]


def _ids(text: str) -> list[str]:
    return [part.split('"')[0] for part in text.split('id="episode-')[1:]]


def _link(text: str, link_id: str) -> str | None:
    """The address of the page link `link_id`, if the page has it."""
    marker = f'id="{link_id}"'
    if marker not in text:
        return None
    return html.unescape(text.split(marker)[0].rsplit('href="', 1)[1].split('"')[0])


async def _walk(client: httpx.AsyncClient, address: str, link_id: str) -> list[list[str]]:
    """The episode ids of each page from `address` on, following the link `link_id`."""
    pages: list[list[str]] = []
    at: str | None = address
    while at is not None:
        assert len(pages) < 20, "more than 20 pages"
        reply = await client.get(at)
        assert reply.status_code == 200
        pages.append(_ids(reply.text))
        at = _link(reply.text, link_id)
    return pages


@pytest.mark.parametrize(
    "filters",
    [
        [],
        [("order", "newest")],
        [("kind", "question"), ("kind", "answer")],
        [("order", "newest"), ("kind", "answer"), ("kind", "question")],
    ],
    ids=["oldest", "newest", "two kinds", "newest, two kinds"],
)
async def test_previous_page_walks_back_through_the_pages_next_page_walked(
    site: Site, filters: list[tuple[str, str]]
) -> None:
    start = "/timeline?" + str(httpx.QueryParams([*CHAIN.items(), *filters]))
    async with signed_in(site, TOKEN_A) as client:
        forward = await _walk(client, start, "next-page")
        last = await client.get(start)
        for _ in forward[1:]:
            later = _link(last.text, "next-page")
            assert later is not None
            last = await client.get(later)
        first = await client.get(start)
        back_from_last = _link(last.text, "previous-page")
        assert back_from_last is not None
        backward = await _walk(client, back_from_last, "previous-page")
        # The first page reached going back links forward the way the first page does.
        reached = await client.get(back_from_last)
    assert len(forward) > 1  # several pages ...
    assert all(forward)  # ... none empty
    assert backward == forward[-2::-1]
    assert _link(first.text, "previous-page") is None
    assert 'id="first-page"' not in first.text
    assert 'id="first-page"' in last.text
    assert _link(reached.text, "next-page") is not None


async def test_the_timeline_pages_through_the_history(site: Site) -> None:
    async with signed_in(site, TOKEN_A) as client:
        seen = await _pages(client, dict(CHAIN))
    everything = await site.harness.list_all()
    assert seen == [str(e.episode_id) for e in everything]
    assert len(seen) > 50  # more than one page


async def test_the_timeline_shows_only_the_period_asked_for(site: Site) -> None:
    """From and to are days in the chosen time zone, both included."""
    first, last = "2026-03-05", "2026-03-08"
    start = datetime(2026, 3, 5, tzinfo=UTC)
    end = datetime(2026, 3, 9, tzinfo=UTC)
    everything = await site.harness.list_all()
    expected = [
        str(e.episode_id) for e in everything if start <= e.occurred_at.ToDatetime(tzinfo=UTC) < end
    ]
    assert 0 < len(expected) < len(everything)  # the period holds some of the history, not all
    async with signed_in(site, TOKEN_A) as client:
        seen = await _pages(client, {**CHAIN, "from": first, "to": last, "tz": "UTC"})
    assert seen == expected


async def test_development_mode_needs_no_sign_in_and_binds_loopback_only(site: Site) -> None:
    gate = TokenGate(TokenBook.development)
    with pytest.raises(ConfigError, match="loopback"):
        await start_console("0.0.0.0:0", site.harness.app.services, gate)
    console = await start_console("127.0.0.1:0", site.harness.app.services, gate)
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{console.port}") as client:
            reply = await client.get("/")
            assert reply.status_code == 200
            assert "development mode" in reply.text
            # The development tenant has no chain: tenant A's student is not its.
            assert STUDENT not in reply.text.split("<main>")[1]
    finally:
        await console.stop()


async def test_a_long_history_is_read_a_page_at_a_time(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The timeline never loads a history whole: a page reads one page of rows (and one more, to
    know whether another follows); a kind filter reads at most TIMELINE_SCAN_ROWS rows, then
    offers to keep looking."""
    total = TIMELINE_SCAN_ROWS + 300
    await harness.ingest(
        [question(f"question {i}", key=f"k{i}", seconds=1_700_000_000 + i) for i in range(total)],
        per_message=500,
    )
    check = pb.NewEpisode(
        student_id="s1",
        subject_id="biology",
        kind=pb.EPISODE_KIND_CHECK,
        summary="Check on osmosis: right",
        check=pb.CheckResult(outcome=pb.CHECK_OUTCOME_RIGHT, topic="osmosis"),
    )
    check.occurred_at.seconds = 1_700_000_000 + total
    await harness.append(check)
    episodes = harness.app.services.episodes
    read: list[int] = []
    real_list = episodes.list

    async def counting_list(*args: Any, **kwargs: Any) -> EpisodePage:
        page = await real_list(*args, **kwargs)
        read.append(len(page.episodes))
        return page

    monkeypatch.setattr(episodes, "list", counting_list)
    gate = TokenGate(lambda: harness.app.gate.tokens)
    console = await start_console("127.0.0.1:0", harness.app.services, gate)
    site = Site(harness, console, f"http://127.0.0.1:{console.port}")
    try:
        async with signed_in(site, TOKEN_A) as client:
            reply = await client.get("/timeline", params=CHAIN)
            assert reply.text.count('<article class="episode') == TIMELINE_PAGE
            assert sum(read) == TIMELINE_PAGE
            read.clear()
            reply = await client.get("/timeline", params={**CHAIN, "kind": "check"})
            assert 'class="empty"' in reply.text  # nothing in the first rows read
            assert sum(read) <= TIMELINE_SCAN_ROWS
            assert f"searched {TIMELINE_SCAN_ROWS} episodes, keep looking" in reply.text
            href = reply.text.split('id="next-page"')[0].rsplit('href="', 1)[1].split('"')[0]
            reply = await client.get(href.replace("&amp;", "&"))
            assert reply.text.count('<article class="episode') == 1
            assert "Check on osmosis: right" in reply.text
            assert sum(read) <= total + 1
    finally:
        await console.stop()


async def test_the_timeline_shows_days_in_the_time_zone_asked_for(site: Site) -> None:
    """The history starts with the course file, at 09:00 UTC on Monday 2 March: 10:00 in Rome,
    23:00 on the Sunday in Honolulu."""
    async with signed_in(site, TOKEN_A) as client:
        rome = await client.get("/timeline", params={**CHAIN, "tz": "Europe/Rome"})
        honolulu = await client.get("/timeline", params={**CHAIN, "tz": "Pacific/Honolulu"})
    assert "<h2>Monday 2026-03-02</h2>" in rome.text
    assert '<span class="time">10:00:00</span>' in rome.text
    assert "<h2>Sunday 2026-03-01</h2>" in honolulu.text
    assert '<span class="time">23:00:00</span>' in honolulu.text
    async with signed_in(site, TOKEN_A) as client:
        everything = await client.get("/timeline", params={**CHAIN, "to": "9999-12-31"})
    assert everything.status_code == 200
    assert 'id="next-page"' in everything.text
