"""The three linear-time tests every domain package runs on its text entry points (issue 12):
linear growth on the known hostile shapes, on shapes hypothesis draws, and the shapes the issue
measured staying under the ceiling (`tests.helpers.timing` for the bounds).

A package's `test_linear_time.py` declares its ENTRY_POINTS and binds the three tests to them with
`linear_time_tests`, under the names pytest collects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest
from hypothesis import HealthCheck, given, settings

from tests.helpers.hostile_text import ISSUE_SHAPES, KNOWN_SHAPES, SHAPES, Shape
from tests.helpers.timing import EntryPoint, assert_linear, assert_under_ceiling

LinearTimeTest = Callable[..., None]


def linear_time_tests(
    entry_points: Mapping[str, EntryPoint],
) -> tuple[LinearTimeTest, LinearTimeTest, LinearTimeTest]:
    """The known-shapes, drawn-shapes and issue-shapes tests over `entry_points`."""

    @pytest.mark.parametrize("shape", KNOWN_SHAPES, ids=repr)
    @pytest.mark.parametrize("name", entry_points)
    def test_cost_grows_linearly_on_known_shapes(name: str, shape: Shape) -> None:
        assert_linear(entry_points[name], shape.make, f"{name} on {shape.name}")

    @pytest.mark.parametrize("name", entry_points)
    @settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(shape=SHAPES)
    def test_cost_grows_linearly_on_drawn_shapes(name: str, shape: Shape) -> None:
        assert_linear(entry_points[name], shape.make, f"{name} on {shape.name}")

    @pytest.mark.parametrize("shape", ISSUE_SHAPES)
    @pytest.mark.parametrize("name", entry_points)
    def test_the_issue_shapes_stay_under_the_ceiling(name: str, shape: str) -> None:
        assert_under_ceiling(entry_points[name], ISSUE_SHAPES[shape], f"{name} on {shape}")

    return (
        test_cost_grows_linearly_on_known_shapes,
        test_cost_grows_linearly_on_drawn_shapes,
        test_the_issue_shapes_stay_under_the_ceiling,
    )
