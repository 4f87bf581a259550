"""The gRPC servicer of the episode ledger and the memory block: proto <-> domain conversion;
the work itself is done by the ledger and the block builder. Other parts of the service live in
service_map.py and service_beliefs.py; what every handler shares, in rpc_common.py."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

import grpc

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory._proto import memory_pb2_grpc as pb_grpc
from tutor_memory.api import convert
from tutor_memory.api.auth import Caller, TokenBook
from tutor_memory.api.handlers import deadline_of, rpc
from tutor_memory.api.servicer_beliefs import BeliefRpcs
from tutor_memory.api.servicer_map import MapRpcs
from tutor_memory.app.answers import AnswerTracer
from tutor_memory.app.beliefs import BeliefKeeper
from tutor_memory.app.blocks import BlockBuilder
from tutor_memory.app.files import FileIngest
from tutor_memory.app.ledger import EMBED_THREADS, CheckpointStatus, Ledger, PreparedBatch
from tutor_memory.app.maps import MapCache
from tutor_memory.app.nightly import NightlyCycle
from tutor_memory.app.reports import Reporter
from tutor_memory.app.teaching import Teacher
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import ChainKey, Kind, NewEpisode
from tutor_memory.domain.errors import (
    AlreadyExists,
    DeadlineExceeded,
    InvalidArgument,
    ResourceExhausted,
)
from tutor_memory.store.protocols import AppendOutcome, AppendStatus

# Items of one IngestEpisodes stream embedded and committed together. Large enough to amortise a
# transaction and an embedding batch, small enough to keep every core busy: one chunk per embed
# thread is embedded while the chunk before them is written.
INGEST_CHUNK = 256
# Items one IngestEpisodes call may carry; the reply lists every item, so a larger batch is sent
# as several calls.
MAX_BATCH_ITEMS = 100_000

_CHECKPOINT_STATUS = {
    CheckpointStatus.HOLDS: pb.CHECKPOINT_STATUS_HOLDS,
    CheckpointStatus.BAD_SIGNATURE: pb.CHECKPOINT_STATUS_BAD_SIGNATURE,
    CheckpointStatus.REWRITTEN: pb.CHECKPOINT_STATUS_REWRITTEN,
    CheckpointStatus.TRUNCATED: pb.CHECKPOINT_STATUS_TRUNCATED,
}

GROUNDING_TO_PROTO = {
    "answered": pb.GROUNDING_ANSWERED,
    "partial": pb.GROUNDING_PARTIAL,
    "impossible": pb.GROUNDING_IMPOSSIBLE,
}


def _item_result(index: int, outcome: AppendOutcome) -> pb.IngestItemResult:
    if outcome.status is AppendStatus.CONFLICT:
        return pb.IngestItemResult(
            index=index,
            client_key=outcome.episode.client_key,
            status=pb.INGEST_STATUS_REJECTED,
            reason=outcome.reason,
        )
    status = (
        pb.INGEST_STATUS_INSERTED
        if outcome.status is AppendStatus.INSERTED
        else pb.INGEST_STATUS_DUPLICATE
    )
    return pb.IngestItemResult(
        index=index,
        client_key=outcome.episode.client_key,
        status=status,
        episode_id=outcome.episode.episode_id,
    )


@dataclass(frozen=True, slots=True)
class Parts:
    """Everything the servicer delegates to."""

    ledger: Ledger
    tokens: TokenBook
    blocks: BlockBuilder
    block_pool: Executor
    block_cap_seconds: float
    maps: MapCache
    files: FileIngest
    teacher: Teacher
    beliefs: BeliefKeeper
    reporter: Reporter
    nightly: NightlyCycle
    tracer: AnswerTracer


class MemoryServicer(MapRpcs, BeliefRpcs, pb_grpc.MemoryServicer):
    def __init__(self, parts: Parts) -> None:
        self.ledger = parts.ledger
        self.tokens = parts.tokens
        self.blocks = parts.blocks
        self.block_pool = parts.block_pool
        self.block_cap_seconds = parts.block_cap_seconds
        self.maps = parts.maps
        self.files = parts.files
        self.teacher = parts.teacher
        self.beliefs = parts.beliefs
        self.reporter = parts.reporter
        self.nightly = parts.nightly
        self.tracer = parts.tracer

    @rpc
    async def AppendEpisode(
        self, request: pb.AppendEpisodeRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.AppendEpisodeReply:
        episode = convert.new_episode_from_proto(
            request.episode, tenant=caller.tenant, now_us=now_us(), client_key_required=False
        )
        if episode.kind is Kind.CHECK:
            # A check appended as a plain episode changes beliefs exactly as RecordCheck does.
            outcome = (await self.beliefs.append_check(episode)).outcome
        else:
            outcome = await self.ledger.append(episode, deadline=deadline_of(context))
        if outcome.status is AppendStatus.INSERTED and episode.kind is Kind.QUESTION:
            # The student's message may teach the map (R4): "remember that ...".
            teaching = self.teacher.teaching_in(episode.text or episode.summary)
            if teaching is not None:
                await self.teacher.record(
                    episode.chain,
                    episode.text or episode.summary,
                    teaching,
                    episode.occurred_at_us,
                    episode.occurred_at_given,
                )
        if outcome.status is AppendStatus.CONFLICT:
            raise AlreadyExists(outcome.reason)
        return pb.AppendEpisodeReply(
            episode=convert.episode_to_proto(outcome.episode),
            duplicate=outcome.status is AppendStatus.DUPLICATE,
        )

    @rpc
    async def IngestEpisodes(
        self,
        request_iterator: AsyncIterator[pb.IngestEpisodesRequest],
        context: grpc.aio.ServicerContext,
        caller: Caller,
    ) -> pb.IngestEpisodesReply:
        results: list[pb.IngestItemResult] = []
        chunk: list[tuple[int, NewEpisode]] = []
        # Chunks being embedded, oldest first, and the one chunk being written. Chunks are written
        # in stream order, so a chain's episodes take their seq in the order they were sent.
        embedding: deque[tuple[list[int], asyncio.Task[PreparedBatch]]] = deque()
        writing: asyncio.Task[None] | None = None
        deadline = deadline_of(context)
        count = 0

        # Chains that received checks: their beliefs are brought up to date after the stream.
        checked: set[ChainKey] = set()

        async def write(indices: list[int], prepared: PreparedBatch) -> None:
            outcomes = await self.ledger.write(prepared, deadline=deadline)
            results.extend(_item_result(i, o) for i, o in zip(indices, outcomes, strict=True))
            checked.update(
                o.episode.chain
                for o in outcomes
                if o.status is AppendStatus.INSERTED and o.episode.kind is Kind.CHECK
            )

        async def write_oldest() -> None:
            nonlocal writing
            indices, embedded = embedding.popleft()
            prepared = await embedded
            if writing is not None:
                await writing
            writing = asyncio.create_task(write(indices, prepared))

        def start_embedding() -> None:
            indices, episodes = [i for i, _ in chunk], [e for _, e in chunk]
            embedding.append((indices, asyncio.create_task(self.ledger.embed(episodes))))

        try:
            async for request in request_iterator:
                for item in request.episodes:
                    if count >= MAX_BATCH_ITEMS:
                        raise ResourceExhausted(
                            f"more than {MAX_BATCH_ITEMS} items in one IngestEpisodes call; "
                            "earlier chunks may be stored: resend the rest (or all, keys make it "
                            "safe) in smaller calls"
                        )
                    try:
                        episode = convert.new_episode_from_proto(
                            item, tenant=caller.tenant, now_us=now_us(), client_key_required=True
                        )
                    except InvalidArgument as exc:
                        results.append(
                            pb.IngestItemResult(
                                index=count,
                                client_key=item.client_key,
                                status=pb.INGEST_STATUS_REJECTED,
                                reason=str(exc),
                            )
                        )
                    else:
                        chunk.append((count, episode))
                    count += 1
                    if len(chunk) >= INGEST_CHUNK:
                        start_embedding()
                        chunk = []
                        # Back-pressure: stop reading the stream while enough work is in flight.
                        if len(embedding) >= EMBED_THREADS:
                            await write_oldest()
            if chunk:
                start_embedding()
            while embedding:
                await write_oldest()
            if writing is not None:
                await writing
            for chain in sorted(checked, key=lambda c: (c.student, c.subject)):
                await self.beliefs.refresh(chain)
        finally:
            for _, task in embedding:
                task.cancel()
            if writing is not None and not writing.done():
                writing.cancel()
        return _ingest_reply(results)

    @rpc
    async def ListEpisodes(
        self, request: pb.ListEpisodesRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.ListEpisodesReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        limit = convert.page_size(request.page_size)
        after = convert.decode_page_token(request)
        lo = (
            convert.timestamp_to_us("occurred_from", request.occurred_from)
            if request.HasField("occurred_from")
            else None
        )
        hi = (
            convert.timestamp_to_us("occurred_to", request.occurred_to)
            if request.HasField("occurred_to")
            else None
        )
        if lo is not None and hi is not None and hi <= lo:
            raise InvalidArgument("occurred_to", "must be later than occurred_from")
        # One row more than the page tells whether another page follows.
        rows = await self.ledger.list_episodes(
            chain, occurred_from_us=lo, occurred_to_us=hi, after=after, limit=limit + 1
        )
        page = rows[:limit]
        token = convert.encode_page_token(request, page[-1]) if len(rows) > limit else ""
        return pb.ListEpisodesReply(
            episodes=[convert.episode_to_proto(ep) for ep in page], next_page_token=token
        )

    @rpc
    async def VerifyChain(
        self, request: pb.VerifyChainRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.VerifyChainReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        checkpoint = (
            convert.checkpoint_from_proto(request.checkpoint, chain)
            if request.HasField("checkpoint")
            else None
        )
        report = await self.ledger.verify(chain, checkpoint)
        v = report.verification
        reply = pb.VerifyChainReply(ok=v.ok, length=v.length, head_hash=v.head_hash)
        if v.first_break is not None:
            reply.first_break.seq = v.first_break.seq
            reply.first_break.episode_id = v.first_break.episode_id
            reply.first_break.reason = v.first_break.reason
        if report.checkpoint_status is not None:
            reply.checkpoint_status = _CHECKPOINT_STATUS[report.checkpoint_status]
        return reply

    @rpc
    async def Checkpoint(
        self, request: pb.CheckpointRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.CheckpointReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        checkpoint = await self.ledger.checkpoint(chain)
        return pb.CheckpointReply(checkpoint=convert.checkpoint_to_proto(checkpoint))

    @rpc
    async def BuildBlock(
        self, request: pb.BuildBlockRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.BuildBlockReply:
        block_request = convert.block_request_from_proto(
            request, tenant=caller.tenant, now_us=now_us()
        )
        remaining = context.time_remaining()
        cap = self.block_cap_seconds
        limit = cap if remaining is None else min(cap, remaining)
        loop = asyncio.get_running_loop()
        building = loop.run_in_executor(self.block_pool, self.blocks.build, block_request)
        try:
            # Never awaited past the limit (R6.1): a slow memory must not stand in front of the
            # chat model's first token. The worker finishes on its own; its result is dropped.
            block = await asyncio.wait_for(building, timeout=max(limit, 0.0))
        except TimeoutError:
            if remaining is not None and remaining <= self.block_cap_seconds:
                raise DeadlineExceeded(
                    "the memory block was not ready before the call's deadline; abandoned"
                ) from None
            return pb.BuildBlockReply(
                dropped=True,
                budget_tokens=block_request.budget_tokens,
                tokenizer=self.blocks.counter.name,
            )
        return convert.block_to_proto(
            block, budget_tokens=block_request.budget_tokens, tokenizer=self.blocks.counter.name
        )

    @rpc
    async def AnnotateAnswer(
        self, request: pb.AnnotateAnswerRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.AnnotateAnswerReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        if not request.block_id:
            raise InvalidArgument("block_id", "required: the BuildBlockReply.block_id of the turn")
        done = await self.tracer.annotate(
            chain, request.answer_episode_id, request.block_id, list(request.memory_ids)
        )
        return pb.AnnotateAnswerReply(
            annotation_id=done.annotation_id,
            grounding=GROUNDING_TO_PROTO[done.grounding.status],
            sentences=[
                pb.SentenceTrace(
                    sentence=t.sentence,
                    passages=[
                        pb.PassageRef(file_id=f, version=v, page=p) for f, v, p in t.passages
                    ],
                    episode_ids=list(t.episode_ids),
                    labels=list(t.labels),
                )
                for t in done.grounding.sentences
            ],
        )


def _ingest_reply(results: Sequence[pb.IngestItemResult]) -> pb.IngestEpisodesReply:
    ordered = sorted(results, key=lambda r: r.index)
    return pb.IngestEpisodesReply(
        inserted=sum(r.status == pb.INGEST_STATUS_INSERTED for r in ordered),
        duplicate=sum(r.status == pb.INGEST_STATUS_DUPLICATE for r in ordered),
        rejected=sum(r.status == pb.INGEST_STATUS_REJECTED for r in ordered),
        items=ordered,
    )
