"""The crash campaign (bench/chaos.py), three cycles: kill -9 under mixed ingest, appends and
Consolidate loses no acknowledged write, stores nothing twice, and every chain verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench.chaos import main

CYCLES = 3


@pytest.mark.slow
def test_three_crash_cycles_lose_nothing_and_duplicate_nothing(tmp_path: Path) -> None:
    code = main(["--cycles", str(CYCLES), "--out-dir", str(tmp_path), "--name", "chaos"])
    result = json.loads((tmp_path / "chaos.json").read_text(encoding="utf-8"))

    assert result["cycles"] == CYCLES
    assert result["lost"] == 0, result["problems"]["lost"]
    assert result["duplicates"] == 0, result["problems"]["duplicates"]
    assert result["verification_failures"] == 0, result["problems"]["verification_failures"]
    assert result["undigested"] == 0, result["problems"]["undigested"]
    assert result["digested_twice"] == 0, result["problems"]["digested_twice"]
    assert result["wrong_content"] == 0, result["problems"]["wrong_content"]
    assert result["unexpected_rows"] == 0, result["problems"]["unexpected_rows"]
    assert result["retry_problems"] == 0, result["problems"]["retry"]
    assert result["unexpected_errors"] == 0, result["problems"]["unexpected_errors"]
    assert result["reply_findings"] == 0, result["problems"]["reply_findings"]
    assert code == 0

    # The campaign did what it claims: every kill cut calls in flight, the load had been
    # acknowledged before, and the retry covered every item sent, inserting only what was missing.
    assert result["kills_with_calls_in_flight"] == CYCLES
    assert result["acknowledged"]["AppendEpisode"] > 0
    assert result["acknowledged"]["IngestEpisodes"] > 0
    assert result["acknowledged"]["Consolidate"] > 0
    assert result["digests_stored_at_end"] > 0
    retry = result["retry"]
    assert retry["rejected"] == 0
    assert retry["items"] == result["items_sent"]
    assert retry["inserted"] + retry["duplicate"] == retry["items"]
    acknowledged_items = result["acknowledged"]["AppendEpisode"]
    acknowledged_items += result["acknowledged"]["IngestEpisodes"]
    assert retry["duplicate"] >= acknowledged_items
    assert result["stored_episodes_at_end"] >= result["items_sent"]
    assert 0 < result["restart_serving_s"]["median"] <= result["restart_serving_s"]["max"]
    assert (tmp_path / "chaos.md").read_text(encoding="utf-8").startswith("# Crash campaign")
