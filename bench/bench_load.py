"""Many callers at once: BuildBlock and AppendEpisode driven by ghz against one fresh server.

Starts `tutor-memory serve` as a child process on an empty data directory, fills 50 students
(bench/_load_workload.py: a course file each, whose concepts make the map, and a year of
history each through IngestEpisodes, whose checks make the beliefs), then drives it with ghz
(pinned in scripts/tools/ghz/go.mod, installed by `make load-tools`):

- FULL BuildBlock over the 50 students with mixed queries and a 1,500-token budget, at 1, 16
  and 64 concurrent callers;
- a mixed run at 64 callers: 60 % AppendEpisode, 40 % BuildBlock. ghz calls one method per
  process, so two ghz processes run side by side for the same duration, the callers split
  60/40 (38 appending, 26 building blocks). Each caller is closed-loop (its next call starts
  when the last one returns), as a chat turn waits for its block, so the split is of callers:
  the split of calls follows from how long each call takes and is reported.

Every caller of a run calls back to back for the run's duration. Per run it records calls/s,
p50/p95/p99 of the successful calls, errors by status, the server's CPU time per call (user +
system seconds from /proc/<pid>/stat before and after, over every call of the run) and its RSS.
The calls time out after CALL_TIMEOUT_S, below the server's block cap, so a block the server
gives up on is a DEADLINE_EXCEEDED that ghz counts, never an OK reply marked `dropped`. ghz runs
on the same machine as the server and its CPU time is reported too.

Run: `.venv/bin/python -m bench.bench_load` (writes bench/results/load.json and load.md);
`--quick` runs small chains for a few seconds per run (the test's mode, written as load-quick);
`--episodes-per-student N` sets the chain length (written as load-N); `--workers N` serves with
`serve --workers N` (written as load-workersN): N processes on one port, the kernel spreading the
connections over them, so each run then opens at least CONNECTIONS_PER_WORKER connections per
worker (the 1-caller run one), and server CPU and RSS are summed over the supervisor and its
workers.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import grpc
from tests.helpers.server_process import ServerProcess

from bench import _ghz
from bench import _load_workload as workload
from bench._meta import RESULTS_DIR, print_table, run_metadata, write_results
from bench._proc import cpu_seconds, machine_busy_seconds, tree_memory_mib, tree_pids
from bench._server import fresh_server_process, settle
from bench.bench_block import BUDGET, SEED
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

NAME = "load"
QUICK_NAME = "load-quick"
READ_CALLERS = (1, 16, 64)
MIXED_CALLERS = 64
APPEND_SHARE = 0.6
# A chat service spreads its callers over a few channels; one HTTP/2 connection per this many
# callers (1, 2 and 8 connections at 1, 16 and 64), so that no single connection's flow control
# is what is measured.
CALLERS_PER_CONNECTION = 8
# With several workers, at least this many connections per worker (each connection stays with
# one worker, and the kernel assigns them by a hash of their addresses, not in turn).
CONNECTIONS_PER_WORKER = 4
CORES = os.cpu_count() or 1
# Below the server's default block cap (2.5 s, `serve --block-cap-seconds`): see the docstring.
CALL_TIMEOUT_S = 2.0
# Seconds one fill call may take (a whole chain streams through one IngestEpisodes).
FILL_TIMEOUT_S = 1_800.0
# The targets on this machine class (issue 14).
TARGET_BLOCKS_PER_S = 600.0
TARGET_BLOCK_P99_MS = 100.0
TARGET_CPU_MS_PER_BLOCK = 3.0
TARGET_APPEND_P99_MS = 50.0


@dataclass(frozen=True, slots=True)
class Settings:
    episodes_per_student: int
    run_seconds: float
    # Blocks built one at a time from this process before the load, to record what a FULL block
    # holds and the server's own stage timings unloaded; they also warm every chain.
    sample_blocks: int
    # Server processes (`serve --workers`).
    workers: int = 1


FULL = Settings(episodes_per_student=2_000, run_seconds=30.0, sample_blocks=300)
QUICK = Settings(episodes_per_student=40, run_seconds=2.0, sample_blocks=50)


def connections(callers: int, workers: int = 1) -> int:
    wanted = math.ceil(callers / CALLERS_PER_CONNECTION)
    if workers > 1:
        wanted = max(wanted, CONNECTIONS_PER_WORKER * workers)
    return min(callers, wanted)


def fill(stub: pb_grpc.MemoryStub, settings: Settings, rng: random.Random) -> dict[str, Any]:
    started = time.perf_counter()
    for index in range(workload.STUDENTS):
        reply = stub.IngestFile(workload.course_file(index), timeout=FILL_TIMEOUT_S)
        if reply.rejected:
            raise RuntimeError(f"course concepts refused: {reply.rejected}")
    files_s = time.perf_counter() - started
    chains = workload.chains(settings.episodes_per_student, rng)
    started = time.perf_counter()
    # One call per chain: a call takes a bounded number of items, and a chat service imports
    # one student's history at a time.
    for chain in chains:
        ingested = stub.IngestEpisodes(ingest_messages(chain), timeout=FILL_TIMEOUT_S)
        if ingested.inserted != len(chain):
            raise RuntimeError(f"{ingested.rejected} of {len(chain)} episodes refused")
    ingest_s = time.perf_counter() - started
    episodes = sum(len(chain) for chain in chains)
    return {
        "students": workload.STUDENTS,
        "episodes_per_student": settings.episodes_per_student,
        "episodes": episodes,
        "course_concepts_per_student": workload.COURSE_CONCEPTS,
        "files_seconds": round(files_s, 2),
        "ingest_seconds": round(ingest_s, 2),
        "ingest_episodes_per_s": round(episodes / ingest_s, 1),
    }


def sample(stub: pb_grpc.MemoryStub, requests: Sequence[pb.BuildBlockRequest]) -> dict[str, Any]:
    """What FULL blocks hold (how many of the sample have each section) and the server's stage
    timings, one call at a time."""
    sections: Counter[str] = Counter()
    stages: dict[str, list[float]] = defaultdict(list)
    tokens, latencies = [], []
    for request in requests:
        started = time.perf_counter()
        block = stub.BuildBlock(request, timeout=CALL_TIMEOUT_S)
        latencies.append((time.perf_counter() - started) * 1000)
        # A title may end in figures, "SUBJECT MAP (58 concepts; ...)": keep its name.
        sections.update({s.title.split(" (")[0] for s in block.sections})
        tokens.append(block.tokens_used)
        for timing in block.timings:
            stages[timing.stage].append(timing.ms)
    return {
        "blocks": len(requests),
        "blocks_with_section": dict(sections.most_common()),
        "median_tokens_used": statistics.median(tokens),
        "median_ms": round(statistics.median(latencies), 2),
        "server_stage_median_ms": {k: round(statistics.median(v), 3) for k, v in stages.items()},
    }


def measure(
    name: str, loads: Sequence[_ghz.Load], server: ServerProcess, protoset: Path, work: Path
) -> dict[str, Any]:
    """Runs the loads side by side; the server's CPU time is read around all of them."""
    pid = server.proc.pid
    print(f"load: {name} ...", file=sys.stderr)
    ghz_cpu = _children_cpu_seconds()
    busy = machine_busy_seconds()
    by_process = {member: cpu_seconds(member) for member in tree_pids(pid)}
    server_cpu = sum(by_process.values())
    running = [
        _ghz.Running(load, protoset, server.target, work / f"report-{i}.json")
        for i, load in enumerate(loads)
    ]
    rpcs = [r.finish() for r in running]
    used = {member: cpu_seconds(member) - before for member, before in by_process.items()}
    server_cpu = sum(used.values())
    ghz_cpu = _children_cpu_seconds() - ghz_cpu
    busy = machine_busy_seconds() - busy
    calls = sum(r["calls"] for r in rpcs)
    return {
        "name": name,
        "callers": sum(load.callers for load in loads),
        "rpcs": rpcs,
        "calls": calls,
        # Callers are split, not calls: each RPC's share of the calls follows from its latency.
        "share_of_calls": {r["rpc"]: round(r["calls"] / calls, 3) if calls else None for r in rpcs},
        "server_cpu_s": round(server_cpu, 2),
        "server_cpu_ms_per_call": round(1000 * server_cpu / calls, 2) if calls else None,
        # Each server process's share (with workers: the supervisor first, then each worker).
        "server_cpu_s_by_process": [round(v, 2) for v in used.values()],
        "ghz_cpu_s": round(ghz_cpu, 2),
        # The machine's cores are shared: CPU time everything else used during the run (other
        # work on the machine, and this process), against seconds x cores available.
        "other_cpu_s": round(max(busy - server_cpu - ghz_cpu, 0.0), 2),
        "machine_cpu_s": round(max(r["seconds"] for r in rpcs) * CORES, 2),
        **tree_memory_mib(pid),
    }


