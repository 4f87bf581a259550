"""What finding recall's dense neighbours about the chain's mean does (`VectorIndex.neighbours`).

Three measurements, each of the plain cosine against the cosine about the chain's mean:

1. **Dense retrieval alone on LoCoMo** (both splits, reported apart): each conversation's turns
   embedded as the LoCoMo benchmark stores them, each question with evidence (categories 1-4)
   embedded, and evidence recall@k of the k nearest turns. The server's other sets play no part.
2. **The match threshold** (dev split only, where the setting was chosen): the share of
   (question, turn) pairs at or above each threshold, for turns that are the question's evidence
   and for the others. `CENTRED_MATCH_MIN` is the centred value at which as few unrelated turns
   match as at the plain `SEMANTIC_MATCH_MIN`.
3. **Paraphrases through the server**: for each of PARAPHRASES, a chain of the paraphrase and
   OTHER_QUESTIONS questions of the query's own forms about other topics, then BuildBlock with the
   query at three budgets, on a server as designed and on one started with `--recall-off
   centring`; a pair counts when its memory is in the block. The pairs, forms and topics were
   written for this measurement in the session that added centring, after a first look at how
   the plain cosine ranked them: read them as a check of the class, not as held-out cases.

Run from the repository root::

    .venv/bin/python -m bench.bench_centring

Prints the tables and writes ``bench/results/centring.json`` and ``.md``.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import numpy.typing as npt
from tests.helpers.harness import question
from tests.helpers.server_process import ServerProcess

from bench._meta import run_metadata, write_results
from bench.locomo.dataset import (
    DEV,
    HELD_OUT,
    LOCOMO_FILE,
    Conversation,
    load_conversations,
)
from bench.locomo.ingest import SUBJECT, summary_of, turn_line, wait_for_vectors
from tutor_memory.domain.episodes import embedding_text
from tutor_memory.domain.recall.candidates import CENTRED_MATCH_MIN, SEMANTIC_MATCH_MIN
from tutor_memory.index.vectors import CENTRE_MIN_VECTORS
from tutor_memory.models.embedder import UseOnnxEmbedder
from tutor_memory.models.fetch import default_model_dir, fetch_model
from tutor_memory_client import ingest_messages
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

RESULT_NAME = "centring"
RECALL_AT = (5, 10, 25, 50)
THRESHOLDS = (0.20, 0.25, 0.30, 0.35, 0.40, 0.45)
# LoCoMo's categories 1-4 (adversarial questions, 5, are scored by nobody here).
CATEGORIES = (1, 2, 3, 4)

# The paraphrase probe: (memory, query), sharing no content word.
PARAPHRASES: tuple[tuple[str, str], ...] = (
    ("How do plants turn sunlight into sugar?",
     "Can you remind me what we learned about photosynthesis?"),
    ("Why does the heart keep pushing blood round the body all the time?",
     "what did we discuss about the circulatory system"),
    ("What makes an apple fall to the ground when it drops from a tree?",
     "explain gravity to me again"),
    ("Why did the people of Paris storm the Bastille in 1789?",
     "what caused the French Revolution?"),
    ("Come fanno le piante a produrre zucchero dalla luce del sole?",
     "ricordami cosa abbiamo detto sulla fotosintesi"),
    ("¿Por qué el agua empieza a burbujear a cien grados?",
     "¿qué vimos sobre el punto de ebullición?"),
    ("Which part of the cell makes the energy it needs?", "remind me about mitochondria"),
    ("How many sides does a hexagon have and what is each angle?",
     "what did we say about polygons?"),
    ("Wie entstehen Gebirge, wenn Kontinente zusammenstoßen?",
     "Was haben wir über Plattentektonik gelernt?"),
    ("Pourquoi la lune change-t-elle de forme chaque semaine?",
     "qu'est-ce qu'on a vu sur les phases lunaires ?"),
)  # fmt: skip
# Other things the student asked about, in the forms a question about a topic takes.
OTHER_TOPICS = (
    "fractions", "long division", "the water cycle", "volcanoes", "the Roman empire",
    "verbs in the past tense", "magnets", "the solar system", "electric circuits",
    "prime numbers", "World War One", "rainforests", "sound waves", "the periodic table",
    "the human skeleton", "decimals", "maps and compasses", "the Egyptian pyramids",
    "weather fronts", "acids and bases", "spelling rules", "rivers and deltas",
    "probability with dice", "the Vikings", "simple machines", "the immune system",
)  # fmt: skip
FORMS = (
    "What is {}?", "Can you remind me how {} works?", "What did we say about {}?",
    "explain {} to me again", "I don't get {}, help", "what did we learn about {} last time",
    "Could you go over {} once more?", "why is {} important?", "give me an example of {}",
    "what did we discuss about {}?",
)  # fmt: skip
OTHER_QUESTIONS = 300
PROBE_BUDGETS = (150, 300, 750)
PROBE_NOW = datetime(2026, 11, 20, 10, tzinfo=UTC)
# The LoCoMo harness's subject, so that its wait for a chain's embeddings serves here too.
PROBE_SUBJECT = SUBJECT
DAY_S = 86_400


def other_questions(n: int, seed: int) -> list[str]:
    """n questions of FORMS about OTHER_TOPICS, each numbered so that none collapse into one."""
    rng = random.Random(seed)
    return [f"{rng.choice(FORMS).format(rng.choice(OTHER_TOPICS))} ({i})" for i in range(n)]


def probe_history(memory: str, student: str, seed: int) -> list[pb.NewEpisode]:
    """The memory 200 days before PROBE_NOW, then OTHER_QUESTIONS questions ten minutes apart."""
    start = int(PROBE_NOW.timestamp()) - 200 * DAY_S
    texts = [memory, *other_questions(OTHER_QUESTIONS, seed)]
    return [
        question(
            text, student=student, subject=PROBE_SUBJECT, key=f"probe-{i}", seconds=start + 600 * i
        )
        for i, text in enumerate(texts)
    ]


def probe_request(
    student: str, query: str, budget: int, *, explain: bool = False
) -> pb.BuildBlockRequest:
    """The FULL block a probe asks for, at PROBE_NOW in UTC."""
    request = pb.BuildBlockRequest(
        student_id=student,
        subject_id=PROBE_SUBJECT,
        query=query,
        budget_tokens=budget,
        time_zone="UTC",
        mode=pb.BLOCK_MODE_FULL,
        explain=explain,
    )
    request.now.FromDatetime(PROBE_NOW)
    return request


# -- 1 and 2: LoCoMo, by the embedder alone ------------------------------------------------------


def _unit(rows: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    out: npt.NDArray[np.float32] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return out


def _similarities(
    embedder: UseOnnxEmbedder, conversation: Conversation, centred: bool
) -> tuple[npt.NDArray[np.float32], list[npt.NDArray[np.bool_]], list[int]]:
    """(questions x turns similarities, each question's evidence mask, each question's category)
    for the conversation's questions with evidence in CATEGORIES."""
    turns = np.asarray(
        embedder.embed(
            [embedding_text(summary_of(turn_line(t)), turn_line(t)) for t in conversation.turns]
        ),
        dtype=np.float32,
    )
    qas = [q for q in conversation.qas if q.has_evidence and q.category in CATEGORIES]
    questions = np.asarray(embedder.embed([q.question for q in qas]), dtype=np.float32)
    if centred:
        assert len(turns) >= CENTRE_MIN_VECTORS  # every LoCoMo chain is centred by the server
        mean = turns.mean(axis=0)
        turns, questions = turns - mean, questions - mean
    position = {t.dia_id: i for i, t in enumerate(conversation.turns)}
    masks = []
    for qa in qas:
        mask = np.zeros(len(turns), dtype=bool)
        mask[[position[e] for e in qa.evidence]] = True
        masks.append(mask)
    return _unit(questions) @ _unit(turns).T, masks, [q.category for q in qas]


