"""Beliefs, checks, reports, grounding and the nightly cycle."""

from __future__ import annotations

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.api.convert.common import occurred_at, timestamp_to_us, us_to_timestamp
from tutor_memory.api.convert.enums import (
    CLAIM_TO_PROTO,
    GROUNDING_TO_PROTO,
    OUTCOME_FROM_PROTO,
    ROUTING_TO_PROTO,
)
from tutor_memory.api.convert.episodes import episode_to_proto
from tutor_memory.app.answers import AnswerAnnotated, ShownTurn
from tutor_memory.app.beliefs import CheckRecorded, CheckReport
from tutor_memory.app.nightly import (
    DEFAULT_CITATION_BATCH,
    DEFAULT_TIME_ZONE,
    MAX_CITATION_BATCH,
    Consolidation,
    CycleSummary,
    Scope,
)
from tutor_memory.domain.beliefs.calibration import Calibration
from tutor_memory.domain.beliefs.history import History, belief_line
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.errors import InvalidArgument
from tutor_memory.domain.limits import (
    MAX_BLOCK_ID_CHARS,
    MAX_CLIENT_KEY_CHARS,
    MAX_CONCEPT_CHARS,
    MAX_TEXT_BYTES,
    MAX_TOPIC_CHARS,
    check_identifier,
    check_line,
    check_not_future,
    check_text,
)
from tutor_memory.domain.recall.block import zone
from tutor_memory.domain.recall.candidates import MAX_MEMORIES
from tutor_memory.domain.records import BeliefRow
from tutor_memory.domain.reporting.report import Report
from tutor_memory.store.protocols import AppendStatus

# A check's evaluation and the student's answer each take at most half of an episode's text.
MAX_CHECK_PART_BYTES = MAX_TEXT_BYTES // 2 - 64


def history_concept(msg: pb.GetBeliefHistoryRequest) -> str:
    """The concept a history asks for ("" for every concept)."""
    return check_line("concept", msg.concept, MAX_CONCEPT_CHARS, required=False)


def check_report_from_proto(msg: pb.RecordCheckRequest, chain: ChainKey) -> CheckReport:
    # Sizes first: nothing is routed or parsed before the request is known to be in bounds.
    check_line("topic", msg.topic, MAX_TOPIC_CHARS, required=True)
    check_text("evaluation", msg.evaluation, MAX_CHECK_PART_BYTES)
    check_text("student_answer", msg.student_answer, MAX_CHECK_PART_BYTES)
    check_line("client_key", msg.client_key, MAX_CLIENT_KEY_CHARS, required=False)
    outcome = OUTCOME_FROM_PROTO.get(msg.outcome)
    if outcome is None:
        raise InvalidArgument("outcome", "required: CHECK_OUTCOME_RIGHT or CHECK_OUTCOME_WRONG")
    at, given = occurred_at("occurred_at", msg.HasField("occurred_at"), msg.occurred_at)
    return CheckReport(
        chain=chain,
        topic=msg.topic,
        outcome=outcome,
        evaluation=msg.evaluation,
        predicted_mastery=msg.predicted_mastery if msg.HasField("predicted_mastery") else None,
        student_answer=msg.student_answer,
        occurred_at_us=at if given else None,
        client_key=msg.client_key,
    )


def record_check_reply(recorded: CheckRecorded) -> pb.RecordCheckReply:
    reply = pb.RecordCheckReply(
        episode=episode_to_proto(recorded.outcome.episode),
        routing=ROUTING_TO_PROTO[recorded.routing],
        concept=recorded.concept or "",
        duplicate=recorded.outcome.status is AppendStatus.DUPLICATE,
    )
    if recorded.belief is not None:
        reply.belief.CopyFrom(belief_to_proto(recorded.belief))
    return reply


def belief_to_proto(row: BeliefRow) -> pb.Belief:
    return pb.Belief(
        belief_id=row.belief_id,
        concept=row.concept,
        claim=CLAIM_TO_PROTO[row.claim],
        confidence=row.confidence,
        supporting_episode_ids=list(row.supporting),
        created_at=us_to_timestamp(row.created_at_us),
        reason=row.reason,
        superseded_by=row.superseded_by or 0,
        needs_reconfirmation=row.needs_reconfirmation,
        line=belief_line(row),
        evidence_at=us_to_timestamp(row.evidence_at_us),
    )


