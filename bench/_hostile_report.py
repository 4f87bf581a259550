"""Figures and the report of the hostile-input benchmark (bench/bench_hostile.py): health while a
run's requests were in flight, writes beside file work, the issue's targets, and the tables."""

from __future__ import annotations

import itertools
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench._health_probe import Probe

# The targets (issue 12).
TARGET_HEALTH_MS = 50.0
TARGET_RSS_GROWTH_MB = 200.0


@dataclass(frozen=True, slots=True)
class CallResult:
    code: str
    seconds: float
    detail: str


# -- figures ----------------------------------------------------------------------------------


def health_figures(probes: Sequence[Probe], start: float, end: float) -> dict[str, Any]:
    """The health checks in flight at any time in [start, end]: how many, the worst wait (a lower
    bound when that check was never answered), and the longest gap between two answered checks
    that overlaps the window (open at the end if no check answered after it)."""
    inside = [p for p in probes if p.sent <= end and p.answered >= start]
    if not inside:
        return {"checks": 0, "worst_ms": None, "worst_is_lower_bound": False,
                "worst_gap_ms": None, "worst_gap_is_lower_bound": False, "not_ok": 0,
                "unanswered": 0}  # fmt: skip
    worst = max(inside, key=lambda p: p.seconds)
    answers = sorted(p.answered for p in probes if p.ok)
    gaps = [b - a for a, b in itertools.pairwise(answers) if b >= start and a <= end]
    # An answer-free stretch still open when the prober stopped: its length is a lower bound.
    observed_to = max(p.answered for p in probes)
    open_gap = observed_to - answers[-1] if answers and answers[-1] <= end < observed_to else None
    longest = max([*gaps, open_gap or 0.0]) if gaps or open_gap else None
    return {
        "checks": len(inside),
        "worst_ms": round(worst.seconds * 1000, 1),
        "worst_is_lower_bound": worst.pending,
        "worst_gap_ms": None if longest is None else round(longest * 1000, 1),
        "worst_gap_is_lower_bound": open_gap is not None and open_gap == longest,
        "not_ok": sum(1 for p in inside if not p.ok and not p.pending),
        "unanswered": sum(1 for p in inside if p.pending),
    }


def append_figures(appends: Sequence[CallResult]) -> dict[str, Any]:
    ms = sorted(r.seconds * 1000 for r in appends)
    return {
        "calls": len(appends),
        "statuses": dict(Counter(r.code for r in appends)),
        "p50_ms": round(statistics.median(ms), 1) if ms else None,
        "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1) if ms else None,
        "max_ms": round(ms[-1], 1) if ms else None,
    }


def run_targets(run: dict[str, Any]) -> dict[str, Any]:
    worst, growth = run["health"]["worst_ms"], run["rss_mb"]["growth"]
    return {
        "health_ms": {"measured": worst, "target": f"<= {TARGET_HEALTH_MS:g}",
                      "met": worst is not None and worst <= TARGET_HEALTH_MS},
        "rss_growth_mb": {"measured": growth, "target": f"<= {TARGET_RSS_GROWTH_MB:g}",
                          "met": growth <= TARGET_RSS_GROWTH_MB},
    }  # fmt: skip


def statuses_text(statuses: dict[str, int]) -> str:
    return ", ".join(f"{code} x{n}" if n > 1 else code for code, n in statuses.items())


def worst_text(health: dict[str, Any]) -> str:
    if health["worst_ms"] is None:
        return "-"
    return (">= " if health["worst_is_lower_bound"] else "") + f"{health['worst_ms']:,.1f}"


def _met(target: dict[str, Any]) -> str:
    return "met" if target["met"] else "**missed**"


