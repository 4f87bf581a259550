"""Centrality and teaching order of the concept map (SPEC R3.5).

Centrality is edge-weighted PageRank on the graph whose edges run from a concept to each of its
prerequisites, so importance flows towards what things build on: a prerequisite that everything
builds on is a hub. It is networkx's `pagerank` with the edge weights: damping 0.85, uniform
teleport, the rank of a concept with no prerequisites (a dangling node) spread uniformly. Scores
sum to 1.

Teaching order is a topological layering of the prerequisite -> concept graph: a concept's layer
is one more than its deepest prerequisite's (0 when it builds on nothing in the map); layers come
in order; inside a layer, higher centrality first, ties by name (case-insensitively, then exactly).
A cycle of prerequisites (A builds on B builds on A) cannot be layered, so each strongly connected
component is condensed into one unit: it takes one layer, sits in its layer by its most central
member, and lists its members by centrality, then name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

# PageRank's damping factor (the probability of following an edge rather than teleporting).
PAGERANK_DAMPING = 0.85

# The power iteration stops when the scores move less than this per node, in L1 (networkx's
# default is 1e-6; tighter costs a few dozen cheap iterations and makes scores stable to the 9th
# decimal, where ties are decided).
PAGERANK_TOLERANCE = 1e-10

# Upper bound on power iterations (networkx raises beyond it); with damping 0.85 the error shrinks
# by about 0.85 each step, so the tolerance is reached within about 150.
PAGERANK_MAX_ITERATIONS = 1_000

# Centralities are compared at this many decimals, so floating-point noise between two
# symmetric concepts never decides their order; the name does.
_TIE_DECIMALS = 9


def pagerank(node_count: int, links: Mapping[tuple[int, int], int]) -> list[float]:
    """Centrality of nodes 0..node_count-1, given links (prerequisite, concept) -> weight."""
    if node_count == 0:
        return []
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_nodes_from(range(node_count))
    graph.add_weighted_edges_from(
        (concept, prerequisite, weight) for (prerequisite, concept), weight in links.items()
    )
    scores = nx.pagerank(
        graph,
        alpha=PAGERANK_DAMPING,
        weight="weight",
        tol=PAGERANK_TOLERANCE,
        max_iter=PAGERANK_MAX_ITERATIONS,
    )
    return [float(scores[node]) for node in range(node_count)]


@dataclass(frozen=True, slots=True)
class Ordering:
    """`order`: node indices in teaching order; `layers[i]`: node i's layer; `cycles`: the
    condensed cycles, each in its inner order, listed in teaching order."""

    order: tuple[int, ...]
    layers: tuple[int, ...]
    cycles: tuple[tuple[int, ...], ...]


def teaching_order(
    names: Sequence[str], centrality: Sequence[float], links: Iterable[tuple[int, int]]
) -> Ordering:
    """Layered order of nodes 0..len(names)-1 given (prerequisite, concept) links."""
    graph: nx.DiGraph[int] = nx.DiGraph()
    graph.add_nodes_from(range(len(names)))
    graph.add_edges_from(links)
    condensed = nx.condensation(graph)

    def rank(node: int) -> tuple[float, str, str]:
        return (-round(centrality[node], _TIE_DECIMALS), names[node].casefold(), names[node])

    members: dict[int, list[int]] = {
        int(unit): sorted((int(m) for m in condensed.nodes[unit]["members"]), key=rank)
        for unit in condensed.nodes
    }
    unit_layer: dict[int, int] = {}
    for unit in nx.topological_sort(condensed):
        before = [unit_layer[int(p)] for p in condensed.predecessors(unit)]
        unit_layer[int(unit)] = max(before) + 1 if before else 0

    units = sorted(members, key=lambda unit: (unit_layer[unit], *rank(members[unit][0])))
    layers = [0] * len(names)
    for unit in units:
        for node in members[unit]:
            layers[node] = unit_layer[unit]
    return Ordering(
        order=tuple(node for unit in units for node in members[unit]),
        layers=tuple(layers),
        cycles=tuple(tuple(members[unit]) for unit in units if len(members[unit]) > 1),
    )
