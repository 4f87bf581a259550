"""Benchmark recall's ranking, ``rank_and_pack``: Rust core vs numpy vs the pure-Python twin.

One seeded chain of EPISODES episodes and CANDIDATES candidate occurrences, built the way recall
builds them (SPEC R2.1): a few sets of 500 to 20,000 ids reaching the whole history, overlapping,
some sorted by id (recent, concept-tagged), some in score order (text hits, neighbours), a few
unknown ids, about 5% of occurrences matching the query. Two scenarios: a query with matches
(the filter keeps ~5%) and no query (every candidate is scored and ranked). All three
implementations must return the same result before any is timed.

The Python<->Rust crossing (reading the request's attributes, borrowing nine arrays, releasing
the GIL, building three result arrays) is measured on its own with a one-episode, one-candidate
input, twice: the native call alone with a request built beforehand, and what the server pays per
turn, building the ``RankRequest`` and calling ``ranking.rank_and_pack`` (which wraps the result in
a ``Ranked``).

Run from the repository root::

    .venv/bin/python -m bench.bench_rank

Prints a table and writes ``bench/results/rank.json`` and ``rank.md``.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from bench import rank_numpy
from bench._meta import RESULTS_DIR, print_table, run_metadata, write_results
from tutor_memory.domain.recall import ranking
from tutor_memory.domain.recall.ranking import RankRequest, Weights
from tutor_memory.native import _core, _reference

SEED = 20_261_130
EPISODES = 100_000
DAY_US = 86_400_000_000
NOW_US = 1_764_460_800_000_000  # 2025-11-30
HISTORY_DAYS = 730
# (name, size, order, matches): order "id" is ascending ids, "score" is random.
SETS: list[tuple[str, int, str, bool]] = [
    ("recent", 500, "id", False),
    ("text hits", 2_000, "score", True),
    ("routed concept", 3_000, "id", True),
    ("neighbours", 20_000, "score", False),
    ("related concept 1", 20_000, "id", False),
    ("related concept 2", 20_000, "id", False),
    ("related concept 3", 20_000, "id", False),
    ("wide neighbours", 14_500, "score", False),
]
CANDIDATES = sum(size for _, size, _, _ in SETS)
UNKNOWN_SHARE = 0.01  # ids of deleted episodes or other chains: ignored
BUDGET_TOKENS = 1_500
MAX_ITEMS = 15
RUNS = {"rust": 300, "numpy": 60, "python": 7}
WARMUP = 3
CROSSING_RUNS = 20_000

Args = dict[str, Any]
RankFn = Callable[[RankRequest], tuple[Any, Any, Any, int]]
IMPLS: dict[str, RankFn] = {
    "rust": _core.rank_and_pack,
    "numpy": rank_numpy.rank_and_pack,
    "python": _reference.rank_and_pack,
}


def build_chain(rng: np.random.Generator) -> Args:
    # Ids are global (many chains share one sequence), so one chain's ids are sparse; episodes
    # are appended in time order, so ids and times ascend together.
    ids = np.sort(rng.choice(30 * EPISODES, size=EPISODES, replace=False)).astype(np.int64)
    occurred = np.sort(rng.integers(NOW_US - HISTORY_DAYS * DAY_US, NOW_US, size=EPISODES))
    # Salience by kind (R1.3): questions, answers, checks, quizzes, taught notes.
    salience = rng.choice(
        np.array([0.35, 0.45, 0.6, 0.7, 0.85], dtype=np.float32),
        size=EPISODES,
        p=[0.40, 0.35, 0.12, 0.10, 0.03],
    )
    # About 8% of episodes repeat an earlier one (the same question asked again).
    dup_key = np.arange(EPISODES, dtype=np.uint64)
    repeats = rng.choice(np.arange(1, EPISODES), size=EPISODES * 8 // 100, replace=False)
    dup_key[repeats] = dup_key[(rng.random(repeats.size) * repeats).astype(np.int64)]
    return {
        "chain_ids": ids,
        "occurred_at_us": occurred.astype(np.int64),
        "salience": salience,
        "dup_key": dup_key,
        "tokens": rng.integers(12, 160, size=EPISODES).astype(np.uint32),
        # The tutor's narrations ("In July we covered ...").
        "flagged": (rng.random(EPISODES) < 0.05).astype(np.uint8),
    }


def build_candidates(rng: np.random.Generator, chain_ids: npt.NDArray[np.int64]) -> Args:
    ids_parts, rel_parts, match_parts = [], [], []
    # Sets other than "recent" draw from a few topic regions of the history, so they overlap.
    regions = [rng.choice(EPISODES, size=40_000, replace=False) for _ in range(3)]
    for i, (name, size, order, matches) in enumerate(SETS):
        if name == "recent":
            positions = np.arange(EPISODES - size, EPISODES)
        else:
            positions = rng.choice(regions[i % len(regions)], size=size, replace=False)
        ids = chain_ids[positions]
        unknown = rng.random(size) < UNKNOWN_SHARE
        ids[unknown] = -1 - rng.integers(0, 1_000_000, size=int(unknown.sum()))
        if order == "id":
            ids = np.sort(ids)
        relevance = np.zeros(size) if name == "recent" else rng.random(size)
        ids_parts.append(ids)
        rel_parts.append(relevance)
        match_parts.append(np.full(size, matches))
    return {
        "cand_ids": np.concatenate(ids_parts).astype(np.int64),
        "cand_relevance": np.concatenate(rel_parts).astype(np.float32),
        "cand_matched": np.concatenate(match_parts).astype(np.uint8),
    }


def request(arrays: Args, has_query: bool) -> RankRequest:
    """The request recall builds: the server's own weights, no time window."""
    return RankRequest(
        **arrays,
        now_us=NOW_US,
        has_query=has_query,
        budget_tokens=BUDGET_TOKENS,
        max_items=MAX_ITEMS,
    )


