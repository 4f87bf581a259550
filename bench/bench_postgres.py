"""SQLite and PostgreSQL side by side, one node and two (issue 15): batch ingest throughput and
BuildBlock latency through the real gRPC API, plus the store alone (appends without embedding,
and the head check every block pays with several nodes), to say where the time goes.

PostgreSQL runs as a throwaway cluster with its default, durable settings (fsync on,
synchronous_commit on), on the same machine as the servers, like SQLite's file with
synchronous=FULL. Servers are child processes (`tutor-memory serve`), one per node; with two
nodes they share the database and the signing key.

Configurations:
- sqlite: one server on a SQLite file;
- postgres-1: one server on PostgreSQL;
- postgres-2: two servers on one PostgreSQL. Ingest: two clients at once, one per node, each
  filling its own students. Blocks: the calls alternate between the nodes while a writer appends
  to the same chain through the first node between calls, so the second node's head check finds
  new episodes and loads them (the cost of read-your-writes).

The rounds interleave the configurations and every figure is the median of its rounds, since the
machine this runs on is shared with other work.

Run from the repository root: `.venv/bin/python -m bench.bench_postgres` (`make bench` runs it).
Prints a table and writes bench/results/postgres.json and postgres.md.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from tests.helpers.postgres import PostgresCluster
from tests.helpers.server_process import ServerProcess

from bench._meta import RESULTS_DIR, print_table, run_metadata, write_results
from bench._server import settle
from bench.bench_block import NOW, history, queries
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode, validate_new_episode
from tutor_memory.domain.recall.facts import recall_facts
from tutor_memory.domain.sealing import KEY_BYTES, MasterKey
from tutor_memory.models.tokenizers import load_counter
from tutor_memory.store.postgres.store import PostgresStore
from tutor_memory.store.protocols import ChangeReads, PreparedEpisode, Store
from tutor_memory.store.sqlite.store import SqliteStore
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

SEED = 15
# Episodes one ingest run sends (split between the clients with two nodes).
INGEST_EPISODES = 4_000
# The chain BuildBlock reads, and the calls timed on it (after WARMUP).
BLOCK_EPISODES = 5_000
BLOCK_CALLS = 200
WARMUP = 20
BUDGET = 1_500
# With two nodes: an episode is appended through node A before every APPEND_EVERY-th block.
APPEND_EVERY = 4
# The store alone: episodes appended per configuration, in batches of STORE_BATCH.
STORE_EPISODES = 10_000
STORE_BATCH = 256
DIM = 512
HEAD_CHECKS = 2_000
ROUNDS = 3
CONFIGURATIONS = (("sqlite", 1), ("postgres-1", 1), ("postgres-2", 2))

# The store alone seals every episode's words as a server does; a fresh key for each run.
BENCH_MASTER_KEY = MasterKey(os.urandom(KEY_BYTES))


# Short tutoring episodes: templates in five languages, filled with concept names.
_SHORT_TEMPLATES = [
    "What is {c} and why does it matter?",
    "Can you give me an example of {c}?",
    "Che cos'è {c} e a cosa serve?",
    "¿Me explicas otra vez qué es {c}?",
    "Peux-tu m'expliquer {c} avec un exemple ?",
    "ما هو {c} ولماذا هو مهم؟",
]
_CONCEPTS = [
    "osmosis", "mitosis", "photosynthesis", "the cell membrane", "fractions", "derivatives",
    "the French Revolution", "Newton's second law", "the water cycle", "past participles",
]  # fmt: skip


def short_episodes(n: int) -> list[pb.NewEpisode]:
    out = []
    for i in range(n):
        template = _SHORT_TEMPLATES[i % len(_SHORT_TEMPLATES)]
        text = template.format(c=_CONCEPTS[(i // len(_SHORT_TEMPLATES)) % len(_CONCEPTS)])
        out.append(
            pb.NewEpisode(
                student_id=f"student-{i % 10}",
                subject_id="biology",
                kind=pb.EPISODE_KIND_QUESTION,
                summary=text,
                client_key=f"short-{i}",
            )
        )
    return out


@contextmanager
def nodes(kind: str, count: int, url: str | None) -> Iterator[list[ServerProcess]]:
    with tempfile.TemporaryDirectory() as tmp:
        extra = ["--store", url] if url else []
        started = [ServerProcess(Path(tmp) / "data", None, *extra) for _ in range(count)]
        try:
            for server in started:
                server.wait_ready()
            yield started
        finally:
            for server in started:
                server.terminate()


def _stub(stack: ExitStack, server: ServerProcess) -> pb_grpc.MemoryStub:
    channel = stack.enter_context(grpc.insecure_channel(server.target))
    return pb_grpc.MemoryStub(channel)


def ingest_run(servers: list[ServerProcess]) -> dict[str, Any]:
    """Every client sends its share in one IngestEpisodes call, at once; throughput over the
    wall time until the last reply."""
    batch = short_episodes(INGEST_EPISODES)
    shares = [batch[i :: len(servers)] for i in range(len(servers))]
    for n, share in enumerate(shares):
        for ep in share:
            ep.student_id = f"{ep.student_id}-node{n}"
    inserted = [0] * len(servers)
    with ExitStack() as stack:
        stubs = [_stub(stack, s) for s in servers]

        def send(i: int) -> None:
            reply = stubs[i].IngestEpisodes(ingest_messages(shares[i]), timeout=1200)
            inserted[i] = reply.inserted

        threads = [threading.Thread(target=send, args=(i,)) for i in range(len(servers))]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - started
    assert sum(inserted) == INGEST_EPISODES, inserted
    return {"episodes": INGEST_EPISODES, "seconds": round(elapsed, 2),
            "episodes_per_s": round(INGEST_EPISODES / elapsed, 1)}  # fmt: skip


def block_run(servers: list[ServerProcess]) -> dict[str, Any]:
    rng = random.Random(SEED)
    episodes = history(BLOCK_EPISODES, rng)
    asked = queries(rng)[: BLOCK_CALLS + WARMUP]
    with ExitStack() as stack:
        stubs = [_stub(stack, s) for s in servers]
        reply = stubs[0].IngestEpisodes(ingest_messages(episodes), timeout=1200)
        assert reply.inserted == BLOCK_EPISODES
        for server, stub in zip(servers, stubs, strict=True):
            settle(server, stub, [("bench", "science")], timeout_s=1200)
        latencies: list[float] = []
        by_node: dict[int, list[float]] = defaultdict(list)
        stages: dict[str, list[float]] = defaultdict(list)
        appended = 0
        for i, query in enumerate(asked):
            node = i % len(servers)
            if len(servers) > 1 and i % APPEND_EVERY == 0:
                ep = pb.NewEpisode(
                    student_id="bench", subject_id="science", kind=pb.EPISODE_KIND_QUESTION,
                    summary=f"A new question about {query or 'the exam'} ({i})",
                    client_key=f"live-{i}",
                )  # fmt: skip
                ep.occurred_at.seconds = int(NOW.timestamp()) - 60
                stubs[0].AppendEpisode(pb.AppendEpisodeRequest(episode=ep), timeout=10)
                appended += 1
            request = pb.BuildBlockRequest(
                student_id="bench", subject_id="science", query=query, budget_tokens=BUDGET,
                time_zone="Europe/Rome",
            )  # fmt: skip
            request.now.seconds = int(NOW.timestamp())
            t = time.perf_counter()
            block = stubs[node].BuildBlock(request, timeout=10)
            elapsed = (time.perf_counter() - t) * 1000
            if i < WARMUP:
                continue
            latencies.append(elapsed)
            by_node[node].append(elapsed)
            for timing in block.timings:
                stages[timing.stage].append(timing.ms)
    return {
        "episodes": BLOCK_EPISODES,
        "calls": len(latencies),
        "appended_between_calls": appended,
        "p50_ms": round(float(np.percentile(latencies, 50)), 3),
        "p95_ms": round(float(np.percentile(latencies, 95)), 3),
        "p50_ms_by_node": {n: round(float(np.percentile(v, 50)), 3) for n, v in by_node.items()},
        "server_stage_median_ms": {k: round(statistics.median(v), 3) for k, v in stages.items()},
    }


def _prepared(rng: np.random.Generator, n: int, chains: int) -> list[PreparedEpisode]:
    texts = [ep.summary for ep in short_episodes(n)]
    out: list[NewEpisode] = []
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for i, text in enumerate(texts):
        ep = validate_new_episode(
            chain=ChainKey("bench", f"student-{i % chains}", "science"), kind=Kind.QUESTION,
            summary=text, text="", concepts=[], occurred_at_us=1_700_000_000_000_000 + i,
            evidence=[], check=None, quiz=None, client_key=f"k{i}",
            now_us=1_800_000_000_000_000, client_key_required=False,
        )  # fmt: skip
        out.append(ep)
    facts = recall_facts(out, load_counter(None))
    return [PreparedEpisode(ep, vectors[i], facts[i]) for i, ep in enumerate(out)]


def store_run(store: Store, chains: int) -> dict[str, Any]:
    """Appends without embedding (what the store costs per episode), then the head check."""
    items = _prepared(np.random.default_rng(SEED), STORE_EPISODES, chains)
    started = time.perf_counter()
    for i in range(0, len(items), STORE_BATCH):
        store.append(items[i : i + STORE_BATCH], model_id="bench", recorded_at_us=1)
    elapsed = time.perf_counter() - started
    reads: ChangeReads = store
    chain = ChainKey("bench", "student-0", "science")
    checks = []
    for _ in range(HEAD_CHECKS):
        t = time.perf_counter()
        reads.chain_head(chain)
        checks.append((time.perf_counter() - t) * 1000)
    return {
        "episodes": STORE_EPISODES,
        "chains": chains,
        "batch": STORE_BATCH,
        "episodes_per_s": round(STORE_EPISODES / elapsed, 1),
        "head_check_p50_ms": round(float(np.percentile(checks, 50)), 4),
    }


def _median_of(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """The median of every number over the rounds (nested dicts too), and the rounds."""

    def merge(values: list[Any]) -> Any:
        if isinstance(values[0], dict):
            keys = {k for v in values for k in v}
            return {k: merge([v[k] for v in values if k in v]) for k in sorted(keys, key=str)}
        if isinstance(values[0], int | float):
            return round(statistics.median(values), 4)
        return values[0]

    merged: dict[str, Any] = merge(rounds)
    merged["rounds"] = rounds
    return merged


def table(result: dict[str, Any]) -> list[tuple[str, str]]:
    rows = [
        ("git", result["git_rev"]),
        ("host / cpus", f"{result['host']} / {result['cpu_count']}"),
    ]
    for name, r in result["ingest"].items():
        rows.append((f"ingest {name}", f"{r['episodes_per_s']:,.0f} episodes/s ({r['seconds']} s)"))
    for name, r in result["blocks"].items():
        rows.append((f"block {name}", f"p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms"))
    for name, r in result["store"].items():
        rows.append(
            (f"store {name}", f"{r['episodes_per_s']:,.0f} appends/s, head check p50 "
             f"{r['head_check_p50_ms']} ms")
        )  # fmt: skip
    return rows


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# SQLite and PostgreSQL, one node and two (bench/bench_postgres.py)",
        "",
        f"Commit `{result['git_rev']}`, {result['host']} ({result['cpu']}, {result['cpu_count']} "
        f"CPUs), {result['timestamp']}. PostgreSQL 15 with default durable settings on the same "
        "machine; servers and clients share the machine's cores. Each figure is the median of "
        f"{ROUNDS} rounds that interleave the configurations (every round is in postgres.json). "
        "The machine was shared with other work: load average (1, 5, 15 min) at start "
        f"{result['load_average_at_start']}, at end {result['load_average_at_end']}.",
        "",
        "| configuration | ingest, episodes/s | BuildBlock p50 ms | BuildBlock p95 ms |",
        "|---|---|---|---|",
    ]
    for name in result["ingest"]:
        i, b = result["ingest"][name], result["blocks"][name]
        lines.append(f"| {name} | {i['episodes_per_s']:,.0f} | {b['p50_ms']} | {b['p95_ms']} |")
    names = sorted({k for b in result["blocks"].values() for k in b["server_stage_median_ms"]})
    lines += [
        "",
        "Server-side stage medians of BuildBlock (ms):",
        "",
        "| configuration | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for name, b in result["blocks"].items():
        stages = b["server_stage_median_ms"]
        cells = " | ".join(str(stages.get(k, "")) for k in names)
        lines.append(f"| {name} | {cells} |")
    lines += [
        "",
        f"The store alone ({STORE_EPISODES:,} appends in batches of {STORE_BATCH}, no embedding; "
        "the head check every block pays with several nodes):",
        "",
        "| store | chains | appends/s | head check p50 ms |",
        "|---|---|---|---|",
    ]
    for name, r in result["store"].items():
        lines.append(
            f"| {name} | {r['chains']} | {r['episodes_per_s']:,.0f} | {r['head_check_p50_ms']} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    cluster = PostgresCluster(durable=True)
    cluster.start()
    try:
        result: dict[str, Any] = {**run_metadata(), "ingest": {}, "blocks": {}, "store": {}}
        # The machine is shared: its load says how much the figures may be disturbed.
        result["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
        # Rounds interleave the configurations, so that the machine's other load falls on all
        # of them alike; each figure is the median of its rounds (every round is in the JSON).
        runs: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = defaultdict(list)
        stored: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for _ in range(ROUNDS):
            for name, count in CONFIGURATIONS:
                url = None if name == "sqlite" else cluster.create_database()
                with nodes(name, count, url) as servers:
                    runs[name].append((ingest_run(servers), block_run(servers)))
                print(name, *runs[name][-1], file=sys.stderr)
            for chains in (1, 50):
                with tempfile.TemporaryDirectory() as tmp:
                    sqlite = SqliteStore(Path(tmp) / "bench.sqlite3", BENCH_MASTER_KEY)
                    try:
                        stored[f"sqlite, {chains} chains"].append(store_run(sqlite, chains))
                    finally:
                        sqlite.close()
                pg = PostgresStore(cluster.create_database(), BENCH_MASTER_KEY)
                try:
                    stored[f"postgres, {chains} chains"].append(store_run(pg, chains))
                finally:
                    pg.close()
        for name, pairs in runs.items():
            result["ingest"][name] = _median_of([i for i, _ in pairs])
            result["blocks"][name] = _median_of([b for _, b in pairs])
        result["store"] = {name: _median_of(rounds) for name, rounds in stored.items()}
        result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
        print_table(table(result))
        write_results("postgres", result)
        (RESULTS_DIR / "postgres.md").write_text(markdown(result), encoding="utf-8")
    finally:
        cluster.destroy()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
