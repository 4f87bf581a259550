"""What each recall lever adds: the dev split asked of the full server, then of a server with one
lever off at a time (`tutor-memory serve --recall-off`, `domain.recall.levers`), every other
setting equal. Only the server's blocks are scored; the baselines do not change between rows.

Dev split only (the team's LoCoMo rule): a held-out conversation is refused.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from bench._meta import run_metadata
from bench.locomo.dataset import DEV_CONVERSATIONS, HELD_OUT, load_conversations, split_of
from bench.locomo.results import memory_text_share
from bench.locomo.run import SERVER, ConversationRun, Options, run_conversation
from bench.locomo.scoring import by_group
from tutor_memory.domain.recall.levers import Lever
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.models.embedder import Embedder

ABLATION_RUN_NAME = "locomo-ablation"
FULL_ROW = "full server"
# Every lever, each turned off on its own, in this order.
ROWS: tuple[tuple[str, tuple[Lever, ...]], ...] = (
    (FULL_ROW, ()),
    *((f"without {lever.value}", (lever,)) for lever in Lever),
)
LEVER_NOTES = {
    Lever.LEXICAL: "BM25 over the whole history (the lexical set, and so the neighbours of its "
    "matches)",
    Lever.DENSE: "nearest neighbours of the query's embedding (the dense set, and so the "
    "neighbours of its matches)",
    Lever.NEIGHBOURS: "the turns next to the best lexical and dense matches",
    Lever.CENTRING: "dense neighbours found about the chain's mean (from 200 episodes); off: by "
    "plain cosine, with the plain match threshold",
    Lever.PERIOD: "the period the question names (its set, the filter to it, the no-record "
    "statement)",
    Lever.CONCEPTS: "concept routing: episodes tagged with a concept the question names or the "
    "subject map routes it to",
    Lever.CALIBRATION: "each set's scores scaled to its best (dense from its match threshold); "
    "off: reciprocal-rank relevance, (60 + 1) / (60 + rank)",
}


class HeldOutRefused(ValueError):
    pass


def check_conversations(ids: Sequence[str] | None) -> list[str]:
    """The conversations an ablation may run on: the dev split by default; never held-out."""
    chosen = list(ids) if ids is not None else list(DEV_CONVERSATIONS)
    held_out = [c for c in chosen if split_of(c) == HELD_OUT]
    if held_out:
        raise HeldOutRefused(f"ablations run on the dev split only; {held_out[0]} is held out")
    return chosen


def row_figures(runs: Sequence[ConversationRun], budgets: Sequence[int]) -> dict[str, Any]:
    scored = [s for r in runs for s in r.scored if s.method == SERVER]
    return {
        "questions_asked": sum(len(r.asked) for r in runs),
        "questions_with_time_window": sum(r.questions_windowed for r in runs),
        "block": {
            str(b): by_group((s.qa, s.score) for s in scored if s.budget == b) for b in budgets
        },
        "memory_text_share": memory_text_share(runs, budgets),
    }


def run_ablation(
    options: Options,
    embedder: Embedder,
    counter: TokenCounter,
    rows: Sequence[tuple[str, tuple[Lever, ...]]] = ROWS,
) -> dict[str, Any]:
    """Runs every row over `options`' conversations and returns the result document."""
    started = time.perf_counter()
    ids = check_conversations(options.conversations)
    conversations = load_conversations(options.data, ids)
    out_rows = []
    for name, off in rows:
        row_options = replace(
            options, recall_off=tuple(lever.value for lever in off), baselines=False
        )
        t = time.perf_counter()
        runs = [run_conversation(c, row_options, embedder, counter) for c in conversations]
        print(f"{name}: {time.perf_counter() - t:.1f} s", file=sys.stderr)
        out_rows.append({"name": name, "off": [lever.value for lever in off],
                         **row_figures(runs, options.budgets)})  # fmt: skip
    return {
        "benchmark": "locomo-ablation",
        **run_metadata(),
        "elapsed_seconds": round(time.perf_counter() - started, 1),
        "tokenizer": counter.name,
        "embedding_model": embedder.model_id,
        "conversations": ids,
        "settings": {
            "budgets": list(options.budgets),
            "max_questions_per_conversation": options.max_questions,
            "block_mode": "FULL",
        },
        "levers": {lever.value: LEVER_NOTES[lever] for lever in Lever},
        "rows": out_rows,
    }
