"""Benchmark the ONNX embedder: model load, single-query latency, batch throughput.

Run from the repository root::

    .venv/bin/python -m bench.bench_embed

Prints a table and writes ``bench/results/embed.json``.
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import numpy as np

from bench._meta import print_table, run_metadata, write_results
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.models.fetch import default_model_dir, fetch_model

QUERY = "How do plants turn sunlight into the energy they need to grow?"  # 12 words
QUERY_CALLS = 500
QUERY_WARMUP = 20
BATCH_TEXTS = 2_000
BATCH_SIZE = 64

_SUBJECTS = ["fractions", "the water cycle", "past participles", "Newton's laws", "the Renaissance"]
_TEMPLATES = [
    "Student struggled with {s} today",
    "Explained {s} using a drawing",
    "Quiz score on {s} improved",
    "Asked a follow-up question about {s}",
]


def short_texts(n: int) -> list[str]:
    """``n`` distinct short tutoring-note style texts."""
    return [
        f"{_TEMPLATES[i % len(_TEMPLATES)].format(s=_SUBJECTS[i % len(_SUBJECTS)])} (#{i})"
        for i in range(n)
    ]


def percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(samples), q))


def run() -> dict[str, Any]:
    model_path = fetch_model(default_model_dir())

    t0 = time.perf_counter()
    embedder = UseOnnxEmbedder(model_path, batch_size=BATCH_SIZE)
    load_s = time.perf_counter() - t0

    for _ in range(QUERY_WARMUP):
        embedder.embed([QUERY])
    latencies_ms: list[float] = []
    for _ in range(QUERY_CALLS):
        t = time.perf_counter()
        embedder.embed([QUERY])
        latencies_ms.append((time.perf_counter() - t) * 1000.0)

    texts = short_texts(BATCH_TEXTS)
    embedder.embed(texts[:BATCH_SIZE])  # warm-up
    t = time.perf_counter()
    vectors = embedder.embed(texts)
    batch_s = time.perf_counter() - t
    assert vectors.shape == (BATCH_TEXTS, embedder.dim)

    return {
        "benchmark": "embed",
        "model_id": embedder.model_id,
        "model_path": str(model_path),
        **run_metadata(),
        "intra_op_threads": 1,
        "load_s": round(load_s, 4),
        "query": {
            "text": QUERY,
            "words": len(QUERY.split()),
            "calls": QUERY_CALLS,
            "p50_ms": round(statistics.median(latencies_ms), 3),
            "p95_ms": round(percentile(latencies_ms, 95), 3),
            "mean_ms": round(statistics.fmean(latencies_ms), 3),
            "max_ms": round(max(latencies_ms), 3),
        },
        "batch": {
            "texts": BATCH_TEXTS,
            "batch_size": BATCH_SIZE,
            "seconds": round(batch_s, 4),
            "texts_per_s": round(BATCH_TEXTS / batch_s, 1),
        },
    }


def table(result: dict[str, Any]) -> list[tuple[str, str]]:
    query = result["query"]
    batch = result["batch"]
    return [
        ("model", result["model_id"]),
        ("host / cpus", f"{result['host']} / {result['cpu_count']}"),
        ("git", result["git_rev"]),
        ("model load", f"{result['load_s'] * 1000:.0f} ms"),
        (f"query p50 ({query['words']} words, n={query['calls']})", f"{query['p50_ms']:.2f} ms"),
        ("query p95", f"{query['p95_ms']:.2f} ms"),
        (
            f"batch ({batch['texts']} texts, batch {batch['batch_size']})",
            f"{batch['texts_per_s']:.0f} texts/s ({batch['seconds']:.2f} s)",
        ),
    ]


def main() -> int:
    result = run()
    print_table(table(result))
    write_results("embed", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
