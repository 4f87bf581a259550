"""Grounding cuts and traces an answer in time linear in the answer (issue 12).

Grounding's sentence splitter and `ground` itself (two passages and a memory as sources) are timed
on adversarial shapes drawn by hypothesis at n and 16 n characters, as in
`tests.domain.text.test_linear_time` (see `tests.helpers.timing` for the bounds).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings

from tests.helpers.hostile_text import ISSUE_SHAPES, KNOWN_SHAPES, SHAPES, Shape
from tests.helpers.timing import EntryPoint, assert_linear, assert_under_ceiling
from tutor_memory.domain.honesty.grounding import (
    SourceMemory,
    SourcePassage,
    ground,
    split_sentences,
)

PASSAGES = [
    SourcePassage("bio", 1, 1, "Osmosis is the diffusion of water across a membrane, e.g. 3.5 ml."),
    SourcePassage("bio", 1, 2, "La cellula è l'unità della vita. الخلية هي وحدة الحياة."),
]
MEMORIES = [SourceMemory(7, datetime(2026, 7, 1, tzinfo=UTC), "We covered osmosis in July.")]

ENTRY_POINTS = {
    "grounding.split_sentences": EntryPoint(split_sentences, 512, 0.8),
    "grounding.ground": EntryPoint(lambda text: ground(text, PASSAGES, MEMORIES), 256, 2.2),
}


@pytest.mark.parametrize("shape", KNOWN_SHAPES, ids=repr)
@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_cost_grows_linearly_on_known_shapes(name: str, shape: Shape) -> None:
    assert_linear(ENTRY_POINTS[name], shape.make, f"{name} on {shape.name}")


@pytest.mark.parametrize("name", ENTRY_POINTS)
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shape=SHAPES)
def test_cost_grows_linearly_on_drawn_shapes(name: str, shape: Shape) -> None:
    assert_linear(ENTRY_POINTS[name], shape.make, f"{name} on {shape.name}")


@pytest.mark.parametrize("shape", ISSUE_SHAPES)
@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_the_issue_shapes_stay_under_the_ceiling(name: str, shape: str) -> None:
    assert_under_ceiling(ENTRY_POINTS[name], ISSUE_SHAPES[shape], f"{name} on {shape}")
