"""The nightly cycle (R8), chain by chain, with no model call and a deterministic result:

1. every whole day (in the chain's time zone) that has ended and has episodes nobody digested yet
   gets a digest episode: the first digest of the day, or a follow-up of its late arrivals;
2. as of each such day's end, every belief untouched for 45 days decays by 15%, as a new row
   flagged for reconfirmation (one clock: when things happened);
3. calibration of the tutor's predicted mastery against the checks' outcomes;
4. a bounded batch of citation checks, never-checked episodes first;
5. the working set and the self-model, recomposed.

Days come from the episodes, not from the wall clock: a chain's days are local days in the time
zone of its first run, and a run digests every ended day, however long ago, that still has an
undigested episode. Exactly once: each chain's writes commit in one transaction that also
advances the chain's state; a run whose reads are older than that state (a concurrent run, a
retry) reads again and finds nothing left to do, so any number of retries and concurrent runs
leave one digest per day and episode. That holds across server nodes too: the generation is read
inside the write transaction, and on PostgreSQL the store takes the chain's row lock there
(store/postgres/store.py), so of two nodes digesting one chain at once the second waits, reads
the first one's generation and retries. Chains are processed one at a time: memory stays bounded
by one chain's undigested episodes.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Protocol, TypeVar
from zoneinfo import ZoneInfo

from tutor_memory.app.changes import Change
from tutor_memory.app.executors import Executors
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.maps import MapCache
from tutor_memory.app.telemetry import Telemetry
from tutor_memory.domain.annotations import AnnotationKind
from tutor_memory.domain.beliefs.calibration import calibrate, calibration_json
from tutor_memory.domain.beliefs.history import calibration_pairs, decayed_row
from tutor_memory.domain.clock import now_us, us_to_datetime
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode, StoredEpisode
from tutor_memory.domain.honesty.citations import verify_citations
from tutor_memory.domain.records import DayDigest, NightlyState, WrittenDigest
from tutor_memory.domain.reporting.digest import (
    ConsolidationNote,
    consolidation_note,
    day_episode,
    local_day,
)
from tutor_memory.domain.reporting.report_lines import working_set
from tutor_memory.store.protocols import AppendOutcome, EpisodeReads, StoreWriter
from tutor_memory.store.protocols import NightlyReads as NightlyReadsOfStore

log = logging.getLogger(__name__)

T = TypeVar("T")

# Day digests a chain's status lists (the console's chain page): a year of nightly runs, enough
# to see when the cycle last wrote and what, without reading a long history's every digest.
RECENT_DIGESTS = 366

# Citations verified per chain per run (R8.4): bounded, so one night's cost does not grow with
# the whole history; never-checked episodes go first, then those checked longest ago.
DEFAULT_CITATION_BATCH = 200
# Consolidate: the largest citation batch one call may ask for.
MAX_CITATION_BATCH = 10_000
# The time zone of a chain's days when its first run names none.
DEFAULT_TIME_ZONE = "UTC"
# A chain whose state another run changed while this one read it is read again this many times
# at most; past that, the other run is doing the work and this one leaves the chain to it.
RACE_RETRIES = 3


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
    """One run of the cycle: which chains, the moment up to which days count as ended, the time
    zone of a chain's days when its first run sets them, and the citation batch."""

    scope: Scope
    end_us: int
    time_zone: str = DEFAULT_TIME_ZONE
    citation_batch: int = DEFAULT_CITATION_BATCH


@dataclass(slots=True)
class CycleSummary:
    chains_active: int = 0
    consolidation_episodes: int = 0
    beliefs_decayed: int = 0
    citations_verified: int = 0
    citations_changed: int = 0
    chains_already_done: int = 0


@dataclass(frozen=True, slots=True)
class _Day:
    """An ended day with episodes to digest, and its digest."""

    start_us: int
    end_us: int
    episodes: tuple[StoredEpisode, ...]
    note: ConsolidationNote


class _Raced(Exception):
    """Another run wrote this chain's state after this run read it."""


class NightlyReads(EpisodeReads, NightlyReadsOfStore, Protocol):
    """What the cycle reads: undigested episodes, coverage of days, checks, the citation batch."""


