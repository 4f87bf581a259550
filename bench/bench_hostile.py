"""Hostile input within the limits: does one request stall the server or swell its memory?
(issue 12: "no request within the limits raises server RSS by more than 200 MB"; "with the
largest allowed text of any shape, and with 4 such requests in parallel, no health check waits
more than 50 ms").

Every run starts `tutor-memory serve` as a child process on a fresh data directory (so that no
run inherits the work or the memory of the one before), gives it a small course (IngestFile of
the Markdown chapter tests/fixtures/biology/cells.md with the built-in extractor, a question, an
answer and a check), so that routing, grounding and recall have a map and a history to work on.
Then one case, in one of three modes:

- alone: one request;
- parallel: PARALLEL identical requests at once, each on its own channel;
- files + appends (file cases only): FILES_WITH_APPENDS IngestFile requests at once while a
  writer appends a short question to another student's chain every APPEND_INTERVAL_S, waiting
  for each reply: file work must not starve writes. Every append's latency is recorded.

The cases (sizes are the limits the server enforces, or the issue's 1 MB for files, far below
their 25 MiB limit): AppendEpisode questions whose text is the largest allowed of five hostile
shapes (bench/_hostile_inputs.py); Teach of dots, and of a teaching phrase then dots and a
letter; RecordCheck with the largest evaluation and answer; AnnotateAnswer on an answer of dots,
and of dots then a letter (the answer and the blocks made first, outside the measurement);
BuildBlock and SearchPassages with the longest query of two shapes; IngestFile of a PDF of the
most pages allowed that share one content stream, a Markdown file with an unclosed code fence, a
text of "a. ", and a Markdown file that is one heading line.

While a run lasts, a prober in its own process (bench/_health_probe.py) calls grpc.health.v1
Health/Check every PROBE_INTERVAL_S on its own channel, sending on a clock whether or not the
earlier checks have answered, and a thread samples the server's VmRSS every RSS_INTERVAL_S, with
that of its worker processes (the file-reading process reads the files). Per
run: each request's status and time, the worst health latency of the checks in flight during the
requests (for at least HEALTH_WINDOW_MIN_S from their start; a check still unanswered when the
prober stopped counts with the time it had waited: a lower bound, marked >=), the longest gap
between two answered checks, the same in the idle second before and the after window
(Settings.after_s) after, the server's RSS before the requests and its peak from their start to
the end of the after window, its CPU time (with its workers') during
the requests and in the after window (CPU there means work that went on after the reply or the
deadline), and how it stopped (SIGTERM, or SIGKILL when it did not stop within STOP_TIMEOUT_S).
Every request has a client deadline, so the benchmark ends whatever the server does.

The targets are marked met or missed per run; they are the issue's, not assertions.

Run: `.venv/bin/python -m bench.bench_hostile` (writes bench/results/hostile.json and
hostile.md); `--quick` runs two cases at small sizes (the test's mode, written as
hostile-quick); `--cases a,b` runs only those (written as hostile-partial).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import grpc
from tests.helpers.server_process import ServerProcess

from bench._health_probe import HealthProber
from bench._hostile_cases import (
    CASE_NAMES,
    CASES,
    FULL,
    QUICK,
    SUBJECT,
    Call,
    Case,
    Settings,
    give_course,
)
from bench._hostile_report import (
    TARGET_HEALTH_MS,
    TARGET_RSS_GROWTH_MB,
    CallResult,
    append_figures,
    health_figures,
    markdown,
    run_targets,
    statuses_text,
    table_lines,
    worst_text,
)
from bench._meta import REPO_ROOT, RESULTS_DIR, run_metadata, write_results
from bench._proc import RssSampler, machine_busy_seconds, tree_cpu_seconds, tree_rss_kib
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

NAME = "hostile"
QUICK_NAME = "hostile-quick"
PARTIAL_NAME = "hostile-partial"

CORES = os.cpu_count() or 1
BYTES_PER_MB = 1_000_000
BYTES_PER_KIB = 1024

PROBE_INTERVAL_S = 0.05
# Requests quicker than this are watched for this long from their start, so that a figure always
# covers at least one check (sent while they ran or just after).
HEALTH_WINDOW_MIN_S = 2 * PROBE_INTERVAL_S
RSS_INTERVAL_S = 0.05
# A check's own deadline: long, since the figure is how long a check waits, not whether a
# monitoring system with a short deadline would have given up.
PROBE_TIMEOUT_S = 600.0
PARALLEL = 4
FILES_WITH_APPENDS = 2
APPEND_INTERVAL_S = 0.1
# Before the requests, the server counts as quiet once it uses less than this share of one core
# over QUIET_SAMPLE_S (idle, it uses about 2 %) and answers health checks; it is given at most
# QUIET_TIMEOUT_S.
QUIET_CPU_SHARE = 0.2
QUIET_SAMPLE_S = 0.5
QUIET_TIMEOUT_S = 300.0
# Seconds SIGTERM may take (the server's grace for calls in flight is 10 s) before SIGKILL.
STOP_TIMEOUT_S = 20.0
# Client channels take whole files; the server's own limit is 32 MiB.
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
]

# The writer of the files + appends mode appends to another chain of the same tenant.
WRITER = "ben"

ALONE, PARALLEL_MODE, WITH_APPENDS = "alone", "parallel", "files+appends"


def modes(case: Case) -> list[tuple[str, int]]:
    found = [(ALONE, 1), (PARALLEL_MODE, PARALLEL)]
    return [*found, (WITH_APPENDS, FILES_WITH_APPENDS)] if case.file else found


# -- one run ----------------------------------------------------------------------------------


def _timed(call: Call, stub: pb_grpc.MemoryStub, timeout: float) -> CallResult:
    started = time.perf_counter()
    try:
        detail, code = call(stub, timeout), "OK"
    except grpc.RpcError as error:
        code, detail = error.code().name, (error.details() or "")[:200]
    return CallResult(code, time.perf_counter() - started, detail)


def _plain_question(i: int, stub: pb_grpc.MemoryStub, timeout: float) -> str:
    summary = f"What does osmosis do to a cell in salt water? ({i})"
    episode = pb.NewEpisode(
        student_id=WRITER,
        subject_id=SUBJECT,
        kind=pb.EPISODE_KIND_QUESTION,
        summary=summary,
        text=summary,
        client_key=f"beside-{i}",
    )
    stub.AppendEpisode(pb.AppendEpisodeRequest(episode=episode), timeout=timeout)
    return "appended"


def _append_beside(
    stub: pb_grpc.MemoryStub, stop: threading.Event, timeout: float, out: list[CallResult]
) -> None:
    """A chat service's ordinary writes for another student while the files are read."""
    i, next_at = 0, time.perf_counter()
    while not stop.is_set():
        out.append(_timed(partial(_plain_question, i), stub, timeout))
        i += 1
        next_at = max(next_at + APPEND_INTERVAL_S, time.perf_counter())
        stop.wait(next_at - time.perf_counter())


