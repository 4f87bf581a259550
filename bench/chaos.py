"""Crash campaign: kill -9 the server mid-load, restart it, and check that nothing acknowledged was
lost, nothing is stored twice, every chain verifies, and a retry inserts only what was missing.

Each cycle starts `tutor-memory serve` on one data directory kept across cycles, runs a mixed load
(IngestEpisodes streams over several chains, AppendEpisode calls, Consolidate calls, every write
with a client key) and SIGKILLs the server after a delay drawn from the seed. The next start is
timed to its "serving" log line and to a health check answering SERVING; then every chain is
listed and verified against everything acknowledged so far, everything the killed cycle sent is
sent again by the same RPCs, and the chains are listed and verified once more.

Run from the repository root: `.venv/bin/python -m bench.chaos --cycles 100` (or `make chaos`).
Writes bench/results/chaos.json and chaos.md (elsewhere with --out-dir); exits 1 when any check
failed, keeping the data directory for a look.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tests.helpers.server_process import ServerProcess

from bench import _chaos_plan as plan
from bench._chaos_acks import AckBook, Rpc
from bench._chaos_audit import Audit, audit, retry_cycle
from bench._chaos_load import Load, run_until_killed
from bench._chaos_report import markdown
from bench._meta import RESULTS_DIR, run_metadata
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

DEFAULT_CYCLES = 100
DEFAULT_SEED = 12
FULL_RUN_NAME = "chaos"
# Problems of each kind quoted in the results; the counts cover all of them.
QUOTED_PROBLEMS = 20
# Counts of the result document that must all be 0 for the campaign to pass.
FAILURE_COUNTS = (
    "lost",
    "duplicates",
    "wrong_content",
    "unexpected_rows",
    "verification_failures",
    "undigested",
    "digested_twice",
    "retry_problems",
    "unexpected_errors",
    "reply_findings",
)
# Seconds a health check may take once the server logged "serving".
HEALTH_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class Started:
    server: ServerProcess
    # From process start to the "serving" log line, and to a health check answering SERVING.
    serving_seconds: float
    health_seconds: float
    episodes_loaded: int


def start_server(data_dir: Path) -> Started:
    t0 = time.monotonic()
    server = ServerProcess(data_dir, None)
    server.wait_ready()
    serving = time.monotonic() - t0
    with grpc.insecure_channel(server.target) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=""), timeout=HEALTH_TIMEOUT
        )
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        server.kill()
        raise RuntimeError(f"health after 'serving': {reply.status}")
    health = time.monotonic() - t0
    return Started(server, serving, health, _episodes_loaded(server.lines))


def _episodes_loaded(lines: Sequence[str]) -> int:
    for line in reversed(lines):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("msg") == "serving":
            return int(entry.get("episodes_loaded", -1))
    return -1


@contextmanager
def _stub(target: str) -> Iterator[pb_grpc.MemoryStub]:
    options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
    with grpc.insecure_channel(target, options=options) as channel:
        yield pb_grpc.MemoryStub(channel)


def _audit_figures(a: Audit) -> dict[str, int]:
    return {
        "lost": len(a.lost),
        "duplicates": len(a.duplicates),
        "wrong_content": len(a.wrong_content),
        "unexpected_rows": len(a.unexpected_rows),
        "verification_failures": len(a.verification_failures),
        "undigested": len(a.undigested),
        "digested_twice": len(a.digested_twice),
    }


class Campaign:
    def __init__(self, seed: int, data_dir: Path) -> None:
        self.seed = seed
        self.data_dir = data_dir
        self.book = AckBook()
        self.cycles: list[dict[str, Any]] = []
        # Every problem seen, by kind and then by what it concerns (so repeats count once).
        self.problems: dict[str, dict[str, str]] = {
            "lost": {},
            "duplicates": {},
            "wrong_content": {},
            "unexpected_rows": {},
            "verification_failures": {},
            "undigested": {},
            "digested_twice": {},
            "retry": {},
            "unexpected_errors": {},
        }
        self.first_start: Started | None = None
        # The server of the current cycle, and why the campaign stopped early, if it did.
        self.server: Started
        self.aborted: str | None = None
        # Exit code of the graceful stop after the last cycle's checks.
        self.shutdown_code: int | None = None

    def _keep(self, cycle: int, a: Audit, when: str) -> None:
        kinds = ("lost", "duplicates", "wrong_content", "unexpected_rows")
        for kind in (*kinds, "undigested", "digested_twice"):
            for subject, text in getattr(a, kind).items():
                self.problems[kind].setdefault(subject, f"cycle {cycle}, {when}: {text}")
        # A chain that stays broken is a failure at every verification, so these count per audit.
        for subject, text in a.verification_failures.items():
            self.problems["verification_failures"][f"{cycle} {when} {subject}"] = (
                f"cycle {cycle}, {when}: {text}"
            )

    def run(self, cycles: int) -> None:
        """Runs the cycles; a restart that fails or a check that cannot be made (an RPC error)
        ends the campaign early, recorded in `aborted`."""
        self.first_start = self.server = start_server(self.data_dir)
        cycle = 0
        try:
            for cycle in range(cycles):
                self._cycle(cycle)
        except (RuntimeError, grpc.RpcError) as exc:
            self.aborted = f"cycle {cycle}: {type(exc).__name__}: {exc}"
            print(f"campaign aborted at {self.aborted}", file=sys.stderr)
        finally:
            if self.server.server.proc.poll() is None:
                self.shutdown_code = self.server.server.terminate()

    def _cycle(self, cycle: int) -> None:
        load = Load(self.server.server.target, self.seed, cycle, self.book)
        kill_after = plan.kill_after(self.seed, cycle)
        ran = run_until_killed(load, kill_after, self.server.server.kill)
        started = self.server = start_server(self.data_dir)
        with _stub(started.server.target) as stub:
            found = audit(stub, self.book)
            retry = retry_cycle(stub, self.book, cycle, found.present)
            after = audit(stub, self.book)
        self._keep(cycle, found, "after restart")
        self._keep(cycle, after, "after retry")
        for n, text in enumerate(retry.problems):
            self.problems["retry"][f"{cycle} {n}"] = f"cycle {cycle}: {text}"
        for n, text in enumerate(load.tally.unexpected_errors):
            self.problems["unexpected_errors"][f"{cycle} {n}"] = f"cycle {cycle}: {text}"
        sends = self.book.sends[cycle]
        sent = sends.appends + [i for s in sends.streams for i in s.items]
        acked = self.book.acks
        stored_unacknowledged = sum(
            (i.chain, i.key) in found.present
            and not (i.key in acked and acked[i.key].cycle == cycle and not acked[i.key].by_retry)
            for i in sent
        )
        acknowledged = self.book.acknowledged_by_load(cycle)
        record: dict[str, Any] = {
            "cycle": cycle,
            "kill_after_s": round(kill_after, 3),
            "load_s": round(ran, 3),
            "calls": load.tally.calls,
            "interrupted_calls": load.tally.interrupted,
            "items_sent": len(sent),
            "acknowledged": acknowledged,
            "stored_unacknowledged": stored_unacknowledged,
            "restart_serving_s": round(started.serving_seconds, 3),
            "restart_health_s": round(started.health_seconds, 3),
            "episodes_loaded": started.episodes_loaded,
            "after_restart": _audit_figures(found),
            "retry": {
                "items": retry.items,
                "inserted": retry.inserted,
                "duplicate": retry.duplicate,
                "rejected": retry.rejected,
                "consolidate_calls": retry.consolidate_calls,
                "problems": len(retry.problems),
            },
            "after_retry": _audit_figures(after),
            "stored_episodes": after.stored_episodes,
            "digests_stored": after.digests,
            "unexpected_errors": len(load.tally.unexpected_errors),
        }
        self.cycles.append(record)
        acked_total = acknowledged[Rpc.APPEND] + acknowledged[Rpc.INGEST]
        failures = len(found.problems()) + len(after.problems())
        print(
            f"cycle {cycle}: killed after {ran:.2f} s, {len(sent)} items sent, {acked_total} "
            f"acknowledged, restart {started.serving_seconds:.2f} s, retry inserted "
            f"{retry.inserted} / duplicate {retry.duplicate}, "
            f"{failures + len(retry.problems)} problems",
            file=sys.stderr,
        )


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {"median": 0.0, "max": 0.0}
    return {"median": round(statistics.median(values), 3), "max": round(max(values), 3)}


def _slope_per_thousand(rows: list[dict[str, Any]]) -> float | None:
    """Least-squares growth of the restart time with the episodes the restart loaded, in seconds
    per 1,000 episodes: the data directory grows over the campaign, and so does start-up work."""
    x = [r["episodes_loaded"] / 1000 for r in rows]
    y = [r["restart_serving_s"] for r in rows]
    if len(set(x)) < 2:
        return None
    return round(statistics.linear_regression(x, y).slope, 4)


def result_document(c: Campaign, elapsed: float, cycles_asked: int) -> dict[str, Any]:
    rows = c.cycles
    acknowledged = {rpc: sum(r["acknowledged"][rpc] for r in rows) for rpc in Rpc}
    interrupted = {rpc: sum(r["interrupted_calls"][rpc] for r in rows) for rpc in Rpc}
    counts = {kind: len(found) for kind, found in c.problems.items()}
    counts["reply_findings"] = len(c.book.reply_findings)
    assert c.first_start is not None
    return {
        "benchmark": "chaos",
        **run_metadata(),
        "elapsed_seconds": round(elapsed, 1),
        "settings": {
            "seed": c.seed,
            "cycles_asked": cycles_asked,
            "chains": [str(ch) for ch in plan.CHAINS],
            "lanes": {
                "ingest": plan.INGEST_LANES,
                "append": plan.APPEND_LANES,
                "consolidate": plan.CONSOLIDATE_LANES,
            },
            "stream_items": list(plan.STREAM_ITEMS),
            "items_per_message": list(plan.ITEMS_PER_MESSAGE),
            "kill_after_s": list(plan.KILL_AFTER),
            "consolidate_now": {
                "end_of_cycle_day": plan.NOW_END_OF_CYCLE_DAY,
                "unset": plan.NOW_UNSET,
                "end_of_earlier_day": round(1 - plan.NOW_END_OF_CYCLE_DAY - plan.NOW_UNSET, 2),
            },
            "server": "python -m tutor_memory serve --listen 127.0.0.1:0 --data <dir> (dev mode)",
        },
        "cycles": len(rows),
        "aborted": c.aborted,
        "kills_with_calls_in_flight": sum(any(r["interrupted_calls"].values()) for r in rows),
        "interrupted_calls": interrupted,
        "items_sent": sum(r["items_sent"] for r in rows),
        "acknowledged": acknowledged,
        "acknowledged_items": acknowledged[Rpc.APPEND] + acknowledged[Rpc.INGEST],
        "stored_unacknowledged": sum(r["stored_unacknowledged"] for r in rows),
        "lost": counts["lost"],
        "duplicates": counts["duplicates"],
        "wrong_content": counts["wrong_content"],
        "unexpected_rows": counts["unexpected_rows"],
        "verification_failures": counts["verification_failures"],
        "undigested": counts["undigested"],
        "digested_twice": counts["digested_twice"],
        "digests_written_per_replies": sum(a.digests for a in c.book.consolidation_acks),
        "digests_stored_at_end": rows[-1]["digests_stored"] if rows else 0,
        "retry": {
            key: sum(r["retry"][key] for r in rows)
            for key in ("items", "inserted", "duplicate", "rejected", "consolidate_calls")
        },
        "retry_problems": counts["retry"],
        "unexpected_errors": counts["unexpected_errors"],
        "reply_findings": counts["reply_findings"],
        "restart_serving_s": _summary([r["restart_serving_s"] for r in rows]),
        "restart_health_s": _summary([r["restart_health_s"] for r in rows]),
        "restart_s_per_1000_episodes": _slope_per_thousand(rows),
        "first_start_serving_s": round(c.first_start.serving_seconds, 3),
        "stored_episodes_at_end": rows[-1]["stored_episodes"] if rows else 0,
        "final_shutdown_exit_code": c.shutdown_code,
        "problems": {
            kind: sorted(found.values())[:QUOTED_PROBLEMS] for kind, found in c.problems.items()
        }
        | {"reply_findings": c.book.reply_findings[:QUOTED_PROBLEMS]},
        "per_cycle": rows,
    }


def failed(result: dict[str, Any]) -> bool:
    return (
        bool(result["aborted"])
        or any(result[k] for k in FAILURE_COUNTS)
        or bool(result["retry"]["rejected"])
    )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.chaos", description=__doc__)
    p.add_argument("--cycles", type=int, default=DEFAULT_CYCLES, help="default: %(default)s")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="default: %(default)s")
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    p.add_argument("--name", default=FULL_RUN_NAME, help="file name stem (default: %(default)s)")
    p.add_argument(
        "--data",
        type=Path,
        default=None,
        help="data directory to use and keep (default: a temporary one, kept only on failure)",
    )
    return p


def write(result: dict[str, Any], out_dir: Path, name: str) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{name}.json"
    md_path = out_dir / f"{name}.md"
    json_path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(result) + "\n", encoding="utf-8")
    return json_path, md_path


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.cycles < 1:
        raise SystemExit("--cycles must be at least 1")
    data_dir = args.data or Path(tempfile.mkdtemp(prefix="tutor-memory-chaos-")) / "data"
    started = time.monotonic()
    campaign = Campaign(args.seed, data_dir)
    campaign.run(args.cycles)
    result = result_document(campaign, time.monotonic() - started, args.cycles)
    json_path, md_path = write(result, args.out_dir, args.name)
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)
    if failed(result):
        print(f"FAILED; data directory kept: {data_dir}", file=sys.stderr)
        return 1
    if args.data is None:
        shutil.rmtree(data_dir.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
