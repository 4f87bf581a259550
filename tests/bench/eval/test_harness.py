"""The ablation benchmark harness (bench/eval) end to end on one history through a real server,
run twice, so that the harness never rots."""

from __future__ import annotations

import json
from pathlib import Path

from bench.eval.cli import main
from bench.eval.generator import DEFAULT_SEED, generate_all
from bench.eval.questions import Category, fingerprint, question_set
from bench.eval.run import VERSION_NAMES

# Categories only a memory can pass: NONE shows no memory and never says "no record".
MEMORY_ONLY = (Category.WRONG, Category.ACTIVE_MONTH, Category.EMPTY_MONTH, Category.OLD_MATCH)


def test_one_history_runs_through_every_version_twice(tmp_path: Path) -> None:
    argv = ["--histories", "1", "--out-dir", str(tmp_path), "--name", "run"]
    assert main([*argv, "--print-failures", "none"]) == 0

    result = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    report = (tmp_path / "run.md").read_text(encoding="utf-8")
    failures = (tmp_path / "run-failures.md").read_text(encoding="utf-8")
    questions = question_set(generate_all(1), DEFAULT_SEED)

    assert result["data"]["question_set_sha256"] == fingerprint(questions)
    assert report.startswith("# Ablation benchmark")
    table = result["table"]
    for version in VERSION_NAMES:
        assert table[version]["overall"]["total"] == len(questions)
        for category in Category:
            asked = sum(q.category is category for q in questions)
            assert table[version][category.value]["total"] == asked
    for category in MEMORY_ONLY:
        assert table["none"][category.value]["passed"] == 0, category
    assert table["full"]["overall"]["passed"] >= table["none"]["overall"]["passed"]
    # Every failure is in the failures file with its block.
    failed = sum(
        table[v]["overall"]["total"] - table[v]["overall"]["passed"] for v in VERSION_NAMES
    )
    assert failures.count("\n### ") == failed
    # The same histories and questions on a fresh server grade the same.
    assert result["determinism"]["compared"] == 4 * len(questions)
    assert result["determinism"]["score_differences"] == 0
    assert result["latency"]["full"]["max_tokens_used"] <= result["settings"]["budget_tokens"]
