"""The concept map, computed from scratch and deterministically from what the chain holds (R3).

`build_map` takes every current file version's extraction (in ingest order), the teaching notes
(in the order they were taught) and the keys of concepts with a passed check, and returns the
map. The same inputs always give the same map, so the map is never stored, only recomputed.

- Nodes and links: merging by canonical key and by name embedding (never between names that look
  like prefix variants of one stem: `tutor_memory.conceptmap.contrast`), provenance, assumed
  prerequisites: see `tutor_memory.conceptmap.merge`.
- Readiness (R3.5): taught 1.0 if any teaching note attached; else confirmed 0.85 if any key of
  the node is in `confirmed`; else explained 0.60 if a file gave it a summary or a definition;
  else named 0.35. A teaching note attaches to the node answering to key(note.name), else it
  creates a node of that name at the taught level (R4.1, R4.2). A passed check on a key the map
  does not have adds nothing: the map is about the material.
- Centrality and teaching order: see `tutor_memory.conceptmap.order`.
- Subject readiness: the centrality-weighted mean of the nodes' readiness, so a hub the files do
  not explain costs more than a leaf. The header's "the files explain P%" is this number as a
  percentage (as in the design document's example), taught and confirmed concepts included.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from tutor_memory.domain.conceptmap.bands import Band
from tutor_memory.domain.conceptmap.inputs import FileConcepts, TaughtNote
from tutor_memory.domain.conceptmap.map_text import concept_line, header
from tutor_memory.domain.conceptmap.merge import Draft, gather
from tutor_memory.domain.conceptmap.nodes import ConceptNode, Edge, Provenance
from tutor_memory.domain.conceptmap.order import Ordering, pagerank, teaching_order

__all__ = [
    "MAX_REVIEW_PREREQUISITES",
    "MERGE_SIMILARITY",
    "Band",
    "ConceptMap",
    "ConceptNode",
    "Edge",
    "FileConcepts",
    "MapShape",
    "Provenance",
    "TaughtNote",
    "banded",
    "build_map",
    "shape_map",
]

# Two concept names whose embeddings have at least this cosine are one concept (R3.3), unless the
# contrast guard tells them apart. The design document's value; bench/bench_merge_threshold.py
# reports what it does on our embedder, with and without the guard.
MERGE_SIMILARITY = 0.86

# How many concepts "what should I review before X" lists at most.
MAX_REVIEW_PREREQUISITES = 8


class ConceptMap:
    """A built concept map: nodes in teaching order, edges, cycles and the subject's readiness."""

    def __init__(
        self,
        nodes: Sequence[ConceptNode],
        edges: Sequence[Edge],
        cycles: Sequence[tuple[str, ...]],
        subject_readiness: float,
        keys: Mapping[str, str],
    ) -> None:
        self.nodes: tuple[ConceptNode, ...] = tuple(nodes)
        self.edges: tuple[Edge, ...] = tuple(edges)
        self.cycles: tuple[tuple[str, ...], ...] = tuple(cycles)
        self.subject_readiness = subject_readiness
        self._by_primary = {node.key: node for node in self.nodes}
        # Every key a node answers to (its own and its aliases') -> its primary key.
        self._primary = dict(keys)
        self._prerequisite_keys: dict[str, list[str]] = {node.key: [] for node in self.nodes}
        for edge in self.edges:
            self._prerequisite_keys[edge.concept].append(edge.prerequisite)

    @property
    def teaching_order(self) -> tuple[str, ...]:
        """Node names, prerequisites first, hubs first within a layer."""
        return tuple(node.name for node in self.nodes)

    def __len__(self) -> int:
        return len(self.nodes)

    def nbytes(self) -> int:
        """About what the map holds in memory: its nodes with their texts and provenance, its
        edges and its look-up tables. Names a node shares with other nodes (its prerequisites', the
        edges' keys) are counted once, with their node."""
        size = sys.getsizeof
        held = size(self) + size(self.nodes) + size(self.edges) + size(self.cycles)
        held += size(self._by_primary) + size(self._primary) + size(self._prerequisite_keys)
        held += sum(size(key) for key in self._primary)
        for node in self.nodes:
            held += size(node) + size(node.key) + size(node.name) + size(node.summary)
            held += size(node.definition) + size(node.centrality) + size(node.provenance)
            held += size(node.prerequisites)
            held += size(self._prerequisite_keys[node.key])
            for texts in (node.aliases, node.assumed, node.taught):
                held += size(texts) + sum(size(text) for text in texts)
            held += sum(size(p) + size(p.pages) for p in node.provenance)
        held += sum(size(edge) for edge in self.edges)
        held += sum(size(cycle) for cycle in self.cycles)
        return held

    def header(self) -> str:
        """The R3.6 header line, with the node count and the subject readiness as a percentage."""
        return header(len(self.nodes), self.subject_readiness)

    def line(self, node: ConceptNode) -> str:
        """`- Name: summary [taught: note] (builds on: A, B)`, capped at render.LINE_MAX_CHARS."""
        return concept_line(node.name, node.summary, node.taught, node.prerequisites)

    def node_by_key(self, key: str) -> ConceptNode | None:
        """The node answering to canonical key `key` (its own or one of its aliases'), if any."""
        primary = self._primary.get(key)
        return self._by_primary[primary] if primary is not None else None

    def prerequisites_of(
        self, key: str, limit: int = MAX_REVIEW_PREREQUISITES
    ) -> list[ConceptNode]:
        """What to review before the concept with key `key`, nearest first, at most `limit`.

        Breadth-first over prerequisite edges: the direct prerequisites, then theirs, and so on;
        within one distance, in teaching order. Raises KeyError for a key the map does not have.
        """
        start = self.node_by_key(key)
        if start is None:
            raise KeyError(f"no concept with key {key!r} in the map")
        position = {node.key: index for index, node in enumerate(self.nodes)}
        seen = {start.key}
        found: list[ConceptNode] = []
        level = [start.key]
        while level and len(found) < limit:
            nearer = {k for concept in level for k in self._prerequisite_keys[concept]} - seen
            level = sorted(nearer, key=position.__getitem__)
            seen.update(level)
            found.extend(self._by_primary[k] for k in level)
        return found[:limit]