def histories_reply(histories: list[History]) -> pb.GetBeliefHistoryReply:
    return pb.GetBeliefHistoryReply(
        histories=[
            pb.BeliefHistory(
                concept=h.concept,
                rows=[belief_to_proto(r) for r in h.rows],
                changes=list(h.changes),
            )
            for h in histories
        ]
    )


def calibration_to_proto(c: Calibration) -> pb.Calibration:
    return pb.Calibration(
        checks_with_prediction=c.checks_with_prediction,
        bins=[
            pb.CalibrationBin(
                lower=b.lower,
                upper=b.upper,
                count=b.count,
                mean_predicted=b.mean_predicted,
                observed_right=b.observed_right,
            )
            for b in c.bins
        ],
        expected_calibration_error=c.expected_calibration_error,
        calibrated=c.calibrated,
        statement=c.statement,
    )


def report_reply(report: Report) -> pb.GetReportReply:
    return pb.GetReportReply(
        beliefs=[belief_to_proto(b) for b in report.beliefs],
        checks=report.checks,
        checks_right=report.checks_right,
        checks_wrong=report.checks_wrong,
        checks_linked=report.checks_linked,
        unanswered=[episode_to_proto(e) for e in report.unanswered],
        calibration=calibration_to_proto(report.calibration),
        working_set=list(report.working_set),
        lines=list(report.lines),
        text="\n".join(report.lines),
    )


def shown_from_proto(msg: pb.AnnotateAnswerRequest) -> ShownTurn:
    if msg.answer_episode_id <= 0:
        raise InvalidArgument("answer_episode_id", "required: the answer episode of the turn")
    if not msg.block_id:
        raise InvalidArgument("block_id", "required: the BuildBlockReply.block_id of the turn")
    if len(msg.block_id) > MAX_BLOCK_ID_CHARS:
        raise InvalidArgument("block_id", f"longer than {MAX_BLOCK_ID_CHARS} characters")
    if len(msg.memory_ids) > MAX_MEMORIES:
        raise InvalidArgument("memory_ids", f"more than {MAX_MEMORIES}, the most a block shows")
    return ShownTurn(msg.answer_episode_id, msg.block_id, tuple(msg.memory_ids))


def annotate_reply(done: AnswerAnnotated) -> pb.AnnotateAnswerReply:
    return pb.AnnotateAnswerReply(
        annotation_id=done.annotation_id,
        grounding=GROUNDING_TO_PROTO[done.grounding.status],
        sentences=[
            pb.SentenceTrace(
                sentence=t.sentence,
                passages=[pb.PassageRef(file_id=f, version=v, page=p) for f, v, p in t.passages],
                episode_ids=list(t.episode_ids),
                labels=list(t.labels),
            )
            for t in done.grounding.sentences
        ],
    )


def consolidate_from_proto(msg: pb.ConsolidateRequest, tenant: str) -> Consolidation:
    if msg.subject_id and not msg.student_id:
        raise InvalidArgument("student_id", "required when subject_id is given")
    if msg.student_id:
        check_identifier("student_id", msg.student_id)
    if msg.subject_id:
        check_identifier("subject_id", msg.subject_id)
    if msg.citation_batch > MAX_CITATION_BATCH:
        raise InvalidArgument("citation_batch", f"at most {MAX_CITATION_BATCH}")
    end = now_us()
    if msg.HasField("now"):
        end = check_not_future("now", timestamp_to_us("now", msg.now), end)
    zone(msg.time_zone)  # raises InvalidArgument naming time_zone
    return Consolidation(
        Scope(tenant, msg.student_id, msg.subject_id),
        end_us=end,
        time_zone=msg.time_zone or DEFAULT_TIME_ZONE,
        citation_batch=msg.citation_batch or DEFAULT_CITATION_BATCH,
    )


def consolidate_reply(summary: CycleSummary) -> pb.ConsolidateReply:
    return pb.ConsolidateReply(
        chains_active=summary.chains_active,
        consolidation_episodes=summary.consolidation_episodes,
        beliefs_decayed=summary.beliefs_decayed,
        citations_verified=summary.citations_verified,
        citations_changed=summary.citations_changed,
        chains_already_done=summary.chains_already_done,
    )
