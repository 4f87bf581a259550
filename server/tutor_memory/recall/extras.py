"""The block's two sections beside earlier work (SPEC R5.4, R3.6, R6.3): what the tutor believes
about the student, and the subject map. Both come from caches and the store's current rows; no
model is called, and the query's one embedding (already made for recall) routes it.

Budget: beliefs are cheap (about twenty tokens each, standing for dozens of episodes) and take
the budget first; the map takes at most a fixed share; earlier work gets what remains.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from tutor_memory.beliefs.keeper import belief_line
from tutor_memory.beliefs.rules import Claim
from tutor_memory.conceptmap.canonical import canonical_key
from tutor_memory.conceptmap.state import ChainMap
from tutor_memory.episodes import ChainKey
from tutor_memory.store.records import BeliefRow
from tutor_memory.tokens import TokenCounter

BELIEFS_TITLE = "WHAT YOU CURRENTLY BELIEVE ABOUT THIS STUDENT (from their checks; confidence 0-1)"
# Most beliefs one block shows, and the share of the budget they may take at most.
MAX_BELIEFS = 12
BELIEFS_BUDGET_SHARE = 0.30
# Most map lines one block shows (after its header), and the budget share the map may take. The
# map is about the material; the block's main job is the student, so it never takes most of it.
MAX_MAP_LINES = 12
MAP_BUDGET_SHARE = 0.35
# Prerequisites shown per concept the query is routed to ("what should I review before X").
PREREQUISITES_PER_CONCEPT = 6


class BlockSources(Protocol):
    """What the block builder reads besides the episode log."""

    def beliefs(self, chain: ChainKey) -> list[BeliefRow]: ...

    def chain_map(self, chain: ChainKey) -> ChainMap: ...


@dataclass(frozen=True, slots=True)
class Extras:
    belief_lines: tuple[str, ...] = ()
    belief_concepts: tuple[str, ...] = ()
    map_header: str = ""
    map_lines: tuple[str, ...] = ()
    map_concepts: tuple[str, ...] = ()
    # file_id -> current fingerprint ("" once removed), for the citation note.
    fingerprints: dict[str, str] | None = None
    # Names of the concepts the query was routed to (their episodes join recall's candidates).
    routed: tuple[str, ...] = ()

    def without_map_line(self) -> Extras:
        return dataclasses.replace(
            self, map_lines=self.map_lines[:-1], map_concepts=self.map_concepts[:-1]
        )

    def without_belief_line(self) -> Extras:
        return dataclasses.replace(
            self, belief_lines=self.belief_lines[:-1], belief_concepts=self.belief_concepts[:-1]
        )


def _fit(lines: Sequence[str], budget: int, counter: TokenCounter) -> int:
    """How many of the lines, in order, fit in `budget` tokens."""
    used = 0
    for i, line in enumerate(lines):
        used += counter.count(line) + 1
        if used > budget:
            return i
    return len(lines)


def order_beliefs(beliefs: Sequence[BeliefRow], routed_keys: Sequence[str]) -> list[BeliefRow]:
    """Beliefs about the concepts the query is about first; then what the student struggles
    with (the gaps a tutor must not forget), most confident first; then the rest."""
    rank = {k: i for i, k in enumerate(routed_keys)}
    return sorted(
        beliefs,
        key=lambda b: (
            rank.get(b.concept_key, len(rank)),
            b.claim != Claim.STRUGGLES_WITH.value,
            -b.confidence,
            b.concept_key,
        ),
    )


def map_selection(chain_map: ChainMap, routed: Sequence[str]) -> list[str]:
    """Names of the concepts to show, most useful first: those the query is about, their
    prerequisites (nearest first), then the rest of the map in teaching order."""
    concept_map = chain_map.map
    chosen: dict[str, None] = {}
    for name in routed:
        chosen.setdefault(name)
    for name in routed:
        node = concept_map.node_by_key(canonical_key(name))
        if node is None:
            continue
        for pre in concept_map.prerequisites_of(node.key)[:PREREQUISITES_PER_CONCEPT]:
            chosen.setdefault(pre.name)
    for name in concept_map.teaching_order:
        chosen.setdefault(name)
    return list(chosen)


def compose_extras(
    sources: BlockSources,
    chain: ChainKey,
    query: str,
    query_vector: npt.NDArray[np.float32] | None,
    budget_tokens: int,
    counter: TokenCounter,
) -> Extras:
    chain_map = sources.chain_map(chain)
    routed = chain_map.route(query, query_vector) if query.strip() else []
    routed_keys = [canonical_key(n) for n in routed]

    beliefs = order_beliefs(sources.beliefs(chain), routed_keys)[:MAX_BELIEFS]
    lines = [belief_line(b) for b in beliefs]
    n_beliefs = _fit(lines, int(budget_tokens * BELIEFS_BUDGET_SHARE), counter)

    concept_map = chain_map.map
    map_lines: list[str] = []
    map_names: list[str] = []
    header = ""
    if concept_map.nodes:
        header = concept_map.header()
        by_name = {node.name: node for node in concept_map.nodes}
        for name in map_selection(chain_map, routed)[:MAX_MAP_LINES]:
            node = by_name.get(name)
            if node is not None:
                map_lines.append(concept_map.line(node))
                map_names.append(node.name)
        room = int(budget_tokens * MAP_BUDGET_SHARE) - counter.count(header) - 1
        n_map = _fit(map_lines, max(0, room), counter)
        map_lines, map_names = map_lines[:n_map], map_names[:n_map]
    return Extras(
        belief_lines=tuple(lines[:n_beliefs]),
        belief_concepts=tuple(b.concept for b in beliefs[:n_beliefs]),
        map_header=header,
        map_lines=tuple(map_lines),
        map_concepts=tuple(map_names),
        fingerprints=chain_map.fingerprints,
        routed=tuple(routed),
    )
