"""The human-readable table (Markdown) of an ablation's result document."""

from __future__ import annotations

from typing import Any

from bench.locomo.dataset import CATEGORY_NAMES, MULTI_HOP
from bench.locomo.report import _pct, _table
from bench.locomo.scoring import OVERALL

MULTI_HOP_GROUP = CATEGORY_NAMES[MULTI_HOP]


def _recall(row: dict[str, Any], budget: str, group: str) -> float | None:
    value = row["block"][budget].get(group, {}).get("evidence_recall")
    return None if value is None else float(value)


def _delta(value: float | None, full: float | None) -> str:
    if value is None or full is None:
        return "-"
    return f"{100 * (value - full):+.1f}"


def markdown(result: dict[str, Any]) -> str:
    budgets = [str(b) for b in result["settings"]["budgets"]]
    full = result["rows"][0]
    rows = []
    for row in result["rows"]:
        cells = []
        for b in budgets:
            value = _recall(row, b, OVERALL)
            cells.append(f"{_pct(value)} ({_delta(value, _recall(full, b, OVERALL))})")
        multi = budgets[-1]
        rows.append(
            [
                row["name"],
                *cells,
                _pct(_recall(row, multi, MULTI_HOP_GROUP)),
                str(row["questions_with_time_window"]),
            ]
        )
    n = full["block"][budgets[0]][OVERALL]["n"]
    lines = [
        "# LoCoMo ablation: what each recall lever adds (dev split)",
        "",
        f"Run {result['timestamp']} at commit `{result['git_rev']}` on {result['host']} "
        f"({result['cpu_count']} x {result['cpu']}), Python {result['python']}; "
        f"{result['elapsed_seconds']:.0f} s in all. Tokens counted with {result['tokenizer']}. "
        f"Conversations {', '.join(result['conversations'])}; {n} questions (categories 1-4 "
        "with evidence) per row.",
        "",
        "Evidence recall (%) of the server's block at each budget, and in brackets the change "
        "from the full server in points. Each row starts a fresh server per conversation with one "
        "lever off (`tutor-memory serve --recall-off LEVER`); everything else is equal.",
        "",
        *_table(
            [
                "row",
                *(f"{b} tokens" for b in budgets),
                f"multi-hop at {budgets[-1]}",
                "questions with a named period",
            ],
            rows,
        ),
        "",
        "Levers:",
        "",
        *(f"- `{name}`: {note}." for name, note in result["levers"].items()),
        "",
    ]
    return "\n".join(lines)
