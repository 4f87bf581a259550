"""The nightly cycle (SPEC R8), chain by chain, with no model call and a deterministic result:

1. a consolidation episode for the window (nothing for a quiet one; never a digest of digests);
2. every belief untouched for 45 days decays by 15%, as a new row flagged for reconfirmation;
3. calibration of the tutor's predicted mastery against the checks' outcomes;
4. a bounded batch of citation checks, never-checked episodes first;
5. the working set and the self-model, recomposed.

Each chain's writes commit in one transaction together with a `consolidations` row for the window,
so a second run for the same window finds the row and writes nothing. Chains are processed one at
a time: memory stays bounded by one chain's day, however many chains are active.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from tutor_memory.app.changes import Change
from tutor_memory.app.executors import Executors
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.maps import MapCache
from tutor_memory.domain.annotations import AnnotationKind
from tutor_memory.domain.beliefs.calibration import calibrate, calibration_json
from tutor_memory.domain.beliefs.history import calibration_pairs, decayed_row
from tutor_memory.domain.clock import now_us, us_to_datetime
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode, StoredEpisode
from tutor_memory.domain.honesty.citations import verify_citations
from tutor_memory.domain.records import Consolidation as ConsolidationRow
from tutor_memory.domain.reporting.digest import consolidation_note, day_episode
from tutor_memory.domain.reporting.report_lines import working_set
from tutor_memory.store.protocols import AppendOutcome, EpisodeReads, StoreWriter
from tutor_memory.store.protocols import NightlyReads as NightlyReadsOfStore

T = TypeVar("T")

# Default window: the day before `now` (R8: "active in the last day").
DEFAULT_WINDOW_HOURS = 24
# Citations verified per chain per run (R8.4): bounded, so one night's cost does not grow with
# the whole history; never-checked episodes go first, then those checked longest ago.
DEFAULT_CITATION_BATCH = 200
# Consolidate: the longest window one call may cover, and the largest citation batch.
MAX_WINDOW_HOURS = 24 * 31
MAX_CITATION_BATCH = 10_000
# Episodes of one window read per page.
WINDOW_PAGE = 5_000
US_PER_HOUR = 3_600 * 1_000_000


@dataclass(frozen=True, slots=True)
class Scope:
    """Which chains a run covers: a tenant (None: every tenant, the CLI only), optionally one
    student, optionally one of their subjects."""

    tenant: str | None
    student: str = ""
    subject: str = ""

    def covers(self, chain: ChainKey) -> bool:
        return (
            (self.tenant is None or chain.tenant == self.tenant)
            and (not self.student or chain.student == self.student)
            and (not self.subject or chain.subject == self.subject)
        )


@dataclass(frozen=True, slots=True)
class Consolidation:
    """One run of the cycle: which chains, the window's end, its length, the citation batch."""

    scope: Scope
    end_us: int
    window_hours: int = DEFAULT_WINDOW_HOURS
    citation_batch: int = DEFAULT_CITATION_BATCH


@dataclass(slots=True)
class CycleSummary:
    chains_active: int = 0
    consolidation_episodes: int = 0
    beliefs_decayed: int = 0
    citations_verified: int = 0
    citations_changed: int = 0
    chains_already_done: int = 0


class NightlyReads(EpisodeReads, NightlyReadsOfStore, Protocol):
    """What the cycle reads: the window's episodes, the checks, the citation batch, its marks."""