def warm_workers(target: str, requests: Sequence[pb.BuildBlockRequest], workers: int) -> None:
    """Loads every chain in every worker before the runs, as `sample` does for the one that
    answers the bench's own channel: a block per request through each of several connections."""
    for _ in range(CONNECTIONS_PER_WORKER * workers):
        options = [("grpc.use_local_subchannel_pool", 1)]
        with grpc.insecure_channel(target, options=options) as channel:
            stub = pb_grpc.MemoryStub(channel)
            for request in requests:
                stub.BuildBlock(request, timeout=FILL_TIMEOUT_S)


def _children_cpu_seconds() -> float:
    """CPU time of this process's finished children: the ghz processes (the server, still
    running, is not counted until it exits)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(settings: Settings) -> dict[str, Any]:
    rng = random.Random(SEED)
    started = time.perf_counter()
    _ghz.install()
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        work = Path(tmp)
        protoset = _ghz.build_protoset(work / "memory.protoset")
        blocks = workload.block_requests(rng)
        block_data = _ghz.write_data(work / "blocks.json", list(blocks))
        append_data = _ghz.write_data(work / "appends.json", list(workload.append_requests(rng)))
        with fresh_server_process(settings.workers) as (server, channel):
            stub = pb_grpc.MemoryStub(channel)
            filled = fill(stub, settings, rng)
            chains = [(workload.student_id(i), workload.SUBJECT) for i in range(workload.STUDENTS)]
            filled["settle_seconds"] = settle(server, stub, chains, timeout_s=FILL_TIMEOUT_S)
            filled.update(tree_memory_mib(server.proc.pid))
            sampled = sample(stub, blocks[: settings.sample_blocks])
            if settings.workers > 1:
                one_per_student = {r.student_id: r for r in blocks}
                warm_workers(server.target, list(one_per_student.values()), settings.workers)

            def reads(callers: int) -> _ghz.Load:
                return _ghz.Load(
                    "BuildBlock",
                    callers,
                    connections(callers, settings.workers),
                    settings.run_seconds,
                    block_data,
                    CALL_TIMEOUT_S,
                )

            appenders = round(MIXED_CALLERS * APPEND_SHARE)
            appends = _ghz.Load(
                "AppendEpisode",
                appenders,
                connections(appenders, settings.workers),
                settings.run_seconds,
                append_data,
                CALL_TIMEOUT_S,
            )
            runs = [
                measure(f"BuildBlock, c={c}", [reads(c)], server, protoset, work)
                for c in READ_CALLERS
            ]
            runs.append(
                measure(
                    f"mixed, c={MIXED_CALLERS}",
                    [appends, reads(MIXED_CALLERS - appenders)],
                    server,
                    protoset,
                    work,
                )
            )
    return {
        "benchmark": NAME,
        **run_metadata(),
        "settings": {
            **asdict(settings),
            "budget_tokens": BUDGET,
            "block_mode": "FULL",
            "call_timeout_s": CALL_TIMEOUT_S,
            "callers_per_connection": CALLERS_PER_CONNECTION,
            "connections_per_worker": CONNECTIONS_PER_WORKER,
            "mixed_append_share_of_callers": APPEND_SHARE,
            "ghz": _ghz.pinned_version(),
            "ghz_duration_stop": _ghz.DURATION_STOP,
        },
        "fill": filled,
        "sample": sampled,
        "runs": runs,
        "targets": targets(runs),
        "seconds": round(time.perf_counter() - started, 1),
    }


def _rpc(run: dict[str, Any], method: str) -> dict[str, Any]:
    found: dict[str, Any] = next(r for r in run["rpcs"] if r["rpc"] == method)
    return found


def targets(runs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The issue's targets against this run's figures."""
    at_64 = next(r for r in runs if r["callers"] == READ_CALLERS[-1] and len(r["rpcs"]) == 1)
    mixed = runs[-1]
    blocks = _rpc(at_64, "BuildBlock")
    rows = [
        ("BuildBlock/s at 64 callers", blocks["ok_per_s"], TARGET_BLOCKS_PER_S, ">="),
        ("BuildBlock p99 ms at 64 callers", blocks["p99_ms"], TARGET_BLOCK_P99_MS, "<="),
        ("server CPU ms per block at 64 callers", at_64["server_cpu_ms_per_call"],
         TARGET_CPU_MS_PER_BLOCK, "<="),
        ("AppendEpisode p99 ms, mixed run", _rpc(mixed, "AppendEpisode")["p99_ms"],
         TARGET_APPEND_P99_MS, "<="),
    ]  # fmt: skip
    out = []
    for what, measured, target, sense in rows:
        met = measured is not None and (measured >= target if sense == ">=" else measured <= target)
        out.append(
            {"what": what, "measured": measured, "target": f"{sense} {target:g}", "met": met}
        )
    return out


