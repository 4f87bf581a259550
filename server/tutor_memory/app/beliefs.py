"""Beliefs kept with their history (SPEC R5.2-R5.6): checks in, belief rows out, never rewritten.

A belief on a concept is derived from every check routed to that concept (`rules.derive`). When
the derivation says something new, a new row is inserted and the current one points to it
(`superseded_by`); when it says the same, nothing is written. Everything a change writes happens in
the transaction of the check that caused it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from tutor_memory.app.caches import CHAIN_CACHE_SIZE, ChainCache
from tutor_memory.app.changes import Change
from tutor_memory.app.executors import Executors
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.maps import MapCache
from tutor_memory.domain.beliefs.history import CheckGroups, History, history_of, new_row
from tutor_memory.domain.beliefs.routing import Routing, check_text, evaluation_of, route_topic
from tutor_memory.domain.beliefs.rules import (
    RULES_VERSION,
    CheckEvidence,
    Claim,
    derive,
    same_belief,
)
from tutor_memory.domain.budget import WorkBudget, text_work_budget, unlimited
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.conceptmap.bands import Band
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.conceptmap.chain_map import ChainMap
from tutor_memory.domain.conceptmap.names import NameMatcher
from tutor_memory.domain.episodes import (
    ChainKey,
    Check,
    Kind,
    NewEpisode,
    Outcome,
    validate_new_episode,
)
from tutor_memory.domain.limits import MAX_SUMMARY_CHARS
from tutor_memory.domain.records import BeliefRow, belief_rows_bytes
from tutor_memory.store.lru import LruCache
from tutor_memory.store.protocols import (
    AppendOutcome,
    AppendStatus,
    BeliefReads,
    EpisodeReads,
    StoreWriter,
)

# What a re-derivation writes as each new row's reason prefix.
REDERIVE_REASON = "re-derived under rules {version}"


@dataclass(frozen=True, slots=True)
class CheckReport:
    """A check as the tutor reports it (RecordCheck), before it is validated and routed."""

    chain: ChainKey
    topic: str
    outcome: Outcome
    evaluation: str
    predicted_mastery: float | None
    student_answer: str
    # None: the check happened now.
    occurred_at_us: int | None
    client_key: str


@dataclass(frozen=True, slots=True)
class CheckRecorded:
    outcome: AppendOutcome
    routing: Routing
    concept: str | None
    belief: BeliefRow | None


@dataclass(frozen=True, slots=True)
class Rederived:
    retired: int
    derived: int
    checks_replayed: int


# Bytes of current belief rows kept in memory over all chains (`belief_rows_bytes`). A row weighs
# about 1 KiB with its texts, so a chain with beliefs on 400 concepts some 400 KiB and
# CHAIN_CACHE_SIZE such chains 400 MiB; beyond this, the least recently read chains' rows are read
# again (one indexed query).
BELIEF_CACHE_BYTES = 64 * 1024 * 1024


def current_beliefs_cache(
    store: BeliefReads, fresh: Callable[[ChainKey], None] | None = None
) -> ChainCache[list[BeliefRow]]:
    """Each chain's current belief rows, read by every block and dropped by the change hook when
    a belief changes. Bounded in chains and in bytes (BELIEF_CACHE_BYTES)."""
    return ChainCache(
        store.current_beliefs,
        CHAIN_CACHE_SIZE,
        fresh,
        weigh=belief_rows_bytes,
        max_bytes=BELIEF_CACHE_BYTES,
    )


# Bytes of check groups kept in memory over all chains (`CheckGroups.nbytes`): each check's
# evidence is about 170 bytes, and the groups hold the name matcher they routed by, about 0.3 KiB
# a concept (shared with the chain's map while that is cached, counted here too): 168 KiB for a
# course of 400 concepts with 200 checks, so this holds CHAIN_CACHE_SIZE such chains. Beyond it, a
# chain whose groups left routes its checks again at its next check.
CHECK_GROUPS_BYTES = 256 * 1024 * 1024


class BeliefSources(EpisodeReads, BeliefReads, Protocol):
    """What beliefs are derived from and read back: the check episodes and the belief rows."""


# Checks routed in one go on the long-text thread when a whole history is routed (`_routed`):
# about a fifth of a second of work with long evaluations (1.8 ms a check measured with
# 4,000-character ones), after which a long text another request waits with goes first.
ROUTING_SLICE = 100


class BeliefKeeper:
    def __init__(
        self,
        ledger: Ledger,
        store: BeliefSources,
        maps: MapCache,
        executors: Executors,
    ) -> None:
        self._ledger = ledger
        self._store = store
        self._maps = maps
        self._executors = executors
        # Each chain's checks grouped by concept, advanced check by check (see _groups_in).
        self._groups: LruCache[ChainKey, CheckGroups] = LruCache(
            CHAIN_CACHE_SIZE, weigh=CheckGroups.nbytes, max_weight=CHECK_GROUPS_BYTES
        )

    @property
    def check_groups(self) -> LruCache[ChainKey, CheckGroups]:
        """The kept check groups (for their size, bytes and evictions)."""
        return self._groups

    def forget(self, chain: ChainKey) -> None:
        """Drops the chain's grouped checks (its student was erased)."""
        self._groups.pop(chain)

    async def _chain_map(self, chain: ChainKey) -> ChainMap:
        return await self._executors.run(self._executors.readers, self._maps.get, chain)

    # -- writes --------------------------------------------------------------------------------

    async def record_check(
        self, check: CheckReport, *, deadline: float | None = None
    ) -> CheckRecorded:
        """A check the tutor reports (RecordCheck): validated first, then routed to a concept by
        name or through the evaluation (R5.5), then appended with the belief it changes. The
        routing stops at the caller's `deadline` (event-loop time) or after TEXT_WORK_SECONDS,
        and then nothing is written."""
        word = "right" if check.outcome is Outcome.RIGHT else "wrong"
        episode = validate_new_episode(
            chain=check.chain,
            kind=Kind.CHECK,
            summary=f"Check on {' '.join(check.topic.split())}: {word}"[:MAX_SUMMARY_CHARS],
            text=check_text(check.evaluation, check.student_answer),
            concepts=(),
            occurred_at_us=check.occurred_at_us,
            evidence=(),
            check=Check(check.outcome, check.topic, check.predicted_mastery),
            quiz=None,
            client_key=check.client_key,
            now_us=now_us(),
            client_key_required=False,
            check_field="",
        )
        budget = text_work_budget("evaluation: routing the topic to a concept", deadline)
        chain_map = await self._chain_map(check.chain)
        routing, concept = await self._executors.run_within(
            self._executors.text_pool(len(check.topic) + len(check.evaluation)),
            budget,
            route_topic,
            check.topic,
            check.evaluation,
            chain_map.matcher,
            budget,
        )
        if concept:
            episode = dataclasses.replace(episode, concepts=(concept,))
        return await self.append_check(
            episode,
            chain_map.matcher,
            routing,
            concept,
            budget=budget,
            deadline=deadline,
        )

    async def append_check(
        self,
        episode: NewEpisode,
        matcher: NameMatcher | None = None,
        routing: Routing | None = None,
        concept: str | None = None,
        *,
        budget: WorkBudget | None = None,
        deadline: float | None = None,
    ) -> CheckRecorded:
        """Appends a check episode and, in the same transaction, the belief it changes. Its text
        work (topic routing, recall facts) checks `budget`; nothing is written once the caller's
        `deadline` (event-loop time) has passed."""
        chain = episode.chain
        chain_map = await self._chain_map(chain)
        matcher = matcher or chain_map.matcher
        if budget is None:
            budget = text_work_budget("text: routing the check's topic to a concept", deadline)
        if routing is None:
            assert episode.check is not None
            topic, evaluation = episode.check.topic, evaluation_of(episode.text)
            found, concept = await self._executors.run_within(
                self._executors.text_pool(len(topic) + len(evaluation)),
                budget,
                route_topic,
                topic,
                evaluation,
                matcher,
                budget,
            )
        else:
            found = routing
        prepared = await self._ledger.embed([episode], budget)
        if concept is not None:
            await self._warm(chain, matcher, deadline)
        right = episode.check is not None and episode.check.outcome is Outcome.RIGHT
        # A passed check confirms its concept on the map (readiness 0.85, R3.5): the map is
        # rebuilt only when that changes a band.
        also = Change.BELIEFS
        if right and concept is not None and not _confirmed(chain_map, concept):
            also |= Change.CONFIRMATIONS

        def then(
            w: StoreWriter, outcomes: list[AppendOutcome]
        ) -> tuple[BeliefRow | None, CheckGroups | None]:
            if outcomes[0].status is not AppendStatus.INSERTED or concept is None:
                return None, None
            groups = self._groups_in(w, chain, matcher)
            return self._update(w, chain, concept, groups.evidence(concept)), groups

        outcomes, (belief, groups) = await self._ledger.write_with(
            prepared, then, also=also, deadline=deadline
        )
        if groups is not None:
            self._remember(chain, groups)
        return CheckRecorded(outcomes[0], found, concept, belief)

    def _groups_in(self, w: StoreWriter, chain: ChainKey, matcher: NameMatcher) -> CheckGroups:
        """The chain's check groups as this transaction sees them: the cached groups advanced by
        the checks recorded since (read inside the transaction, so none is missed), or all of
        them when the map's names changed since the groups were made (a map rebuilt with the
        same names routes alike)."""
        cached = self._groups.get(chain)
        if cached is None or cached.matcher.names != matcher.names:
            cached = CheckGroups.empty(matcher)
        return cached.advanced(w.checks_after(chain, cached.through))

    def _remember(self, chain: ChainKey, groups: CheckGroups) -> None:
        """Keeps committed groups; a stale entry is still correct (advancing reads what is
        missing), so a newer one is never replaced by an older one."""
        cached = self._groups.get(chain)
        if (
            cached is None
            or cached.matcher.names != groups.matcher.names
            or cached.through < groups.through
        ):
            self._groups.put(chain, groups)

    def _update(
        self,
        w: StoreWriter,
        chain: ChainKey,
        name: str,
        evidence: Sequence[CheckEvidence],
    ) -> BeliefRow | None:
        """Derives the concept's belief from its checks; inserts a row only when it changed."""
        derived = derive(evidence)
        if derived is None:
            return None
        key = canonical_key(name)
        current = next((b for b in w.current_beliefs(chain) if b.concept_key == key), None)
        if (
            current is not None
            and same_belief(derived, Claim(current.claim), current.confidence)
            and not current.needs_reconfirmation
        ):
            return current
        created = now_us()
        belief_id = w.add_belief(chain, new_row(name, derived), created_at_us=created)
        if current is not None:
            w.supersede_belief(chain, current.belief_id, belief_id)
        return next(b for b in w.current_beliefs(chain) if b.belief_id == belief_id)

    async def _routed(
        self, chain: ChainKey, matcher: NameMatcher, budget: WorkBudget, *, anew: bool
    ) -> tuple[CheckGroups, int]:
        """The chain's checks grouped by concept, routed before the transaction that uses them:
        routing every check of a long history takes seconds, and inside a transaction it would
        hold the writer thread, and every other chain's writes, for as long. The routing runs on
        the long-text thread, ROUTING_SLICE checks at a time so that other requests' long texts
        get their turn between slices, and checks `budget` between checks. From the kept groups
        when their names still match, unless `anew`; the transaction then advances the result by
        the checks recorded meanwhile, which are few. Returns the groups and how many checks
        were read."""
        cached = None if anew else self._groups.get(chain)
        if cached is None or cached.matcher.names != matcher.names:
            cached = CheckGroups.empty(matcher)
        recorded = await self._executors.run(
            self._executors.readers, self._store.episodes_of_kind, chain, (Kind.CHECK,)
        )
        checks = [c for c in recorded if c.seq > cached.through]
        groups = cached
        for start in range(0, len(checks), ROUTING_SLICE):
            part = checks[start : start + ROUTING_SLICE]
            groups = await self._executors.run_within(
                self._executors.long_text, budget, groups.advanced, part, budget
            )
        return groups, len(checks)

    async def _warm(self, chain: ChainKey, matcher: NameMatcher, deadline: float | None) -> None:
        """Keeps the chain's groups routed by `matcher` before a check's transaction needs them
        (`_groups_in`): when none are kept (a restart, an eviction) or the map's names changed
        (a file, a taught concept), the whole history is routed here, off the writer thread,
        within the caller's deadline, rather than inside the transaction."""
        cached = self._groups.get(chain)
        if cached is not None and cached.matcher.names == matcher.names:
            return
        budget = WorkBudget("routing the chain's recorded checks", deadline=deadline)
        routed, _ = await self._routed(chain, matcher, budget, anew=True)
        self._remember(chain, routed)

    async def refresh(self, chain: ChainKey) -> int:
        """Brings every concept's belief up to date with the chain's checks (after a batch
        import of checks); the transaction reads the checks routed before it began and those
        recorded since; returns how many beliefs changed."""
        matcher = (await self._chain_map(chain)).matcher
        routed, _ = await self._routed(chain, matcher, unlimited(), anew=False)

        def update(w: StoreWriter) -> tuple[int, CheckGroups]:
            groups = routed.advanced(w.checks_after(chain, routed.through))
            before = {b.concept_key: b.belief_id for b in w.current_beliefs(chain)}
            changed = 0
            for key, (name, evidence) in groups.groups.items():
                row = self._update(w, chain, name, evidence)
                if row is not None and before.get(key) != row.belief_id:
                    changed += 1
            return changed, groups

        changed, groups = await self._ledger.in_transaction(
            chain, Change.BELIEFS | Change.CONFIRMATIONS, update
        )
        self._remember(chain, groups)
        return changed

    async def rederive(self, chain: ChainKey, *, deadline: float | None = None) -> Rederived:
        """Retires every current belief and replays the recorded checks under today's rules
        (R5.6): routed anew before the transaction (stopping at the caller's `deadline`, event-
        loop time, with nothing written), and the checks recorded meanwhile inside it.
        Episodes are only read."""
        matcher = (await self._chain_map(chain)).matcher
        budget = WorkBudget("rederive: routing the recorded checks", deadline=deadline)
        routed, read = await self._routed(chain, matcher, budget, anew=True)

        def replay(w: StoreWriter) -> tuple[Rederived, CheckGroups]:
            late = w.checks_after(chain, routed.through)
            groups = routed.advanced(late)
            at = now_us()
            retired = w.retire_current_beliefs(chain, at)
            derived_count = 0
            for name, evidence in groups.groups.values():
                derived = derive(evidence)
                if derived is None:
                    continue
                reason = f"{REDERIVE_REASON.format(version=RULES_VERSION)}: {derived.reason}"
                w.add_belief(chain, new_row(name, derived, reason=reason), created_at_us=at)
                derived_count += 1
            return Rederived(retired, derived_count, read + len(late)), groups

        done, groups = await self._ledger.in_transaction(chain, Change.BELIEFS, replay)
        self._remember(chain, groups)
        return done

    # -- reads ---------------------------------------------------------------------------------

    async def history(self, chain: ChainKey, concept: str) -> list[History]:
        key = canonical_key(concept) if concept.strip() else None
        rows = await self._executors.run(
            self._executors.readers, self._store.belief_rows, chain, key
        )
        by_key: dict[str, list[BeliefRow]] = {}
        for row in rows:
            by_key.setdefault(row.concept_key, []).append(row)
        return [history_of(group) for group in by_key.values()]


def _confirmed(chain_map: ChainMap, concept: str) -> bool:
    """Whether the map already shows the concept confirmed by a passed check (or taught)."""
    node = chain_map.map.node_by_key(canonical_key(concept))
    return node is not None and node.band in (Band.CONFIRMED, Band.TAUGHT)
