"""One benchmark run: per conversation, a fresh server, ingest, BuildBlock per question and budget,
then the baselines over the same store; figures grouped by split, method, budget and category."""

from __future__ import annotations

import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from tests.helpers.server_process import ServerProcess

from bench.locomo.baselines import BM25, HYBRID, RECENCY, VECTOR, ChainReader
from bench.locomo.dataset import Conversation, Qa
from bench.locomo.fusion import reciprocal_rank_fusion
from bench.locomo.ingest import SUBJECT, ingest
from bench.locomo.memory_text import block_memory_tokens, turns_by_episode
from bench.locomo.packing import BlockPacker, block_text
from bench.locomo.scoring import QaScore, score
from tutor_memory.app.config import DATABASE_FILE_NAME
from tutor_memory.domain.tokens import TokenCounter
from tutor_memory.models.embedder import Embedder
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

# The budgets: the paper's top-5/10/25/50 at its ~30 tokens a turn (a rendered block line
# costs more than the bare turn: the report gives each k's budget as measured in the run).
BUDGETS = (150, 300, 750, 1_500)
RECALL_AT = (5, 10, 25, 50)
SERVER = "tutor-memory"
METHODS = (SERVER, BM25, VECTOR, HYBRID, RECENCY)
BASELINES = (BM25, VECTOR, HYBRID, RECENCY)
# Every conversation together, beside the dev and held-out splits (the paper's figures are on all
# ten conversations).
ALL = "all"
# Seconds one BuildBlock call may take before the run fails (the server's own cap is 2.5 s).
BLOCK_TIMEOUT_S = 10.0


@dataclass(frozen=True, slots=True)
class Options:
    data: Path
    conversations: Sequence[str] | None  # None: every conversation of the file
    max_questions: int | None  # per conversation, in file order; None: all
    budgets: Sequence[int] = BUDGETS
    # Recall levers the server is started without (`tutor-memory serve --recall-off`): an
    # ablation row; empty is the server as it ships.
    recall_off: Sequence[str] = ()
    # Whether the baselines are ranked too (an ablation row needs only the server's blocks).
    baselines: bool = True


@dataclass(frozen=True, slots=True)
class Scored:
    """One question's score for one method at one budget (or one cut-off k of a ranking)."""

    qa: Qa
    method: str
    budget: int | None
    k: int | None
    score: QaScore


@dataclass
class ConversationRun:
    conversation: Conversation
    asked: list[Qa]
    ingest_seconds: float
    dia_of: dict[int, str]  # episode id -> dia_id
    scored: list[Scored] = field(default_factory=list)
    latencies_ms: dict[int, list[float]] = field(default_factory=lambda: defaultdict(list))
    stages_ms: dict[int, dict[str, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    tokens_used: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    memories: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    questions_windowed: int = 0  # questions for which the server acted inside a named period
    line_tokens: list[int] = field(default_factory=list)
    frame_tokens: int = 0
    # Per budget, each block's tokens of memory text (bench/locomo/memory_text.py).
    memory_text_tokens: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))


def questions_of(conversation: Conversation, max_questions: int | None) -> list[Qa]:
    answerable = [qa for qa in conversation.qas if qa.has_evidence]
    return answerable if max_questions is None else answerable[:max_questions]


def block_request(conversation: Conversation, question: str, budget: int) -> pb.BuildBlockRequest:
    request = pb.BuildBlockRequest(
        student_id=conversation.sample_id,
        subject_id=SUBJECT,
        query=question,
        budget_tokens=budget,
        mode=pb.BLOCK_MODE_FULL,
    )
    request.now.FromDatetime(conversation.last_session_time)
    return request


class FrameChanged(RuntimeError):
    pass


class BadBlock(RuntimeError):
    """The server dropped a block or went over budget: a server bug the figures must not hide."""


def check_frame(stub: pb_grpc.MemoryStub, conversation: Conversation) -> None:
    """The baselines' blocks reproduce the server's frame: a chain with nothing in it shows the
    frame alone, so this fails the run when the server's block shape has moved on."""
    reply = stub.BuildBlock(block_request(conversation, "", max(BUDGETS)), timeout=BLOCK_TIMEOUT_S)
    if reply.text != block_text([]):
        raise FrameChanged(
            "the server's empty block is no longer the frame bench/locomo/packing.py packs "
            f"baselines into; server:\n{reply.text}"
        )


