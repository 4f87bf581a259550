"""The LoCoMo harness's two reports beside recall: the share of a block's tokens that are memory
text (bench/locomo/memory_text.py), and the ablation of recall's levers (bench/locomo/ablation.py),
the latter on the hand-checked tiny conversation of test_harness.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench.locomo.ablation import HeldOutRefused, check_conversations
from bench.locomo.cli import main
from bench.locomo.dataset import DEV_CONVERSATIONS, load_conversations
from bench.locomo.ingest import PHOTO_CLOSE, PHOTO_OPEN, speaker_mark, summary_of, turn_line
from bench.locomo.memory_text import block_memory_tokens, memory_pieces, memory_tokens

from tests.bench.locomo.test_harness import tiny_locomo
from tutor_memory.domain.episodes import Kind
from tutor_memory.domain.recall.block_text import memory_line
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.models.tokenizers import load_counter
from tutor_memory_client._proto import memory_pb2 as pb

COUNTER = load_counter(None)


def test_memory_text_is_the_words_and_the_caption_without_the_marks() -> None:
    assert memory_pieces("Bob: Talk soon!", "Bob") == ["Talk soon!"]
    assert memory_pieces("Bob: Ha! [shares a photo: a tortoise]", "Bob") == ["Ha!", "a tortoise"]
    # A photo with no words, and a caption cut by the summary limit.
    assert memory_pieces("Bob: [shares a photo: a cat]", "Bob") == ["a cat"]
    assert memory_pieces("Bob: Look [shares a photo: a ca…", "Bob") == ["Look", "a ca…"]


def test_the_pieces_and_the_marks_add_up_to_the_line(tmp_path: Path) -> None:
    """What memory text counts is exactly what its line spends on it: every line of the tiny
    conversation costs its marks plus its pieces, to the token."""
    (conversation,) = load_conversations(tiny_locomo(tmp_path / "tiny.json"), None)
    for turn in conversation.turns:
        summary = summary_of(turn_line(turn))
        line = memory_line(Kind.ANSWER, summary) + "\n"
        marks = COUNTER.count(memory_line(Kind.ANSWER, speaker_mark(turn.speaker).rstrip()) + "\n")
        if turn.caption:
            marks += COUNTER.count(" " + PHOTO_OPEN.rstrip()) + COUNTER.count(PHOTO_CLOSE)
        pieces = memory_pieces(summary, turn.speaker)
        assert COUNTER.count(line) == marks + memory_tokens(pieces, COUNTER), line


def test_a_blocks_memory_text_counts_each_shown_memory_once(tmp_path: Path) -> None:
    (conversation,) = load_conversations(tiny_locomo(tmp_path / "tiny.json"), None)
    first, photo = conversation.turns[1], conversation.turns[9]
    reply = pb.BuildBlockReply(
        memories=[
            pb.BlockMemory(episode_id=1, line=memory_line(Kind.ANSWER, turn_line(first), 2)),
            pb.BlockMemory(episode_id=2, line=memory_line(Kind.QUESTION, turn_line(photo))),
        ]
    )
    expected = (
        COUNTER.count(" Great! I adopted a tortoise and named him Zebedee.")
        + COUNTER.count(" Ha! Naughty thing.")
        + COUNTER.count(" a photo of a tortoise in a garden")
    )
    assert block_memory_tokens(reply, {1: first, 2: photo}, COUNTER) == expected


def test_an_ablation_refuses_held_out_conversations_and_defaults_to_dev() -> None:
    assert check_conversations(None) == list(DEV_CONVERSATIONS)
    with pytest.raises(HeldOutRefused, match="conv-44 is held out"):
        check_conversations(["conv-26", "conv-44"])


def test_the_tiny_run_reports_the_memory_text_share_and_an_ablation_row_per_lever(
    tmp_path: Path, embedder: UseOnnxEmbedder
) -> None:
    data = tiny_locomo(tmp_path / "tiny.json")
    argv = ["--data", str(data), "--budgets", "300,1500", "--out-dir", str(tmp_path)]
    assert main([*argv, "--name", "run"], embedder) == 0
    result: dict[str, Any] = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    share = result["splits"]["other"]["memory_text_share"]["1500"]
    assert share["blocks"] == 4
    # The mean is reported to one decimal.
    mean = result["latency"]["1500"]["mean_tokens_used"]
    assert abs(share["block_tokens"] / 4 - mean) <= 0.05 + 1e-9
    assert 0 < share["memory_text_tokens"] < share["block_tokens"]
    assert share["pooled_share"] == round(share["memory_text_tokens"] / share["block_tokens"], 4)
    assert "memory text" in (tmp_path / "run.md").read_text(encoding="utf-8")

    ablation = [
        *argv,
        "--conversations",
        "conv-tiny",
        "--ablation",
        "--ablation-levers",
        "bm25,period",
    ]
    ablation += ["--name", "abl"]
    assert main(ablation, embedder) == 0
    doc: dict[str, Any] = json.loads((tmp_path / "abl.json").read_text(encoding="utf-8"))
    assert [(r["name"], r["off"]) for r in doc["rows"]] == [
        ("full server", []),
        ("without bm25", ["bm25"]),
        ("without period", ["period"]),
    ]
    full = doc["rows"][0]
    # The full server's row is the comparison's own tutor-memory figures.
    assert full["block"]["1500"] == result["splits"]["other"]["block"]["tutor-memory"]["1500"]
    assert full["block"]["1500"]["overall"]["n"] == 3
    assert doc["rows"][2]["questions_with_time_window"] == 0
    md = (tmp_path / "abl.md").read_text(encoding="utf-8")
    assert md.startswith("# LoCoMo ablation")
    assert "| without bm25 |" in md
