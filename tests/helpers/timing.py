"""Timing helpers for tests that show a cost grows linearly with the length of its input.

A test times a function on an input of size n and on one of size `GROWTH_FACTOR` * n (the best of
a few runs each, so that a pause of the machine does not count) and checks two things:

- the growth: the larger run may take at most `MAX_GROWTH` times the smaller. A linear cost gives
  16, a quadratic one 256, so the bound leaves room for noise and for fixed costs yet fails any
  cost that grows faster than about n^1.4;
- a ceiling in seconds on the larger run, which catches a cost that is linear but far too slow.

Times are the CPU time of the test process (`time.process_time`), not the wall clock: on a machine
shared with other work, the wall clock of a run stretches with the load while its CPU time barely
moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# How much larger the second input is than the first.
GROWTH_FACTOR = 16

# The most the larger run may take, as a multiple of the smaller one (linear: 16; quadratic: 256).
MAX_GROWTH = 48

# Runs below this many seconds are compared as if they took this long: timer resolution and the
# interpreter's own jitter dominate below it, and the floor only ever makes the growth look
# smaller, never hides a run that is slow in absolute terms (the ceiling still applies).
TIMING_FLOOR_SECONDS = 0.0005

# Runs of each input; the best one counts (CPU time barely varies, see above).
REPEATS = 2

# The ceiling on the larger run: this many times what the linear implementation needs for that
# many characters on the development machine (`EntryPoint.linear_seconds_per_million`), and never
# below `CEILING_FLOOR_SECONDS` (short runs are mostly fixed costs and noise).
CEILING_MARGIN = 50
CEILING_FLOOR_SECONDS = 0.1


@dataclass(frozen=True, slots=True)
class EntryPoint:
    """A public entry point of the text handling, as the linear-time tests drive it."""

    function: Callable[[str], object]
    # Characters of the smaller input (the larger has `GROWTH_FACTOR` times as many): enough that
    # the run is not only fixed costs, small enough that the larger run stays quick.
    size: int
    # Seconds per million characters the linear implementation needs on its worst shape, measured
    # on the development machine (2 shared cores); the ceiling is `CEILING_MARGIN` times that.
    linear_seconds_per_million: float

    def ceiling(self, characters: int) -> float:
        rate = self.linear_seconds_per_million * characters / 1_000_000
        return max(CEILING_FLOOR_SECONDS, CEILING_MARGIN * rate)


def best_seconds(function: Callable[[Any], object], argument: Any, repeats: int = REPEATS) -> float:
    """The shortest of `repeats` timed calls of `function(argument)`, in CPU seconds."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        function(argument)
        best = min(best, time.process_time() - started)
    return best


@dataclass(frozen=True, slots=True)
class Growth:
    """The best times on an input and on one `GROWTH_FACTOR` times longer."""

    small_seconds: float
    large_seconds: float

    @property
    def ratio(self) -> float:
        return self.large_seconds / max(self.small_seconds, TIMING_FLOOR_SECONDS)


def growth(
    function: Callable[[Any], object], make_input: Callable[[int], Any], size: int
) -> Growth:
    """How the cost of `function` grows from `make_input(size)` to `make_input(16 * size)`."""
    small = make_input(size)
    large = make_input(size * GROWTH_FACTOR)
    function(small)  # warm caches (language files, phrase indexes) outside the timing
    return Growth(best_seconds(function, small), best_seconds(function, large))


def assert_linear(entry: EntryPoint, make_input: Callable[[int], str], label: str) -> Growth:
    """Fail unless `entry` grows at most `MAX_GROWTH`-fold from its size to 16 times it and stays
    under its ceiling on the larger input."""
    size = entry.size
    ceiling_seconds = entry.ceiling(len(make_input(size * GROWTH_FACTOR)))
    measured = growth(entry.function, make_input, size)
    assert measured.ratio <= MAX_GROWTH, (
        f"{label}: {measured.small_seconds:.4f} s at size {size}, "
        f"{measured.large_seconds:.4f} s at {size * GROWTH_FACTOR} "
        f"(x{measured.ratio:.0f}; linear is x{GROWTH_FACTOR}, the bound x{MAX_GROWTH})"
    )
    assert measured.large_seconds <= ceiling_seconds, (
        f"{label}: {measured.large_seconds:.3f} s at size {size * GROWTH_FACTOR}, "
        f"over the ceiling of {ceiling_seconds} s"
    )
    return measured


def assert_under_ceiling(entry: EntryPoint, text: str, label: str) -> float:
    """Fail unless `entry` runs on `text` within its ceiling for that many characters."""
    entry.function(text[:100])  # warm caches outside the timing
    seconds = best_seconds(entry.function, text, repeats=1)
    ceiling_seconds = entry.ceiling(len(text))
    assert seconds <= ceiling_seconds, (
        f"{label}: {seconds:.3f} s on {len(text)} characters, over the ceiling of "
        f"{ceiling_seconds:.3f} s"
    )
    return seconds
