"""`python -m bench.eval`: runs the ablation benchmark and writes `<out-dir>/<name>.json`, `.md`
and `<name>-failures.md`."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench._meta import RESULTS_DIR, run_metadata
from bench.eval.generator import DEFAULT_HISTORIES, DEFAULT_SEED, generate_all
from bench.eval.questions import fingerprint, question_set
from bench.eval.report import failure, failures, markdown
from bench.eval.results import document
from bench.eval.run import (
    BUDGET_TOKENS,
    PASSAGES_PER_QUESTION,
    VERSION_NAMES,
    Answer,
    differences,
    run_once,
)

FULL_RUN_NAME = "eval"
# A run on fewer histories or another seed never overwrites the full run's files by default.
SUBSET_RUN_NAME = "eval-subset"
# Which versions' failures are printed on stdout (all of them always go to the failures file).
PRINT_CHOICES = ("all", "full", "none")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.eval", description=__doc__)
    p.add_argument(
        "--histories",
        type=int,
        default=DEFAULT_HISTORIES,
        help="how many histories (the first N of the seed; default %(default)s)",
    )
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="default %(default)s")
    p.add_argument(
        "--budget",
        type=int,
        default=BUDGET_TOKENS,
        help="BuildBlock budget in tokens (default %(default)s)",
    )
    p.add_argument(
        "--runs",
        type=int,
        choices=(1, 2),
        default=2,
        help="2 (default) repeats the run on a fresh server and counts differences",
    )
    p.add_argument(
        "--print-failures",
        choices=PRINT_CHOICES,
        default="full",
        help="which versions' failures to print (default %(default)s)",
    )
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    p.add_argument(
        "--name",
        default=None,
        help=f"file name stem (default: {FULL_RUN_NAME}, or {SUBSET_RUN_NAME} when "
        "--histories, --seed or --budget differ from the defaults)",
    )
    return p


def run(histories: int, seed: int, budget: int, runs: int) -> tuple[dict[str, Any], list[Answer]]:
    """Runs the benchmark; returns the result document and the first run's answers."""
    started = time.perf_counter()
    generated = generate_all(histories, seed)
    questions = question_set(generated, seed)
    first = run_once(generated, questions, budget)
    diff = differences(first, run_once(generated, questions, budget)) if runs == 2 else None
    settings = {
        "seed": seed,
        "histories": histories,
        "budget_tokens": budget,
        "passages_per_question": PASSAGES_PER_QUESTION,
        "runs": runs,
    }
    result = document(
        run_metadata(),
        settings,
        generated,
        questions,
        fingerprint(questions),
        first,
        diff,
        time.perf_counter() - started,
    )
    return result, first.answers


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    subset = (args.histories, args.seed, args.budget) != (
        DEFAULT_HISTORIES,
        DEFAULT_SEED,
        BUDGET_TOKENS,
    )
    name = args.name or (SUBSET_RUN_NAME if subset else FULL_RUN_NAME)
    result, answers = run(args.histories, args.seed, args.budget, args.runs)
    out: Path = args.out_dir
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / f"{name}.json", out / f"{name}.md"
    failures_path = out / f"{name}-failures.md"
    json_path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(result) + "\n", encoding="utf-8")
    failures_path.write_text(failures(answers, VERSION_NAMES) + "\n", encoding="utf-8")
    printed = {"all": VERSION_NAMES, "full": ("full",), "none": ()}[args.print_failures]
    for answer in answers:
        if answer.version in printed and not answer.grade.passed:
            print(failure(answer))
    print(markdown(result))
    print(f"wrote {json_path}, {md_path} and {failures_path}", file=sys.stderr)
    return 0
