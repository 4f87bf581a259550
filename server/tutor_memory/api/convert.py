"""Proto messages to domain objects and back. Nothing here touches storage or the network."""

from __future__ import annotations

import base64
import hashlib

from google.protobuf.timestamp_pb2 import Timestamp

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.app.blocks import Block, BlockRequest, Mode, zone
from tutor_memory.domain.episodes import (
    ChainKey,
    Check,
    Evidence,
    Kind,
    NewEpisode,
    Outcome,
    Quiz,
    StoredEpisode,
    check_identifier,
    validate_new_episode,
)
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.signing import SignedCheckpoint

# ListEpisodes page sizes: the default when the caller asks for 0, and the most one page holds.
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
# Largest Timestamp.seconds protobuf allows (9999-12-31T23:59:59Z).
_MAX_TIMESTAMP_SECONDS = 253_402_300_799

KIND_FROM_PROTO: dict[pb.EpisodeKind, Kind] = {
    pb.EPISODE_KIND_QUESTION: Kind.QUESTION,
    pb.EPISODE_KIND_ANSWER: Kind.ANSWER,
    pb.EPISODE_KIND_CHECK: Kind.CHECK,
    pb.EPISODE_KIND_QUIZ: Kind.QUIZ,
    pb.EPISODE_KIND_FILE: Kind.FILE,
    pb.EPISODE_KIND_TAUGHT: Kind.TAUGHT,
    pb.EPISODE_KIND_CONSOLIDATION: Kind.CONSOLIDATION,
}
KIND_TO_PROTO = {kind: number for number, kind in KIND_FROM_PROTO.items()}
_OUTCOME_FROM_PROTO: dict[pb.CheckOutcome, Outcome] = {
    pb.CHECK_OUTCOME_RIGHT: Outcome.RIGHT,
    pb.CHECK_OUTCOME_WRONG: Outcome.WRONG,
}
_OUTCOME_TO_PROTO = {outcome: number for number, outcome in _OUTCOME_FROM_PROTO.items()}


def timestamp_to_us(field: str, ts: Timestamp) -> int:
    if not 0 <= ts.nanos < 1_000_000_000 or abs(ts.seconds) > _MAX_TIMESTAMP_SECONDS:
        raise InvalidArgument(field, "not a valid timestamp")
    return ts.seconds * 1_000_000 + ts.nanos // 1_000


def us_to_timestamp(us: int) -> Timestamp:
    seconds, micros = divmod(us, 1_000_000)
    return Timestamp(seconds=seconds, nanos=micros * 1_000)


def chain_of(tenant: str, student_id: str, subject_id: str) -> ChainKey:
    check_identifier("student_id", student_id)
    check_identifier("subject_id", subject_id)
    return ChainKey(tenant, student_id, subject_id)


def new_episode_from_proto(
    msg: pb.NewEpisode, *, tenant: str, now_us: int, client_key_required: bool
) -> NewEpisode:
    chain = chain_of(tenant, msg.student_id, msg.subject_id)
    if msg.HasField("salience"):
        raise InvalidArgument(
            "salience", "must not be set: salience is fixed by what the episode is (SPEC R1.3)"
        )
    if msg.kind == pb.EPISODE_KIND_UNSPECIFIED:
        raise InvalidArgument("kind", "required")
    kind = KIND_FROM_PROTO.get(msg.kind)
    if kind is None:
        raise InvalidArgument("kind", f"unknown value {msg.kind}")
    check = None
    if msg.HasField("check"):
        outcome = _OUTCOME_FROM_PROTO.get(msg.check.outcome)
        if outcome is None:
            raise InvalidArgument("check.outcome", "must be RIGHT or WRONG")
        pm = msg.check.predicted_mastery if msg.check.HasField("predicted_mastery") else None
        check = Check(outcome, msg.check.topic, pm)
    quiz = Quiz(msg.quiz.correct, msg.quiz.total) if msg.HasField("quiz") else None
    occurred = (
        timestamp_to_us("occurred_at", msg.occurred_at) if msg.HasField("occurred_at") else None
    )
    return validate_new_episode(
        chain=chain,
        kind=kind,
        summary=msg.summary,
        text=msg.text,
        concepts=list(msg.concepts),
        occurred_at_us=occurred,
        evidence=[Evidence(e.file_id, e.page, e.file_fingerprint) for e in msg.evidence],
        check=check,
        quiz=quiz,
        client_key=msg.client_key,
        now_us=now_us,
        client_key_required=client_key_required,
    )


