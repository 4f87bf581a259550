"""The console's pages, one handler each. Every handler reads through the use cases the RPCs use
(`app.root.Services`), only after `may_read` allowed the chain, and renders a template; none
writes. A bad query string is a message on the page with status 400, never an error page."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from tutor_memory.app.nightly import RECENT_DIGESTS
from tutor_memory.app.root import Services
from tutor_memory.console import forms
from tutor_memory.console.access import Viewer, may_read
from tutor_memory.console.drawing import draw_calibration, draw_map, readiness_colour
from tutor_memory.domain.clock import now_us, us_to_datetime
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.episodes import ChainKey, Kind, StoredEpisode
from tutor_memory.domain.errors import FailedPrecondition, InvalidArgument
from tutor_memory.domain.recall.block import Mode, zone
from tutor_memory.domain.recall.ranking import Weights

# Episodes on one timeline page.
TIMELINE_PAGE = 50
# With a kind filter, rows read past to fill one page, at most: a rare kind in a long history
# gives a short page with a "more" link instead of a scan of the whole history.
TIMELINE_SCAN_ROWS = 2_000
# Rows one read of the store returns while scanning (the API's largest page).
SCAN_BATCH = 1_000
# Characters of an episode's text shown before "more".
TEXT_PREVIEW_CHARS = 400


@dataclass(frozen=True, slots=True)
class Shown:
    """A chain page's common parts: who looks, at which chain."""

    viewer: Viewer
    chain: ChainKey


