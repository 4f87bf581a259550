"""`python -m bench.phrasing`: the server's current intent detectors over the hand-labelled
phrasing set; writes `<out-dir>/<name>.json` and `.md` (default bench/results/phrasing.*)."""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bench._meta import RESULTS_DIR, run_metadata
from bench.phrasing import detectors
from bench.phrasing.dataset import LANGUAGES, SET_DIR, LanguageSet, Message, load_set
from bench.phrasing.report import markdown
from bench.phrasing.scoring import Counts, Outcome, topic_matches

RUN_NAME = "phrasing"
RECORD = "record"
RECORD_TOPIC = "record_topic"
PERIOD = "period"
TEACHING = "teaching"
NARRATION = "narration"
DECISIONS = (RECORD, RECORD_TOPIC, PERIOD, TEACHING, NARRATION)
# Every language pooled: the counts summed, then precision and recall computed once.
OVERALL = "all"
# Decimal places of the JSON's ratios: a hundredth of a percent, finer than one item in ~750.
ROUND = 4

T = TypeVar("T")


def _timed(spent_ns: list[int], detect: Callable[[str], T], text: str) -> T:
    started = time.perf_counter_ns()
    answer = detect(text)
    spent_ns.append(time.perf_counter_ns() - started)
    return answer


def evaluate_language(
    ls: LanguageSet, spent_ns: dict[str, list[int]]
) -> dict[str, list[Outcome] | None]:
    """Each decision's outcomes over one language; None for a decision with no detector."""
    now_us, tz = ls.now_us, ls.time_zone
    on_messages: dict[str, tuple[Callable[[Message], bool], Callable[[str], bool]]] = {
        RECORD: (lambda m: m.record, detectors.record),
        PERIOD: (lambda m: m.period, lambda t: detectors.period(t, now_us, tz)),
        TEACHING: (lambda m: m.teaching, detectors.teaching),
    }
    out: dict[str, list[Outcome] | None] = {
        decision: [
            Outcome(m.text, label(m), _timed(spent_ns[decision], detect, m.text))
            for m in ls.messages
        ]
        for decision, (label, detect) in on_messages.items()
    }
    out[NARRATION] = [
        Outcome(
            n.text,
            n.narration,
            _timed(spent_ns[NARRATION], lambda t: detectors.narration(t, now_us, tz), n.text),
        )
        for n in ls.narrations
    ]
    extract = detectors.record_topic
    if extract is None:
        out[RECORD_TOPIC] = None
        return out
    topics: list[Outcome] = []
    for m in ls.messages:
        predicted = _timed(spent_ns[RECORD_TOPIC], extract, m.text) or ""
        expected = bool(m.record and m.topic)
        right = not expected or not predicted or topic_matches(predicted, m.topic)
        topics.append(Outcome(m.text, expected, bool(predicted), right))
    out[RECORD_TOPIC] = topics
    return out


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, ROUND)


def figures(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    counts = Counts.of(list(outcomes))
    return {
        "measured": True,
        "items": counts.items,
        "positives": sum(o.expected for o in outcomes),
        "true_positives": counts.true_positives,
        "false_positives": counts.false_positives,
        "false_negatives": counts.false_negatives,
        "precision": _rounded(counts.precision),
        "recall": _rounded(counts.recall),
        "f1": _rounded(counts.f1),
        "false_positive_texts": [o.text for o in outcomes if o.false_positive],
        "false_negative_texts": [o.text for o in outcomes if o.false_negative],
    }


def _not_measured(ls_list: Sequence[LanguageSet]) -> dict[str, Any]:
    return {
        "measured": False,
        "items": sum(len(ls.messages) for ls in ls_list),
        "positives": sum(bool(m.record and m.topic) for ls in ls_list for m in ls.messages),
        "why": "the server has no detector for this decision (bench/phrasing/detectors.py)",
    }


def _latency(spent_ns: dict[str, list[int]]) -> dict[str, Any]:
    return {
        d: {
            "calls": len(ns),
            "median_us": round(statistics.median(ns) / 1_000, 1),
            "max_us": round(max(ns) / 1_000, 1),
        }
        for d, ns in spent_ns.items()
        if ns
    }


def _set_digest(directory: Path) -> str:
    digest = hashlib.sha256()
    for language in LANGUAGES:
        digest.update((directory / f"{language}.json").read_bytes())
    return digest.hexdigest()


def run(directory: Path = SET_DIR) -> dict[str, Any]:
    """Scores the detectors on the set in `directory`; returns the result document."""
    sets = load_set(directory)
    spent_ns: dict[str, list[int]] = {d: [] for d in DECISIONS}
    per_language = {ls.language: evaluate_language(ls, spent_ns) for ls in sets}
    decisions: dict[str, dict[str, Any]] = {}
    for decision in DECISIONS:
        rows: dict[str, Any] = {}
        pooled: list[Outcome] = []
        for ls in sets:
            outcomes = per_language[ls.language][decision]
            if outcomes is None:
                rows[ls.language] = _not_measured([ls])
                continue
            rows[ls.language] = figures(outcomes)
            pooled += outcomes
        measured = all(per_language[ls.language][decision] is not None for ls in sets)
        rows[OVERALL] = figures(pooled) if measured else _not_measured(sets)
        decisions[decision] = rows
    return {
        "benchmark": RUN_NAME,
        **run_metadata(),
        "set": {
            "directory": str(directory.name),
            "sha256": _set_digest(directory),
            "languages": {
                ls.language: {
                    "messages": len(ls.messages),
                    "narrations": len(ls.narrations),
                    "now": ls.now.isoformat(),
                    "time_zone": ls.time_zone,
                }
                for ls in sets
            },
        },
        "detectors": detectors.sources(),
        "decisions": decisions,
        "detector_latency": _latency(spent_ns),
    }


def write(result: dict[str, Any], out_dir: Path, name: str) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{name}.json"
    md_path = out_dir / f"{name}.md"
    json_path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md_path.write_text(markdown(result) + "\n", encoding="utf-8")
    return json_path, md_path


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.phrasing", description=__doc__)
    p.add_argument("--set-dir", type=Path, default=SET_DIR, help="folder of <language>.json")
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    p.add_argument("--name", default=RUN_NAME, help="file name stem (default: %(default)s)")
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    result = run(args.set_dir)
    json_path, md_path = write(result, args.out_dir, args.name)
    print(markdown(result))
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)
    return 0