def episode_to_proto(ep: StoredEpisode) -> pb.Episode:
    msg = pb.Episode(
        episode_id=ep.episode_id,
        student_id=ep.chain.student,
        subject_id=ep.chain.subject,
        seq=ep.seq,
        kind=KIND_TO_PROTO[ep.kind],
        summary=ep.summary,
        text=ep.text,
        concepts=ep.concepts,
        salience=ep.salience,
        occurred_at=us_to_timestamp(ep.occurred_at_us),
        recorded_at=us_to_timestamp(ep.recorded_at_us),
        evidence=[
            pb.Evidence(file_id=e.file_id, page=e.page, file_fingerprint=e.file_fingerprint)
            for e in ep.evidence
        ],
        client_key=ep.client_key,
        prev_hash=ep.prev_hash,
        hash=ep.hash,
    )
    if ep.check is not None:
        msg.check.outcome = _OUTCOME_TO_PROTO[ep.check.outcome]
        msg.check.topic = ep.check.topic
        if ep.check.predicted_mastery is not None:
            msg.check.predicted_mastery = ep.check.predicted_mastery
    if ep.quiz is not None:
        msg.quiz.correct = ep.quiz.correct
        msg.quiz.total = ep.quiz.total
    return msg


def page_size(requested: int) -> int:
    if requested > MAX_PAGE_SIZE:
        raise InvalidArgument("page_size", f"{requested} is more than {MAX_PAGE_SIZE}")
    return requested or DEFAULT_PAGE_SIZE


def _filters_digest(req: pb.ListEpisodesRequest) -> str:
    key = f"{req.student_id}\x00{req.subject_id}\x00{req.occurred_from}\x00{req.occurred_to}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def encode_page_token(req: pb.ListEpisodesRequest, last: StoredEpisode) -> str:
    raw = f"v1:{last.occurred_at_us}:{last.seq}:{_filters_digest(req)}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_page_token(req: pb.ListEpisodesRequest) -> tuple[int, int] | None:
    """The (occurred_at, seq) position after which the next page starts."""
    if not req.page_token:
        return None
    try:
        padded = req.page_token + "=" * (-len(req.page_token) % 4)
        version, occurred, seq, digest = base64.urlsafe_b64decode(padded).decode().split(":")
        position = (int(occurred), int(seq))
    except ValueError as exc:
        raise InvalidArgument("page_token", "malformed; pass a next_page_token unchanged") from exc
    if version != "v1" or digest != _filters_digest(req):
        raise InvalidArgument(
            "page_token", "was issued for a different query; keep the filters of the first page"
        )
    return position


def checkpoint_to_proto(cp: SignedCheckpoint) -> pb.SignedCheckpoint:
    return pb.SignedCheckpoint(
        tenant=cp.chain.tenant,
        student_id=cp.chain.student,
        subject_id=cp.chain.subject,
        length=cp.length,
        head_hash=cp.head_hash,
        created_at=us_to_timestamp(cp.created_at_us),
        signed_payload=cp.payload,
        signature=cp.signature,
        public_key=cp.public_key,
    )


def checkpoint_from_proto(msg: pb.SignedCheckpoint, chain: ChainKey) -> SignedCheckpoint:
    if msg.length < 0:
        raise InvalidArgument("checkpoint.length", "must not be negative")
    return SignedCheckpoint(
        chain=chain,
        length=msg.length,
        head_hash=msg.head_hash,
        created_at_us=timestamp_to_us("checkpoint.created_at", msg.created_at),
        payload=msg.signed_payload,
        signature=msg.signature,
        public_key=msg.public_key,
    )


# BuildBlock limits: the smallest and largest token budget, and the longest query.
MAX_BUDGET_TOKENS = 100_000
MAX_QUERY_CHARS = 8_000

_MODE_FROM_PROTO: dict[pb.BlockMode, Mode] = {
    pb.BLOCK_MODE_UNSPECIFIED: Mode.FULL,
    pb.BLOCK_MODE_FULL: Mode.FULL,
    pb.BLOCK_MODE_EPISODES: Mode.EPISODES,
    pb.BLOCK_MODE_WINDOW: Mode.WINDOW,
    pb.BLOCK_MODE_NONE: Mode.NONE,
}


def block_request_from_proto(
    msg: pb.BuildBlockRequest, *, tenant: str, now_us: int
) -> BlockRequest:
    chain = chain_of(tenant, msg.student_id, msg.subject_id)
    if not 1 <= msg.budget_tokens <= MAX_BUDGET_TOKENS:
        raise InvalidArgument("budget_tokens", f"must be from 1 to {MAX_BUDGET_TOKENS}")
    if len(msg.query) > MAX_QUERY_CHARS:
        raise InvalidArgument("query", f"longer than {MAX_QUERY_CHARS} characters")
    mode = _MODE_FROM_PROTO.get(msg.mode)
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
    return reply
