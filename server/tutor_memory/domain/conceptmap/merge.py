"""Gathering every file's concepts and every teaching note into nodes and links (SPEC R3.3, R3.4).

Merging. Files are taken in ingest order, their concepts in extraction order. A concept joins the
node that already has its canonical key (a node answers to the key of every name merged into it);
failing that, the most similar node by representative vector, among those whose cosine is at least
the threshold and none of whose keys contrasts with the concept's (ties go to the older node).
Otherwise it founds a new node.

The contrast guard (`tutor_memory.conceptmap.contrast`) is there because name embeddings put
opposites that differ by a prefix (endocytosis / exocytosis, aerobic / anaerobic respiration) as
close as one name in two languages. It is checked against every key of the node, not only the
founder's: once "trasporto attivo" has joined "active transport", "trasporto passivo" must not.
The guard rules out a node, not the concept: the next most similar node above the threshold may
still take it, since the embedding can put a name nearer its opposite than its translation.

A node's representative vector is the vector of the concept that founded it and never changes, so
a chain of near neighbours cannot walk a node across the embedding space, and the names a node
absorbs can narrow its reach (through the guard) but never widen it. Nodes made by teaching or by
a shared assumption have no vector: they merge by key only.

Display name: the first name seen. Summary and definition: each the first non-empty one in ingest
order, so a later chapter adds provenance without rewriting what an earlier one said. A concept
counts as explained when any contributing extraction gave it a summary or a definition.

Links. A `builds_on` name is looked up by key among the nodes (which covers the file's own
concepts, since they all answer to their keys, and concepts explained by other files or taught).
A found name gives a link prerequisite -> concept, and its weight is the number of distinct files
that assert it. A name found nowhere is an assumption: it becomes a node, with a link to each
dependent, only when two distinct concepts assume it; a single case is recorded on the concept's
`assumed` list and drawn nowhere. A concept never builds on itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from tutor_memory.domain.conceptmap.concept import ExtractedConcept
from tutor_memory.domain.conceptmap.contrast import contrasting
from tutor_memory.domain.conceptmap.inputs import FileConcepts, TaughtNote

# Rows whose norm is below this are zero vectors: they never merge by similarity.
_MIN_NORM = 1e-12

# How many assuming concepts turn an assumed prerequisite into a node (R3.4).
ASSUMED_NODE_MIN_DEPENDENTS = 2


@dataclass(slots=True)
class Draft:
    """A node while it is being gathered."""

    key: str
    name: str
    aliases: list[str] = field(default_factory=list)
    summary: str = ""
    definition: str = ""
    explained: bool = False
    # (file_id, version) -> pages, in the order the file versions contributed.
    sources: dict[tuple[str, int], set[int]] = field(default_factory=dict)
    taught: list[str] = field(default_factory=list)
    assumed: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Gathered:
    """All nodes, and each link (prerequisite index, concept index) with the files asserting it."""

    drafts: list[Draft]
    links: dict[tuple[int, int], set[str]]
    keys: dict[str, int]


class _Representatives:
    """The representative vectors of the nodes that have one, in a buffer grown by doubling."""

    def __init__(self) -> None:
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        self._owners: list[int] = []

    def candidates(self, vector: npt.NDArray[np.float32], threshold: float) -> list[int]:
        """The nodes at or above `threshold`, most similar first, the older first among equals."""
        if not self._owners or not vector.any():
            return []
        self._check_dim(vector)
        similarities = self._vectors[: len(self._owners)] @ vector
        above = np.flatnonzero(similarities >= threshold)
        ranked = above[np.argsort(-similarities[above], kind="stable")]
        return [self._owners[row] for row in ranked]

    def add(self, owner: int, vector: npt.NDArray[np.float32]) -> None:
        if not self._owners:
            self._vectors = np.zeros((16, vector.shape[0]), dtype=np.float32)
        self._check_dim(vector)
        if len(self._owners) == self._vectors.shape[0]:
            grown = np.zeros((2 * self._vectors.shape[0], self._vectors.shape[1]), np.float32)
            grown[: len(self._owners)] = self._vectors
            self._vectors = grown
        self._vectors[len(self._owners)] = vector
        self._owners.append(owner)

    def _check_dim(self, vector: npt.NDArray[np.float32]) -> None:
        if self._vectors.shape[1] and vector.shape[0] != self._vectors.shape[1]:
            raise ValueError(
                f"concept vectors must all have the same length: got {vector.shape[0]} "
                f"after {self._vectors.shape[1]}"
            )


def _normalised(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    safe = np.where(norms > _MIN_NORM, norms, np.float32(1.0))
    return np.where(norms > _MIN_NORM, vectors / safe, np.float32(0.0)).astype(np.float32)


def gather(
    files: Sequence[FileConcepts],
    taught: Sequence[TaughtNote],
    key: Callable[[str], str],
    threshold: float,
) -> Gathered:
    """Nodes and links from the files and the teaching notes; see the module docstring."""
    drafts: list[Draft] = []
    keys: dict[str, int] = {}
    # Per node, every key it answers to, for the contrast guard.
    node_keys: list[list[str]] = []
    representatives = _Representatives()
    # Per file, the node each of its concepts went to (None for a nameless concept).
    placed: list[list[int | None]] = []

    for file in files:
        indices: list[int | None] = []
        for concept, vector in zip(file.concepts, _normalised(file.vectors), strict=True):
            name = " ".join(concept.name.split())
            concept_key = key(name) if name else ""
            if not concept_key:
                indices.append(None)
                continue
            index = keys.get(concept_key)
            if index is None:
                index = next(
                    (
                        node
                        for node in representatives.candidates(vector, threshold)
                        if not any(contrasting(concept_key, other) for other in node_keys[node])
                    ),
                    None,
                )
            if index is None:
                index = len(drafts)
                drafts.append(Draft(key=concept_key, name=name))
                node_keys.append([])
                representatives.add(index, vector)
            if concept_key not in keys:
                keys[concept_key] = index
                node_keys[index].append(concept_key)
            _absorb(drafts[index], name, concept, file)
            indices.append(index)
        placed.append(indices)

    for note in taught:
        name = " ".join(note.name.split())
        note_key = key(name) if name else ""
        if not note_key:
            continue
        index = keys.get(note_key)
        if index is None:
            index = len(drafts)
            drafts.append(Draft(key=note_key, name=name))
            keys[note_key] = index
        drafts[index].taught.append(note.note.strip())

    links: dict[tuple[int, int], set[str]] = {}
    # Assumed key -> (first spelling, dependents in first-seen order with the files that said so).
    assumptions: dict[str, tuple[str, dict[int, set[str]]]] = {}
    for file, indices in zip(files, placed, strict=True):
        for concept, index in zip(file.concepts, indices, strict=True):
            if index is None:
                continue
            for raw in concept.builds_on:
                prerequisite = " ".join(raw.split())
                prerequisite_key = key(prerequisite) if prerequisite else ""
                if not prerequisite_key:
                    continue
                found = keys.get(prerequisite_key)
                if found is None:
                    dependents = assumptions.setdefault(prerequisite_key, (prerequisite, {}))[1]
                    dependents.setdefault(index, set()).add(file.file_id)
                elif found != index:
                    links.setdefault((found, index), set()).add(file.file_id)

    for assumed_key, (spelling, dependents) in assumptions.items():
        if len(dependents) >= ASSUMED_NODE_MIN_DEPENDENTS:
            index = len(drafts)
            drafts.append(Draft(key=assumed_key, name=spelling))
            keys[assumed_key] = index
            for dependent, file_ids in dependents.items():
                links[(index, dependent)] = set(file_ids)
        else:
            (dependent,) = dependents
            drafts[dependent].assumed.append(spelling)

    return Gathered(drafts=drafts, links=links, keys=keys)


def _absorb(draft: Draft, name: str, concept: ExtractedConcept, file: FileConcepts) -> None:
    if name != draft.name and name not in draft.aliases:
        draft.aliases.append(name)
    summary = " ".join(concept.summary.split())
    definition = " ".join(concept.definition.split())
    if summary and not draft.summary:
        draft.summary = summary
    if definition and not draft.definition:
        draft.definition = definition
    draft.explained = draft.explained or bool(summary or definition)
    draft.sources.setdefault((file.file_id, file.version), set()).update(concept.pages)
