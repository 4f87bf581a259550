"""The result document of a run (written to `bench/results/<name>.json`): the table of passed
questions per version and category, the targets, the categories that cannot discriminate, the
determinism check and every question's outcome per version."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.eval.history import History
from bench.eval.questions import Category, Question
from bench.eval.run import VERSION_NAMES, VERSIONS, Answer, Differences, RunResult

OVERALL = "overall"
FULL = "full"
# The targets for the full version, in percent.
FULL_OVERALL_TARGET = 95.0
FULL_CATEGORY_TARGET = 90.0
LATENCY_PERCENTILES = (50, 95)
# A category whose versions all score within this many percentage points of each other barely
# tells them apart: whatever answers it (for "explain X", the file passages) every version has.
NEAR_SAME_SPREAD_POINTS = 5.0


def _cell(passed: int, total: int) -> dict[str, Any]:
    return {
        "passed": passed,
        "total": total,
        "percent": round(100 * passed / total, 1) if total else None,
    }


def table(answers: Sequence[Answer]) -> dict[str, dict[str, dict[str, Any]]]:
    """version -> category (and "overall") -> passed, total, percent."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for version in VERSION_NAMES:
        mine = [a for a in answers if a.version == version]
        row = {}
        for category in Category:
            graded = [a for a in mine if a.question.category is category]
            row[category.value] = _cell(sum(a.grade.passed for a in graded), len(graded))
        row[OVERALL] = _cell(sum(a.grade.passed for a in mine), len(mine))
        out[version] = row
    return out


def by_language(answers: Sequence[Answer]) -> dict[str, dict[str, dict[str, Any]]]:
    """version -> language the question was asked in -> passed, total, percent."""
    languages = sorted({a.question.language for a in answers})
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for version in VERSION_NAMES:
        mine = [a for a in answers if a.version == version]
        out[version] = {
            code: _cell(
                sum(a.grade.passed for a in mine if a.question.language == code),
                sum(1 for a in mine if a.question.language == code),
            )
            for code in languages
        }
    return out


def spread(figures: dict[str, dict[str, dict[str, Any]]]) -> dict[str, float]:
    """Per category, the highest version's percentage minus the lowest's, in points."""
    out = {}
    for category in (*(c.value for c in Category), OVERALL):
        values = [figures[v][category]["percent"] for v in VERSION_NAMES]
        if None not in values:
            out[category] = round(max(values) - min(values), 1)
    return out


def targets(figures: dict[str, dict[str, dict[str, Any]]]) -> dict[str, Any]:
    full = figures[FULL]
    below = [
        c.value
        for c in Category
        if full[c.value]["total"] and full[c.value]["percent"] < FULL_CATEGORY_TARGET
    ]
    overall = full[OVERALL]["percent"]
    return {
        "full_overall_percent": overall,
        "full_overall_target": FULL_OVERALL_TARGET,
        "full_category_target": FULL_CATEGORY_TARGET,
        "full_categories_below_target": below,
        "met": overall is not None and overall >= FULL_OVERALL_TARGET and not below,
    }


def non_discriminating(figures: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """Categories every version scores the same on: they cannot tell the versions apart."""
    return [
        c.value
        for c in Category
        if figures[FULL][c.value]["total"]
        and len({figures[v][c.value]["passed"] for v in VERSION_NAMES}) == 1
    ]


def barely_discriminating(spreads: dict[str, float]) -> list[str]:
    """Categories whose versions all score within NEAR_SAME_SPREAD_POINTS of each other."""
    return [
        c.value
        for c in Category
        if c.value in spreads and spreads[c.value] < NEAR_SAME_SPREAD_POINTS
    ]


def latency(answers: Sequence[Answer]) -> dict[str, dict[str, float]]:
    out = {}
    for version in VERSION_NAMES:
        ms = [a.latency_ms for a in answers if a.version == version]
        out[version] = {
            **{f"p{p}_ms": round(float(np.percentile(ms, p)), 1) for p in LATENCY_PERCENTILES},
            "mean_tokens_used": round(
                statistics.fmean(a.tokens_used for a in answers if a.version == version), 1
            ),
            "max_tokens_used": max(a.tokens_used for a in answers if a.version == version),
        }
    return out


def data_figures(histories: Sequence[History], questions: Sequence[Question]) -> dict[str, Any]:
    events = [e for h in histories for e in h.events]
    return {
        "histories": len(histories),
        "languages": dict(Counter(h.language.code for h in histories)),
        "subjects": dict(Counter(h.subject_id for h in histories)),
        "events": len(events),
        "events_by_kind": dict(Counter(type(e).__name__ for e in events)),
        "checks_wrong": sum(not c.right for h in histories for c in h.checks),
        "narrations": sum(len(h.narrations) for h in histories),
        "months": sum(len(h.months) for h in histories),
        "quiet_months": sum(not m.active for h in histories for m in h.months),
        "questions": len(questions),
        "questions_by_category": {
            c.value: sum(q.category is c for q in questions) for c in Category
        },
        "cross_language_questions": sum(q.cross_language for q in questions),
    }


def question_rows(answers: Sequence[Answer]) -> dict[str, list[str]]:
    """Every question id, with the versions that passed it (the texts are the generator's)."""
    rows: dict[str, list[str]] = {}
    for a in answers:
        passed = rows.setdefault(a.question.qid, [])
        if a.grade.passed:
            passed.append(a.version)
    return rows


def document(
    metadata: dict[str, Any],
    settings: dict[str, Any],
    histories: Sequence[History],
    questions: Sequence[Question],
    question_set_sha256: str,
    first: RunResult,
    diff: Differences | None,
    elapsed_seconds: float,
) -> dict[str, Any]:
    figures = table(first.answers)
    spreads = spread(figures)
    return {
        "benchmark": "eval",
        **metadata,
        "elapsed_seconds": round(elapsed_seconds, 1),
        "settings": {
            **settings,
            "versions": {v.name: v.description for v in VERSIONS},
        },
        "data": {**data_figures(histories, questions), "question_set_sha256": question_set_sha256},
        "table": figures,
        "by_language": by_language(first.answers),
        "spread_points": spreads,
        "targets": targets(figures),
        "non_discriminating": non_discriminating(figures),
        "barely_discriminating": barely_discriminating(spreads),
        "determinism": None
        if diff is None
        else {
            "runs": 2,
            "compared": diff.compared,
            "score_differences": diff.scores,
            "block_differences": diff.blocks,
            "examples": list(diff.examples),
        },
        "replay": {
            "seconds": round(sum(r.seconds for r in first.replays), 1),
            "calls": sum(r.calls for r in first.replays),
            "episodes": sum(len(r.ids) for r in first.replays),
        },
        "run_seconds": round(first.seconds, 1),
        "latency": latency(first.answers),
        "full_failures": [
            {"qid": a.question.qid, "question": a.question.text, "reason": a.grade.reason}
            for a in first.answers
            if a.version == FULL and not a.grade.passed
        ],
        "passed_by_question": question_rows(first.answers),
    }
