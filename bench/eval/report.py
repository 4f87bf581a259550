"""The human-readable report (Markdown) of a result document, and the failures with their blocks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.eval.questions import Category
from bench.eval.results import NEAR_SAME_SPREAD_POINTS, OVERALL
from bench.eval.run import VERSION_NAMES, Answer

GRADING_NOTES = (
    "- Graders (pre-registered, `bench/eval/grading.py`): what did I get wrong = every concept "
    "whose latest check was wrong is shown as one of its wrong checks, the tutor's turn that "
    "said so, or a `struggles with` belief line; review before X = every direct prerequisite of "
    "X named in the block or the passages; explain X = X's definition sentence in the block or "
    "the passages; active month = at least min(3, n) memories of that month (narrations "
    "excepted); empty month = `no_record` set, no memory of that month, no narration recalled; "
    "old exact match = the old answer's id shown.",
    "- Every version also gets the same file passages (SearchPassages with the question): a chat "
    "service's prompt always has them. Histories, questions and graders are generated and fixed "
    "before any version is asked anything.",
)


def _cell(cell: dict[str, Any]) -> str:
    if not cell["total"]:
        return "-"
    return f"{cell['passed']}/{cell['total']} ({cell['percent']:.1f}%)"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def score_table(result: dict[str, Any]) -> list[str]:
    figures = result["table"]
    spreads = result["spread_points"]
    rows = []
    for category in Category:
        cells = [_cell(figures[v][category.value]) for v in VERSION_NAMES]
        rows.append([category.title, *cells, f"{spreads.get(category.value, 0):.1f}"])
    overall = [f"**{_cell(figures[v][OVERALL])}**" for v in VERSION_NAMES]
    rows.append([f"**{OVERALL}**", *overall, f"{spreads.get(OVERALL, 0):.1f}"])
    return _table(["category", *VERSION_NAMES, "spread (points)"], rows)


def language_table(result: dict[str, Any]) -> list[str]:
    figures = result["by_language"]
    languages = list(figures[VERSION_NAMES[0]])
    rows = [[code, *(_cell(figures[v][code]) for v in VERSION_NAMES)] for code in languages]
    return _table(["asked in", *VERSION_NAMES], rows)


def _targets_line(result: dict[str, Any]) -> str:
    t = result["targets"]
    below = t["full_categories_below_target"]
    return (
        f"Targets for full: at least {t['full_overall_target']:.0f}% overall "
        f"({t['full_overall_percent']:.1f}%) and {t['full_category_target']:.0f}% in every "
        f"category ({'all are' if not below else 'below: ' + ', '.join(below)}): "
        f"**{'met' if t['met'] else 'not met'}**."
    )


def _discrimination_line(result: dict[str, Any]) -> str:
    same = result["non_discriminating"]
    near = [c for c in result["barely_discriminating"] if c not in same]
    parts = []
    if same:
        titles = ", ".join(Category(c).title for c in same)
        parts.append(
            f"Cannot discriminate (every version scores the same): {titles}; a test every "
            "version passes, or fails, measures nothing about the layers."
        )
    if near:
        titles = ", ".join(Category(c).title for c in near)
        parts.append(
            f"Barely discriminates (all versions within {NEAR_SAME_SPREAD_POINTS:.0f} points): "
            f"{titles}; what answers it reaches every version."
        )
    return " ".join(parts) or "Every category separates at least two versions."


def _determinism_line(result: dict[str, Any]) -> str:
    d = result["determinism"]
    if d is None:
        return "Determinism: not checked (one run)."
    return (
        f"Determinism: a second run (fresh server, same histories and questions) graded "
        f"{d['score_differences']} of {d['compared']} (question, version) pairs differently; "
        f"{d['block_differences']} blocks showed different memories."
    )


def markdown(result: dict[str, Any]) -> str:
    data = result["data"]
    settings = result["settings"]
    lines = [
        "# Ablation benchmark: what each layer of the memory adds",
        "",
        f"Run {result['timestamp']} at commit `{result['git_rev']}` on {result['host']} "
        f"({result['cpu_count']} x {result['cpu']}), Python {result['python']}; "
        f"{result['elapsed_seconds']:.0f} s in all.",
        f"{data['histories']} generated histories (seed {settings['seed']}; languages "
        + ", ".join(f"{k} {v}" for k, v in data["languages"].items())
        + "; subjects "
        + ", ".join(f"{k} {v}" for k, v in data["subjects"].items())
        + f"), {data['events']} events, {data['questions']} questions per version "
        f"({data['cross_language_questions']} cross-language); question set sha256 "
        f"`{data['question_set_sha256'][:16]}…`. BuildBlock budget {settings['budget_tokens']} "
        f"tokens, {settings['passages_per_question']} file passages per question.",
        "",
        "Versions (the same server, BuildBlock `mode`):",
        *(f"- {name}: {text}" for name, text in settings["versions"].items()),
        "",
        *GRADING_NOTES,
        "",
        "## Passed questions by version and category",
        "",
        *score_table(result),
        "",
        _targets_line(result),
        "",
        _discrimination_line(result),
        "",
        _determinism_line(result),
        "",
        "By the language the question was asked in:",
        "",
        *language_table(result),
        "",
        "## BuildBlock during the run",
        "",
        *_table(
            ["version", "p50 ms", "p95 ms", "mean tokens", "max tokens"],
            [
                [
                    v,
                    f"{row['p50_ms']:.1f}",
                    f"{row['p95_ms']:.1f}",
                    f"{row['mean_tokens_used']:.0f}",
                    str(row["max_tokens_used"]),
                ]
                for v, row in result["latency"].items()
            ],
        ),
        "",
        f"Replay: {result['replay']['episodes']} episodes in {result['replay']['calls']} calls, "
        f"{result['replay']['seconds']:.1f} s.",
        "",
        "## What the full version missed",
        "",
        *(
            [f"- `{f['qid']}` {f['question']} ({f['reason']})" for f in result["full_failures"]]
            or ["Nothing."]
        ),
        "",
        "Every failure of every version, with the block it showed, is in the failures file "
        "written beside this one.",
    ]
    return "\n".join(lines)


def failure(answer: Answer) -> str:
    """One failed answer as the report prints it: question, expectation, reason, the block."""
    q = answer.question
    block = answer.text or "(empty block)"
    passages = "\n".join(answer.passages) or "(none)"
    return "\n".join(
        [
            f"### {q.qid} ({answer.version})",
            "",
            f"- question ({q.language}{', cross-language' if q.cross_language else ''}): {q.text}",
            f"- target: {q.target or '-'}; expected ids: {list(answer.expected_ids) or '-'}"
            + (f"; expected names: {', '.join(q.expected.names)}" if q.expected.names else "")
            + (f"; definition: {q.expected.definition}" if q.expected.definition else ""),
            f"- failed: {answer.grade.reason}",
            "",
            "```text",
            block,
            "```",
            "",
            "Passages:",
            "",
            "```text",
            passages,
            "```",
            "",
        ]
    )


def failures(answers: Sequence[Answer], versions: Sequence[str]) -> str:
    failed = [a for a in answers if a.version in versions and not a.grade.passed]
    header = [
        "# Ablation benchmark: failures",
        "",
        f"{len(failed)} failed answers ({', '.join(versions)}), each with its question, what the "
        "grader expected and the block the version showed.",
        "",
    ]
    return "\n".join(header + [failure(a) for a in failed])
