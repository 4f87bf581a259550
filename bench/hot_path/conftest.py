"""The hot path's in-process benchmarks (pytest-benchmark): rank_and_pack by each of its three
implementations, and one whole block build without gRPC, on bench_block's chain at 10k and 100k
episodes.

`make bench` runs them with `--benchmark-enable --benchmark-autosave --benchmark-compare`: each
run is saved under `.benchmarks/` and compared with the previous one, and a summary goes to
bench/results/hot_path.json and .md. Every other pytest run (`make test`) has them disabled
(`--benchmark-disable` in pyproject.toml): each benchmarked call runs once, as a plain test, on
a chain of DISABLED_EPISODES, so that they cannot rot and cost seconds, not minutes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from unittest.mock import patch

import pytest

from bench import _block_chain
from bench._meta import RESULTS_DIR, run_metadata, write_results
from tutor_memory.app.root import Services
from tutor_memory.domain.recall.block import BlockRequest
from tutor_memory.domain.recall.ranking import Ranked, RankRequest, rank_and_pack

# The chain sizes benchmarked, by the label in each benchmark's name.
SIZES = {"10k": 10_000, "100k": 100_000}
# The chain every size stands for when benchmarks are disabled (a plain test run).
DISABLED_EPISODES = 1_000
# Mixed FULL queries each build benchmark cycles through (bench_block's mix).
MIXED_QUERIES = 60
# The turns whose ranking requests the rank benchmarks replay: a subject question (the lexical,
# dense and neighbour sets: the most candidates) and a record question (every check and quiz).
RANKED_QUERIES = {
    "subject": "Explain osmosis basics to me",
    "record": "What did I get wrong so far?",
}
SUMMARY_NAME = "hot_path"


@dataclass
class OpenChain:
    """bench_block's chain of `episodes`, opened in this process."""

    episodes: int
    services: Services
    mixed: list[BlockRequest]
    # The RankRequest each of RANKED_QUERIES makes, captured from a real build.
    rank_requests: dict[str, RankRequest] = field(default_factory=dict)


def benchmarks_disabled(config: pytest.Config) -> bool:
    return bool(config.getoption("benchmark_disable")) and not config.getoption("benchmark_enable")


def capture_rank_request(chain: OpenChain, query: str) -> RankRequest:
    seen: list[RankRequest] = []

    def capture(request: RankRequest) -> Ranked:
        seen.append(request)
        return rank_and_pack(request)

    template = chain.mixed[0]
    req = BlockRequest(
        template.chain, query, template.budget_tokens, template.now_us, template.time_zone,
        template.mode,
    )  # fmt: skip
    with patch("tutor_memory.app.blocks.rank_and_pack", capture):
        chain.services.blocks.builder.build(req)
    (captured,) = seen
    return captured


@pytest.fixture(scope="session")
def open_chain(request: pytest.FixtureRequest) -> Iterator[Callable[[str], OpenChain]]:
    """Opens the chain a size label stands for (once per session), filling it on first use."""
    opened: dict[int, OpenChain] = {}

    def get(label: str) -> OpenChain:
        n = DISABLED_EPISODES if benchmarks_disabled(request.config) else SIZES[label]
        if n not in opened:
            services = _block_chain.open_services(_block_chain.chain_data_dir(n))
            chain = OpenChain(n, services, _block_chain.block_requests(n, MIXED_QUERIES))
            chain.rank_requests = {
                kind: capture_rank_request(chain, query) for kind, query in RANKED_QUERIES.items()
            }
            opened[n] = chain
        return opened[n]

    yield get
    for chain in opened.values():
        chain.services.close()


def pytest_benchmark_update_json(
    config: pytest.Config, benchmarks: list[Any], output_json: dict[str, Any]
) -> None:
    """Writes the summary of a saved run to bench/results/hot_path.json and .md."""
    rows = []
    for bench in output_json["benchmarks"]:
        stats = bench["stats"]
        rows.append(
            {
                "name": bench["name"],
                "group": bench["group"],
                "rounds": stats["rounds"],
                "median_ms": round(stats["median"] * 1000, 4),
                "mean_ms": round(stats["mean"] * 1000, 4),
                "min_ms": round(stats["min"] * 1000, 4),
                "iqr_ms": round(stats["iqr"] * 1000, 4),
                "ops_per_s": round(stats["ops"], 1),
                **bench.get("extra_info", {}),
            }
        )
    summary = {"benchmark": SUMMARY_NAME, **run_metadata(), "results": rows}
    write_results(SUMMARY_NAME, summary)
    (RESULTS_DIR / f"{SUMMARY_NAME}.md").write_text(markdown(summary), encoding="utf-8")


def markdown(summary: dict[str, Any]) -> str:
    lines = [
        "# Hot path, in process (pytest-benchmark)",
        "",
        f"Commit `{summary['git_rev']}`, {summary['timestamp']}, {summary['cpu']} "
        f"({summary['cpu_count']} CPUs). `make bench` (bench/hot_path). Milliseconds.",
        "",
        "| benchmark | rounds | median | mean | min | IQR |",
        "|---|---|---|---|---|---|",
    ]
    for r in summary["results"]:
        lines.append(
            f"| {r['name']} | {r['rounds']} | {r['median_ms']:.3f} | {r['mean_ms']:.3f} | "
            f"{r['min_ms']:.3f} | {r['iqr_ms']:.3f} |"
        )
    return "\n".join(lines) + "\n"
