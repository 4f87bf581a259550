"""BuildBlock latency end to end over gRPC on loopback, at 1k, 10k and 100k episodes in one chain.

For each size a fresh server (child process, embedded SQLite, real embedder) is filled through
IngestEpisodes with a seeded synthetic history of one student over twelve months (questions,
answers, checks right and wrong, taught notes, 200 concepts, five languages), then QUERIES
BuildBlock calls in FULL mode are timed one after another from this process: ordinary subject
questions, month questions, record questions, an empty query. Reports p50/p90/p95/p99, the
server's own stage timings (medians), and writes bench/results/block.json and block.md.

The QUERIES calls are made PASSES times on the same server; each figure is the median over the
passes of that pass's figure (this machine is shared and noisy: one pass can move 30 %).

Run: `.venv/bin/python -m bench.bench_block` (add sizes, e.g. `1000 10000`, to run fewer).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any

import numpy as np

from bench._meta import RESULTS_DIR, print_table, run_metadata, write_results
from bench._proc import cpu_seconds, machine_busy_seconds
from bench._server import fresh_server_process, settle
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

SIZES = (1_000, 10_000, 100_000)
QUERIES = 300
PASSES = 3
WARMUP = 20
BUDGET = 1_500
SEED = 20261130
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
START = datetime(2025, 11, 20, tzinfo=UTC)
# Issue 14's targets for this machine class, p95 in ms.
TARGET_P95_MS = {10_000: 6.0, 100_000: 8.0}

CONCEPTS = [
    f"{stem} {suffix}"
    for stem in (
        "osmosis",
        "mitosis",
        "meiosis",
        "photosynthesis",
        "respiration",
        "enzyme",
        "protein",
        "membrane",
        "nucleus",
        "ribosome",
        "chloroplast",
        "genome",
        "allele",
        "mutation",
        "ecosystem",
        "predator",
        "fraction",
        "derivative",
        "integral",
        "vector",
        "matrix",
        "prime",
        "equation",
        "revolution",
        "empire",
        "treaty",
        "parliament",
        "migration",
        "climate",
        "volcano",
        "glacier",
        "river",
        "atom",
        "molecule",
        "reaction",
        "acid",
        "base",
        "electron",
        "photon",
        "gravity",
    )
    for suffix in ("basics", "structure", "examples", "history", "exercises")
]
QUESTION_TEMPLATES = [
    "What is {c}?",
    "Can you explain {c} again?",
    "Cos'è {c}?",
    "¿Qué es {c}?",
    "Qu'est-ce que {c} ?",
    "ما هو {c}؟",
    "Why does {c} matter for the exam?",
]
QUERY_TEMPLATES = [
    "Explain {c} to me",
    "what did we cover in {m}?",
    "What did I get wrong so far?",
    "Can you remind me about {c}?",
    "cosa abbiamo studiato a {mi}?",
    "",
    "ماذا أخطأت؟",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October"]  # fmt: skip
MONTHS_IT = ["gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto"]


def history(n: int, rng: random.Random) -> list[pb.NewEpisode]:
    span = (NOW - START).total_seconds()
    times = sorted(int(START.timestamp() + rng.random() * span) for _ in range(n))
    out = []
    for i, t in enumerate(times):
        concept = rng.choice(CONCEPTS)
        roll = rng.random()
        ep = pb.NewEpisode(student_id="bench", subject_id="science", client_key=f"e{i}")
        ep.occurred_at.seconds = t
        ep.concepts.append(concept)
        if roll < 0.45:
            ep.kind = pb.EPISODE_KIND_QUESTION
            ep.summary = rng.choice(QUESTION_TEMPLATES).format(c=concept)
        elif roll < 0.85:
            ep.kind = pb.EPISODE_KIND_ANSWER
            ep.summary = f"Explained {concept} with an example and a short exercise"
        elif roll < 0.97:
            ep.kind = pb.EPISODE_KIND_CHECK
            ep.check.outcome = rng.choice([pb.CHECK_OUTCOME_RIGHT, pb.CHECK_OUTCOME_WRONG])
            ep.check.topic = concept
            ep.summary = f"Check on {concept}"
        else:
            ep.kind = pb.EPISODE_KIND_TAUGHT
            ep.summary = f"In our class we call {concept} the key idea of the unit"
        out.append(ep)
    return out


def queries(rng: random.Random) -> list[str]:
    return [
        rng.choice(QUERY_TEMPLATES).format(
            c=rng.choice(CONCEPTS), m=rng.choice(MONTHS), mi=rng.choice(MONTHS_IT)
        )
        for _ in range(QUERIES + WARMUP)
    ]


def run_size(n: int) -> dict[str, Any]:
    rng = random.Random(SEED + n)
    episodes = history(n, rng)
    asked = queries(rng)
    with fresh_server_process() as (server, channel):
        stub = pb_grpc.MemoryStub(channel)
        started = time.perf_counter()
        reply = stub.IngestEpisodes(ingest_messages(episodes), timeout=1200)
        ingest_s = time.perf_counter() - started
        assert reply.inserted == n, (reply.inserted, reply.rejected)
        chains = {(e.student_id, e.subject_id) for e in episodes}
        settle_s = settle(server, stub, chains, timeout_s=1200)
        passes: list[list[float]] = []
        stages: dict[str, list[float]] = defaultdict(list)
        memories: list[int] = []
        tokens: list[int] = []
        started, busy = time.perf_counter(), machine_busy_seconds()
        server_cpu, own_cpu = cpu_seconds(server.proc.pid), time.process_time()
        for _ in range(PASSES):
            latencies: list[float] = []
            passes.append(latencies)
            call_all(stub, asked, latencies, stages, memories, tokens)
        server_cpu = cpu_seconds(server.proc.pid) - server_cpu
        ours = server_cpu + time.process_time() - own_cpu
        # What else ran on the machine meanwhile (other work on a shared machine), as a share
        # of all its cores: latency here depends on it.
        others = (machine_busy_seconds() - busy - ours) / (
            (time.perf_counter() - started) * (os.cpu_count() or 1)
        )
    p = {
        q: round(statistics.median(float(np.percentile(lat, q)) for lat in passes), 3)
        for q in (50, 90, 95, 99)
    }
    return {
        "episodes": n,
        "ingest_episodes_per_s": round(n / ingest_s, 1),
        # Waited after the import for its embeddings and background index work to finish.
        "settle_seconds": settle_s,
        "passes": PASSES,
        "calls": sum(len(lat) for lat in passes),
        "p50_ms": p[50],
        "p90_ms": p[90],
        "p95_ms": p[95],
        "p99_ms": p[99],
        "p95_ms_of_each_pass": [round(float(np.percentile(lat, 95)), 3) for lat in passes],
        "target_p95_ms": TARGET_P95_MS.get(n),
        "other_work_share_of_machine": round(max(others, 0.0), 2),
        # The server's CPU time (all its threads) per call, warm-up calls included: unlike
        # latency, it hardly depends on what else runs on the machine.
        "server_cpu_ms_per_call": round(1000 * server_cpu / (PASSES * len(asked)), 3),
        "median_memories": statistics.median(memories),
        "median_tokens_used": statistics.median(tokens),
        "server_stage_median_ms": {k: round(statistics.median(v), 3) for k, v in stages.items()},
    }


def call_all(
    stub: pb_grpc.MemoryStub,
    asked: list[str],
    latencies: list[float],
    stages: dict[str, list[float]],
    memories: list[int],
    tokens: list[int],
) -> None:
    """One pass: every query in turn, the first WARMUP not recorded."""
    for i, query in enumerate(asked):
        request = pb.BuildBlockRequest(
            student_id="bench",
            subject_id="science",
            query=query,
            budget_tokens=BUDGET,
            time_zone="Europe/Rome",
        )
        request.now.seconds = int(NOW.timestamp())
        t = time.perf_counter()
        block = stub.BuildBlock(request, timeout=10)
        elapsed = (time.perf_counter() - t) * 1000
        if i < WARMUP:
            continue
        latencies.append(elapsed)
        memories.append(len(block.memories))
        tokens.append(block.tokens_used)
        for timing in block.timings:
            stages[timing.stage].append(timing.ms)


def table(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [
        ("git", result["git_rev"]),
        ("host / cpus", f"{result['host']} / {result['cpu_count']}"),
    ]
    for r in result["sizes"]:
        target = f" (target {r['target_p95_ms']})" if r["target_p95_ms"] else ""
        rows.append(
            (
                f"{r['episodes']:>7} episodes, {r['calls']} calls",
                f"p50 {r['p50_ms']:.2f}  p90 {r['p90_ms']:.2f}  p95 {r['p95_ms']:.2f}{target}  "
                f"p99 {r['p99_ms']:.2f} ms; server CPU {r['server_cpu_ms_per_call']:.2f} ms/call; "
                f"machine busy with other work "
                f"{r['other_work_share_of_machine']:.0%}",
            )
        )
        stages = ", ".join(f"{k} {v:.2f}" for k, v in r["server_stage_median_ms"].items())
        rows.append(("  server stages (median ms)", stages))
        rows.append(
            (
                "  block",
                f"{r['median_memories']:.0f} memories, {r['median_tokens_used']:.0f} of "
                f"{BUDGET} tokens",
            )
        )
    return rows


def main(argv: list[str]) -> int:
    sizes = tuple(int(a) for a in argv) or SIZES
    result = {
        "benchmark": "block",
        **run_metadata(),
        "budget_tokens": BUDGET,
        "sizes": [run_size(n) for n in sizes],
    }
    print_table(table(result))
    write_results("block", result)
    (RESULTS_DIR / "block.md").write_text(markdown(result), encoding="utf-8")
    return 0


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# BuildBlock end to end over gRPC (bench/bench_block.py)",
        "",
        f"Commit `{result['git_rev']}`, {result['timestamp']}, {result['cpu']} "
        f"({result['cpu_count']} CPUs). FULL mode, {result['budget_tokens']}-token budget, "
        f"{QUERIES} sequential calls per pass after {WARMUP} warm-up calls, {PASSES} passes on "
        "one server; each percentile is the median over the passes. Milliseconds.",
        "",
        "| episodes | p50 | p90 | p95 | p99 | target p95 | p95 of each pass | server CPU per call "
        "| memories | tokens | machine busy with other work |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["sizes"]:
        target = f"{r['target_p95_ms']:g}" if r["target_p95_ms"] else ""
        each = " / ".join(f"{v:.2f}" for v in r["p95_ms_of_each_pass"])
        lines.append(
            f"| {r['episodes']:,} | {r['p50_ms']:.2f} | {r['p90_ms']:.2f} | {r['p95_ms']:.2f} | "
            f"{r['p99_ms']:.2f} | {target} | {each} | {r['server_cpu_ms_per_call']:.2f} | "
            f"{r['median_memories']:.0f} | "
            f"{r['median_tokens_used']:.0f} | {r['other_work_share_of_machine']:.0%} |"
        )
    lines += ["", "Server stage medians (ms, from the block's own timings):", ""]
    for r in result["sizes"]:
        stages = ", ".join(f"{k} {v:.2f}" for k, v in r["server_stage_median_ms"].items())
        lines.append(f"- {r['episodes']:,} episodes: {stages}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
