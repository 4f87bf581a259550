"""Every table between a proto enum and its domain value, each defined once (both directions
where both are needed)."""

from __future__ import annotations

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.app.episodes import CheckpointStatus
from tutor_memory.app.ingest import ItemStatus
from tutor_memory.domain.beliefs.routing import Routing
from tutor_memory.domain.beliefs.rules import Claim
from tutor_memory.domain.conceptmap.bands import Band
from tutor_memory.domain.episodes import Kind, Outcome
from tutor_memory.domain.recall.block import Mode
from tutor_memory.domain.recall.explain import Outcome as CandidateOutcome
from tutor_memory.domain.recall.explain import Source

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

OUTCOME_FROM_PROTO: dict[pb.CheckOutcome, Outcome] = {
    pb.CHECK_OUTCOME_RIGHT: Outcome.RIGHT,
    pb.CHECK_OUTCOME_WRONG: Outcome.WRONG,
}
OUTCOME_TO_PROTO = {outcome: number for number, outcome in OUTCOME_FROM_PROTO.items()}

MODE_FROM_PROTO: dict[pb.BlockMode, Mode] = {
    pb.BLOCK_MODE_UNSPECIFIED: Mode.FULL,
    pb.BLOCK_MODE_FULL: Mode.FULL,
    pb.BLOCK_MODE_EPISODES: Mode.EPISODES,
    pb.BLOCK_MODE_WINDOW: Mode.WINDOW,
    pb.BLOCK_MODE_NONE: Mode.NONE,
}

CHECKPOINT_STATUS_TO_PROTO = {
    CheckpointStatus.HOLDS: pb.CHECKPOINT_STATUS_HOLDS,
    CheckpointStatus.BAD_SIGNATURE: pb.CHECKPOINT_STATUS_BAD_SIGNATURE,
    CheckpointStatus.REWRITTEN: pb.CHECKPOINT_STATUS_REWRITTEN,
    CheckpointStatus.TRUNCATED: pb.CHECKPOINT_STATUS_TRUNCATED,
}

INGEST_STATUS_TO_PROTO = {
    ItemStatus.INSERTED: pb.INGEST_STATUS_INSERTED,
    ItemStatus.DUPLICATE: pb.INGEST_STATUS_DUPLICATE,
    ItemStatus.REJECTED: pb.INGEST_STATUS_REJECTED,
}

# Grounding statuses as the tracer names them (domain.honesty.grounding).
GROUNDING_TO_PROTO = {
    "answered": pb.GROUNDING_ANSWERED,
    "partial": pb.GROUNDING_PARTIAL,
    "impossible": pb.GROUNDING_IMPOSSIBLE,
}

BAND_TO_PROTO = {
    Band.NAMED: pb.READINESS_BAND_NAMED,
    Band.EXPLAINED: pb.READINESS_BAND_EXPLAINED,
    Band.CONFIRMED: pb.READINESS_BAND_CONFIRMED,
    Band.TAUGHT: pb.READINESS_BAND_TAUGHT,
}

ROUTING_TO_PROTO = {
    Routing.NAME: pb.TOPIC_ROUTING_NAME,
    Routing.EVALUATION: pb.TOPIC_ROUTING_EVALUATION,
    Routing.SPOKEN_EXPRESSION: pb.TOPIC_ROUTING_SPOKEN_EXPRESSION,
    Routing.UNMATCHED: pb.TOPIC_ROUTING_UNMATCHED,
}

# Belief rows store the claim's value ("understands", "struggles with").
CLAIM_TO_PROTO = {
    Claim.UNDERSTANDS.value: pb.CLAIM_UNDERSTANDS,
    Claim.STRUGGLES_WITH.value: pb.CLAIM_STRUGGLES_WITH,
}

SOURCE_TO_PROTO: dict[Source, pb.CandidateSource] = {
    Source.RECENT: pb.CANDIDATE_SOURCE_RECENT,
    Source.PERIOD: pb.CANDIDATE_SOURCE_PERIOD,
    Source.RECORD: pb.CANDIDATE_SOURCE_RECORD,
    Source.LEXICAL: pb.CANDIDATE_SOURCE_LEXICAL,
    Source.TAGGED: pb.CANDIDATE_SOURCE_TAGGED,
    Source.DENSE: pb.CANDIDATE_SOURCE_DENSE,
    Source.NEIGHBOUR: pb.CANDIDATE_SOURCE_NEIGHBOUR,
    Source.CONCEPT: pb.CANDIDATE_SOURCE_CONCEPT,
    Source.LAST_TURNS: pb.CANDIDATE_SOURCE_LAST_TURNS,
}

CANDIDATE_OUTCOME_TO_PROTO: dict[CandidateOutcome, pb.CandidateOutcome] = {
    CandidateOutcome.SHOWN: pb.CANDIDATE_OUTCOME_SHOWN,
    CandidateOutcome.CURRENT_TURN: pb.CANDIDATE_OUTCOME_CURRENT_TURN,
    CandidateOutcome.WINDOW: pb.CANDIDATE_OUTCOME_WINDOW,
    CandidateOutcome.NARRATION: pb.CANDIDATE_OUTCOME_NARRATION,
    CandidateOutcome.FILTER: pb.CANDIDATE_OUTCOME_FILTER,
    CandidateOutcome.COLLAPSE: pb.CANDIDATE_OUTCOME_COLLAPSE,
    CandidateOutcome.LIMIT: pb.CANDIDATE_OUTCOME_LIMIT,
    CandidateOutcome.BUDGET: pb.CANDIDATE_OUTCOME_BUDGET,
    CandidateOutcome.FIT: pb.CANDIDATE_OUTCOME_FIT,
}
