"""The hostile-input benchmark (bench/bench_hostile.py) end to end in its quick mode, so that it
never rots: every case in every mode runs on a real server and gets a health figure, RSS figures
and its requests' statuses. The issue's targets are benchmark figures, not asserted here."""

from __future__ import annotations

import json
from pathlib import Path

from bench._hostile_cases import CASES, QUICK
from bench.bench_hostile import QUICK_NAME, main, modes


def test_quick_hostile_bench_records_every_case(tmp_path: Path) -> None:
    assert main(["--quick", "--out-dir", str(tmp_path)]) == 0

    result = json.loads((tmp_path / f"{QUICK_NAME}.json").read_text(encoding="utf-8"))
    report = (tmp_path / f"{QUICK_NAME}.md").read_text(encoding="utf-8")
    expected = [
        (case.name, mode, copies)
        for case in CASES
        if case.name in QUICK.cases
        for mode, copies in modes(case)
    ]
    runs = result["runs"]
    assert [(r["case"], r["mode"], r["copies"]) for r in runs] == expected
    assert any(mode == "files+appends" for _, mode, _ in expected)
    for run in runs:
        assert sum(run["statuses"].values()) == run["copies"] == len(run["calls"])
        health = run["health"]
        assert health["checks"] > 0, run["case"]
        assert health["worst_ms"] is not None
        assert health["worst_ms"] > 0
        assert run["health_idle"]["checks"] > 0
        rss = run["rss_mb"]
        assert 0 < rss["before"] <= rss["peak"]
        assert rss["growth"] == round(rss["peak"] - rss["before"], 1)
        assert set(run["targets"]) == {"health_ms", "rss_growth_mb"}
        assert isinstance(run["targets"]["health_ms"]["met"], bool)
        assert f"| {run['case']} | {run['rpc']} | {run['mode']} x{run['copies']} |" in report
        if run["mode"] == "files+appends":
            appends = run["appends_beside"]
            assert appends["calls"] > 0
            assert sum(appends["statuses"].values()) == appends["calls"]
    assert result["summary"]["runs"] == len(expected)
