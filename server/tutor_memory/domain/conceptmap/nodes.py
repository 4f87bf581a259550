"""The parts of a built concept map: nodes, their provenance, and the edges between them."""

from __future__ import annotations

from dataclasses import dataclass

from tutor_memory.domain.conceptmap.bands import Band


@dataclass(frozen=True, slots=True)
class Provenance:
    """One file version that explains a concept, and the pages where it does (may be empty)."""

    file_id: str
    version: int
    pages: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Edge:
    """`prerequisite` comes before `concept` (both canonical keys of nodes).

    `weight` is how many files assert the link.
    """

    prerequisite: str
    concept: str
    weight: int


@dataclass(frozen=True, slots=True)
class ConceptNode:
    """One concept of the subject, however many files and names it was gathered from.

    `key` is the canonical key of `name`, the first name seen; `aliases` are the other names that
    merged into it (by key or by embedding). `provenance` lists every contributing file version in
    ingest order. `assumed` names prerequisites only this concept assumes and no file explains
    (R3.4): recorded, never drawn. `taught` holds the teaching notes in the order they were given.
    `prerequisites` are the names of the direct prerequisites, in teaching order. `layer` is the
    topological layer (0 = builds on nothing in the map).
    """

    key: str
    name: str
    aliases: tuple[str, ...]
    summary: str
    definition: str
    band: Band
    centrality: float
    provenance: tuple[Provenance, ...]
    assumed: tuple[str, ...]
    taught: tuple[str, ...]
    layer: int
    prerequisites: tuple[str, ...]

    @property
    def readiness(self) -> float:
        return self.band.readiness
