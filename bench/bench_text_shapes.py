"""Hostile text shapes (issue 12) through every splitter and detector of the domain.

Times each entry point of the text handling on the shapes the hostile-input issue measured: 30,000
dots then a letter, 64 KiB of dots then a letter, one 800-character Markdown heading line (the
shape that made the old heading pattern cubic: a run of spaces inside the title), the same line at
64 KiB, and 1 MB of "a. ". Each case runs in a forked child with a time cap (`--cap`, seconds), so
a quadratic case is reported as "> cap" instead of holding the run; the figure is the best of
`--repeat` runs (one run when the first takes over a second). A file reader that refuses a shape
(FileRejected: over a documented limit, as the 1 MB one-line text is) is timed to its refusal and
marked "(refused)"; any other exception fails the run.

Run from the repository root: `.venv/bin/python -m bench.bench_text_shapes`. Writes
bench/results/text_shapes.json and bench/results/text_shapes.md. With `--before FILE` (the JSON of
an earlier run, e.g. on the commit before a fix), the table shows both columns.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from bench._meta import RESULTS_DIR, print_table, run_metadata, write_results
from tutor_memory.domain.conceptmap.blocks import parse_blocks
from tutor_memory.domain.conceptmap.extract import OfflineExtractor
from tutor_memory.domain.conceptmap.markup import strip_markup
from tutor_memory.domain.conceptmap.teaching import detect_teaching, is_question
from tutor_memory.domain.files.errors import FileRejected
from tutor_memory.domain.files.passages import passages
from tutor_memory.domain.files.read import read_document
from tutor_memory.domain.honesty.grounding import SourcePassage, ground, split_sentences
from tutor_memory.domain.recall.asked_period import asked_window
from tutor_memory.domain.recall.narration import is_narration
from tutor_memory.domain.recall.record_mode import is_record_question, record_topic
from tutor_memory.domain.recall.timewindow import parse_time_window
from tutor_memory.domain.text.sentences import sentence_spans

NAME = "text_shapes"

# 2026-11-25 14:00 UTC, in microseconds: any fixed "now" will do for the detectors.
NOW_US = 1_795_615_200_000_000
TZ = "Europe/Rome"

SHAPES: dict[str, str] = {
    "30,000 dots then a letter": "." * 30_000 + "a",
    "64 KiB of dots then a letter": "." * 65_536 + "a",
    "one 800-character Markdown heading": "# a" + " " * 796 + "b",
    "one 64 KiB Markdown heading": "# a" + " " * (65_536 - 4) + "b",
    '1 MB of "a. "': "a. " * (1_000_000 // 3),
    # A BuildBlock query at its length limit (8,000 characters) of record phrases and topic
    # prepositions: the record topic's reading was quadratic in it before `record_topic` read
    # clause by clause.
    '8,000 characters of "did we do about "': ("did we do about " * 500)[:8000],
}

_PASSAGE = SourcePassage("f", 1, 1, "Osmosis is the diffusion of water across a membrane.")


def _markdown(text: str) -> object:
    return read_document(text.encode(), "notes.md", "text/markdown")


def _plain(text: str) -> object:
    return read_document(text.encode(), "notes.txt", "text/plain")


def _extract(text: str) -> object:
    return OfflineExtractor().extract(read_document(text.encode(), "notes.md", "text/markdown"))


def _passages(text: str) -> object:
    return passages(read_document(text.encode(), "notes.md", "text/markdown"))


ENTRY_POINTS: dict[str, Callable[[str], object]] = {
    "text.sentences.sentence_spans": sentence_spans,
    "honesty.grounding.split_sentences": split_sentences,
    "honesty.grounding.ground": lambda t: ground(t, [_PASSAGE], []),
    "recall.narration.is_narration": lambda t: is_narration(t, NOW_US, TZ),
    "recall.record_mode.is_record_question": is_record_question,
    "recall.record_mode.record_topic": record_topic,
    "recall.timewindow.parse_time_window": lambda t: parse_time_window(t, NOW_US, TZ),
    "recall.asked_period.asked_window": lambda t: asked_window(t, NOW_US, TZ),
    "conceptmap.teaching.detect_teaching": detect_teaching,
    "conceptmap.teaching.is_question": is_question,
    "conceptmap.markup.strip_markup": strip_markup,
    "conceptmap.blocks.parse_blocks (Markdown)": lambda t: list(parse_blocks(t, markdown=True)),
    "conceptmap.blocks.parse_blocks (plain)": lambda t: list(parse_blocks(t, markdown=False)),
    "files.read.read_document (text)": _plain,
    "files.read.read_document (Markdown)": _markdown,
    "files.passages.passages (Markdown)": _passages,
    "conceptmap.extract (Markdown file)": _extract,
}


def _child(entry: str, shape: str, repeat: int, out: Connection) -> None:
    function, text = ENTRY_POINTS[entry], SHAPES[shape]
    best = float("inf")
    try:
        for _ in range(repeat):
            started = time.perf_counter()
            try:
                function(text)
            except FileRejected:
                # A file reader's refusal (over a documented limit) is its answer to the shape:
                # timed like any other, and marked as a refusal.
                out.send((time.perf_counter() - started, True))
                return
            best = min(best, time.perf_counter() - started)
            if best > 1.0:
                break
    except Exception as exc:  # reported by the parent, which fails the run
        out.send(repr(exc))
        return
    out.send((best, False))


def _measure(entry: str, shape: str, repeat: int, cap: float) -> tuple[float | None, bool]:
    """Best seconds of `repeat` runs, or None when one run exceeded `cap` seconds, and whether
    the entry point refused the shape (FileRejected). Any other exception fails the run."""
    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(entry, shape, repeat, send))
    process.start()
    ready = receive.poll(cap * repeat + 5)
    if not ready:
        process.kill()
        process.join()
        return None, False
    answer: tuple[float, bool] | str = receive.recv()
    process.join()
    if isinstance(answer, str):
        raise RuntimeError(f"{entry} on {shape!r} raised {answer}")
    seconds, refused = answer
    return (seconds if seconds <= cap else None), refused


def _warm_up() -> None:
    # Language files, phrase indexes and the normalisation tables load once, in the parent, so
    # that no child measures them.
    for function in ENTRY_POINTS.values():
        function("Osmosis é a difusão. In July we covered it; ¿qué? الخلية.")


def _cell(seconds: float | None, cap: float, refused: bool = False) -> str:
    if seconds is None:
        return f"> {cap:g} s"
    return f"{seconds:.3f} s (refused)" if refused else f"{seconds:.3f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=float, default=30.0, help="seconds before a case is cut")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", type=Path, help="JSON of an earlier run, shown beside")
    args = parser.parse_args()
    # The commit of the code this run measures: taken before the cases run, since modules are
    # imported once, here.
    meta = run_metadata()
    _warm_up()
    before: dict[tuple[str, str], dict[str, Any]] = {}
    before_meta: dict[str, Any] = {}
    if args.before:
        earlier = json.loads(args.before.read_text(encoding="utf-8"))
        before_meta = earlier["meta"]
        before = {(r["entry_point"], r["shape"]): r for r in earlier["rows"]}
    rows: list[dict[str, Any]] = []
    for shape in SHAPES:
        for entry in ENTRY_POINTS:
            seconds, refused = _measure(entry, shape, args.repeat, args.cap)
            row: dict[str, Any] = {
                "shape": shape,
                "entry_point": entry,
                "characters": len(SHAPES[shape]),
                "seconds": seconds,
                "refused": refused,
                "cap_seconds": args.cap,
            }
            if (entry, shape) in before:
                row["before_seconds"] = before[(entry, shape)]["seconds"]
                row["before_refused"] = before[(entry, shape)].get("refused", False)
                row["before_cap_seconds"] = before[(entry, shape)]["cap_seconds"]
            rows.append(row)
            print(f"{shape:<36} {entry:<42} {_cell(seconds, args.cap, refused)}", flush=True)
    result = {"meta": meta, "before_meta": before_meta or None, "rows": rows}
    write_results(NAME, result)
    _write_table(result)
    print_table(
        [
            (
                f"{r['shape']} / {r['entry_point']}",
                _cell(r["seconds"], r["cap_seconds"], r["refused"]),
            )
            for r in rows
        ]
    )


def _write_table(result: dict[str, Any]) -> None:
    meta, before_meta = result["meta"], result["before_meta"]
    lines = [
        "# Hostile text shapes through the domain's splitters and detectors",
        "",
        f"Commit {meta['git_rev']} on {meta['cpu']} ({meta['cpu_count']} CPUs), "
        f"Python {meta['python']}, {meta['timestamp']}.",
    ]
    if before_meta:
        lines.append(f"Before: commit {before_meta['git_rev']}, {before_meta['timestamp']}.")
    lines += ["", "| shape | entry point | before | after |", "|---|---|---|---|"]
    for r in result["rows"]:
        earlier = (
            _cell(r["before_seconds"], r["before_cap_seconds"], r["before_refused"])
            if "before_seconds" in r
            else "—"
        )
        lines.append(
            f"| {r['shape']} | {r['entry_point']} | {earlier} | "
            f"{_cell(r['seconds'], r['cap_seconds'], r['refused'])} |"
        )
    (RESULTS_DIR / f"{NAME}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