def dense_alone(
    embedder: UseOnnxEmbedder, conversations: Sequence[Conversation]
) -> dict[str, dict[str, Any]]:
    """Per split and measure: evidence recall@k (%) and, on dev, the threshold shares."""
    out: dict[str, dict[str, Any]] = {}
    for split in (DEV, HELD_OUT):
        chosen = [c for c in conversations if c.split == split]
        figures: dict[str, Any] = {}
        for name, centred in (("plain", False), ("centred", True)):
            recall = np.zeros(len(RECALL_AT))
            evidence_sims: list[npt.NDArray[np.float32]] = []
            other_sims: list[npt.NDArray[np.float32]] = []
            questions = 0
            for conversation in chosen:
                sims, masks, _ = _similarities(embedder, conversation, centred)
                order = np.argsort(-sims, axis=1, kind="stable")
                for row, mask in enumerate(masks):
                    for j, k in enumerate(RECALL_AT):
                        recall[j] += mask[order[row, :k]].sum() / mask.sum()
                    evidence_sims.append(sims[row, mask])
                    other_sims.append(sims[row, ~mask])
                questions += len(masks)
            ev, other = np.concatenate(evidence_sims), np.concatenate(other_sims)
            figures[name] = {
                "questions": questions,
                "recall_at": {
                    str(k): round(100 * r / questions, 1)
                    for k, r in zip(RECALL_AT, recall, strict=True)
                },
                "at_or_above": {
                    f"{t:.2f}": {
                        "evidence_pct": round(100 * float((ev >= t).mean()), 2),
                        "other_pct": round(100 * float((other >= t).mean()), 2),
                    }
                    for t in THRESHOLDS
                },
            }
        out[split] = figures
    return out


# -- 3: paraphrases through the server ----------------------------------------------------------