class Problem(Exception):
    """A request the page cannot answer; shown in the page with its status. Raised from a page,
    it is answered by the console's handler (`console/web.py`)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def when(us: int | None, fmt: str = "%Y-%m-%d %H:%M:%S UTC") -> str:
    return "" if us is None else us_to_datetime(us).strftime(fmt)


class Pages:
    def __init__(self, services: Services, templates: Jinja2Templates, development: bool) -> None:
        self._s = services
        self._t = templates
        self._development = development

    def render(
        self, request: Request, name: str, context: Mapping[str, Any], status: int = 200
    ) -> Response:
        viewer: Viewer | None = getattr(request.state, "viewer", None)
        full = {"viewer": viewer, "development": self._development, **context}
        return self._t.TemplateResponse(request, name, full, status_code=status)

    def problem(self, request: Request, exc: Problem, chain: ChainKey | None = None) -> Response:
        context = {"message": exc.message, "chain": chain}
        return self.render(request, "problem.html", context, exc.status)

    def _shown(self, request: Request) -> Shown:
        viewer: Viewer = request.state.viewer
        q = request.query_params
        try:
            chain = forms.chain_of(viewer.tenant, q.get("student", ""), q.get("subject", ""))
        except InvalidArgument as exc:
            raise Problem(400, str(exc)) from exc
        if not may_read(viewer, chain):
            raise Problem(403, "Your token's scopes do not cover this student and subject.")
        return Shown(viewer, chain)

    # -- home ----------------------------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        viewer: Viewer = request.state.viewer
        chains = [c for c in await self._s.episodes.chains_of(viewer.tenant) if may_read(viewer, c)]
        by_student = [
            (s, [c.subject for c in group]) for s, group in groupby(chains, lambda c: c.student)
        ]
        return self.render(request, "home.html", {"students": by_student})

    # -- timeline ------------------------------------------------------------------------------

    async def timeline(self, request: Request) -> Response:
        shown = self._shown(request)
        q = request.query_params
        try:
            tz = zone(q.get("tz", "UTC"))
            kinds = forms.kinds_of(q.getlist("kind"))
            start = forms.day_start_us("from", q.get("from", ""), tz)
            end = forms.day_start_us("to", q.get("to", ""), tz, plus_days=1)
            after = forms.decode_position(q.get("after", ""))
            before = forms.decode_position(q.get("before", ""), "before")
            latest_first = forms.newest_first(q.get("order", ""))
            if start is not None and end is not None and end <= start:
                raise InvalidArgument("to", "must not be before from")
            if after is not None and before is not None:
                raise InvalidArgument("before", "not with after: a page is read one way")
        except InvalidArgument as exc:
            return self.problem(request, Problem(400, str(exc)), shown.chain)
        rows = TimelineRows(shown.chain, kinds, start, end)
        page = await self._timeline_page(rows, after, before, latest_first)
        episodes = page.episodes
        notes = await self._s.episodes.notes(shown.chain, [e.episode_id for e in episodes])

        def local(us: int, fmt: str) -> str:
            return us_to_datetime(us).astimezone(tz).strftime(fmt)

        days = [
            (day, list(group))
            for day, group in groupby(episodes, lambda e: local(e.occurred_at_us, "%A %Y-%m-%d"))
        ]
        context = {
            "chain": shown.chain,
            "page": "timeline",
            "days": days,
            "notes": notes,
            "kinds": [k.value for k in Kind],
            "chosen": {k.value for k in kinds},
            "local": local,
            "tz": tz.key,
            "date_from": q.get("from", ""),
            "date_to": q.get("to", ""),
            "next_after": page.next_after,
            "previous_before": page.previous_before,
            "backwards": before is not None,
            "order": "newest" if latest_first else "oldest",
            "scanned_all": page.scanned_all,
            "first_page": page.first,
            "preview": TEXT_PREVIEW_CHARS,
            "page_size": TIMELINE_PAGE,
            "scan_rows": TIMELINE_SCAN_ROWS,
        }
        return self.render(request, "timeline.html", context)

    async def _timeline_page(
        self,
        rows: TimelineRows,
        after: tuple[int, int] | None,
        before: tuple[int, int] | None,
        latest_first: bool,
    ) -> TimelinePage:
        """The page after `after` (the first page without it), or the page before `before`,
        in the page's order, with where the pages beside it start."""
        if before is None:
            episodes, next_after, scanned_all = await self._scan(rows, after, latest_first)
            if after is None:
                return TimelinePage(episodes, next_after, "", scanned_all, True)
            # The previous page ends before this page's first episode (or before where this
            # page started, when it showed none).
            previous = _encoded(episodes[0]) if episodes else _encoded_place(after)
            return TimelinePage(episodes, next_after, previous, scanned_all, False)
        backwards, previous, scanned_all = await self._scan(rows, before, not latest_first)
        if not backwards and not scanned_all:
            # Nothing comes before: the previous page is the first one.
            return await self._timeline_page(rows, None, None, latest_first)
        episodes = backwards[::-1]
        # The next page starts after this page's last episode; with none shown (a kind filter
        # that found nothing in the rows read), where this scan stopped, the rows between
        # holding no match.
        next_after = _encoded(episodes[-1]) if episodes else previous
        return TimelinePage(episodes, next_after, previous, scanned_all, not previous)

    async def _scan(
        self, rows: TimelineRows, after: tuple[int, int] | None, latest_first: bool
    ) -> tuple[list[StoredEpisode], str, bool]:
        """One page in (occurred_at, seq) order after `after` (or in the reverse order, before
        it, when `latest_first`), read page by page from the store as ListEpisodes reads it;
        with a kind filter, at most TIMELINE_SCAN_ROWS rows are read. Returns the episodes, where
        the next page starts ("" at the end), and whether the scan stopped early (then the next
        page may still hold matches)."""
        found: list[StoredEpisode] = []
        scanned = 0
        position = after
        while True:
            batch = TIMELINE_PAGE if not rows.kinds else SCAN_BATCH
            page = await self._s.episodes.list(
                rows.chain,
                occurred_from_us=rows.start,
                occurred_to_us=rows.end,
                after=position,
                limit=batch,
                newest_first=latest_first,
            )
            for i, ep in enumerate(page.episodes):
                scanned += 1
                position = _place(ep)
                if rows.shows(ep):
                    found.append(ep)
                    if len(found) == TIMELINE_PAGE:
                        # More follows if the store holds more rows, or if a row read already
                        # would be shown (not merely read past).
                        more = page.more or any(map(rows.shows, page.episodes[i + 1 :]))
                        return found, _encoded_place(position) if more else "", False
            if not page.more:
                return found, "", False
            if scanned >= TIMELINE_SCAN_ROWS:
                return found, _encoded_place(position), True

    # -- block inspector -----------------------------------------------------------------------

    async def inspector(self, request: Request) -> Response:
        shown = self._shown(request)
        q = request.query_params
        form = forms.InspectorForm(
            query=q.get("q", ""),
            budget=q.get("budget", str(forms.DEFAULT_BUDGET)),
            time_zone=q.get("tz", "UTC"),
            mode=q.get("mode", Mode.FULL.value),
            now=q.get("now", ""),
            run="run" in q,
        )
        context: dict[str, Any] = {
            "chain": shown.chain,
            "page": "inspector",
            "form": form,
            "modes": [m.value for m in Mode],
            "weights": Weights(),
        }
        if not form.run:
            return self.render(request, "inspector.html", context)
        try:
            req = form.request(shown.chain, now_us())
            block = await self._s.blocks.build(req, None, explain=True)
        except InvalidArgument as exc:
            context["error"] = str(exc)
            return self.render(request, "inspector.html", context, 400)
        context["block"] = block
        context["asked"] = req
        context["tokenizer"] = self._s.blocks.tokenizer
        return self.render(request, "inspector.html", context)

    # -- concept map ---------------------------------------------------------------------------

    async def concept_map(self, request: Request) -> Response:
        shown = self._shown(request)
        chain_map = await self._s.files.concept_map(shown.chain)
        concept = request.query_params.get("concept", "")
        selected = chain_map.map.node_by_key(canonical_key(concept)) if concept else None
        histories = await self._s.beliefs.history(shown.chain, selected.name) if selected else []
        context = {
            "chain": shown.chain,
            "page": "map",
            "map": chain_map.map,
            "drawing": draw_map(chain_map.map),
            "selected": selected,
            "histories": histories,
            "colour": readiness_colour,
            "asked": concept,
        }
        return self.render(request, "map.html", context)

    # -- beliefs -------------------------------------------------------------------------------

    async def beliefs(self, request: Request) -> Response:
        shown = self._shown(request)
        histories = await self._s.beliefs.history(shown.chain, "")
        report = await self._s.reporter.report(shown.chain, now_us())
        context = {
            "chain": shown.chain,
            "page": "beliefs",
            "histories": sorted(histories, key=lambda h: h.concept.casefold()),
            "calibration": report.calibration,
            "chart": draw_calibration(report.calibration),
        }
        return self.render(request, "beliefs.html", context)

    # -- chain ---------------------------------------------------------------------------------

    async def chain(self, request: Request) -> Response:
        shown = self._shown(request)
        report = await self._s.episodes.verify(shown.chain)
        checkpoint, refused = None, ""
        if report.verification.length:
            try:
                checkpoint = await self._s.episodes.checkpoint(shown.chain)
            except FailedPrecondition as exc:
                refused = str(exc)
        nightly = await self._s.nightly.status(shown.chain)
        days_zone = zone(nightly.state.zone if nightly.state is not None else "UTC")

        def day(us: int) -> str:
            return us_to_datetime(us).astimezone(days_zone).strftime("%Y-%m-%d")

        context = {
            "chain": shown.chain,
            "page": "chain",
            "verification": report.verification,
            "checkpoint": checkpoint,
            "refused": refused,
            "nightly": nightly,
            "days_digested": len(nightly.digested_days),
            "runs": nightly.runs(),
            "day": day,
            "digests_listed": len(nightly.recent_digests),
            "digests_limit": RECENT_DIGESTS,
        }
        return self.render(request, "chain.html", context)


@dataclass(frozen=True, slots=True)
class TimelineRows:
    """Which episodes a timeline shows: one chain's, of `kinds` (all when empty), occurred in
    [start, end) (either bound may be open)."""

    chain: ChainKey
    kinds: tuple[Kind, ...]
    start: int | None
    end: int | None

    def shows(self, ep: StoredEpisode) -> bool:
        """Whether a row the store returned (already within the period) is shown."""
        return not self.kinds or ep.kind in self.kinds


@dataclass(frozen=True, slots=True)
class TimelinePage:
    """One timeline page in its order, and where the pages beside it start ("" for none)."""

    episodes: list[StoredEpisode]
    next_after: str
    previous_before: str
    # Whether a kind filter's scan stopped early (the page may be short; more may follow).
    scanned_all: bool
    # Whether this is the first page (nothing comes before it).
    first: bool


def _place(ep: StoredEpisode) -> tuple[int, int]:
    """Where an episode stands in the timeline's order: (occurred_at, seq), as the store pages."""
    return ep.occurred_at_us, ep.seq


def _encoded(ep: StoredEpisode) -> str:
    return forms.encode_position(*_place(ep))


def _encoded_place(place: tuple[int, int] | None) -> str:
    return "" if place is None else forms.encode_position(*place)
