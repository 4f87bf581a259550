"""Episodes, batch items, listing pages, chain verification and checkpoints."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence

from google.protobuf.timestamp_pb2 import Timestamp

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.api.convert.common import chain_of, timestamp_to_us, us_to_timestamp
from tutor_memory.api.convert.enums import (
    CHECKPOINT_STATUS_TO_PROTO,
    INGEST_STATUS_TO_PROTO,
    KIND_FROM_PROTO,
    KIND_TO_PROTO,
    OUTCOME_FROM_PROTO,
    OUTCOME_TO_PROTO,
)
from tutor_memory.app.episodes import ChainReport
from tutor_memory.app.ingest import ItemResult, ItemStatus, counts
from tutor_memory.domain.episodes import (
    ChainKey,
    Check,
    Evidence,
    NewEpisode,
    Quiz,
    StoredEpisode,
    validate_new_episode,
)
from tutor_memory.domain.erasure import Erasure, ErasureOutcome
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import (
    HASH_BYTES,
    MAX_CHECKPOINT_PAYLOAD_BYTES,
    MAX_PAGE_TOKEN_CHARS,
    PUBLIC_KEY_BYTES,
    SIGNATURE_BYTES,
)
from tutor_memory.domain.signing import SignedCheckpoint

# ListEpisodes page sizes: the default when the caller asks for 0, and the most one page holds.
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


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
        outcome = OUTCOME_FROM_PROTO.get(msg.check.outcome)
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
        msg.check.outcome = OUTCOME_TO_PROTO[ep.check.outcome]
        msg.check.topic = ep.check.topic
        if ep.check.predicted_mastery is not None:
            msg.check.predicted_mastery = ep.check.predicted_mastery
    if ep.quiz is not None:
        msg.quiz.correct = ep.quiz.correct
        msg.quiz.total = ep.quiz.total
    return msg


def _item_results(results: Sequence[ItemResult]) -> list[pb.IngestItemResult]:
    return [
        pb.IngestItemResult(
            index=r.index,
            client_key=r.client_key,
            status=INGEST_STATUS_TO_PROTO[r.status],
            episode_id=r.episode_id,
            reason=r.reason,
        )
        for r in results
    ]


def ingest_reply(results: Sequence[ItemResult]) -> pb.IngestEpisodesReply:
    by_status = counts(results)
    return pb.IngestEpisodesReply(
        inserted=by_status[ItemStatus.INSERTED],
        duplicate=by_status[ItemStatus.DUPLICATE],
        rejected=by_status[ItemStatus.REJECTED],
        items=_item_results(results),
    )


def import_reply(
    chunk: Sequence[ItemResult], totals: dict[ItemStatus, int], vectors_pending: int
) -> pb.ImportEpisodesReply:
    """One acknowledged chunk of ImportEpisodes; `totals` are the call's so far, chunk included."""
    return pb.ImportEpisodesReply(
        items=_item_results(chunk),
        inserted=totals[ItemStatus.INSERTED],
        duplicate=totals[ItemStatus.DUPLICATE],
        rejected=totals[ItemStatus.REJECTED],
        vectors_pending=vectors_pending,
    )


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
    if len(req.page_token) > MAX_PAGE_TOKEN_CHARS:
        raise InvalidArgument("page_token", "malformed; pass a next_page_token unchanged")
    try:
        padded = req.page_token + "=" * (-len(req.page_token) % 4)
        version, occurred, seq, digest = base64.urlsafe_b64decode(padded).decode().split(":")
        position = (int(occurred), int(seq))
    except (ValueError, UnicodeError) as exc:
        raise InvalidArgument("page_token", "malformed; pass a next_page_token unchanged") from exc
    if version != "v1" or digest != _filters_digest(req):
        raise InvalidArgument(
            "page_token", "was issued for a different query; keep the filters of the first page"
        )
    return position


def optional_time(field: str, has: bool, ts: Timestamp) -> int | None:
    """A timestamp field the caller may leave unset."""
    return timestamp_to_us(field, ts) if has else None


def verify_reply(report: ChainReport) -> pb.VerifyChainReply:
    v = report.verification
    reply = pb.VerifyChainReply(ok=v.ok, length=v.length, head_hash=v.head_hash)
    if v.first_break is not None:
        reply.first_break.seq = v.first_break.seq
        reply.first_break.episode_id = v.first_break.episode_id
        reply.first_break.reason = v.first_break.reason
    if report.checkpoint_status is not None:
        reply.checkpoint_status = CHECKPOINT_STATUS_TO_PROTO[report.checkpoint_status]
    if report.erasure is not None:
        reply.erased = True
        reply.erasure.CopyFrom(erasure_to_proto(report.erasure))
    return reply


def erasure_to_proto(erasure: Erasure) -> pb.ErasureRecord:
    return pb.ErasureRecord(
        erased_at=us_to_timestamp(erasure.erased_at_us),
        erased_by=erasure.erased_by,
        chains=erasure.chains,
        episodes=erasure.episodes,
        plaintext_episodes=erasure.plaintext_episodes,
        plaintext_history_kept=erasure.plaintext_history_kept,
    )


def forget_reply(outcome: ErasureOutcome) -> pb.ForgetStudentReply:
    return pb.ForgetStudentReply(
        erasure=erasure_to_proto(outcome.erasure), already_erased=outcome.already_erased
    )


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
    for field, value, size in (
        ("checkpoint.head_hash", msg.head_hash, HASH_BYTES),
        ("checkpoint.signature", msg.signature, SIGNATURE_BYTES),
        ("checkpoint.public_key", msg.public_key, PUBLIC_KEY_BYTES),
    ):
        if len(value) != size:
            raise InvalidArgument(field, f"must be {size} bytes, not {len(value)}")
    if len(msg.signed_payload) > MAX_CHECKPOINT_PAYLOAD_BYTES:
        raise InvalidArgument(
            "checkpoint.signed_payload", f"more than {MAX_CHECKPOINT_PAYLOAD_BYTES} bytes"
        )
    return SignedCheckpoint(
        chain=chain,
        length=msg.length,
        head_hash=msg.head_hash,
        created_at_us=timestamp_to_us("checkpoint.created_at", msg.created_at),
        payload=msg.signed_payload,
        signature=msg.signature,
        public_key=msg.public_key,
    )