def time_calls(call: Callable[[], object], runs: int) -> list[float]:
    """Milliseconds per call, with the garbage collector paused as it would skew Python most."""
    for _ in range(WARMUP):
        call()
    samples: list[float] = []
    gc.disable()
    try:
        for _ in range(runs):
            start = time.perf_counter_ns()
            call()
            samples.append((time.perf_counter_ns() - start) / 1e6)
    finally:
        gc.enable()
    return samples


def p95(samples: list[float]) -> float:
    """Nearest-rank 95th percentile (with 7 samples, the largest)."""
    ordered = sorted(samples)
    return ordered[math.ceil(0.95 * len(ordered)) - 1]


def summary(samples: list[float]) -> dict[str, Any]:
    return {
        "runs": len(samples),
        "median_ms": round(statistics.median(samples), 4),
        "p95_ms": round(p95(samples), 4),
    }


def check_agreement(req: RankRequest) -> int:
    """All three return the same result; returns how many items were packed."""
    expected = _reference.rank_and_pack(req)
    for name in ("rust", "numpy"):
        got = IMPLS[name](req)
        if not (
            np.array_equal(got[0], expected[0])
            and np.array_equal(got[1], expected[1])
            and np.allclose(got[2], expected[2], rtol=1e-6, atol=1e-6)
            and got[3] == expected[3]
        ):
            raise AssertionError(f"{name} disagrees with the reference")
    return len(expected[0])


def crossing_overhead() -> dict[str, Any]:
    tiny: Args = {
        "chain_ids": np.array([7], dtype=np.int64),
        "occurred_at_us": np.array([NOW_US - DAY_US], dtype=np.int64),
        "salience": np.array([0.5], dtype=np.float32),
        "dup_key": np.array([1], dtype=np.uint64),
        "tokens": np.array([10], dtype=np.uint32),
        "flagged": np.array([0], dtype=np.uint8),
        "cand_ids": np.array([7], dtype=np.int64),
        "cand_relevance": np.array([1.0], dtype=np.float32),
        "cand_matched": np.array([1], dtype=np.uint8),
    }
    built = request(tiny, True)
    weights = Weights()

    def per_turn() -> ranking.Ranked:
        # What BlockBuilder does per turn: build the request, call, wrap the result.
        return ranking.rank_and_pack(
            RankRequest(
                **tiny,
                now_us=NOW_US,
                has_query=True,
                budget_tokens=BUDGET_TOKENS,
                max_items=MAX_ITEMS,
                weights=weights,
            )
        )

    results = {}
    for name, call in (
        ("native_call", lambda: _core.rank_and_pack(built)),
        ("request_and_call", per_turn),
    ):
        samples = [ms * 1000 for ms in time_calls(call, CROSSING_RUNS)]
        results[name] = {
            "runs": len(samples),
            "median_us": round(statistics.median(samples), 2),
            "p95_us": round(p95(samples), 2),
        }
    return results


