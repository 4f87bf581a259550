"""GetReport (SPEC R7.3, R7.5): what the memory holds about the student, from the store's own
rows — beliefs, checks, answers the files could not ground, calibration, the working set — in
numbers and in sentences that never invent."""

from __future__ import annotations

from typing import Protocol

from tutor_memory.app.executors import Executors
from tutor_memory.app.maps import MapCache
from tutor_memory.domain.annotations import AnnotationKind
from tutor_memory.domain.episodes import ChainKey, Kind
from tutor_memory.domain.reporting.report import Report, build_report
from tutor_memory.store.protocols import BeliefReads, EpisodeReads, NightlyReads


class ReportReads(EpisodeReads, BeliefReads, NightlyReads, Protocol):
    """What a report reads: the conversation and checks, the beliefs, the nightly cycle's mark."""


class Reporter:
    def __init__(self, store: ReportReads, maps: MapCache, executors: Executors) -> None:
        self._store = store
        self._maps = maps
        self._executors = executors

    async def report(self, chain: ChainKey, now_us: int) -> Report:
        return await self._executors.run(self._executors.readers, self._report, chain, now_us)

    def _report(self, chain: ChainKey, now_us: int) -> Report:
        chain_map = self._maps.get(chain)
        return build_report(
            chain_map.matcher,
            len(chain_map.map.nodes),
            self._store.current_beliefs(chain),
            self._store.episodes_of_kind(chain, (Kind.QUESTION, Kind.ANSWER, Kind.CHECK)),
            self._store.latest_annotations(chain, AnnotationKind.GROUNDING),
            self._store.self_model_composed_at(chain),
            now_us,
        )