@contextmanager
def _channel(target: str) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(target, options=CHANNEL_OPTIONS) as channel:
        grpc.channel_ready_future(channel).result(timeout=30)
        yield channel


def _stop(server: ServerProcess) -> str:
    """Stops the server; says how."""
    if server.proc.poll() is not None:
        return f"had exited ({server.proc.returncode})"
    try:
        server.terminate(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        server.kill()
        return f"SIGKILL (SIGTERM not done in {STOP_TIMEOUT_S:g} s)"
    return "SIGTERM"


@dataclass(slots=True)
class Window:
    """The monotonic times of a run: health idle from `idle`, requests from `start` to `end`,
    the after window to `after`."""

    idle: float = 0.0
    start: float = 0.0
    end: float = 0.0
    after: float = 0.0


def run_case(case: Case, mode: str, copies: int, settings: Settings) -> dict[str, Any]:
    label = f"{case.name} ({mode}, x{copies})"
    print(f"hostile: {label} ...", file=sys.stderr, flush=True)
    w = Window()
    results: list[CallResult] = []
    appends: list[CallResult] = []
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as tmp:
        server = ServerProcess(Path(tmp) / "data", None)
        stopped = "not started"
        try:
            server.wait_ready()
            pid = server.proc.pid
            prober = HealthProber(
                server.target,
                Path(tmp) / "health.log",
                interval_s=PROBE_INTERVAL_S,
                timeout_s=PROBE_TIMEOUT_S,
                drain_s=settings.drain_s,
            )
            sampler = RssSampler(pid, RSS_INTERVAL_S, tree=True)
            try:
                with _channel(server.target) as channel:
                    stub = pb_grpc.MemoryStub(channel)
                    give_course(stub)
                    prober.wait_first_answer()
                    started = time.perf_counter()
                    described, calls = case.prepare(stub, settings, copies)
                    setup_s = time.perf_counter() - started
                    busy_after_setup_s = _wait_quiet(pid, prober)
                    rss_before, cpu = _watch_idle(pid, w, settings)
                    results, appends, cpu_s, cpu_after_s, busy_s = _drive(
                        server.target, calls, mode == WITH_APPENDS, settings, pid, w, cpu
                    )
                    rss_after = tree_rss_kib(pid)
            finally:
                probes = prober.stop()
                sampler.stop()
        finally:
            stopped = _stop(server)
    rss_peak = max(sampler.peak_kib(w.start, w.after) or 0, rss_before, rss_after)
    run = {
        "case": case.name,
        "rpc": case.rpc,
        "mode": mode,
        "copies": copies,
        "input": described,
        "setup_s": round(setup_s, 2),
        # Seconds the server kept a core busy after the setup's replies (waited out before the
        # requests; QUIET_SAMPLE_S when it was quiet at once).
        "busy_after_setup_s": round(busy_after_setup_s, 1),
        "statuses": dict(Counter(r.code for r in results)),
        "wall_s": round(w.end - w.start, 2),
        "calls": [
            {"status": r.code, "seconds": round(r.seconds, 3), "detail": r.detail} for r in results
        ],
        "health": health_figures(probes, w.start, max(w.end, w.start + HEALTH_WINDOW_MIN_S)),
        "health_idle": health_figures(probes, w.idle, w.start),
        "health_after": health_figures(probes, w.end, w.after),
        "rss_mb": {
            "before": _mb(rss_before),
            "peak": _mb(rss_peak),
            # Of the rounded figures, so that the table's columns add up.
            "growth": round(_mb(rss_peak) - _mb(rss_before), 1),
            "after": _mb(rss_after),
        },
        "server_cpu_s": round(cpu_s, 2),
        "server_cpu_after_s": round(cpu_after_s, 2),
        # The cores are shared: CPU time everything but the server used while the requests ran
        # (this benchmark, its prober, and whatever else runs on the machine), of seconds x cores.
        "other_cpu_s": round(max(busy_s - cpu_s, 0.0), 2),
        "machine_cpu_s": round((w.end - w.start) * CORES, 2),
        "after_window_s": settings.after_s,
        "server_stopped_by": stopped,
    }
    if mode == WITH_APPENDS:
        run["appends_beside"] = append_figures(appends)
    run["targets"] = run_targets(run)
    _progress(run)
    return run


def _wait_quiet(pid: int, prober: HealthProber) -> float:
    """Waits until the server is quiet: its CPU use below QUIET_CPU_SHARE of a core and a health
    check sent in the last QUIET_SAMPLE_S answered (CPU alone can look low on a crowded machine
    while the event loop is still blocked). A setup call may leave work running after its reply,
    which would otherwise land in the case's figures. Returns how long that took."""
    started = time.monotonic()
    while time.monotonic() - started < QUIET_TIMEOUT_S:
        before = tree_cpu_seconds(pid)
        time.sleep(QUIET_SAMPLE_S)
        now = time.monotonic()
        idle_cpu = (tree_cpu_seconds(pid) - before) / QUIET_SAMPLE_S < QUIET_CPU_SHARE
        answering = any(p.ok and p.sent >= now - QUIET_SAMPLE_S for p in prober.read())
        if idle_cpu and answering:
            break
    return time.monotonic() - started


def _watch_idle(pid: int, w: Window, settings: Settings) -> tuple[int, float]:
    """Health watched while idle, then the RSS and CPU time the requests start from."""
    w.idle = time.monotonic()
    time.sleep(settings.idle_s)
    return tree_rss_kib(pid), tree_cpu_seconds(pid)


def _drive(
    target: str,
    calls: Sequence[Call],
    with_appends: bool,
    settings: Settings,
    pid: int,
    w: Window,
    cpu_start: float,
) -> tuple[list[CallResult], list[CallResult], float, float, float]:
    """Sends every request at once, each on its own channel (and appends beside them); then
    watches the after window."""
    results: list[CallResult | None] = [None] * len(calls)
    appends: list[CallResult] = []
    with _channels(target, len(calls) + int(with_appends)) as channels:
        stubs = [pb_grpc.MemoryStub(c) for c in channels]

        def send(i: int) -> None:
            results[i] = _timed(calls[i], stubs[i], settings.deadline_s)

        files_done = threading.Event()
        threads = [threading.Thread(target=send, args=(i,)) for i in range(len(calls))]
        if with_appends:
            args = (stubs[-1], files_done, settings.deadline_s, appends)
            threads.append(threading.Thread(target=_append_beside, args=args))
        busy = machine_busy_seconds()
        w.start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads[: len(calls)]:
            t.join()
        w.end = time.monotonic()
        cpu_end, busy = tree_cpu_seconds(pid), machine_busy_seconds() - busy
        files_done.set()
        for t in threads[len(calls) :]:
            t.join()
        time.sleep(max(settings.after_s - (time.monotonic() - w.end), 0.0))
        w.after = time.monotonic()
        cpu_after = tree_cpu_seconds(pid)
    done = [r for r in results if r is not None]
    return done, appends, cpu_end - cpu_start, cpu_after - cpu_end, busy


@contextmanager
def _channels(target: str, count: int) -> Iterator[list[grpc.Channel]]:
    opened: list[grpc.Channel] = []
    try:
        for _ in range(count):
            channel = grpc.insecure_channel(target, options=CHANNEL_OPTIONS)
            opened.append(channel)
            grpc.channel_ready_future(channel).result(timeout=30)
        yield opened
    finally:
        for channel in opened:
            channel.close()


def _mb(kib: int) -> float:
    return round(kib * BYTES_PER_KIB / BYTES_PER_MB, 1)


def _progress(run: dict[str, Any]) -> None:
    h = run["health"]
    print(
        f"hostile:   {statuses_text(run['statuses'])} in {run['wall_s']} s; health worst "
        f"{worst_text(h)} ms, gap {h['worst_gap_ms']} ms; RSS +{run['rss_mb']['growth']} MB; "
        f"CPU after {run['server_cpu_after_s']} s; stopped by {run['server_stopped_by']}",
        file=sys.stderr,
        flush=True,
    )


# -- the run and its report ---------------------------------------------------------------------


def run(settings: Settings, name: str) -> dict[str, Any]:
    started = time.perf_counter()
    runs = [
        run_case(case, mode, copies, settings)
        for case in CASES
        if case.name in settings.cases
        for mode, copies in modes(case)
    ]
    worst = max(runs, key=lambda r: r["health"]["worst_ms"] or 0.0)
    return {
        "benchmark": name,
        **run_metadata(),
        "settings": {
            **asdict(settings),
            "parallel": PARALLEL,
            "files_with_appends": FILES_WITH_APPENDS,
            "append_interval_s": APPEND_INTERVAL_S,
            "probe_interval_s": PROBE_INTERVAL_S,
            "health_window_min_s": HEALTH_WINDOW_MIN_S,
            "quiet_sample_s": QUIET_SAMPLE_S,
            "quiet_cpu_share": QUIET_CPU_SHARE,
            "rss_interval_s": RSS_INTERVAL_S,
            "mb": "10^6 bytes",
        },
        "targets": {"health_ms": TARGET_HEALTH_MS, "rss_growth_mb": TARGET_RSS_GROWTH_MB},
        "runs": runs,
        "summary": {
            "runs": len(runs),
            "health_met": sum(r["targets"]["health_ms"]["met"] for r in runs),
            "rss_met": sum(r["targets"]["rss_growth_mb"]["met"] for r in runs),
            "worst_health_ms": worst["health"]["worst_ms"],
            "worst_health_is_lower_bound": worst["health"]["worst_is_lower_bound"],
            "largest_rss_growth_mb": max(r["rss_mb"]["growth"] for r in runs),
        },
        "seconds": round(time.perf_counter() - started, 1),
    }


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="two cases at small sizes")
    p.add_argument("--cases", help=f"comma-separated, of: {', '.join(CASE_NAMES)}")
    p.add_argument("--deadline", type=float, help="each request's deadline in seconds")
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    settings, name = (QUICK, QUICK_NAME) if args.quick else (FULL, NAME)
    if args.cases:
        wanted = tuple(c.strip() for c in args.cases.split(",") if c.strip())
        unknown = sorted(set(wanted) - set(CASE_NAMES))
        if unknown:
            print(f"unknown cases: {', '.join(unknown)}", file=sys.stderr)
            return 2
        settings, name = replace(settings, cases=wanted), PARTIAL_NAME
    if args.deadline:
        settings = replace(settings, deadline_s=args.deadline)
    result = run(settings, name)
    write_results(name, result, args.out_dir)
    report = args.out_dir / f"{name}.md"
    report.write_text(markdown(result), encoding="utf-8")
    shown = report.relative_to(REPO_ROOT) if report.is_relative_to(REPO_ROOT) else report
    print(f"wrote {shown}", file=sys.stderr)
    print("\n".join(table_lines(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