def run() -> dict[str, Any]:
    rng = np.random.default_rng(SEED)
    chain = build_chain(rng)
    candidates = build_candidates(rng, chain["chain_ids"])
    known = np.isin(candidates["cand_ids"], chain["chain_ids"])
    distinct = np.unique(candidates["cand_ids"][known]).size
    matched_share = float(candidates["cand_matched"].mean())

    scenarios = []
    for name, has_query in (("query, ~5% matched", True), ("no query", False)):
        req = request({**chain, **candidates}, has_query)
        packed = check_agreement(req)
        results = {
            impl: summary(time_calls(functools.partial(fn, req), RUNS[impl]))
            for impl, fn in IMPLS.items()
        }
        rust_ms = results["rust"]["median_ms"]
        scenarios.append(
            {
                "name": name,
                "has_query": has_query,
                "packed_items": packed,
                "results": results,
                "numpy_over_rust": round(results["numpy"]["median_ms"] / rust_ms, 1),
                "python_over_rust": round(results["python"]["median_ms"] / rust_ms, 1),
            }
        )

    return {
        "benchmark": "rank",
        **run_metadata(),
        "seed": SEED,
        "episodes": EPISODES,
        "candidates": CANDIDATES,
        "distinct_known_candidates": distinct,
        "matched_share": round(matched_share, 4),
        "unknown_share": UNKNOWN_SHARE,
        "sets": [
            {"name": n, "size": size, "order": order, "matches": m} for n, size, order, m in SETS
        ],
        "budget_tokens": BUDGET_TOKENS,
        "max_items": MAX_ITEMS,
        "weights": dataclasses.asdict(Weights()),
        "scenarios": scenarios,
        "crossing_overhead": crossing_overhead(),
    }


def table(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [
        ("host / cpus", f"{result['host']} / {result['cpu_count']}"),
        ("git", result["git_rev"]),
        (
            "input",
            f"{result['episodes']:,} episodes, {result['candidates']:,} candidates "
            f"({result['distinct_known_candidates']:,} distinct known, "
            f"{result['matched_share']:.1%} matched)",
        ),
    ]
    for scenario in result["scenarios"]:
        rows.append((f"{scenario['name']} ({scenario['packed_items']} packed)", ""))
        for impl, r in scenario["results"].items():
            rows.append(
                (
                    f"  {impl}",
                    f"median {r['median_ms']:9.3f} ms   p95 {r['p95_ms']:9.3f} ms   "
                    f"({r['runs']} runs)",
                )
            )
        rows.append(
            (
                "  numpy / rust, python / rust",
                f"{scenario['numpy_over_rust']}x, {scenario['python_over_rust']}x",
            )
        )
    labels = {
        "native_call": "crossing: native call, request built (1 episode, 1 candidate)",
        "request_and_call": "crossing: build RankRequest + ranking.rank_and_pack",
    }
    for key, crossing in result["crossing_overhead"].items():
        rows.append(
            (
                labels[key],
                f"median {crossing['median_us']:.2f} us   p95 {crossing['p95_us']:.2f} us   "
                f"({crossing['runs']} runs)",
            )
        )
    return rows


def markdown(rows: list[tuple[str, str]]) -> str:
    """The printed table as Markdown, for ``bench/results/rank.md``."""
    lines = ["# rank_and_pack: Rust core vs numpy vs pure Python", "", "| | |", "|---|---|"]
    lines += [f"| {name.strip() or ' '} | {value.strip()} |" for name, value in rows]
    return "\n".join(lines) + "\n"


def main() -> int:
    result = run()
    rows = table(result)
    print_table(rows)
    write_results("rank", result)
    (RESULTS_DIR / "rank.md").write_text(markdown(rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
