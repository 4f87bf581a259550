"""RPCs of beliefs, reports and the nightly cycle (SPEC R5, R7, R8): RecordCheck,
GetBeliefHistory, Rederive, GetReport, Consolidate."""

from __future__ import annotations

import math

import grpc

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.api import convert
from tutor_memory.api.auth import Caller
from tutor_memory.api.handlers import Authenticated, rpc
from tutor_memory.api.servicer_map import occurred_at
from tutor_memory.app.beliefs import BeliefKeeper
from tutor_memory.app.ledger import Ledger
from tutor_memory.app.nightly import (
    DEFAULT_CITATION_BATCH,
    DEFAULT_WINDOW_HOURS,
    NightlyCycle,
    Scope,
)
from tutor_memory.app.reports import Reporter
from tutor_memory.domain.beliefs.calibration import Calibration
from tutor_memory.domain.beliefs.history import belief_line
from tutor_memory.domain.beliefs.routing import Routing
from tutor_memory.domain.beliefs.rules import Claim
from tutor_memory.domain.clock import now_us
from tutor_memory.domain.episodes import (
    MAX_CLIENT_KEY_CHARS,
    Outcome,
    check_identifier,
    check_occurred_at,
)
from tutor_memory.domain.errors import AlreadyExists, InvalidArgument
from tutor_memory.domain.records import BeliefRow
from tutor_memory.store.protocols import AppendStatus

# Consolidate: the longest window one call may cover, and the largest citation batch.
MAX_WINDOW_HOURS = 24 * 31
MAX_CITATION_BATCH = 10_000

ROUTING_TO_PROTO = {
    Routing.NAME: pb.TOPIC_ROUTING_NAME,
    Routing.EVALUATION: pb.TOPIC_ROUTING_EVALUATION,
    Routing.SPOKEN_EXPRESSION: pb.TOPIC_ROUTING_SPOKEN_EXPRESSION,
    Routing.UNMATCHED: pb.TOPIC_ROUTING_UNMATCHED,
}
CLAIM_TO_PROTO = {
    Claim.UNDERSTANDS.value: pb.CLAIM_UNDERSTANDS,
    Claim.STRUGGLES_WITH.value: pb.CLAIM_STRUGGLES_WITH,
}
OUTCOME_FROM_PROTO = {pb.CHECK_OUTCOME_RIGHT: Outcome.RIGHT, pb.CHECK_OUTCOME_WRONG: Outcome.WRONG}


def belief_to_proto(row: BeliefRow) -> pb.Belief:
    return pb.Belief(
        belief_id=row.belief_id,
        concept=row.concept,
        claim=CLAIM_TO_PROTO[row.claim],
        confidence=row.confidence,
        supporting_episode_ids=list(row.supporting),
        created_at=convert.us_to_timestamp(row.created_at_us),
        reason=row.reason,
        superseded_by=row.superseded_by or 0,
        needs_reconfirmation=row.needs_reconfirmation,
        line=belief_line(row),
        evidence_at=convert.us_to_timestamp(row.evidence_at_us),
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


class BeliefRpcs(Authenticated):
    ledger: Ledger
    beliefs: BeliefKeeper
    reporter: Reporter
    nightly: NightlyCycle

    @rpc
    async def RecordCheck(
        self, request: pb.RecordCheckRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.RecordCheckReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        outcome = OUTCOME_FROM_PROTO.get(request.outcome)
        if outcome is None:
            raise InvalidArgument("outcome", "required: CHECK_OUTCOME_RIGHT or CHECK_OUTCOME_WRONG")
        predicted = request.predicted_mastery if request.HasField("predicted_mastery") else None
        if predicted is not None and not (math.isfinite(predicted) and 0 <= predicted <= 1):
            raise InvalidArgument("predicted_mastery", "must be a number from 0 to 1")
        if len(request.client_key) > MAX_CLIENT_KEY_CHARS:
            raise InvalidArgument("client_key", f"longer than {MAX_CLIENT_KEY_CHARS} characters")
        at, given = occurred_at("occurred_at", request.HasField("occurred_at"), request.occurred_at)
        recorded = await self.beliefs.record_check(
            chain,
            topic=request.topic,
            outcome=outcome,
            evaluation=request.evaluation,
            predicted_mastery=predicted,
            student_answer=request.student_answer,
            occurred_at_us=at if given else None,
            client_key=request.client_key,
        )
        if recorded.outcome.status is AppendStatus.CONFLICT:
            raise AlreadyExists(recorded.outcome.reason)
        reply = pb.RecordCheckReply(
            episode=convert.episode_to_proto(recorded.outcome.episode),
            routing=ROUTING_TO_PROTO[recorded.routing],
            concept=recorded.concept or "",
            duplicate=recorded.outcome.status is AppendStatus.DUPLICATE,
        )
        if recorded.belief is not None:
            reply.belief.CopyFrom(belief_to_proto(recorded.belief))
        return reply

    @rpc
    async def GetBeliefHistory(
        self,
        request: pb.GetBeliefHistoryRequest,
        context: grpc.aio.ServicerContext,
        caller: Caller,
    ) -> pb.GetBeliefHistoryReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        histories = await self.beliefs.history(chain, request.concept)
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

    @rpc
    async def Rederive(
        self, request: pb.RederiveRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.RederiveReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        done = await self.beliefs.rederive(chain)
        return pb.RederiveReply(
            retired=done.retired, derived=done.derived, checks_replayed=done.checks_replayed
        )

    @rpc
    async def GetReport(
        self, request: pb.GetReportRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.GetReportReply:
        chain = convert.chain_of(caller.tenant, request.student_id, request.subject_id)
        report = await self.reporter.report(chain, now_us())
        return pb.GetReportReply(
            beliefs=[belief_to_proto(b) for b in report.beliefs],
            checks=report.checks,
            checks_right=report.checks_right,
            checks_wrong=report.checks_wrong,
            checks_linked=report.checks_linked,
            unanswered=[convert.episode_to_proto(e) for e in report.unanswered],
            calibration=calibration_to_proto(report.calibration),
            working_set=list(report.working_set),
            lines=list(report.lines),
            text="\n".join(report.lines),
        )

    @rpc
    async def Consolidate(
        self, request: pb.ConsolidateRequest, context: grpc.aio.ServicerContext, caller: Caller
    ) -> pb.ConsolidateReply:
        if request.subject_id and not request.student_id:
            raise InvalidArgument("student_id", "required when subject_id is given")
        if request.student_id:
            check_identifier("student_id", request.student_id)
        if request.subject_id:
            check_identifier("subject_id", request.subject_id)
        if request.window_hours > MAX_WINDOW_HOURS:
            raise InvalidArgument("window_hours", f"at most {MAX_WINDOW_HOURS}")
        if request.citation_batch > MAX_CITATION_BATCH:
            raise InvalidArgument("citation_batch", f"at most {MAX_CITATION_BATCH}")
        end = now_us()
        if request.HasField("now"):
            end = check_occurred_at("now", convert.timestamp_to_us("now", request.now), end)
        summary = await self.nightly.run(
            Scope(caller.tenant, request.student_id, request.subject_id),
            end_us=end,
            window_hours=request.window_hours or DEFAULT_WINDOW_HOURS,
            citation_batch=request.citation_batch or DEFAULT_CITATION_BATCH,
        )
        return pb.ConsolidateReply(
            chains_active=summary.chains_active,
            consolidation_episodes=summary.consolidation_episodes,
            beliefs_decayed=summary.beliefs_decayed,
            citations_verified=summary.citations_verified,
            citations_changed=summary.citations_changed,
            chains_already_done=summary.chains_already_done,
        )
