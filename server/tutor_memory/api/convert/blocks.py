"""BuildBlock: the request's limits, and the block as text, sections and memories."""

from __future__ import annotations

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.api.convert.common import chain_of, timestamp_to_us, us_to_timestamp
from tutor_memory.api.convert.enums import (
    CANDIDATE_OUTCOME_TO_PROTO,
    KIND_TO_PROTO,
    MODE_FROM_PROTO,
    SOURCE_TO_PROTO,
)
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import MAX_BUDGET_TOKENS, MAX_QUERY_CHARS
from tutor_memory.domain.recall.block import Block, BlockRequest, zone
from tutor_memory.domain.recall.explain import CandidateReason


def block_request_from_proto(
    msg: pb.BuildBlockRequest, *, tenant: str, now_us: int
) -> BlockRequest:
    chain = chain_of(tenant, msg.student_id, msg.subject_id)
    if not 1 <= msg.budget_tokens <= MAX_BUDGET_TOKENS:
        raise InvalidArgument("budget_tokens", f"must be from 1 to {MAX_BUDGET_TOKENS}")
    if len(msg.query) > MAX_QUERY_CHARS:
        raise InvalidArgument("query", f"longer than {MAX_QUERY_CHARS} characters")
    mode = MODE_FROM_PROTO.get(msg.mode)
    if mode is None:
        raise InvalidArgument("mode", f"unknown value {msg.mode}")
    zone(msg.time_zone)  # raises InvalidArgument naming time_zone
    return BlockRequest(
        chain=chain,
        query=msg.query,
        budget_tokens=msg.budget_tokens,
        now_us=timestamp_to_us("now", msg.now) if msg.HasField("now") else now_us,
        time_zone=msg.time_zone or "UTC",
        mode=mode,
    )


def dropped_reply(req: BlockRequest, tokenizer: str) -> pb.BuildBlockReply:
    """A block dropped at the time cap (R6.1): the caller proceeds without memory."""
    return pb.BuildBlockReply(dropped=True, budget_tokens=req.budget_tokens, tokenizer=tokenizer)


def block_to_proto(block: Block, *, budget_tokens: int, tokenizer: str) -> pb.BuildBlockReply:
    reply = pb.BuildBlockReply(
        text=block.text,
        sections=[
            pb.BlockSection(
                title=s.title, lines=s.lines, episode_ids=s.episode_ids, concepts=s.concepts
            )
            for s in block.sections
        ],
        memories=[
            pb.BlockMemory(
                episode_id=m.episode.episode_id,
                kind=KIND_TO_PROTO[m.episode.kind],
                occurred_at=us_to_timestamp(m.episode.occurred_at_us),
                repeats=m.repeats,
                repeated_ids=m.repeated_ids,
                score=m.score,
                line=m.line,
            )
            for m in block.memories
        ],
        block_id=block.block_id,
        tokens_used=block.tokens_used,
        budget_tokens=budget_tokens,
        record_mode=block.record_mode,
        no_record=block.no_record,
        timings=[pb.StageTiming(stage=name, ms=ms) for name, ms in block.timings],
        tokenizer=tokenizer,
    )
    if block.window is not None:
        reply.time_window.start.CopyFrom(us_to_timestamp(block.window.start_us))
        reply.time_window.end.CopyFrom(us_to_timestamp(block.window.end_us))
        reply.time_window.label = block.window.label
    if block.explanation is not None:
        reply.candidates.extend(reason_to_proto(c) for c in block.explanation.candidates)
        reply.candidates_considered = block.explanation.considered
        reply.lexical_weight = block.explanation.lexical_weight
        reply.dense_weight = block.explanation.dense_weight
    return reply


def reason_to_proto(c: CandidateReason) -> pb.CandidateReason:
    msg = pb.CandidateReason(
        episode_id=c.episode_id,
        found_by=[SOURCE_TO_PROTO[s] for s in c.found_by],
        relevance=c.relevance,
        matched=c.matched,
        salience=c.salience,
        recency=c.recency,
        score=c.score,
        rank=c.rank,
        outcome=CANDIDATE_OUTCOME_TO_PROTO[c.outcome],
        collapsed_into=c.collapsed_into,
    )
    if c.row is not None:
        msg.kind = KIND_TO_PROTO[c.row.kind]
        msg.occurred_at.CopyFrom(us_to_timestamp(c.row.occurred_at_us))
        msg.summary = c.row.summary
    return msg
