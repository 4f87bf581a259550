"""Start-up with a 100k-episode chain on disk (issue 14): seconds until the health service says
SERVING, the first BuildBlock on the cold chain, and the calls after it.

The data directory holds one chain of 100,000 episodes (bench/_fill.py: LoCoMo turns, random
unit vectors). Each run starts `tutor-memory serve` on it, polls the standard gRPC health service
from the moment the process is spawned, then calls BuildBlock on the chain: the first call loads
the chain (from its snapshot file, or from the store when there is none), the next ones measure
the warm path. Two cases, RUNS runs each: "store" (snapshot files deleted first: the chain is
read from SQLite; the last of these runs waits until the chain's index has moved to an HNSW graph
in the background, and its graceful stop writes the snapshot) and "snapshot" (that file, which
the server starts reading while it loads its model). Then the load from the snapshot alone, in
process, for a call that comes before the warm-up has read its chain.

The package's bytecode is compiled first, as `make serve` does (with PYTHONDONTWRITEBYTECODE
set, as on this machine, every start would otherwise compile every module again).

Run from the repository root: `.venv/bin/python -m bench.bench_startup`. Writes
bench/results/startup.json and bench/results/startup.md.
"""

from __future__ import annotations

import compileall
import os
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tests.helpers.server_process import ServerProcess

import tutor_memory
from bench._fill import SUBJECT, chain, filled, student
from bench._meta import RESULTS_DIR, print_table, run_metadata, write_results
from bench._proc import memory_mib
from bench._server import free_port, wait_for_graph
from tutor_memory.app.config import SNAPSHOT_DIR_NAME, ServerConfig
from tutor_memory.app.root import build_services
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

DATA_DIR = Path(os.environ.get("TM_BENCH_DIR", "/tmp/tm-bench")) / "one-100k"
EPISODES = 100_000
RUNS = 3
WARM_CALLS = 30
# Issue 14's targets.
TARGET_SERVING_S = 2.0
TARGET_FIRST_BLOCK_MS = 200.0
HEALTH_POLL_SECONDS = 0.01
QUERIES = [
    "what did we say about the adoption agency?",
    "when did she go to the support group?",
    "painting a sunset last summer",
    "how is the new job going?",
]


def _block(stub: pb_grpc.MemoryStub, query: str) -> tuple[float, bool]:
    """Milliseconds of one BuildBlock on the chain, and whether the server dropped it at its
    hard cap (a load longer than the cap)."""
    started = time.perf_counter()
    reply = stub.BuildBlock(
        pb.BuildBlockRequest(
            student_id=student(0), subject_id=SUBJECT, query=query, budget_tokens=1500
        ),
        timeout=60,
    )
    return (time.perf_counter() - started) * 1000, reply.dropped


def one_run(case: str, *, await_graph: bool = False) -> dict[str, Any]:
    if case == "store":
        shutil.rmtree(DATA_DIR / SNAPSHOT_DIR_NAME, ignore_errors=True)
    port = free_port()
    spawned = time.perf_counter()
    server = ServerProcess(DATA_DIR, None, "--listen", f"127.0.0.1:{port}")
    target = f"127.0.0.1:{port}"
    try:
        with grpc.insecure_channel(target) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while True:
                try:
                    status = health.Check(health_pb2.HealthCheckRequest(service=""), timeout=1)
                    if status.status == health_pb2.HealthCheckResponse.SERVING:
                        break
                except grpc.RpcError:
                    pass
                if server.proc.poll() is not None:
                    raise RuntimeError("the server exited:\n" + "".join(server.lines))
                time.sleep(HEALTH_POLL_SECONDS)
            serving_s = time.perf_counter() - spawned
            rss_serving = memory_mib(server.proc.pid)["rss_mib"]
            stub = pb_grpc.MemoryStub(channel)
            first_ms, first_dropped = _block(stub, QUERIES[0])
            dropped = first_dropped
            while dropped:  # the load goes on after a dropped block: ask until it is done
                _, dropped = _block(stub, QUERIES[0])
            first_full_s = time.perf_counter() - spawned - serving_s
            rss_loaded = memory_mib(server.proc.pid)["rss_mib"]
            warm = [_block(stub, QUERIES[i % len(QUERIES)])[0] for i in range(WARM_CALLS)]
        if case == "store" and await_graph:
            # The snapshot the stop writes holds whichever index the chain has: the snapshot
            # runs then read the graph.
            wait_for_graph(server)
    finally:
        assert server.terminate(timeout=300) == 0
    return {
        "case": case,
        "serving_s": round(serving_s, 3),
        "first_block_ms": round(first_ms, 1),
        "first_block_dropped": first_dropped,
        "first_full_block_s_after_serving": round(first_full_s, 2),
        "warm_p50_ms": round(statistics.median(warm), 2),
        "warm_p95_ms": round(float(np.percentile(warm, 95)), 2),
        "rss_mib_serving": rss_serving,
        "rss_mib_chain_loaded": rss_loaded,
    }


