"""The human-readable tables (Markdown) of a result document."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.locomo.dataset import DEV, HELD_OUT, OTHER
from bench.locomo.run import ALL, BASELINES, METHODS, RECALL_AT
from bench.locomo.scoring import GROUPS

SPLIT_TITLES = {
    DEV: "Dev split (conv-26, -30, -41, -42, -43: settings were looked at on these)",
    HELD_OUT: "Held-out split (conv-44, -47, -48, -49, -50: reported, never tuned on)",
    OTHER: "Other conversations",
    ALL: "All conversations of the run",
}
METHOD_NOTES = (
    "- Each conversation is ingested into a fresh server (one IngestEpisodes call) as one chain: "
    "a turn is an episode (speaker_a QUESTION, speaker_b ANSWER), its line `speaker: text` plus "
    "`[shares a photo: caption]` when it has one, at its session's time (UTC).",
    "- tutor-memory: BuildBlock in FULL mode over gRPC, `now` = the conversation's last session "
    "time; a collapsed memory counts for every episode it stands for.",
    "- bm25: the bm25s library (Lucene BM25, k1 = 1.5, b = 0.75, its defaults) over each "
    "turn's stored summary, with bm25s's English stop words and PyStemmer's English Snowball "
    "stemmer, independent of the server's own lexical index; vector: exact FAISS inner product "
    "over the stored embeddings, the question embedded by the same model; hybrid: the bm25 and "
    "vector "
    "rankings fused by reciprocal rank, 1 / (60 + rank) summed (Cormack et al. 2009; k = 60 as "
    "published, not tuned); recency: newest turns first.",
    "- Every baseline fills the server's block (same frame, lines, token counter, cap of "
    "memories and packing rule) at the same budget; plain recall@k ignores the budget.",
)
METRICS = (
    ("evidence_recall", "Evidence recall (share of evidence turns in the block)"),
    ("all_evidence", "All evidence present (share of questions with every evidence turn)"),
    ("session_recall", "Session recall (share of evidence sessions with a turn in the block)"),
)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _group_sizes(by_group: dict[str, Any]) -> dict[str, int]:
    return {g: int(v["n"]) for g, v in by_group.items()}


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def _block_table(figures: dict[str, Any], metric: str) -> list[str]:
    first = next(iter(figures[METHODS[0]].values()))
    sizes = _group_sizes(first)
    groups = [g for g in GROUPS if g in sizes]
    header = ["method", "budget", *(f"{g} (n={sizes[g]})" for g in groups)]
    rows = []
    for method in METHODS:
        for budget, by_group in figures[method].items():
            rows.append([method, budget, *(_pct(by_group.get(g, {}).get(metric)) for g in groups)])
    return _table(header, rows)


def _rank_table(figures: dict[str, Any], dragon: dict[str, Any]) -> list[str]:
    first = next(iter(figures[BASELINES[0]].values()))
    sizes = _group_sizes(first)
    groups = [g for g in GROUPS if g in sizes]
    header = ["method", "k", *(f"{g} (n={sizes[g]})" for g in groups)]
    rows = []
    for method in BASELINES:
        for k, by_group in figures[method].items():
            rows.append(
                [method, k, *(_pct(by_group.get(g, {}).get("evidence_recall")) for g in groups)]
            )
    for k in RECALL_AT:
        recall = dragon["k"][str(k)]["recall"]
        cells = []
        for g in groups:
            value = recall.get("overall_1_to_4_derived" if g == "overall" else g)
            cells.append("-" if value is None else f"{value:.1f}")
        rows.append(["DRAGON (paper)", str(k), *cells])
    return _table(header, rows)


def _split_section(split: str, figures: dict[str, Any], dragon: dict[str, Any]) -> list[str]:
    out = [
        f"## {SPLIT_TITLES[split]}",
        "",
        f"{figures['questions_asked']} questions with evidence asked; the server acted inside a "
        f"named period for {figures['questions_with_time_window']} of them.",
        "",
    ]
    for metric, title in METRICS:
        out += [f"### {title}", "", *_block_table(figures["block"], metric), ""]
    out += [*_memory_text_section(figures["memory_text_share"]), ""]
    out += [
        "### Plain recall@k of the baselines' rankings (no budget, evidence recall)",
        "",
        "DRAGON rows: the paper's figures, over all ten conversations (see the DRAGON section).",
        "",
        *_rank_table(figures["recall_at_k"], dragon),
        "",
    ]
    return out


def markdown(result: dict[str, Any]) -> str:
    dragon = result["dragon"]
    lines = [
        "# LoCoMo evidence recall",
        "",
        f"Run {result['timestamp']} at commit `{result['git_rev']}` on {result['host']} "
        f"({result['cpu_count']} x {result['cpu']}), Python {result['python']}; "
        f"{result['elapsed_seconds']:.0f} s in all. Tokens counted with {result['tokenizer']}; "
        f"server code from `{result['server_package']}`.",
        f"Data: `{result['data']['file']}` (sha256 `{result['data']['sha256'][:16]}…`), "
        f"conversations {', '.join(result['data']['conversations'])}; "
        f"{result['data']['questions_without_evidence']} questions without evidence not scored, "
        f"{result['data']['evidence_ids_dropped']} evidence ids naming no turn dropped.",
        "",
        "Figures are percentages. Categories in the file's numbering: single-hop 4, multi-hop 1, "
        "temporal 2, open-domain 3; overall = those four; month-named = the non-adversarial "
        "questions that name a month; adversarial (5) on its own, where retrieving the trick "
        "turn is not success.",
        "",
        *METHOD_NOTES,
        "",
    ]
    for split, figures in result["splits"].items():
        lines += _split_section(split, figures, dragon)
    lines += [
        "## DRAGON (paper) and the budgets its k correspond to",
        "",
        f"A rendered block line has a median of {dragon['median_line_tokens']} tokens over the "
        f"run's turns; the block's frame costs {dragon['frame_tokens']} tokens. Equivalent "
        "budget = k x median line; with frame = that plus the frame. "
        + dragon["overall_note"]
        + ".",
        "",
        *_table(
            ["k", "DRAGON R@k overall (1-5)", "derived overall (1-4)", "budget", "with frame"],
            [
                [
                    k,
                    f"{row['recall']['overall']:.1f}",
                    f"{row['recall']['overall_1_to_4_derived']:.1f}",
                    str(row["equivalent_budget"]),
                    str(row["equivalent_budget_with_frame"]),
                ]
                for k, row in dragon["k"].items()
            ],
        ),
        "",
        "## Ingest and BuildBlock latency during this run",
        "",
    ]
    ingest = result["ingest"]
    lines.append(
        f"IngestEpisodes: {ingest['episodes']} turns in {ingest['seconds']:.2f} s "
        f"({ingest['episodes_per_s']} episodes/s; one call per conversation, embedding included)."
    )
    lines += ["", *_latency_table(result["latency"]), ""]
    return "\n".join(lines)


MEMORY_TEXT_NOTE = (
    "Memory text: each shown turn's own words and its photo's caption, as its line shows them, "
    "each counted with the space before it by the block's own counter; the rest (frame, day "
    "lines, role marks `- student: `/`- you: `, speaker names, photo marks, repeat counts) is "
    "overhead. Pooled: the memory text of every block over the tokens of every block."
)


def _memory_text_section(shares: dict[str, Any]) -> list[str]:
    rows = [
        [
            budget,
            str(row["blocks"]),
            _pct(row["pooled_share"]),
            _pct(row["median_block_share"]),
            f"{row['memory_text_tokens'] / row['blocks']:.0f}",
            f"{row['block_tokens'] / row['blocks']:.0f}",
        ]
        for budget, row in shares.items()
    ]
    return [
        "### Share of the tutor-memory blocks' tokens that are memory text",
        "",
        MEMORY_TEXT_NOTE,
        "",
        *_table(
            [
                "budget",
                "blocks",
                "pooled share",
                "median block share",
                "mean memory tokens",
                "mean block tokens",
            ],
            rows,
        ),
    ]


def _latency_table(latency: dict[str, Any]) -> list[str]:
    rows = []
    for budget, row in latency.items():
        stages = ", ".join(f"{k} {v:.2f}" for k, v in row["server_stage_median_ms"].items())
        rows.append(
            [
                budget,
                str(row["calls"]),
                f"{row['p50_ms']:.1f}",
                f"{row['p95_ms']:.1f}",
                f"{row['p99_ms']:.1f}",
                f"{row['mean_tokens_used']:.0f}",
                f"{row['median_memories']:.0f}",
                stages,
            ]
        )
    return _table(
        ["budget", "calls", "p50 ms", "p95 ms", "p99 ms", "mean tokens", "median memories",
         "server stages (median ms)"],
        rows,
    )  # fmt: skip