@dataclass(frozen=True, slots=True)
class NightlyRun:
    """One run of the cycle as it shows in one chain: the digests it wrote there, latest day
    first. A run that found nothing to digest in the chain wrote nothing and leaves no trace."""

    done_at_us: int
    digests: tuple[WrittenDigest, ...]

    @property
    def episodes(self) -> int:
        return sum(d.digest.episodes for d in self.digests)


@dataclass(frozen=True, slots=True)
class NightlyStatus:
    """What the cycle has done for one chain: its state, the days it digested (start of each
    day -> the highest seq digested), when it last composed the self-model, and its latest
    digests (RECENT_DIGESTS at most), newest run first."""

    state: NightlyState | None
    digested_days: dict[int, int]
    composed_at_us: int | None
    recent_digests: tuple[WrittenDigest, ...] = ()

    def runs(self) -> list[NightlyRun]:
        """The recent digests grouped by the run that wrote them, newest first (the oldest run
        may show only its latest digests, when RECENT_DIGESTS cut it)."""
        runs: list[NightlyRun] = []
        for done_at, group in groupby(self.recent_digests, key=lambda d: d.done_at_us):
            runs.append(NightlyRun(done_at, tuple(group)))
        return runs


class NightlyCycle:
    def __init__(
        self,
        ledger: Ledger,
        store: NightlyReads,
        maps: MapCache,
        executors: Executors,
        telemetry: Telemetry | None = None,
    ) -> None:
        self._ledger = ledger
        self._store = store
        self._maps = maps
        self._executors = executors
        self._telemetry = telemetry or Telemetry()

    async def _read(self, fn: Callable[[], T]) -> T:
        return await self._executors.run(self._executors.readers, fn)

    async def status(self, chain: ChainKey) -> NightlyStatus:
        """The cycle's runs as they show in one chain (read only)."""
        store = self._store

        def read() -> NightlyStatus:
            return NightlyStatus(
                store.nightly_state(chain),
                store.day_coverage(chain),
                store.self_model_composed_at(chain),
                tuple(store.recent_digests(chain, RECENT_DIGESTS)),
            )

        return await self._read(read)

    async def run(
        self, run: Consolidation, *, progress: Callable[[int, int], None] | None = None
    ) -> CycleSummary:
        started = time.monotonic()
        try:
            summary = await self._run(run, progress)
        except BaseException:
            self._telemetry.nightly_finished(started, ok=False)
            raise
        self._telemetry.nightly_finished(started, ok=True)
        return summary

    async def _run(
        self, run: Consolidation, progress: Callable[[int, int], None] | None
    ) -> CycleSummary:
        summary = CycleSummary()
        candidates = await self._read(self._store.nightly_candidates)
        todo = []
        for chain, top_seq, scanned in candidates:
            if not run.scope.covers(chain):
                continue
            if scanned is not None and top_seq <= scanned:
                summary.chains_already_done += 1
            else:
                todo.append(chain)
        for done, chain in enumerate(todo, 1):
            for _ in range(RACE_RETRIES):
                try:
                    await self._chain(chain, run, summary)
                    break
                except _Raced:
                    continue
            else:
                log.warning("nightly run left a chain to a concurrent run", extra={"chain": chain})
            if progress is not None:
                progress(done, len(todo))
        return summary

    async def _chain(self, chain: ChainKey, run: Consolidation, summary: CycleSummary) -> None:
        store = self._store
        state = await self._read(lambda: store.nightly_state(chain))
        zone_name = state.zone if state is not None else run.time_zone
        zone = ZoneInfo(zone_name)
        scanned = state.scanned_seq if state is not None else 0
        new = await self._read(lambda: store.episodes_after(chain, scanned))
        if not new:
            summary.chains_already_done += 1
            return
        coverage = await self._read(lambda: store.day_coverage(chain))
        days, pending = _days_to_digest(new, coverage, zone, zone_name, run.end_us)
        if not days:
            return  # everything new is in days that have not ended yet
        read_up_to = new[-1].seq
        next_state = NightlyState(
            zone=zone_name,
            # Episodes of days that have not ended are read again by the next run.
            scanned_seq=min(e.seq for e in pending) - 1 if pending else read_up_to,
            generation=(state.generation if state is not None else 0) + 1,
        )
        checks = await self._read(lambda: store.episodes_of_kind(chain, (Kind.CHECK,)))
        calibration = calibrate(calibration_pairs(checks))
        fingerprints = (await self._read(lambda: self._maps.get(chain))).fingerprints
        to_verify = await self._read(
            lambda: store.episodes_by_id(
                chain, store.citation_batch(chain, AnnotationKind.CITATION, run.citation_batch)
            )
        )
        digests = [_digest_episode(chain, day) for day in days]
        prepared = await self._ledger.embed(digests)

        def guard(w: StoreWriter) -> None:
            current = w.nightly_state(chain)
            if (current.generation if current is not None else 0) != next_state.generation - 1:
                raise _Raced

        def write(w: StoreWriter, outcomes: list[AppendOutcome]) -> None:
            at = now_us()
            decayed = 0
            for day, outcome in zip(days, outcomes, strict=True):
                for belief in w.current_beliefs(chain):
                    successor = decayed_row(belief, day.end_us)
                    if successor is not None:
                        new_id = w.add_belief(chain, successor, created_at_us=at)
                        w.supersede_belief(chain, belief.belief_id, new_id)
                        decayed += 1
                w.add_day_digest(
                    chain,
                    DayDigest(
                        day_start_us=day.start_us,
                        day_end_us=day.end_us,
                        first_seq=day.episodes[0].seq,
                        last_seq=day.episodes[-1].seq,
                        episodes=len(day.episodes),
                        covered_seq=read_up_to,
                        episode_id=outcome.episode.episode_id,
                    ),
                    done_at_us=at,
                )
            for ep in sorted(to_verify.values(), key=lambda e: e.episode_id):
                verdict = verify_citations(
                    [(e.file_id, e.file_fingerprint) for e in ep.evidence], fingerprints
                )
                body = json.dumps({"status": verdict.status.value, "detail": verdict.detail})
                w.annotate(chain, ep.episode_id, AnnotationKind.CITATION, body, created_at_us=at)
                summary.citations_verified += 1
                if verdict.status.changed:
                    summary.citations_changed += 1
            w.save_self_model(
                chain,
                working_set(w.current_beliefs(chain), us_to_datetime(days[-1].end_us)),
                calibration_json(calibration),
                at_us=at,
            )
            w.save_nightly_state(chain, next_state, at_us=at)
            summary.beliefs_decayed += decayed

        await self._ledger.write_with(prepared, write, guard=guard, also=Change.BELIEFS)
        summary.chains_active += 1
        summary.consolidation_episodes += len(days)


