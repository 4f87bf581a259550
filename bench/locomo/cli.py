"""`python -m bench.locomo`: runs the benchmark and writes `<out-dir>/<name>.json` and `.md`."""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tutor_memory
from bench._meta import REPO_ROOT, RESULTS_DIR, run_metadata
from bench.locomo import ablation_report, results
from bench.locomo.ablation import ABLATION_RUN_NAME, ROWS, run_ablation
from bench.locomo.dataset import LOCOMO_FILE, Conversation, load_conversations
from bench.locomo.ingest import SUBJECT
from bench.locomo.report import markdown
from bench.locomo.run import BUDGETS, RECALL_AT, Options, run_conversation
from tutor_memory.domain.recall.levers import Lever, parse_levers
from tutor_memory.models.embedder import Embedder, load_embedder
from tutor_memory.models.tokenizers import load_counter

FULL_RUN_NAME = "locomo"
# A run on fewer conversations or questions never overwrites the full run's files by default.
SUBSET_RUN_NAME = "locomo-subset"


def _csv(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.locomo", description=__doc__)
    p.add_argument("--data", type=Path, default=LOCOMO_FILE, help="the locomo10.json file")
    p.add_argument(
        "--conversations",
        type=_csv,
        default=None,
        help="comma-separated sample ids (default: all, in file order)",
    )
    p.add_argument(
        "--max-questions", type=int, default=None, help="at most this many per conversation"
    )
    p.add_argument(
        "--budgets",
        type=lambda v: [int(x) for x in _csv(v)],
        default=list(BUDGETS),
        help="comma-separated token budgets (default: %(default)s)",
    )
    p.add_argument(
        "--ablation",
        action="store_true",
        help="instead of the comparison: the server's recall with each lever off in turn, on the "
        f"dev split (default conversations; held-out ones are refused), written as "
        f"{ABLATION_RUN_NAME}.json/.md",
    )
    p.add_argument(
        "--ablation-levers",
        type=lambda v: sorted(parse_levers(v).off, key=list(Lever).index),
        default=None,
        help="with --ablation: only these levers' rows (comma-separated; default: every lever: "
        + ", ".join(lever.value for lever in Lever)
        + ")",
    )
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    p.add_argument(
        "--name",
        default=None,
        help=f"file name stem (default: {FULL_RUN_NAME}, or {SUBSET_RUN_NAME} for a subset)",
    )
    return p


def _display_path(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(REPO_ROOT.parent))
    except ValueError:
        return path.name


def run(options: Options, embedder: Embedder | None = None) -> dict[str, Any]:
    """Runs the benchmark and returns the result document (nothing is written)."""
    started = time.perf_counter()
    conversations: list[Conversation] = load_conversations(options.data, options.conversations)
    embedder = embedder or load_embedder()
    counter = load_counter(None)  # what a server started without --tokenizer counts with
    runs = []
    for conversation in conversations:
        t = time.perf_counter()
        runs.append(run_conversation(conversation, options, embedder, counter))
        print(
            f"{conversation.sample_id}: {len(runs[-1].asked)} questions, "
            f"{time.perf_counter() - t:.1f} s",
            file=sys.stderr,
        )
    budgets = list(options.budgets)
    return {
        "benchmark": "locomo",
        **run_metadata(),
        "elapsed_seconds": round(time.perf_counter() - started, 1),
        "tokenizer": counter.name,
        # Where the server code under test was imported from (a checkout, or a snapshot of it).
        "server_package": str(Path(tutor_memory.__file__).parent),
        "embedding_model": embedder.model_id,
        "data": {
            "file": _display_path(options.data),
            "sha256": hashlib.sha256(options.data.read_bytes()).hexdigest(),
            "conversations": [c.sample_id for c in conversations],
            "turns": sum(len(c.turns) for c in conversations),
            "questions": sum(len(c.qas) for c in conversations),
            "questions_without_evidence": sum(
                not q.has_evidence for c in conversations for q in c.qas
            ),
            "evidence_ids_dropped": sum(
                len(q.dropped_evidence) for c in conversations for q in c.qas
            ),
            "month_named_questions": sum(q.names_month for c in conversations for q in c.qas),
        },
        "settings": {
            "subject_id": SUBJECT,
            "budgets": budgets,
            "recall_at_k": list(RECALL_AT),
            "max_questions_per_conversation": options.max_questions,
            "block_mode": "FULL",
            "now": "the conversation's last session time",
            "time_zone": "UTC",
            "speaker_a_kind": "QUESTION",
            "speaker_b_kind": "ANSWER",
        },
        "ingest": results.ingest_figures(runs),
        "latency": results.latency(runs, budgets),
        "splits": results.splits(runs, budgets),
        "dragon": results.dragon(runs),
    }


def write(result: dict[str, Any], out_dir: Path, name: str) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{name}.json"
    md_path = out_dir / f"{name}.md"
    json_path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    render = ablation_report.markdown if result["benchmark"] == "locomo-ablation" else markdown
    md_path.write_text(render(result) + "\n", encoding="utf-8")
    return json_path, md_path


def main(argv: Sequence[str], embedder: Embedder | None = None) -> int:
    args = parser().parse_args(argv)
    options = Options(args.data, args.conversations, args.max_questions, args.budgets)
    if args.ablation:
        rows = ROWS
        if args.ablation_levers is not None:
            rows = (
                ROWS[0],
                *((f"without {lever.value}", (lever,)) for lever in args.ablation_levers),
            )
        result = run_ablation(options, embedder or load_embedder(), load_counter(None), rows)
        json_path, md_path = write(result, args.out_dir, args.name or ABLATION_RUN_NAME)
        print(ablation_report.markdown(result))
        print(f"wrote {json_path} and {md_path}", file=sys.stderr)
        return 0
    subset = args.conversations is not None or args.max_questions is not None
    name = args.name or (SUBSET_RUN_NAME if subset else FULL_RUN_NAME)
    result = run(options, embedder)
    json_path, md_path = write(result, args.out_dir, name)
    print(markdown(result))
    print(f"wrote {json_path} and {md_path}", file=sys.stderr)
    return 0