def load_from_snapshot_ms() -> list[float]:
    """Milliseconds of loading the chain from its snapshot file in process, with no warm-up:
    what a call on a chain with a snapshot that the warm-up has not reached yet waits for before
    its block is built (the server runs above find the chain loaded, or being loaded, by then)."""
    loads = []
    for _ in range(RUNS):
        services = build_services(ServerConfig(data_dir=DATA_DIR))
        try:
            started = time.perf_counter()
            services.resident.ensure(chain(0))
            loads.append(round((time.perf_counter() - started) * 1000, 1))
        finally:
            services.close()
    return loads


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Start-up with a 100k-episode chain on disk (issue 14)",
        "",
        f"Run {result['timestamp']} at commit `{result['git_rev']}` on {result['host']} "
        f"({result['cpu_count']} x {result['cpu']}); load average at the start "
        f"{result['load_average_at_start']}.",
        "",
        f"One chain of {EPISODES} episodes (LoCoMo turns, random unit vectors). Serving: from "
        "spawning the process to the health service answering SERVING. First block: the first "
        "BuildBlock on the chain, which loads it (from SQLite in the store case, from its "
        f"snapshot file otherwise). Warm: the {WARM_CALLS} calls after it.",
        "",
        "| case | run | SERVING s | first block ms | first block dropped at the cap | first full "
        "block s after SERVING | warm p50 / p95 ms | RSS MiB serving / chain loaded |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        lines.append(
            f"| {r['case']} | {r['run']} | {r['serving_s']:.2f} | {r['first_block_ms']:.0f} | "
            f"{'yes' if r['first_block_dropped'] else 'no'} | "
            f"{r['first_full_block_s_after_serving']} | {r['warm_p50_ms']} / {r['warm_p95_ms']} | "
            f"{r['rss_mib_serving']} / "
            f"{r['rss_mib_chain_loaded']} |"
        )
    lines += [
        "",
        "A chain with a snapshot that the warm-up has not reached when its first call comes "
        "(many chains, or a call early in the start) waits for its load: loading this chain from "
        f"its snapshot in process, without a server, took {result['load_from_snapshot_ms']} ms "
        "(one value per run).",
        "",
        "| case | median SERVING s | median first block ms | targets |",
        "|---|---|---|---|",
    ]
    for case, m in result["medians"].items():
        serving = "met" if m["serving_s"] <= TARGET_SERVING_S else "missed"
        first = "met" if m["first_block_ms"] <= TARGET_FIRST_BLOCK_MS else "missed"
        lines.append(
            f"| {case} | {m['serving_s']} | {m['first_block_ms']} | SERVING <= "
            f"{TARGET_SERVING_S:.0f} s: {serving}; first block <= "
            f"{TARGET_FIRST_BLOCK_MS:.0f} ms: {first} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    filled(DATA_DIR, 1, EPISODES)
    compileall.compile_dir(Path(tutor_memory.__file__).parent, quiet=1)
    result: dict[str, Any] = {
        "benchmark": "startup",
        **run_metadata(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "episodes": EPISODES,
        "runs": [],
    }
    for case in ("store", "snapshot"):
        for run in range(1, RUNS + 1):
            # The last store run leaves the snapshot the snapshot runs read, once its graph is
            # built.
            graph = case == "store" and run == RUNS
            result["runs"].append({"run": run, **one_run(case, await_graph=graph)})
    result["load_from_snapshot_ms"] = load_from_snapshot_ms()
    result["medians"] = {
        case: {
            key: statistics.median(r[key] for r in result["runs"] if r["case"] == case)
            for key in (
                "serving_s",
                "first_block_ms",
                "first_full_block_s_after_serving",
                "warm_p50_ms",
                "rss_mib_chain_loaded",
            )
        }
        for case in ("store", "snapshot")
    }
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print_table(
        [("git", result["git_rev"])]
        + [(f"{c} {k}", str(v)) for c, m in result["medians"].items() for k, v in m.items()]
    )
    write_results("startup", result)
    (RESULTS_DIR / "startup.md").write_text(markdown(result), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
