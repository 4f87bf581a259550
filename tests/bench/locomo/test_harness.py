"""The LoCoMo benchmark harness (bench/locomo) end to end, on a hand-checked tiny conversation and
on one real conversation with a few questions, so that the harness never rots.

The tiny conversation has twelve turns in two sessions; its expected figures below were worked
out by hand from the turn order (recency) and the words the questions share with the turns.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench.locomo.cli import main
from bench.locomo.dataset import (
    LOCOMO_FILE,
    Qa,
    load_conversations,
    month_names,
    names_month,
    parse_evidence,
)
from bench.locomo.scoring import groups_of, score

from tutor_memory.models.embedder import UseOnnxEmbedder

SESSION_1 = [
    ("Alice", "Hi Bob, how was your weekend?"),
    ("Bob", "Great! I adopted a tortoise and named him Zebedee."),
    ("Alice", "Lovely. I started learning the cello last week."),
    ("Bob", "That sounds hard, is it?"),
    ("Alice", "Very, but my teacher is patient."),
    ("Bob", "Good teachers make all the difference."),
    ("Alice", "They do. Anyway, I have to go now."),
    ("Bob", "Talk soon!"),
]
SESSION_2 = [
    ("Bob", "Zebedee ate all my strawberries yesterday."),
    ("Alice", "Ha! Naughty thing."),
    ("Bob", "How is the music going?"),
    ("Alice", "See you at the marathon in July."),
]
QAS = [
    # Single-hop: only D1:2 has "tortoise". Recency's top 5 (D2:4..D2:1, D1:8) misses it but
    # holds a turn of its session; its top 10 leaves out the two oldest turns, D1:1 and D1:2.
    {"question": "What did Bob name his tortoise?", "evidence": ["D1:2"], "category": 4},
    # Multi-hop: D2:1 is in recency's top 5, D1:3 is not; both sessions are.
    {
        "question": "Which instrument does Alice play and who ate the strawberries?",
        "evidence": ["D1:3; D2:1"],
        "category": 1,
    },
    # Temporal, names a month: the newest turn.
    {"question": "What is happening in July?", "evidence": ["D2:4"], "category": 2},
    # Adversarial: reported on its own, never in "overall".
    {"question": "What did Alice name her tortoise?", "evidence": ["D1:2"], "category": 5},
    # Not scored: no evidence, and evidence naming no turn.
    {"question": "Is a tortoise a reptile?", "evidence": [], "category": 3},
    {"question": "What did they say last?", "evidence": ["D9:9"], "category": 4},
]


def tiny_locomo(path: Path) -> Path:
    conversation: dict[str, Any] = {"speaker_a": "Alice", "speaker_b": "Bob"}
    for n, (when, turns) in enumerate(
        [("1:56 pm on 8 May, 2023", SESSION_1), ("10:00 am on 3 June, 2023", SESSION_2)], start=1
    ):
        conversation[f"session_{n}_date_time"] = when
        conversation[f"session_{n}"] = [
            {"speaker": speaker, "dia_id": f"D{n}:{i}", "text": text}
            for i, (speaker, text) in enumerate(turns, start=1)
        ]
    # A shared photo: its caption goes into the turn's line.
    conversation["session_2"][1]["blip_caption"] = "a photo of a tortoise in a garden"
    path.write_text(
        json.dumps([{"sample_id": "conv-tiny", "conversation": conversation, "qa": QAS}]),
        encoding="utf-8",
    )
    return path


def run_harness(argv: list[str], out_dir: Path, embedder: UseOnnxEmbedder) -> dict[str, Any]:
    assert main([*argv, "--out-dir", str(out_dir), "--name", "run"], embedder) == 0
    assert (out_dir / "run.md").read_text(encoding="utf-8").startswith("# LoCoMo evidence recall")
    result: dict[str, Any] = json.loads((out_dir / "run.json").read_text(encoding="utf-8"))
    return result


def test_evidence_strings_are_split_and_ids_made_canonical() -> None:
    raw = ["D8:6; D9:17", "D9:1 D4:4", "D:11:26", "D30:05", "D"]
    assert parse_evidence(raw) == ["D8:6", "D9:17", "D9:1", "D4:4", "D11:26", "D30:5", "D"]


def test_a_question_names_a_month_only_with_the_capitalised_full_name() -> None:
    months = month_names()
    assert names_month("What setback did Melanie face in October 2023?", months)
    assert names_month("What did she do in May?", months)
    assert not names_month("What may Caroline paint next?", months)
    assert not names_month("What did she do in Oct?", months)


def test_score_counts_turns_whole_evidence_and_sessions() -> None:
    s = score(["D1:1", "D1:2", "D3:4"], ["D1:2", "D3:9", "D5:1"])
    assert s.evidence_recall == pytest.approx(1 / 3)
    assert s.all_evidence == 0.0
    assert s.session_recall == 1.0  # sessions 1 and 3 each have a turn in the set
    whole = score(["D2:1", "D2:2"], ["D2:2", "D2:1", "D7:7"])
    assert (whole.evidence_recall, whole.all_evidence, whole.session_recall) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="no recall"):
        score([], ["D1:1"])


def test_adversarial_questions_stay_out_of_overall_and_the_month_subset() -> None:
    def qa(category: int) -> Qa:
        return Qa(0, "q", category, ("D1:1",), (), names_month=True)

    assert groups_of(qa(5)) == ["adversarial"]
    assert groups_of(qa(2)) == ["temporal", "overall", "month-named"]


def test_tiny_conversation_end_to_end_gives_the_hand_checked_figures(
    tmp_path: Path, embedder: UseOnnxEmbedder
) -> None:
    data = tiny_locomo(tmp_path / "tiny.json")
    result = run_harness(["--data", str(data), "--budgets", "1500"], tmp_path, embedder)

    assert result["data"]["questions_without_evidence"] == 2
    assert result["data"]["evidence_ids_dropped"] == 1
    assert result["data"]["month_named_questions"] == 1
    assert result["ingest"]["episodes"] == 12
    assert result["latency"]["1500"]["calls"] == 4
    split = result["splits"]["other"]
    assert split["questions_asked"] == 4

    recency_at_5 = split["recall_at_k"]["recency"]["5"]
    assert recency_at_5["single-hop"] == {
        "n": 1, "evidence_recall": 0.0, "all_evidence": 0.0, "session_recall": 1.0,
    }  # fmt: skip
    assert recency_at_5["multi-hop"] == {
        "n": 1, "evidence_recall": 0.5, "all_evidence": 0.0, "session_recall": 1.0,
    }  # fmt: skip
    assert recency_at_5["overall"] == {
        "n": 3, "evidence_recall": 0.5, "all_evidence": 0.3333, "session_recall": 1.0,
    }  # fmt: skip
    assert recency_at_5["month-named"]["evidence_recall"] == 1.0
    assert recency_at_5["adversarial"]["n"] == 1
    assert split["recall_at_k"]["recency"]["10"]["single-hop"]["evidence_recall"] == 0.0
    assert split["recall_at_k"]["recency"]["25"]["overall"]["evidence_recall"] == 1.0
    # "tortoise" is in D1:2 and in the caption of D2:2, "bob" in D1:2 only of the two.
    assert split["recall_at_k"]["bm25"]["5"]["single-hop"]["evidence_recall"] == 1.0

    # All twelve lines (about 25 tokens each) fit in 1,500 tokens with the frame.
    block = split["block"]
    assert block["recency"]["1500"]["overall"]["all_evidence"] == 1.0
    # The hybrid ranks every turn (the vector ranking holds them all), so all twelve fit too.
    assert block["hybrid"]["1500"]["overall"]["all_evidence"] == 1.0
    assert block["tutor-memory"]["1500"]["single-hop"]["evidence_recall"] == 1.0


def test_one_real_conversation_runs_with_a_few_questions(
    tmp_path: Path, embedder: UseOnnxEmbedder
) -> None:
    argv = ["--conversations", "conv-30", "--max-questions", "3", "--budgets", "300"]
    result = run_harness(argv, tmp_path, embedder)

    (conversation,) = load_conversations(LOCOMO_FILE, ["conv-30"])
    assert result["data"]["conversations"] == ["conv-30"]
    assert result["ingest"]["episodes"] == len(conversation.turns) == 369
    assert result["latency"]["300"]["calls"] == 3
    assert result["latency"]["300"]["mean_tokens_used"] <= 300
    split = result["splits"]["dev"]
    assert split["questions_asked"] == 3
    for method, budgets in split["block"].items():
        overall = budgets["300"]["overall"]
        assert overall["n"] == 3, method
        for metric in ("evidence_recall", "all_evidence", "session_recall"):
            assert 0.0 <= overall[metric] <= 1.0, (method, metric)
        # Finding every evidence turn of a question implies finding its sessions.
        assert overall["session_recall"] >= overall["all_evidence"], method
    dragon = result["dragon"]
    assert dragon["k"]["5"]["equivalent_budget"] == round(5 * dragon["median_line_tokens"])
