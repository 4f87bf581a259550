"""Geometry of the console's two pictures, drawn as SVG by the templates: the concept map (layered
left to right by prerequisites, readiness as colour, centrality as size) and the calibration
chart. Computed on the server, so the browser needs no script and the page no Node build."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tutor_memory.domain.beliefs.calibration import Calibration
from tutor_memory.domain.conceptmap.graph import ConceptMap

# The map: distance between layers (columns) and between concepts of one layer (rows), the margin
# around the drawing, and the smallest and largest node radius (centrality scales between them).
COLUMN_GAP = 190
ROW_GAP = 56
MARGIN = 40
MIN_RADIUS = 7.0
MAX_RADIUS = 22.0
# Readiness 0 is drawn red (hue 0), readiness 1 green (hue 120).
READY_HUE = 120
# The calibration chart's square plot, in pixels, and its margin for the axes' labels.
CHART_SIZE = 300
CHART_MARGIN = 40
# A bin's dot: this radius for one check, growing with the square root of the count.
BIN_RADIUS = 4.0


def readiness_colour(readiness: float) -> str:
    return f"hsl({round(READY_HUE * max(0.0, min(1.0, readiness)))}, 65%, 48%)"


@dataclass(frozen=True, slots=True)
class DrawnNode:
    key: str
    name: str
    x: float
    y: float
    r: float
    colour: str
    band: str
    readiness: float
    centrality: float
    layer: int


@dataclass(frozen=True, slots=True)
class DrawnEdge:
    x1: float
    y1: float
    x2: float
    y2: float


@dataclass(frozen=True, slots=True)
class MapDrawing:
    width: float
    height: float
    nodes: tuple[DrawnNode, ...]
    edges: tuple[DrawnEdge, ...]


def draw_map(concept_map: ConceptMap) -> MapDrawing:
    """Each node in the column of its layer (prerequisites to the left), in teaching order down
    the column; edges from prerequisite to concept, ending at the concept's rim."""
    rows: dict[int, int] = {}
    top = max((n.centrality for n in concept_map.nodes), default=0.0) or 1.0
    nodes = []
    for node in concept_map.nodes:
        row = rows.get(node.layer, 0)
        rows[node.layer] = row + 1
        nodes.append(
            DrawnNode(
                key=node.key,
                name=node.name,
                x=MARGIN + MAX_RADIUS + node.layer * COLUMN_GAP,
                y=MARGIN + MAX_RADIUS + row * ROW_GAP,
                r=MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * math.sqrt(node.centrality / top),
                colour=readiness_colour(node.readiness),
                band=node.band.value,
                readiness=node.readiness,
                centrality=node.centrality,
                layer=node.layer,
            )
        )
    at = {n.key: n for n in nodes}
    edges = []
    for edge in concept_map.edges:
        a, b = at.get(edge.prerequisite), at.get(edge.concept)
        if a is None or b is None:
            continue
        length = math.hypot(b.x - a.x, b.y - a.y) or 1.0
        # Stop at the rim of the concept's circle, so the arrow head shows.
        ux, uy = (b.x - a.x) / length, (b.y - a.y) / length
        edges.append(DrawnEdge(a.x + ux * a.r, a.y + uy * a.r, b.x - ux * b.r, b.y - uy * b.r))
    layers = max((n.layer for n in nodes), default=0) + 1
    # Room on the right of the last column for its labels.
    width = 2 * MARGIN + 2 * MAX_RADIUS + (layers - 1) * COLUMN_GAP + COLUMN_GAP
    height = 2 * MARGIN + 2 * MAX_RADIUS + (max(rows.values(), default=1) - 1) * ROW_GAP
    return MapDrawing(width, height, tuple(nodes), tuple(edges))


@dataclass(frozen=True, slots=True)
class ChartDot:
    x: float
    y: float
    r: float
    count: int
    predicted: float
    observed: float


@dataclass(frozen=True, slots=True)
class CalibrationChart:
    size: int
    margin: int
    dots: tuple[ChartDot, ...]
    ticks: tuple[tuple[float, str], ...]


def draw_calibration(calibration: Calibration) -> CalibrationChart:
    """Each non-empty bin as a dot at (mean predicted, observed right), area by count; the
    diagonal (perfect calibration) is the template's."""

    def at(value: float) -> float:
        return CHART_MARGIN + value * CHART_SIZE

    dots = tuple(
        ChartDot(
            x=at(b.mean_predicted),
            y=at(1.0 - b.observed_right),
            r=BIN_RADIUS * math.sqrt(b.count),
            count=b.count,
            predicted=b.mean_predicted,
            observed=b.observed_right,
        )
        for b in calibration.bins
    )
    ticks: Sequence[float] = [i / 5 for i in range(6)]
    return CalibrationChart(
        CHART_SIZE, CHART_MARGIN, dots, tuple((t * CHART_SIZE, f"{t:.1f}") for t in ticks)
    )