def _errors(rpc: dict[str, Any]) -> str:
    return ", ".join(f"{s} {n}" for s, n in rpc["errors_by_status"].items()) or "none"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def table(result: dict[str, Any]) -> list[tuple[str, str]]:
    f = result["fill"]
    rows = [
        ("git", result["git_rev"]),
        ("host / cpus", f"{result['host']} / {result['cpu_count']}"),
        (
            "chains",
            f"{f['students']} students x {f['episodes_per_student']} episodes, ingested at "
            f"{f['ingest_episodes_per_s']:.0f}/s; RSS {f['rss_mib']:.0f} MiB after the fill",
        ),
        ("FULL block sections (of the sample)", str(result["sample"]["blocks_with_section"])),
    ]
    for r in result["runs"]:
        rows.append(
            (
                r["name"],
                f"server CPU {r['server_cpu_ms_per_call']} ms/call, RSS {r['rss_mib']:.0f} MiB; "
                f"CPU s: server {r['server_cpu_s']}, ghz {r['ghz_cpu_s']}, other "
                f"{r['other_cpu_s']} of {r['machine_cpu_s']}",
            )
        )
        for rpc in r["rpcs"]:
            share = r["share_of_calls"][rpc["rpc"]]
            rows.append(
                (
                    f"  {rpc['rpc']} x{rpc['callers']} ({share:.0%} of calls)",
                    f"{rpc['ok_per_s']:.0f}/s  p50 {_ms(rpc['p50_ms'])}  p95 {_ms(rpc['p95_ms'])}"
                    f"  p99 {_ms(rpc['p99_ms'])} ms  ({rpc['ok']} ok; errors: {_errors(rpc)})",
                )
            )
    for t in result["targets"]:
        rows.append((f"target: {t['what']}", f"{t['measured']} ({t['target']}): "
                     + ("met" if t["met"] else "missed")))  # fmt: skip
    return rows