def _days_to_digest(
    new: Sequence[StoredEpisode],
    coverage: dict[int, int],
    zone: ZoneInfo,
    zone_name: str,
    end_us: int,
) -> tuple[list[_Day], list[StoredEpisode]]:
    """The ended days that have episodes no digest covers yet, oldest first, each with its note;
    and the episodes of days that have not ended by `end_us`."""
    by_day: dict[tuple[int, int], list[StoredEpisode]] = {}
    pending: list[StoredEpisode] = []
    for ep in new:
        start, end = local_day(ep.occurred_at_us, zone)
        if end > end_us:
            pending.append(ep)
        elif ep.seq > coverage.get(start, 0):
            by_day.setdefault((start, end), []).append(ep)
    days = []
    for (start, end), episodes in sorted(by_day.items()):
        note = consolidation_note(
            [day_episode(e) for e in episodes],
            us_to_datetime(start),
            us_to_datetime(end),
            zone_name,
            follow_up=start in coverage,
        )
        assert note is not None  # every episode here is in the day and none is a digest
        days.append(_Day(start, end, tuple(episodes), note))
    return days, pending


def _digest_episode(chain: ChainKey, day: _Day) -> NewEpisode:
    return NewEpisode(
        chain=chain,
        kind=Kind.CONSOLIDATION,
        summary=day.note.summary,
        text=day.note.text,
        concepts=day.note.concepts,
        # The last moment of the day: the digest sorts after the day it digests (and, as an
        # account of the record, never counts as a record of the day: R7.1).
        occurred_at_us=day.end_us - 1,
        occurred_at_given=True,
        evidence=(),
        check=None,
        quiz=None,
        # The day and the episodes it covers: a digest can never be written twice.
        client_key=f"digest:{day.start_us}:{day.episodes[0].seq}:{day.episodes[-1].seq}",
    )
