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

from tutor_memory.domain.beliefs.history import belief_line
from tutor_memory.domain.beliefs.rules import Claim
from tutor_memory.domain.conceptmap.canonical import canonical_key
from tutor_memory.domain.conceptmap.chain_map import ChainMap
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.records import BeliefRow
from tutor_memory.domain.tokens import TokenCounter

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


@dataclass(frozen=True, slots=True)
class BeliefView:
    """A chain's current beliefs as blocks use them: in the default order (what the student
    struggles with first, the gaps a tutor must not forget, most confident first; then the
    rest), rendered, and counted. Built once per change of the rows, not per block."""

    rows: tuple[BeliefRow, ...]
    lines: tuple[str, ...]
    tokens: tuple[int, ...]
    # concept key -> position in `rows` (one current belief per concept).
    position: dict[str, int]
    # Tokens of the section's heading line.
    title_tokens: int


def belief_view(rows: Sequence[BeliefRow], counter: TokenCounter) -> BeliefView:
    ordered = sorted(
        rows,
        key=lambda b: (b.claim != Claim.STRUGGLES_WITH.value, -b.confidence, b.concept_key),
    )
    lines = tuple(belief_line(b) for b in ordered)
    return BeliefView(
        tuple(ordered),
        lines,
        tuple(counter.count(line) for line in lines),
        {b.concept_key: i for i, b in enumerate(ordered)},
        counter.count(f"{BELIEFS_TITLE}:"),
    )


class MapView:
    """A chain's map as blocks use it: each concept's line rendered and counted once."""

    def __init__(self, chain_map: ChainMap, counter: TokenCounter) -> None:
        self.chain_map = chain_map
        self._counter = counter
        self._by_name = {node.name: node for node in chain_map.map.nodes}
        self._lines: dict[str, tuple[str, int]] = {}
        self.header = chain_map.map.header() if chain_map.map.nodes else ""
        self.header_tokens = counter.count(self.header) if self.header else 0

    def line(self, name: str) -> tuple[str, int] | None:
        """(line, tokens) of the concept `name`, or None when the map has no such concept."""
        found = self._lines.get(name)
        if found is None:
            node = self._by_name.get(name)
            if node is None:
                return None
            text = self.chain_map.map.line(node)
            found = self._lines[name] = (text, self._counter.count(text))
        return found


class BlockSources(Protocol):
    """What the block builder reads besides the episode log."""

    def belief_view(self, chain: ChainKey) -> BeliefView: ...

    def map_view(self, chain: ChainKey) -> MapView: ...


@dataclass(frozen=True, slots=True)
class Extras:
    belief_lines: tuple[str, ...] = ()
    belief_concepts: tuple[str, ...] = ()
    map_header: str = ""
    map_lines: tuple[str, ...] = ()
    map_concepts: tuple[str, ...] = ()
    # file_id -> current fingerprint (None once removed), for the citation note.
    fingerprints: dict[str, str | None] | None = None
    # Names of the concepts the query was routed to (their episodes join recall's candidates).
    routed: tuple[str, ...] = ()
    # Tokens the two sections take, headings and line breaks included, as counted line by line
    # when they were composed: what packing leaves out of the episodes' budget (the whole block
    # is counted again at the end). Not updated by the `without_*` trims, which come later.
    tokens: int = 0

    def without_map_line(self) -> Extras:
        return dataclasses.replace(
            self, map_lines=self.map_lines[:-1], map_concepts=self.map_concepts[:-1]
        )

    def without_belief_line(self) -> Extras:
        return dataclasses.replace(
            self, belief_lines=self.belief_lines[:-1], belief_concepts=self.belief_concepts[:-1]
        )


def _fit(tokens: Sequence[int], budget: int) -> int:
    """How many lines, in order, fit in `budget` tokens (a line break each)."""
    used = 0
    for i, n in enumerate(tokens):
        used += n + 1
        if used > budget:
            return i
    return len(tokens)


def belief_order(view: BeliefView, routed_keys: Sequence[str]) -> list[int]:
    """Positions in `view`: beliefs about the concepts the query is about first, then the
    default order."""
    first = [view.position[k] for k in routed_keys if k in view.position]
    taken = set(first)
    return first + [i for i in range(len(view.rows)) if i not in taken]


def map_selection(chain_map: ChainMap, routed: Sequence[str], limit: int) -> list[str]:
    """Names of at most `limit` concepts to show, most useful first: those the query is about,
    their prerequisites (nearest first), then the rest of the map in teaching order."""
    concept_map = chain_map.map
    chosen: dict[str, None] = dict.fromkeys(routed)
    for name in routed:
        node = concept_map.node_by_key(canonical_key(name))
        if node is None:
            continue
        for pre in concept_map.prerequisites_of(node.key)[:PREREQUISITES_PER_CONCEPT]:
            chosen.setdefault(pre.name)
    for node in concept_map.nodes:
        if len(chosen) >= limit:
            break
        chosen.setdefault(node.name)
    return list(chosen)[:limit]


def compose_extras(
    sources: BlockSources,
    chain: ChainKey,
    query: str,
    query_vector: npt.NDArray[np.float32] | None,
    budget_tokens: int,
) -> Extras:
    view = sources.map_view(chain)
    chain_map = view.chain_map
    routed = chain_map.route(query, query_vector) if query.strip() else []

    beliefs = sources.belief_view(chain)
    order = belief_order(beliefs, [canonical_key(n) for n in routed])[:MAX_BELIEFS]
    n_beliefs = _fit([beliefs.tokens[i] for i in order], int(budget_tokens * BELIEFS_BUDGET_SHARE))
    shown = order[:n_beliefs]
    tokens = beliefs.title_tokens + 1 + sum(beliefs.tokens[i] + 1 for i in shown) if shown else 0

    map_lines: list[str] = []
    map_names: list[str] = []
    map_tokens: list[int] = []
    if view.header:
        for name in map_selection(chain_map, routed, MAX_MAP_LINES):
            found = view.line(name)
            if found is not None:
                map_lines.append(found[0])
                map_tokens.append(found[1])
                map_names.append(name)
        room = int(budget_tokens * MAP_BUDGET_SHARE) - view.header_tokens - 1
        n_map = _fit(map_tokens, max(0, room))
        map_lines, map_names = map_lines[:n_map], map_names[:n_map]
        if n_map:
            tokens += view.header_tokens + 1 + sum(n + 1 for n in map_tokens[:n_map])
    return Extras(
        belief_lines=tuple(beliefs.lines[i] for i in shown),
        belief_concepts=tuple(beliefs.rows[i].concept for i in shown),
        map_header=view.header,
        map_lines=tuple(map_lines),
        map_concepts=tuple(map_names),
        fingerprints=chain_map.fingerprints,
        routed=tuple(routed),
        tokens=tokens,
    )