def _ask_server(
    stub: pb_grpc.MemoryStub,
    run: ConversationRun,
    budgets: Sequence[int],
    counter: TokenCounter,
) -> None:
    conversation = run.conversation
    turns = turns_by_episode(conversation, run.dia_of)
    for qa in run.asked:
        windowed = False
        for budget in budgets:
            request = block_request(conversation, qa.question, budget)
            started = time.perf_counter()
            reply = stub.BuildBlock(request, timeout=BLOCK_TIMEOUT_S)
            run.latencies_ms[budget].append((time.perf_counter() - started) * 1000)
            if reply.tokenizer != counter.name:
                raise RuntimeError(
                    f"the server counts tokens with {reply.tokenizer}, the baselines with "
                    f"{counter.name}: budgets would not be equal"
                )
            if reply.dropped or reply.tokens_used > budget:
                raise BadBlock(
                    f"{conversation.sample_id} qa {qa.index} at budget {budget}: "
                    f"dropped={reply.dropped}, tokens_used={reply.tokens_used}"
                )
            # A collapsed memory stands for every identical episode it lists.
            shown = {i for m in reply.memories for i in (*m.repeated_ids, m.episode_id)}
            retrieved = {run.dia_of[i] for i in shown}
            run.scored.append(Scored(qa, SERVER, budget, None, score(qa.evidence, retrieved)))
            run.tokens_used[budget].append(reply.tokens_used)
            run.memory_text_tokens[budget].append(block_memory_tokens(reply, turns, counter))
            run.memories[budget].append(len(reply.memories))
            for timing in reply.timings:
                run.stages_ms[budget][timing.stage].append(timing.ms)
            windowed = windowed or bool(reply.time_window.label)
        run.questions_windowed += windowed


def _run_baselines(
    run: ConversationRun,
    reader: ChainReader,
    embedder: Embedder,
    counter: TokenCounter,
    budgets: Sequence[int],
) -> None:
    packer = BlockPacker(reader.turns, counter)
    run.line_tokens = packer.line_tokens
    run.frame_tokens = packer.overhead
    dia_at = [run.dia_of[t.episode_id] for t in reader.turns]
    if len(dia_at) != len(run.dia_of):
        raise RuntimeError(
            f"{run.conversation.sample_id}: the store holds {len(dia_at)} turns with vectors, "
            f"ingest stored {len(run.dia_of)}"
        )
    questions = [qa.question for qa in run.asked]
    if not questions:
        return
    bm25 = [reader.bm25_ranking(q) for q in questions]
    vector = reader.vector_rankings(embedder.embed(questions))
    rankings = {
        BM25: bm25,
        VECTOR: vector,
        HYBRID: [reciprocal_rank_fusion(pair) for pair in zip(bm25, vector, strict=True)],
        RECENCY: [reader.recency_ranking()] * len(questions),
    }
    for method, per_question in rankings.items():
        for qa, ranking in zip(run.asked, per_question, strict=True):
            for budget in budgets:
                shown = {dia_at[p] for p in packer.pack(ranking, budget)}
                run.scored.append(Scored(qa, method, budget, None, score(qa.evidence, shown)))
            for k in RECALL_AT:
                shown = {dia_at[p] for p in ranking[:k]}
                run.scored.append(Scored(qa, method, None, k, score(qa.evidence, shown)))


def run_conversation(
    conversation: Conversation,
    options: Options,
    embedder: Embedder,
    counter: TokenCounter,
) -> ConversationRun:
    """A fresh server on an empty data directory for this conversation alone (so the store's
    BM25 statistics are the chain's own), stopped before the baselines read its store."""
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        data_dir = Path(tmp) / "data"
        off = ("--recall-off", ",".join(options.recall_off)) if options.recall_off else ()
        server = ServerProcess(data_dir, None, *off)
        server.wait_ready()
        try:
            with grpc.insecure_channel(server.target) as channel:
                stub = pb_grpc.MemoryStub(channel)
                check_frame(stub, conversation)
                ingested = ingest(stub, conversation)
                run = ConversationRun(
                    conversation,
                    questions_of(conversation, options.max_questions),
                    ingested.seconds,
                    ingested.dia_of,
                )
                _ask_server(stub, run, options.budgets, counter)
        finally:
            server.terminate()
        if not options.baselines:
            return run
        with ChainReader(
            data_dir / DATABASE_FILE_NAME, conversation.sample_id, SUBJECT, embedder.model_id
        ) as reader:
            _run_baselines(run, reader, embedder, counter, options.budgets)
    return run
