"""The human-readable tables (Markdown) of a phrasing result document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

DECISION_TITLES = {
    "record": "Record question (messages)",
    "record_topic": "Topic of a record question (messages)",
    "period": "Period named (messages)",
    "teaching": "Teaching sentence (messages)",
    "narration": "Narration of a period (tutor sentences)",
}


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _summary(decisions: dict[str, dict[str, Any]]) -> list[str]:
    names = list(decisions)
    languages = list(next(iter(decisions.values())))
    rows = []
    for language in languages:
        cells = []
        for name in names:
            row = decisions[name][language]
            measured = row["measured"]
            cells.append(
                f"{_pct(row['precision'])} / {_pct(row['recall'])}" if measured else "not measured"
            )
        rows.append([language, *cells])
    return _table(["language", *(f"{n} P / R" for n in names)], rows)


def _detail(rows: dict[str, Any]) -> list[str]:
    header = ["language", "items", "labelled yes", "TP", "FP", "FN", "precision", "recall", "F1"]
    body = []
    for language, row in rows.items():
        if not row["measured"]:
            body.append([language, str(row["items"]), str(row["positives"]), *(["-"] * 6)])
            continue
        body.append(
            [
                language,
                str(row["items"]),
                str(row["positives"]),
                str(row["true_positives"]),
                str(row["false_positives"]),
                str(row["false_negatives"]),
                _pct(row["precision"]),
                _pct(row["recall"]),
                _pct(row["f1"]),
            ]
        )
    return _table(header, body)


def markdown(result: dict[str, Any]) -> str:
    languages = result["set"]["languages"]
    lines = [
        "# Intent detectors on the phrasing set",
        "",
        f"Run {result['timestamp']} at commit `{result['git_rev']}` on {result['host']} "
        f"({result['cpu_count']} x {result['cpu']}), Python {result['python']}. "
        f"Set: bench/phrasing (sha256 `{result['set']['sha256'][:16]}…`), "
        + ", ".join(f"{lang} {v['messages']}+{v['narrations']}" for lang, v in languages.items())
        + " messages+narrations, labelled by hand.",
        "",
        "Precision and recall in %; `all` pools every language's counts. A wrong topic counts as "
        "a false positive and a false negative. The period decision accepts any window the "
        "parser returns, right or wrong. `-`: undefined (nothing said yes, or nothing labelled "
        "yes). The items each detector got wrong are listed in the JSON.",
        "",
        "Detectors: "
        + "; ".join(
            f"{d} `{src}`" if src else f"{d}: none" for d, src in result["detectors"].items()
        )
        + ".",
        "",
        "## Summary",
        "",
        *_summary(result["decisions"]),
        "",
    ]
    for name, rows in result["decisions"].items():
        lines += [f"## {DECISION_TITLES.get(name, name)}", "", *_detail(rows), ""]
    latency = result["detector_latency"]
    if latency:
        lines += [
            "## Detector cost during this run",
            "",
            *_table(
                ["decision", "calls", "median µs", "max µs"],
                [
                    [d, str(v["calls"]), f"{v['median_us']:.1f}", f"{v['max_us']:.1f}"]
                    for d, v in latency.items()
                ],
            ),
            "",
        ]
    return "\n".join(lines).rstrip()