def markdown(result: dict[str, Any]) -> str:
    s, f = result["settings"], result["fill"]
    lines = [
        "# Load: many callers at once (ghz)",
        "",
        f"Run {result['timestamp']} at commit `{result['git_rev']}` on {result['host']} "
        f"({result['cpu_count']} x {result['cpu']}), Python {result['python']}; ghz {s['ghz']} "
        f"on the same machine; {result['seconds']} s in all.",
        "",
        f"A fresh server ({s['workers']} process{'es' if s['workers'] > 1 else ''} on one "
        f"port) with {f['students']} students x {f['episodes_per_student']} episodes "
        f"({f['episodes']} in all; a course file of {f['course_concepts_per_student']} concepts "
        f"each for the map, checks for the beliefs). FULL BuildBlock, budget {s['budget_tokens']} "
        f"tokens, mixed queries over every student. Each run: every caller calls back to back "
        f"for {s['run_seconds']:g} s, one connection per {s['callers_per_connection']} callers"
        + (
            f" (at least {s['connections_per_worker']} per worker, the 1-caller run one), "
            if s["workers"] > 1
            else ", "
        )
        + f"call timeout {s['call_timeout_s']:g} s. The mixed run is two ghz processes side by "
        f"side, {s['mixed_append_share_of_callers']:.0%} of the callers appending. Latency "
        f"percentiles are of the successful calls; server CPU is user + system time of the "
        f"server's processes over the run divided by all its calls.",
        "",
        "| run | RPC | callers | share of calls | calls/s (ok) | p50 ms | p95 ms | p99 ms "
        "| errors | server CPU ms/call | server RSS MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        for rpc in r["rpcs"]:
            share = r["share_of_calls"][rpc["rpc"]]
            lines.append(
                f"| {r['name']} | {rpc['rpc']} | {rpc['callers']} | {share:.0%} | "
                f"{rpc['ok_per_s']:.0f} | "
                f"{_ms(rpc['p50_ms'])} | {_ms(rpc['p95_ms'])} | {_ms(rpc['p99_ms'])} | "
                f"{_errors(rpc)} | {r['server_cpu_ms_per_call']} | {r['rss_mib']:.0f} |"
            )
    lines += [
        "",
        "Where the machine's CPU went during each run (seconds; the cores are shared with "
        "whatever else runs on this machine, counted as other):",
        "",
        "| run | server | ghz | other | available (seconds x cores) |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {r['name']} | {r['server_cpu_s']} | {r['ghz_cpu_s']} | {r['other_cpu_s']} | "
        f"{r['machine_cpu_s']} |"
        for r in result["runs"]
    ]
    lines += [
        "",
        "## Targets (issue 14)",
        "",
        "| what | measured | target | |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {t['what']} | {t['measured']} | {t['target']} | {'met' if t['met'] else 'missed'} |"
        for t in result["targets"]
    ]
    sampled = result["sample"]
    stages = ", ".join(f"{k} {v:.2f}" for k, v in sampled["server_stage_median_ms"].items())
    lines += [
        "",
        f"Before the load, {sampled['blocks']} blocks one at a time: median {sampled['median_ms']} "
        f"ms, {sampled['median_tokens_used']:.0f} tokens; server stage medians (ms): {stages}. "
        f"Blocks with each section: {sampled['blocks_with_section']}.",
        "",
        f"Server RSS after the fill: {f['rss_mib']:.0f} MiB (peak {f['peak_rss_mib']:.0f}).",
        "",
    ]
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.bench_load", description=__doc__)
    p.add_argument(
        "--quick",
        action="store_true",
        help=f"{QUICK.episodes_per_student} episodes per student, {QUICK.run_seconds:g} s per "
        f"run, written as {QUICK_NAME}",
    )
    p.add_argument(
        "--episodes-per-student",
        type=int,
        default=None,
        help=f"chain length (default {FULL.episodes_per_student}; results then named "
        f"{NAME}-<length>)",
    )
    p.add_argument(
        "--workers", type=int, default=1, help="server processes (serve --workers; default 1)"
    )
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    settings = QUICK if args.quick else FULL
    name = QUICK_NAME if args.quick else NAME
    if args.episodes_per_student is not None:
        settings = replace(settings, episodes_per_student=args.episodes_per_student)
        name = f"{name}-{args.episodes_per_student}"
    if args.workers > 1:
        settings = replace(settings, workers=args.workers)
        name = f"{name}-workers{args.workers}"
    result = run(settings)
    print_table(table(result))
    write_results(name, result, args.out_dir)
    (args.out_dir / f"{name}.md").write_text(markdown(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
