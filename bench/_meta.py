"""What every benchmark records beside its figures: commit, machine, time; and where it writes."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "bench" / "results"


def git_revision() -> str:
    """HEAD, marked `-dirty` when tracked files other than benchmark results have uncommitted
    changes; "uncommitted" without git."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            # Results written by earlier benchmarks of the same run are not a change of code.
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "uncommitted"
    return f"{head}-dirty" if dirty else head


def run_metadata() -> dict[str, Any]:
    return {
        "git_rev": git_revision(),
        "host": platform.node(),
        "cpu_count": os.cpu_count(),
        "cpu": _cpu_model(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "timestamp": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def write_results(name: str, result: dict[str, Any], directory: Path = RESULTS_DIR) -> Path:
    """Writes `<directory>/<name>.json`; another directory keeps a trial run (a test's) from
    overwriting the committed results."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.json"
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    shown = path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path
    print(f"wrote {shown}", file=sys.stderr)
    return path


def print_table(rows: list[tuple[str, str]]) -> None:
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