class NightlyCycle:
    def __init__(
        self, ledger: Ledger, store: NightlyReads, maps: MapCache, executors: Executors
    ) -> None:
        self._ledger = ledger
        self._store = store
        self._maps = maps
        self._executors = executors

    async def _read(self, fn: Callable[[], T]) -> T:
        return await self._executors.run(self._executors.readers, fn)

    async def run(
        self, run: Consolidation, *, progress: Callable[[int, int], None] | None = None
    ) -> CycleSummary:
        scope, end_us, citation_batch = run.scope, run.end_us, run.citation_batch
        start_us = end_us - run.window_hours * US_PER_HOUR
        store = self._store
        chains = [
            c
            for c in await self._read(lambda: store.active_chains(start_us, end_us))
            if scope.covers(c)
        ]
        summary = CycleSummary(chains_active=len(chains))
        for done, chain in enumerate(chains, 1):
            await self._chain(chain, start_us, end_us, citation_batch, summary)
            if progress is not None:
                progress(done, len(chains))
        return summary

    async def _chain(
        self, chain: ChainKey, start_us: int, end_us: int, batch: int, summary: CycleSummary
    ) -> None:
        store = self._store
        if await self._read(lambda: store.find_consolidation(chain, start_us, end_us)):
            summary.chains_already_done += 1
            return
        day = await self._read(lambda: self._window(chain, start_us, end_us))
        note = consolidation_note([day_episode(e) for e in day], us_to_datetime(start_us),
                                  us_to_datetime(end_us))  # fmt: skip
        checks = await self._read(lambda: store.episodes_of_kind(chain, (Kind.CHECK,)))
        calibration = calibrate(calibration_pairs(checks))
        fingerprints = (await self._read(lambda: self._maps.get(chain))).fingerprints
        to_verify = await self._read(
            lambda: store.episodes_by_id(
                chain, store.citation_batch(chain, AnnotationKind.CITATION, batch)
            )
        )

        def write(w: StoreWriter, episode_id: int | None) -> None:
            at = now_us()
            decayed = 0
            current = w.current_beliefs(chain)
            for belief in current:
                successor = decayed_row(belief, end_us)
                if successor is not None:
                    new_id = w.add_belief(chain, successor, created_at_us=at)
                    w.supersede_belief(chain, belief.belief_id, new_id)
                    decayed += 1
            for ep in sorted(to_verify.values(), key=lambda e: e.episode_id):
                verdict = verify_citations(
                    [(e.file_id, e.file_fingerprint) for e in ep.evidence], fingerprints
                )
                body = json.dumps({"status": verdict.status.value, "detail": verdict.detail})
                w.annotate(chain, ep.episode_id, AnnotationKind.CITATION, body, created_at_us=at)
                summary.citations_verified += 1
                if verdict.status.changed:
                    summary.citations_changed += 1
            beliefs_now = w.current_beliefs(chain)
            w.save_self_model(
                chain,
                working_set(beliefs_now, us_to_datetime(end_us)),
                calibration_json(calibration),
                at_us=at,
            )
            w.add_consolidation(
                chain, ConsolidationRow(start_us, end_us, episode_id, decayed), done_at_us=at
            )
            summary.beliefs_decayed += decayed

        if note is None:
            await self._ledger.in_transaction(chain, Change.BELIEFS, lambda w: write(w, None))
            return
        episode = NewEpisode(
            chain=chain,
            kind=Kind.CONSOLIDATION,
            summary=note.summary,
            text=note.text,
            concepts=note.concepts,
            # The last moment of the window: the digest sorts after the day it digests.
            occurred_at_us=end_us - 1,
            occurred_at_given=True,
            evidence=(),
            check=None,
            quiz=None,
            client_key=f"consolidation:{start_us}:{end_us}",
        )
        prepared = await self._ledger.embed([episode])

        def then(w: StoreWriter, outcomes: list[AppendOutcome]) -> None:
            write(w, outcomes[0].episode.episode_id)

        await self._ledger.write_with(prepared, then, also=Change.BELIEFS)
        summary.consolidation_episodes += 1

    def _window(self, chain: ChainKey, start_us: int, end_us: int) -> list[StoredEpisode]:
        out: list[StoredEpisode] = []
        after: tuple[int, int] | None = None
        while True:
            page = self._store.list_episodes(
                chain, occurred_from_us=start_us, occurred_to_us=end_us, after=after,
                limit=WINDOW_PAGE,
            )  # fmt: skip
            out.extend(page)
            if len(page) < WINDOW_PAGE:
                return out
            after = (page[-1].occurred_at_us, page[-1].seq)
