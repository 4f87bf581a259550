"""Memory of the server (issue 14): RSS with one 100k-episode chain loaded, with 10,000 chains of
100 episodes loaded, and over a ten-minute mixed run under a memory budget.

Data directories come from bench/_fill.py (LoCoMo turns, random unit vectors). Each case starts
`tutor-memory serve` as a child process and reads its resident set size (VmRSS) from /proc:

- one chain: RSS when serving, then after a BuildBlock loaded the chain from the store, then in a
  new server once it read the chain's snapshot (written by the first server's stop, with the
  chain's HNSW graph);
- many chains: the same with every one of the 10,000 chains loaded by a BuildBlock (a budget
  large enough to hold them all);
- mixed run: `--cache-memory-mib BUDGET_MIB` over a scratch copy of the 10,000 chains (its
  appends leave the filled directory as it was), CALLERS threads calling back
  to back for MINUTES minutes, each call on a random chain, 60% AppendEpisode and 40% BuildBlock;
  RSS sampled every SAMPLE_SECONDS. Flat means the RSS after the first two minutes stays within a
  band, without a trend (the slope of a least-squares line is reported); a run longer than ten
  minutes is also reported ten minutes at a time, to tell a rise that goes on from bounded caches
  still filling.

Run from the repository root: `.venv/bin/python -m bench.bench_memory` (TM_MEMORY_MINUTES sets
the mixed run's length: shorter for a trial, 30 for the windowed run). Writes
bench/results/memory.json and bench/results/memory.md.
`.venv/bin/python -m bench.bench_memory mixed` runs the mixed run alone, into memory_mixed.*.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from tests.helpers.server_process import ServerProcess

from bench._fill import SUBJECT, filled, student
from bench._meta import RESULTS_DIR, print_table, run_metadata, write_results
from bench._proc import cpu_seconds, memory_mib
from bench._server import wait_for_graph
from tutor_memory.app.config import SNAPSHOT_DIR_NAME
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

ROOT = Path(os.environ.get("TM_BENCH_DIR", "/tmp/tm-bench"))
MANY_CHAINS = 10_000
PER_CHAIN = 100
# A budget that holds every one of the 10,000 small chains, for the RSS of all of them loaded.
LARGE_BUDGET_MIB = 16_384
# The mixed run's budget: a fraction of what the 10,000 chains need, so chains keep leaving.
BUDGET_MIB = 256
MINUTES = float(os.environ.get("TM_MEMORY_MINUTES", "10"))
CALLERS = 16
SAMPLE_SECONDS = 10.0
# Samples before this are the warm-up (the budget filling up), left out of the flatness figures.
WARM_UP_SECONDS = 120.0
# A run longer than this is also read window by window (the first from the warm-up's end), so
# that a longer run shows whether the rise of its first minutes goes on or stops.
WINDOW_SECONDS = 600.0
LOADERS = 8
# The parts of the mixed run's memory the server samples (bench/_allocator_probe.py), in MiB.
ALLOCATOR_FIELDS = (
    "vmrss_mib",
    "rssanon_mib",
    "glibc_in_use_mib",
    "glibc_free_mib",
    "glibc_mmapped_mib",
    "python_objects_mib",
    "python_arenas_mib",
)


def _block(stub: pb_grpc.MemoryStub, i: int) -> None:
    stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=student(i), subject_id=SUBJECT, query="how was the trip?", budget_tokens=800
        ),
        timeout=120,
    )


def _server(data_dir: Path, budget_mib: int, probe: Path | None = None) -> ServerProcess:
    """With `probe`, the server samples its allocators into that file (bench/_allocator_probe)."""
    entry: tuple[str, ...] = ("-m", "tutor_memory")
    if probe is not None:
        entry = ("-m", "bench._allocator_probe", str(probe), str(SAMPLE_SECONDS))
    server = ServerProcess(data_dir, None, "--cache-memory-mib", str(budget_mib), entry=entry)
    server.wait_ready()
    return server


def _slope(points: list[tuple[float, float]]) -> float:
    """MiB a minute of a least-squares line through (seconds, MiB) points."""
    if len(points) < 2:
        return 0.0
    xs = np.asarray([t for t, _ in points]) / 60
    return round(float(np.polyfit(xs, np.asarray([v for _, v in points]), 1)[0]), 2)


def _windows(
    samples: list[tuple[float, float]], allocators: list[dict[str, Any]], seconds: float
) -> list[dict[str, Any]]:
    """RSS (its band and slope) and the slope of each allocator part in each WINDOW_SECONDS of
    the run after the warm-up: [WARM_UP_SECONDS, WINDOW_SECONDS), then every WINDOW_SECONDS."""
    edges = [WARM_UP_SECONDS, *np.arange(WINDOW_SECONDS, seconds, WINDOW_SECONDS).tolist()]
    out = []
    for start, end in zip(edges, [*edges[1:], seconds], strict=True):
        rss = [(t, v) for t, v in samples if start <= t < end]
        parts = [a for a in allocators if start <= a["s"] < end]
        if len(rss) < 2:
            continue
        out.append(
            {
                "from_s": start,
                "to_s": round(end, 1),
                "rss_min_mib": min(v for _, v in rss),
                "rss_max_mib": max(v for _, v in rss),
                "rss_slope_mib_per_min": _slope(rss),
                "allocator_slopes_mib_per_min": {
                    field: _slope([(a["s"], a[field]) for a in parts if field in a])
                    for field in ALLOCATOR_FIELDS
                },
            }
        )
    return out


def one_chain() -> dict[str, Any]:
    """The chain read from the store (its snapshot files deleted first, so that nothing is loaded
    at SERVING), then, once its HNSW graph is built and the stop wrote its snapshot, read from
    that snapshot by a new server (which does so while it starts)."""
    data_dir = filled(ROOT / "one-100k", 1, 100_000)
    shutil.rmtree(data_dir / SNAPSHOT_DIR_NAME, ignore_errors=True)
    server = _server(data_dir, LARGE_BUDGET_MIB)
    try:
        serving = memory_mib(server.proc.pid)["rss_mib"]
        with grpc.insecure_channel(server.target) as channel:
            _block(pb_grpc.MemoryStub(channel), 0)
        from_store = memory_mib(server.proc.pid)["rss_mib"]
        wait_for_graph(server)
    finally:
        server.terminate(timeout=300)
    server = _server(data_dir, LARGE_BUDGET_MIB)
    try:
        with grpc.insecure_channel(server.target) as channel:
            _block(pb_grpc.MemoryStub(channel), 0)
        from_snapshot = memory_mib(server.proc.pid)["rss_mib"]
    finally:
        server.terminate(timeout=120)
    return {
        "episodes": 100_000,
        "rss_mib_serving": serving,
        "rss_mib_loaded_from_store": from_store,
        "rss_mib_for_the_chain_from_store": round(from_store - serving, 1),
        "rss_mib_loaded_from_snapshot": from_snapshot,
        "rss_mib_for_the_chain_from_snapshot": round(from_snapshot - serving, 1),
    }


def many_chains() -> dict[str, Any]:
    data_dir = filled(ROOT / "many-10k", MANY_CHAINS, PER_CHAIN)
    server = _server(data_dir, LARGE_BUDGET_MIB)
    try:
        serving = memory_mib(server.proc.pid)["rss_mib"]
        started = time.perf_counter()
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            with ThreadPoolExecutor(LOADERS) as pool:
                list(pool.map(lambda i: _block(stub, i), range(MANY_CHAINS)))
        seconds = time.perf_counter() - started
        loaded = memory_mib(server.proc.pid)["rss_mib"]
    finally:
        server.terminate(timeout=300)
    return {
        "chains": MANY_CHAINS,
        "episodes_per_chain": PER_CHAIN,
        "rss_mib_serving": serving,
        "rss_mib_loaded": loaded,
        "rss_mib_for_the_chains": round(loaded - serving, 1),
        "seconds_to_load_all": round(seconds, 1),
    }


def _scratch_copy(data_dir: Path, name: str) -> Path:
    """A fresh copy of `data_dir` for a run that writes: the filled directory stays as filled,
    so the other cases (and the next run) read the same chains."""
    scratch = ROOT / name
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(data_dir, scratch)
    return scratch


def mixed_run() -> dict[str, Any]:
    data_dir = _scratch_copy(filled(ROOT / "many-10k", MANY_CHAINS, PER_CHAIN), "many-10k-mixed")
    probe = ROOT / "mixed-allocators.jsonl"
    probe.unlink(missing_ok=True)
    server = _server(data_dir, BUDGET_MIB, probe)
    counts = {"append": 0, "block": 0, "errors": 0}
    lock = threading.Lock()
    stop = threading.Event()
    samples: list[tuple[float, float]] = []
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)

            def caller(seed: int) -> None:
                rng = random.Random(seed)
                n = 0
                while not stop.is_set():
                    i = rng.randrange(MANY_CHAINS)
                    try:
                        if rng.random() < 0.6:
                            stub.AppendEpisode(
                                pb.AppendEpisodeRequest(
                                    episode=pb.NewEpisode(
                                        student_id=student(i),
                                        subject_id=SUBJECT,
                                        kind=pb.EPISODE_KIND_ANSWER,
                                        summary=f"We went over the trip photos again ({seed}-{n}).",
                                    )
                                ),
                                timeout=60,
                            )
                            what = "append"
                        else:
                            _block(stub, i)
                            what = "block"
                    except grpc.RpcError:
                        what = "errors"
                    n += 1
                    with lock:
                        counts[what] += 1

            threads = [threading.Thread(target=caller, args=(s,)) for s in range(CALLERS)]
            started = time.perf_counter()
            cpu_before = cpu_seconds(server.proc.pid)
            for t in threads:
                t.start()
            while (elapsed := time.perf_counter() - started) < MINUTES * 60:
                samples.append((round(elapsed, 1), memory_mib(server.proc.pid)["rss_mib"]))
                time.sleep(SAMPLE_SECONDS)
            stop.set()
            for t in threads:
                t.join()
            seconds = time.perf_counter() - started
            cpu = cpu_seconds(server.proc.pid) - cpu_before
    finally:
        server.terminate(timeout=300)
        shutil.rmtree(data_dir, ignore_errors=True)
    steady = [(t, rss) for t, rss in samples if t >= WARM_UP_SECONDS] or samples
    ys = np.asarray([rss for _, rss in steady])
    allocators = [json.loads(line) for line in probe.read_text().splitlines() if line.strip()]
    # The server's samples count from its own start, a second or two before the callers began.
    steady_allocators = [a for a in allocators if a["s"] >= WARM_UP_SECONDS]
    return {
        "budget_mib": BUDGET_MIB,
        "minutes": MINUTES,
        "callers": CALLERS,
        "calls": counts,
        "calls_per_s": round((counts["append"] + counts["block"]) / seconds, 1),
        "server_cpu_s": round(cpu, 1),
        "samples": samples,
        "steady_from_s": WARM_UP_SECONDS,
        "steady_rss_min_mib": float(ys.min()),
        "steady_rss_max_mib": float(ys.max()),
        "steady_slope_mib_per_min": _slope(steady),
        # What RSS is made of, sampled by the server itself (bench/_allocator_probe.py), and the
        # slope of each part over the same steady samples.
        "allocator_samples": allocators,
        "allocator_steady_slopes_mib_per_min": {
            field: _slope([(a["s"], a[field]) for a in steady_allocators if field in a])
            for field in ALLOCATOR_FIELDS
        },
        "windows": _windows(samples, allocators, seconds),
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Memory (issue 14)",
        "",
        f"Run {result['timestamp']} at commit `{result['git_rev']}` on {result['host']} "
        f"({result['cpu_count']} x {result['cpu']}); load average at the start "
        f"{result['load_average_at_start']}; glibc's malloc settings from the environment: "
        f"{result['malloc_environment'] or 'none'}.",
        "",
        "Resident set size (VmRSS) of the server process. Chains: LoCoMo turns, random unit "
        "vectors (bench/_fill.py).",
        "",
    ]
    if "one_chain" in result:
        lines += _loaded_lines(result["one_chain"], result["many_chains"])
    return "\n".join(lines + _mixed_lines(result["mixed_run"])) + "\n"


def _loaded_lines(one: dict[str, Any], many: dict[str, Any]) -> list[str]:
    return [
        "| case | RSS serving MiB | RSS loaded MiB | for the chains MiB |",
        "|---|---|---|---|",
        f"| one chain of {one['episodes']} episodes, read from the store (a flat index, its "
        f"graph being built) | {one['rss_mib_serving']} | {one['rss_mib_loaded_from_store']} | "
        f"{one['rss_mib_for_the_chain_from_store']} |",
        f"| the same, read from its snapshot (with its graph) by a new server | "
        f"{one['rss_mib_serving']} (the first server's) | "
        f"{one['rss_mib_loaded_from_snapshot']} | {one['rss_mib_for_the_chain_from_snapshot']} |",
        f"| {many['chains']} chains of {many['episodes_per_chain']} episodes (all loaded, "
        f"{many['seconds_to_load_all']} s) | {many['rss_mib_serving']} | "
        f"{many['rss_mib_loaded']} | {many['rss_mib_for_the_chains']} |",
        "",
    ]


def _mixed_lines(mixed: dict[str, Any]) -> list[str]:
    lines = [
        f"Mixed run: `--cache-memory-mib {mixed['budget_mib']}`, {mixed['callers']} callers for "
        f"{mixed['minutes']} minutes over the {MANY_CHAINS} chains (60% AppendEpisode, 40% "
        f"BuildBlock, random chains): {mixed['calls']['append']} appends, "
        f"{mixed['calls']['block']} blocks, {mixed['calls']['errors']} errors "
        f"({mixed['calls_per_s']} calls/s). After the first {mixed['steady_from_s']:.0f} s the "
        f"RSS stayed between {mixed['steady_rss_min_mib']} and {mixed['steady_rss_max_mib']} MiB, "
        f"slope {mixed['steady_slope_mib_per_min']} MiB/min.",
        "",
        "| seconds | RSS MiB |",
        "|---|---|",
    ]
    lines += [f"| {t} | {rss} |" for t, rss in mixed["samples"]]
    if len(mixed["windows"]) > 1:
        lines += [
            "",
            f"Window by window ({WINDOW_SECONDS / 60:.0f} minutes each after the warm-up; "
            "slopes in MiB a minute):",
            "",
            "| minutes | RSS MiB | RSS slope | " + " | ".join(ALLOCATOR_FIELDS[2:]) + " |",
            "|---" * (len(ALLOCATOR_FIELDS) + 1) + "|",
        ]
        lines += [
            f"| {w['from_s'] / 60:g}-{w['to_s'] / 60:g} | {w['rss_min_mib']}-{w['rss_max_mib']} | "
            f"{w['rss_slope_mib_per_min']} | "
            + " | ".join(str(w["allocator_slopes_mib_per_min"][f]) for f in ALLOCATOR_FIELDS[2:])
            + " |"
            for w in mixed["windows"]
        ]
    slopes = mixed["allocator_steady_slopes_mib_per_min"]
    lines += [
        "",
        "What the RSS of the mixed run is made of, as the server sampled it "
        "(bench/_allocator_probe.py; MiB): glibc's heap (handed out and not freed, free memory "
        "it keeps, mmapped chunks), CPython's live objects and the arenas holding them. Slopes "
        f"(MiB a minute, from {mixed['steady_from_s']:.0f} s on): "
        + ", ".join(f"{field} {slopes[field]}" for field in ALLOCATOR_FIELDS)
        + ".",
        "",
        "| seconds | " + " | ".join(ALLOCATOR_FIELDS) + " |",
        "|---" * (len(ALLOCATOR_FIELDS) + 1) + "|",
    ]
    lines += [
        f"| {a['s']:.0f} | " + " | ".join(str(a.get(f, "")) for f in ALLOCATOR_FIELDS) + " |"
        for a in mixed["allocator_samples"]
        if round(a["s"]) % 60 < SAMPLE_SECONDS
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """`mixed` as the only argument runs the mixed run alone (bench/results/memory_mixed.*), for
    comparing settings of the allocators (glibc reads MALLOC_* from the environment, which the
    server inherits)."""
    only_mixed = (sys.argv[1:] if argv is None else argv) == ["mixed"]
    name = "memory_mixed" if only_mixed else "memory"
    result: dict[str, Any] = {
        "benchmark": name,
        **run_metadata(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "malloc_environment": {k: v for k, v in os.environ.items() if k.startswith("MALLOC_")},
    }
    if not only_mixed:
        result["one_chain"] = one_chain()
        result["many_chains"] = many_chains()
    result["mixed_run"] = mixed_run()
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    rows = [("git", result["git_rev"])]
    for case in ("one_chain", "many_chains", "mixed_run"):
        rows += [
            (f"{case} {k}", str(v))
            for k, v in result.get(case, {}).items()
            if k not in ("samples", "allocator_samples")
        ]
    print_table(rows)
    write_results(name, result)
    (RESULTS_DIR / f"{name}.md").write_text(markdown(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