def table_lines(result: dict[str, Any]) -> list[str]:
    lines = [
        "| case | RPC | mode | status | wall s | health worst ms | health gap ms | "
        "idle health ms | RSS before MB | RSS peak MB | RSS growth MB | server CPU after s "
        f"| health <= {TARGET_HEALTH_MS:g} ms | RSS growth <= {TARGET_RSS_GROWTH_MB:g} MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        h, m, t = r["health"], r["rss_mb"], r["targets"]
        gap = "-" if h["worst_gap_ms"] is None else f"{h['worst_gap_ms']:,.1f}"
        gap = (">= " if h["worst_gap_is_lower_bound"] else "") + gap
        lines.append(
            f"| {r['case']} | {r['rpc']} | {r['mode']} x{r['copies']} | "
            f"{statuses_text(r['statuses'])} | {r['wall_s']:,.2f} | {worst_text(h)} | {gap} | "
            f"{worst_text(r['health_idle'])} | {m['before']:,.1f} | {m['peak']:,.1f} | "
            f"{m['growth']:,.1f} | {r['server_cpu_after_s']} | {_met(t['health_ms'])} | "
            f"{_met(t['rss_growth_mb'])} |"
        )
    return lines


def markdown(result: dict[str, Any]) -> str:
    s = result["settings"]
    summary = result["summary"]
    worst_health = ">= " if summary["worst_health_is_lower_bound"] else ""
    lines = [
        "# Hostile input within the limits (issue 12)",
        "",
        f"Run {result['timestamp']} at commit `{result['git_rev']}` on {result['host']} "
        f"({result['cpu_count']} x {result['cpu']}), Python {result['python']}; "
        f"{result['seconds']:,} s in all. `.venv/bin/python -m bench.bench_hostile`.",
        "",
        "Each row is one run on a fresh server given a small course (the Markdown chapter "
        "cells.md, a question, an answer, a check). *alone*: one request; *parallel*: "
        f"{s['parallel']} at once, each on its own channel; *files+appends*: "
        f"{s['files_with_appends']} IngestFile requests at once while another student's chain "
        f"gets a short AppendEpisode every {s['append_interval_s']:g} s. Every request has a "
        f"{s['deadline_s']:g} s deadline. A prober in its own process sends a health check every "
        f"{s['probe_interval_s'] * 1000:g} ms whatever the earlier ones are doing; *health "
        "worst* is the longest any check in flight during the requests waited (watched for at "
        f"least {s['health_window_min_s'] * 1000:g} ms from their start; >= when the check was "
        f"still unanswered {s['drain_s']:g} s after the requests: a lower bound), *health gap* "
        "the longest stretch without an answered check, *idle health* the worst check in the "
        f"{s['idle_s']:g} s before the requests. RSS is VmRSS of the server and its worker "
        "processes (the file-reading process among them, from the first file of 16 KiB on), "
        "sampled every "
        f"{s['rss_interval_s'] * 1000:g} ms; the peak is from the requests' start to "
        f"{s['after_s']:g} s after they ended; MB are 10^6 bytes. *Server CPU after* is CPU "
        f"seconds the server and its workers used in those {s['after_s']:g} s: work that went "
        "on after the reply or the deadline.",
        "",
        *table_lines(result),
        "",
        f"Targets (issue 12): health <= {TARGET_HEALTH_MS:g} ms met in {summary['health_met']} "
        f"of {summary['runs']} runs (worst {worst_health}{summary['worst_health_ms']:,.1f} ms); "
        f"RSS growth <= {TARGET_RSS_GROWTH_MB:g} MB met in {summary['rss_met']} of "
        f"{summary['runs']} runs (largest {summary['largest_rss_growth_mb']:,.1f} MB).",
        "",
        "## Inputs",
        "",
        "| case | RPC | input |",
        "|---|---|---|",
    ]
    seen: set[str] = set()
    for r in result["runs"]:
        if r["case"] not in seen:
            seen.add(r["case"])
            lines.append(f"| {r['case']} | {r['rpc']} | {r['input']} |")
    beside = [r for r in result["runs"] if "appends_beside" in r]
    if beside:
        lines += [
            "",
            "## Writes beside file work",
            "",
            "AppendEpisode of a short question to another student's chain while the files were "
            "read (each waits for its reply; the next starts at the next "
            f"{s['append_interval_s']:g} s tick or at once if late).",
            "",
            "| case | files | appends | statuses | p50 ms | p95 ms | max ms |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in beside:
            a = r["appends_beside"]
            lines.append(
                f"| {r['case']} | {statuses_text(r['statuses'])} | {a['calls']} | "
                f"{statuses_text(a['statuses'])} | {a['p50_ms']} | {a['p95_ms']} | {a['max_ms']} |"
            )
    lines += [
        "",
        "## Each request",
        "",
        "*Setup* is what the case made first (AnnotateAnswer's answer and blocks), before the "
        "requests, and *busy after* how long the server then kept a core busy (waited out "
        f"before the requests; {s['quiet_sample_s']:g} when it was quiet at once); *other CPU* "
        "is the CPU time everything but the server used while the requests ran (this "
        "benchmark, its prober and whatever else ran on the machine, whose cores are shared), "
        "of seconds x cores available; *health after* is the worst check in flight in the "
        "after window; a server that did not stop on SIGTERM in time was killed.",
        "",
        "| case | mode | setup s (busy after) | seconds per request "
        "| what the reply said (or the error) | server CPU s during "
        "| other CPU s (of available) | health after ms | server stopped by |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["runs"]:
        times = ", ".join(f"{c['seconds']:,.2f}" for c in r["calls"])
        details = "; ".join(sorted({f"{c['status']}: {c['detail']}" for c in r["calls"]}))
        lines.append(
            f"| {r['case']} | {r['mode']} x{r['copies']} | {r['setup_s']} "
            f"({r['busy_after_setup_s']}) | {times} | "
            f"{details.replace('|', '/')} | {r['server_cpu_s']} | "
            f"{r['other_cpu_s']} ({r['machine_cpu_s']}) | "
            f"{worst_text(r['health_after'])} | {r['server_stopped_by']} |"
        )
    return "\n".join(lines) + "\n"
