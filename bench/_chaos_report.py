"""The crash campaign's result document as a Markdown page."""

from __future__ import annotations

from typing import Any


def _n(value: int) -> str:
    return f"{value:,}"


def markdown(r: dict[str, Any]) -> str:
    s = r["settings"]
    retry = r["retry"]
    ack = r["acknowledged"]
    lines = [
        "# Crash campaign (kill -9 under mixed load)",
        "",
        f"Commit `{r['git_rev']}` on {r['host']} ({r['cpu_count']} cores, {r['cpu']}), "
        f"Python {r['python']}, {r['timestamp']}; seed {s['seed']}, {r['elapsed_seconds']} s.",
        "",
        f"Each cycle: {s['lanes']['ingest']} IngestEpisodes lanes (streams of "
        f"{s['stream_items'][0]}-{s['stream_items'][1]} items over {len(s['chains'])} chains), "
        f"{s['lanes']['append']} AppendEpisode lanes and {s['lanes']['consolidate']} Consolidate "
        f"lane, all with client keys, then SIGKILL after {s['kill_after_s'][0]}-"
        f"{s['kill_after_s'][1]} s; restart on the same data directory, list and verify every "
        "chain, resend everything the cycle sent, list and verify again.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| cycles | {r['cycles']} |",
        f"| kills with calls in flight | {r['kills_with_calls_in_flight']} |",
        f"| calls cut by the kill | {_calls(r['interrupted_calls'])} |",
        f"| items sent | {_n(r['items_sent'])} |",
        f"| acknowledged before the kill: items, Consolidate calls | "
        f"{_n(r['acknowledged_items'])}, {_n(ack['Consolidate'])} "
        f"(AppendEpisode {_n(ack['AppendEpisode'])}, IngestEpisodes {_n(ack['IngestEpisodes'])}) |",
        f"| stored though unacknowledged | {_n(r['stored_unacknowledged'])} |",
        f"| **lost** (acknowledged, not stored) | **{r['lost']}** |",
        f"| **duplicates** (a key stored twice) | **{r['duplicates']}** |",
        f"| **verification failures** | **{r['verification_failures']}** |",
        f"| **acknowledged items in no digest a Consolidate reply promised** | "
        f"**{r['undigested']}** |",
        f"| **items in two digests** | **{r['digested_twice']}** |",
        f"| digests written (per replies) / stored at the end | "
        f"{_n(r['digests_written_per_replies'])} / {_n(r['digests_stored_at_end'])} |",
        f"| stored content differs from sent | {r['wrong_content']} |",
        f"| rows never sent | {r['unexpected_rows']} |",
        f"| retry: items resent | {_n(retry['items'])} |",
        f"| retry: inserted (were missing) | {_n(retry['inserted'])} |",
        f"| retry: duplicate (were stored) | {_n(retry['duplicate'])} |",
        f"| retry: rejected | {retry['rejected']} |",
        f"| retry: disagreed with the audit | {r['retry_problems']} |",
        f"| errors before the kill | {r['unexpected_errors']} |",
        f"| restart to `serving`, median / max | {_secs(r['restart_serving_s'])} |",
        f"| restart to health SERVING, median / max | {_secs(r['restart_health_s'])} |",
        f"| restart growth per 1,000 episodes loaded at start | {_growth(r)} |",
        f"| first start (empty directory) | {r['first_start_serving_s']} s |",
        f"| episodes stored at the end | {_n(r['stored_episodes_at_end'])} |",
    ]
    if r["aborted"]:
        lines += ["", f"**The campaign stopped early**, at {r['aborted']}"]
    quoted = [(kind, texts) for kind, texts in r["problems"].items() if texts]
    if quoted:
        lines += ["", "## Problems", ""]
        for kind, texts in quoted:
            lines += [f"**{kind}**", ""] + [f"- {t}" for t in texts] + [""]
    lines += [
        "",
        "## Cycles",
        "",
        "| cycle | killed after (s) | items sent | acknowledged | stored unacked | restart (s) "
        "| episodes loaded | retry inserted | retry duplicate | problems |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in r["per_cycle"]:
        problems = sum(c["after_restart"].values()) + sum(c["after_retry"].values())
        problems += c["retry"]["problems"] + c["unexpected_errors"]
        lines.append(
            f"| {c['cycle']} | {c['load_s']} | {c['items_sent']} | "
            f"{c['acknowledged']['AppendEpisode'] + c['acknowledged']['IngestEpisodes']} | "
            f"{c['stored_unacknowledged']} | "
            f"{c['restart_serving_s']} | {c['episodes_loaded']} | {c['retry']['inserted']} | "
            f"{c['retry']['duplicate']} | {problems} |"
        )
    return "\n".join(lines)


def _calls(by_rpc: dict[str, int]) -> str:
    return ", ".join(f"{rpc} {_n(n)}" for rpc, n in by_rpc.items())


def _growth(r: dict[str, Any]) -> str:
    growth = r["restart_s_per_1000_episodes"]
    if growth is None:
        # Since chains load on first use, a restart loads none: there is nothing to regress on.
        return "none loaded (chains load on first use)"
    return f"{growth} s"


def _secs(summary: dict[str, float]) -> str:
    return f"{summary['median']} / {summary['max']} s"