def _probe_server(*extra: str) -> list[dict[str, Any]]:
    """Each pair's memory shown or not at each budget, on a fresh server started with `extra`."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(Path(tmp) / "data", None, *extra)
        server.wait_ready()
        try:
            with grpc.insecure_channel(server.target) as channel:
                stub = pb_grpc.MemoryStub(channel)
                for i, (memory, query) in enumerate(PARAPHRASES):
                    student = f"probe-{i}"
                    reply = stub.IngestEpisodes(
                        ingest_messages(probe_history(memory, student, seed=i), 64)
                    )
                    remembered = reply.items[0].episode_id
                    wait_for_vectors(stub, student)
                    shown = {}
                    for budget in PROBE_BUDGETS:
                        block = stub.BuildBlock(probe_request(student, query, budget), timeout=30)
                        shown[str(budget)] = remembered in [m.episode_id for m in block.memories]
                    rows.append({"query": query, "memory": memory, "shown": shown})
        finally:
            server.terminate()
    return rows


def paraphrases() -> dict[str, Any]:
    rows = {"centred": _probe_server(), "plain": _probe_server("--recall-off", "centring")}
    shown = {
        name: {str(b): sum(1 for r in got if r["shown"][str(b)]) for b in PROBE_BUDGETS}
        for name, got in rows.items()
    }
    return {
        "pairs": len(PARAPHRASES),
        "other_questions": OTHER_QUESTIONS,
        "shown": shown,
        "rows": rows,
    }


# -- report ---------------------------------------------------------------------------------------


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Dense neighbours about the chain's mean",
        "",
        f"Run {result['timestamp']} at commit `{result['git_rev']}` on {result['host']} "
        f"({result['cpu_count']} x {result['cpu']}), Python {result['python']}; "
        f"{result['elapsed_seconds']:.0f} s. `.venv/bin/python -m bench.bench_centring`.",
        "",
        "## LoCoMo, dense retrieval alone: evidence recall@k (%), categories 1-4",
        "",
        "| split | questions | cosine | " + " | ".join(f"@{k}" for k in RECALL_AT) + " |",
        "|---|---|---|" + "---|" * len(RECALL_AT),
    ]
    for split, figures in result["dense_alone"].items():
        for name, f in figures.items():
            lines.append(
                f"| {split} | {f['questions']} | {name} | "
                + " | ".join(f"{f['recall_at'][str(k)]:.1f}" for k in RECALL_AT)
                + " |"
            )
    dev = result["dense_alone"][DEV]
    lines += [
        "",
        "## Match threshold (dev split): % of (question, turn) pairs at or above it",
        "",
        f"The server's thresholds: plain {SEMANTIC_MATCH_MIN:.2f}, "
        f"centred {CENTRED_MATCH_MIN:.2f}.",
        "",
        "| threshold | plain: evidence | plain: other turns | centred: evidence "
        "| centred: other turns |",
        "|---|---|---|---|---|",
    ]
    for t in THRESHOLDS:
        key = f"{t:.2f}"
        p, c = dev["plain"]["at_or_above"][key], dev["centred"]["at_or_above"][key]
        lines.append(
            f"| {key} | {p['evidence_pct']:.1f} | {p['other_pct']:.2f} | "
            f"{c['evidence_pct']:.1f} | {c['other_pct']:.2f} |"
        )
    probe = result["paraphrases"]
    lines += [
        "",
        f"## Paraphrases through the server: memories shown, of {probe['pairs']} "
        f"(each among {probe['other_questions']} questions of the query's forms)",
        "",
        "| server | " + " | ".join(f"{b} tokens" for b in PROBE_BUDGETS) + " |",
        "|---|" + "---|" * len(PROBE_BUDGETS),
    ]
    for name, label in (("centred", "as designed"), ("plain", "`--recall-off centring`")):
        lines.append(
            f"| {label} | "
            + " | ".join(str(probe["shown"][name][str(b)]) for b in PROBE_BUDGETS)
            + " |"
        )
    lines += ["", "| query | as designed | `--recall-off centring` |", "|---|---|---|"]
    for designed, plain in zip(probe["rows"]["centred"], probe["rows"]["plain"], strict=True):

        def marks(row: dict[str, Any]) -> str:
            return " ".join(f"{b}:{'yes' if row['shown'][str(b)] else 'no'}" for b in PROBE_BUDGETS)

        lines.append(f"| {designed['query']} | {marks(designed)} | {marks(plain)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    started = time.perf_counter()
    embedder = UseOnnxEmbedder(fetch_model(default_model_dir()))
    result: dict[str, Any] = {"benchmark": RESULT_NAME, **run_metadata()}
    result["data"] = str(LOCOMO_FILE.name)
    result["dense_alone"] = dense_alone(embedder, load_conversations())
    result["paraphrases"] = paraphrases()
    result["elapsed_seconds"] = round(time.perf_counter() - started, 1)
    write_results(RESULT_NAME, result)
    text = markdown(result)
    (Path(__file__).resolve().parent / "results" / f"{RESULT_NAME}.md").write_text(
        text, encoding="utf-8"
    )
    print(text)


if __name__ == "__main__":
    main()