@dataclass(frozen=True, slots=True)
class MapShape:
    """Everything of a map that passed checks do not change: its concepts and links, their
    centrality and the teaching order. A map is its shape with each concept's band; the shape
    is the costly part (merging, PageRank), so it is made once per rebuild."""

    drafts: list[Draft]
    weights: dict[tuple[int, int], int]
    answered_keys: dict[str, int]
    centrality: list[float]
    ordering: Ordering

    @property
    def names(self) -> list[str]:
        """The concepts' names in teaching order (the order of the map's nodes)."""
        return [self.drafts[i].name for i in self.ordering.order]


def shape_map(
    files: Sequence[FileConcepts],
    taught: Sequence[TaughtNote],
    key: Callable[[str], str],
    merge_threshold: float = MERGE_SIMILARITY,
) -> MapShape:
    """The shape of the inputs' map; see the module docstring for every rule."""
    gathered = gather(files, taught, key, merge_threshold)
    drafts = gathered.drafts
    weights = {link: len(file_ids) for link, file_ids in gathered.links.items()}
    centrality = pagerank(len(drafts), weights)
    ordering = teaching_order([draft.name for draft in drafts], centrality, weights)
    return MapShape(drafts, weights, dict(gathered.keys), list(centrality), ordering)


def build_map(
    files: Sequence[FileConcepts],
    taught: Sequence[TaughtNote],
    confirmed: Iterable[str],
    key: Callable[[str], str],
    merge_threshold: float = MERGE_SIMILARITY,
) -> ConceptMap:
    """The concept map of the inputs; see the module docstring for every rule."""
    return banded(shape_map(files, taught, key, merge_threshold), confirmed)


def banded(shape: MapShape, confirmed: Iterable[str]) -> ConceptMap:
    """The map of `shape` with the concepts whose keys are `confirmed` confirmed."""
    drafts, weights, centrality, ordering = (
        shape.drafts,
        shape.weights,
        shape.centrality,
        shape.ordering,
    )
    confirmed_keys = set(confirmed)
    keys_of: list[set[str]] = [set() for _ in drafts]
    for answered, index in shape.answered_keys.items():
        keys_of[index].add(answered)
    bands = [_band(draft, keys_of[i] & confirmed_keys) for i, draft in enumerate(drafts)]
    names = [draft.name for draft in drafts]
    position = {index: rank for rank, index in enumerate(ordering.order)}

    prerequisites: list[list[int]] = [[] for _ in drafts]
    for prerequisite, concept in weights:
        prerequisites[concept].append(prerequisite)
    nodes = [
        _node(
            drafts[i],
            bands[i],
            centrality[i],
            ordering.layers[i],
            [names[p] for p in sorted(prerequisites[i], key=position.__getitem__)],
        )
        for i in ordering.order
    ]
    edges = [
        Edge(prerequisite=drafts[p].key, concept=drafts[c].key, weight=weight)
        for (p, c), weight in sorted(
            weights.items(), key=lambda item: (position[item[0][1]], position[item[0][0]])
        )
    ]
    readiness = sum(c * band.readiness for c, band in zip(centrality, bands, strict=True))
    return ConceptMap(
        nodes=nodes,
        edges=edges,
        cycles=[tuple(names[i] for i in cycle) for cycle in ordering.cycles],
        # PageRank sums to 1, so the weighted sum is already the weighted mean.
        subject_readiness=readiness if drafts else 0.0,
        keys={answered: drafts[index].key for answered, index in shape.answered_keys.items()},
    )


def _band(draft: Draft, confirmed_keys: set[str]) -> Band:
    if draft.taught:
        return Band.TAUGHT
    if confirmed_keys:
        return Band.CONFIRMED
    if draft.explained:
        return Band.EXPLAINED
    return Band.NAMED


def _node(
    draft: Draft, band: Band, centrality: float, layer: int, prerequisites: list[str]
) -> ConceptNode:
    return ConceptNode(
        key=draft.key,
        name=draft.name,
        aliases=tuple(draft.aliases),
        summary=draft.summary,
        definition=draft.definition,
        band=band,
        centrality=centrality,
        provenance=tuple(
            Provenance(file_id=file_id, version=version, pages=tuple(sorted(pages)))
            for (file_id, version), pages in draft.sources.items()
        ),
        assumed=tuple(draft.assumed),
        taught=tuple(draft.taught),
        layer=layer,
        prerequisites=tuple(prerequisites),
    )
