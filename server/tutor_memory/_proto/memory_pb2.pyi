import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EpisodeKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EPISODE_KIND_UNSPECIFIED: _ClassVar[EpisodeKind]
    EPISODE_KIND_QUESTION: _ClassVar[EpisodeKind]
    EPISODE_KIND_ANSWER: _ClassVar[EpisodeKind]
    EPISODE_KIND_CHECK: _ClassVar[EpisodeKind]
    EPISODE_KIND_QUIZ: _ClassVar[EpisodeKind]
    EPISODE_KIND_FILE: _ClassVar[EpisodeKind]
    EPISODE_KIND_TAUGHT: _ClassVar[EpisodeKind]
    EPISODE_KIND_CONSOLIDATION: _ClassVar[EpisodeKind]

class CheckOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHECK_OUTCOME_UNSPECIFIED: _ClassVar[CheckOutcome]
    CHECK_OUTCOME_RIGHT: _ClassVar[CheckOutcome]
    CHECK_OUTCOME_WRONG: _ClassVar[CheckOutcome]

class IngestStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INGEST_STATUS_UNSPECIFIED: _ClassVar[IngestStatus]
    INGEST_STATUS_INSERTED: _ClassVar[IngestStatus]
    INGEST_STATUS_DUPLICATE: _ClassVar[IngestStatus]
    INGEST_STATUS_REJECTED: _ClassVar[IngestStatus]

class CheckpointStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHECKPOINT_STATUS_UNSPECIFIED: _ClassVar[CheckpointStatus]
    CHECKPOINT_STATUS_HOLDS: _ClassVar[CheckpointStatus]
    CHECKPOINT_STATUS_BAD_SIGNATURE: _ClassVar[CheckpointStatus]
    CHECKPOINT_STATUS_REWRITTEN: _ClassVar[CheckpointStatus]
    CHECKPOINT_STATUS_TRUNCATED: _ClassVar[CheckpointStatus]

class BlockMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BLOCK_MODE_UNSPECIFIED: _ClassVar[BlockMode]
    BLOCK_MODE_FULL: _ClassVar[BlockMode]
    BLOCK_MODE_EPISODES: _ClassVar[BlockMode]
    BLOCK_MODE_WINDOW: _ClassVar[BlockMode]
    BLOCK_MODE_NONE: _ClassVar[BlockMode]

class CandidateSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CANDIDATE_SOURCE_UNSPECIFIED: _ClassVar[CandidateSource]
    CANDIDATE_SOURCE_RECENT: _ClassVar[CandidateSource]
    CANDIDATE_SOURCE_PERIOD: _ClassVar[CandidateSource]
    CANDIDATE_SOURCE_RECORD: _ClassVar[CandidateSource]
    CANDIDATE_SOURCE_LEXICAL: _ClassVar[CandidateSource]
    CANDIDATE_SOURCE_TAGGED: _ClassVar[CandidateSource]
    CANDIDATE_SOURCE_DENSE: _ClassVar[CandidateSource]
    CANDIDATE_SOURCE_NEIGHBOUR: _ClassVar[CandidateSource]
    CANDIDATE_SOURCE_CONCEPT: _ClassVar[CandidateSource]
    CANDIDATE_SOURCE_LAST_TURNS: _ClassVar[CandidateSource]

class CandidateOutcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CANDIDATE_OUTCOME_UNSPECIFIED: _ClassVar[CandidateOutcome]
    CANDIDATE_OUTCOME_SHOWN: _ClassVar[CandidateOutcome]
    CANDIDATE_OUTCOME_CURRENT_TURN: _ClassVar[CandidateOutcome]
    CANDIDATE_OUTCOME_WINDOW: _ClassVar[CandidateOutcome]
    CANDIDATE_OUTCOME_NARRATION: _ClassVar[CandidateOutcome]
    CANDIDATE_OUTCOME_FILTER: _ClassVar[CandidateOutcome]
    CANDIDATE_OUTCOME_COLLAPSE: _ClassVar[CandidateOutcome]
    CANDIDATE_OUTCOME_LIMIT: _ClassVar[CandidateOutcome]
    CANDIDATE_OUTCOME_BUDGET: _ClassVar[CandidateOutcome]
    CANDIDATE_OUTCOME_FIT: _ClassVar[CandidateOutcome]

class Grounding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GROUNDING_UNSPECIFIED: _ClassVar[Grounding]
    GROUNDING_ANSWERED: _ClassVar[Grounding]
    GROUNDING_PARTIAL: _ClassVar[Grounding]
    GROUNDING_IMPOSSIBLE: _ClassVar[Grounding]

class ReadinessBand(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    READINESS_BAND_UNSPECIFIED: _ClassVar[ReadinessBand]
    READINESS_BAND_NAMED: _ClassVar[ReadinessBand]
    READINESS_BAND_EXPLAINED: _ClassVar[ReadinessBand]
    READINESS_BAND_CONFIRMED: _ClassVar[ReadinessBand]
    READINESS_BAND_TAUGHT: _ClassVar[ReadinessBand]

class TopicRouting(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOPIC_ROUTING_UNSPECIFIED: _ClassVar[TopicRouting]
    TOPIC_ROUTING_NAME: _ClassVar[TopicRouting]
    TOPIC_ROUTING_EVALUATION: _ClassVar[TopicRouting]
    TOPIC_ROUTING_SPOKEN_EXPRESSION: _ClassVar[TopicRouting]
    TOPIC_ROUTING_UNMATCHED: _ClassVar[TopicRouting]

class Claim(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CLAIM_UNSPECIFIED: _ClassVar[Claim]
    CLAIM_UNDERSTANDS: _ClassVar[Claim]
    CLAIM_STRUGGLES_WITH: _ClassVar[Claim]
EPISODE_KIND_UNSPECIFIED: EpisodeKind
EPISODE_KIND_QUESTION: EpisodeKind
EPISODE_KIND_ANSWER: EpisodeKind
EPISODE_KIND_CHECK: EpisodeKind
EPISODE_KIND_QUIZ: EpisodeKind
EPISODE_KIND_FILE: EpisodeKind
EPISODE_KIND_TAUGHT: EpisodeKind
EPISODE_KIND_CONSOLIDATION: EpisodeKind
CHECK_OUTCOME_UNSPECIFIED: CheckOutcome
CHECK_OUTCOME_RIGHT: CheckOutcome
CHECK_OUTCOME_WRONG: CheckOutcome
INGEST_STATUS_UNSPECIFIED: IngestStatus
INGEST_STATUS_INSERTED: IngestStatus
INGEST_STATUS_DUPLICATE: IngestStatus
INGEST_STATUS_REJECTED: IngestStatus
CHECKPOINT_STATUS_UNSPECIFIED: CheckpointStatus
CHECKPOINT_STATUS_HOLDS: CheckpointStatus
CHECKPOINT_STATUS_BAD_SIGNATURE: CheckpointStatus
CHECKPOINT_STATUS_REWRITTEN: CheckpointStatus
CHECKPOINT_STATUS_TRUNCATED: CheckpointStatus
BLOCK_MODE_UNSPECIFIED: BlockMode
BLOCK_MODE_FULL: BlockMode
BLOCK_MODE_EPISODES: BlockMode
BLOCK_MODE_WINDOW: BlockMode
BLOCK_MODE_NONE: BlockMode
CANDIDATE_SOURCE_UNSPECIFIED: CandidateSource
CANDIDATE_SOURCE_RECENT: CandidateSource
CANDIDATE_SOURCE_PERIOD: CandidateSource
CANDIDATE_SOURCE_RECORD: CandidateSource
CANDIDATE_SOURCE_LEXICAL: CandidateSource
CANDIDATE_SOURCE_TAGGED: CandidateSource
CANDIDATE_SOURCE_DENSE: CandidateSource
CANDIDATE_SOURCE_NEIGHBOUR: CandidateSource
CANDIDATE_SOURCE_CONCEPT: CandidateSource
CANDIDATE_SOURCE_LAST_TURNS: CandidateSource
CANDIDATE_OUTCOME_UNSPECIFIED: CandidateOutcome
CANDIDATE_OUTCOME_SHOWN: CandidateOutcome
CANDIDATE_OUTCOME_CURRENT_TURN: CandidateOutcome
CANDIDATE_OUTCOME_WINDOW: CandidateOutcome
CANDIDATE_OUTCOME_NARRATION: CandidateOutcome
CANDIDATE_OUTCOME_FILTER: CandidateOutcome
CANDIDATE_OUTCOME_COLLAPSE: CandidateOutcome
CANDIDATE_OUTCOME_LIMIT: CandidateOutcome
CANDIDATE_OUTCOME_BUDGET: CandidateOutcome
CANDIDATE_OUTCOME_FIT: CandidateOutcome
GROUNDING_UNSPECIFIED: Grounding
GROUNDING_ANSWERED: Grounding
GROUNDING_PARTIAL: Grounding
GROUNDING_IMPOSSIBLE: Grounding
READINESS_BAND_UNSPECIFIED: ReadinessBand
READINESS_BAND_NAMED: ReadinessBand
READINESS_BAND_EXPLAINED: ReadinessBand
READINESS_BAND_CONFIRMED: ReadinessBand
READINESS_BAND_TAUGHT: ReadinessBand
TOPIC_ROUTING_UNSPECIFIED: TopicRouting
TOPIC_ROUTING_NAME: TopicRouting
TOPIC_ROUTING_EVALUATION: TopicRouting
TOPIC_ROUTING_SPOKEN_EXPRESSION: TopicRouting
TOPIC_ROUTING_UNMATCHED: TopicRouting
CLAIM_UNSPECIFIED: Claim
CLAIM_UNDERSTANDS: Claim
CLAIM_STRUGGLES_WITH: Claim

class Evidence(_message.Message):
    __slots__ = ("file_id", "page", "file_fingerprint")
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    FILE_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    file_id: str
    page: int
    file_fingerprint: str
    def __init__(self, file_id: _Optional[str] = ..., page: _Optional[int] = ..., file_fingerprint: _Optional[str] = ...) -> None: ...

class CheckResult(_message.Message):
    __slots__ = ("outcome", "topic", "predicted_mastery")
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    TOPIC_FIELD_NUMBER: _ClassVar[int]
    PREDICTED_MASTERY_FIELD_NUMBER: _ClassVar[int]
    outcome: CheckOutcome
    topic: str
    predicted_mastery: float
    def __init__(self, outcome: _Optional[_Union[CheckOutcome, str]] = ..., topic: _Optional[str] = ..., predicted_mastery: _Optional[float] = ...) -> None: ...

class QuizResult(_message.Message):
    __slots__ = ("correct", "total")
    CORRECT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    correct: int
    total: int
    def __init__(self, correct: _Optional[int] = ..., total: _Optional[int] = ...) -> None: ...

class NewEpisode(_message.Message):
    __slots__ = ("student_id", "subject_id", "kind", "summary", "text", "concepts", "occurred_at", "evidence", "check", "quiz", "client_key", "salience")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CHECK_FIELD_NUMBER: _ClassVar[int]
    QUIZ_FIELD_NUMBER: _ClassVar[int]
    CLIENT_KEY_FIELD_NUMBER: _ClassVar[int]
    SALIENCE_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    kind: EpisodeKind
    summary: str
    text: str
    concepts: _containers.RepeatedScalarFieldContainer[str]
    occurred_at: _timestamp_pb2.Timestamp
    evidence: _containers.RepeatedCompositeFieldContainer[Evidence]
    check: CheckResult
    quiz: QuizResult
    client_key: str
    salience: float
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., kind: _Optional[_Union[EpisodeKind, str]] = ..., summary: _Optional[str] = ..., text: _Optional[str] = ..., concepts: _Optional[_Iterable[str]] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., evidence: _Optional[_Iterable[_Union[Evidence, _Mapping]]] = ..., check: _Optional[_Union[CheckResult, _Mapping]] = ..., quiz: _Optional[_Union[QuizResult, _Mapping]] = ..., client_key: _Optional[str] = ..., salience: _Optional[float] = ...) -> None: ...

class Episode(_message.Message):
    __slots__ = ("episode_id", "student_id", "subject_id", "seq", "kind", "summary", "text", "concepts", "salience", "occurred_at", "recorded_at", "evidence", "check", "quiz", "client_key", "prev_hash", "hash")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    SALIENCE_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    RECORDED_AT_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_FIELD_NUMBER: _ClassVar[int]
    CHECK_FIELD_NUMBER: _ClassVar[int]
    QUIZ_FIELD_NUMBER: _ClassVar[int]
    CLIENT_KEY_FIELD_NUMBER: _ClassVar[int]
    PREV_HASH_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    episode_id: int
    student_id: str
    subject_id: str
    seq: int
    kind: EpisodeKind
    summary: str
    text: str
    concepts: _containers.RepeatedScalarFieldContainer[str]
    salience: float
    occurred_at: _timestamp_pb2.Timestamp
    recorded_at: _timestamp_pb2.Timestamp
    evidence: _containers.RepeatedCompositeFieldContainer[Evidence]
    check: CheckResult
    quiz: QuizResult
    client_key: str
    prev_hash: bytes
    hash: bytes
    def __init__(self, episode_id: _Optional[int] = ..., student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., seq: _Optional[int] = ..., kind: _Optional[_Union[EpisodeKind, str]] = ..., summary: _Optional[str] = ..., text: _Optional[str] = ..., concepts: _Optional[_Iterable[str]] = ..., salience: _Optional[float] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., recorded_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., evidence: _Optional[_Iterable[_Union[Evidence, _Mapping]]] = ..., check: _Optional[_Union[CheckResult, _Mapping]] = ..., quiz: _Optional[_Union[QuizResult, _Mapping]] = ..., client_key: _Optional[str] = ..., prev_hash: _Optional[bytes] = ..., hash: _Optional[bytes] = ...) -> None: ...

class AppendEpisodeRequest(_message.Message):
    __slots__ = ("episode",)
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    episode: NewEpisode
    def __init__(self, episode: _Optional[_Union[NewEpisode, _Mapping]] = ...) -> None: ...

class AppendEpisodeReply(_message.Message):
    __slots__ = ("episode", "duplicate")
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    episode: Episode
    duplicate: bool
    def __init__(self, episode: _Optional[_Union[Episode, _Mapping]] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class IngestEpisodesRequest(_message.Message):
    __slots__ = ("episodes",)
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    episodes: _containers.RepeatedCompositeFieldContainer[NewEpisode]
    def __init__(self, episodes: _Optional[_Iterable[_Union[NewEpisode, _Mapping]]] = ...) -> None: ...

class IngestItemResult(_message.Message):
    __slots__ = ("index", "client_key", "status", "episode_id", "reason")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    CLIENT_KEY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    index: int
    client_key: str
    status: IngestStatus
    episode_id: int
    reason: str
    def __init__(self, index: _Optional[int] = ..., client_key: _Optional[str] = ..., status: _Optional[_Union[IngestStatus, str]] = ..., episode_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class IngestEpisodesReply(_message.Message):
    __slots__ = ("inserted", "duplicate", "rejected", "items")
    INSERTED_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    inserted: int
    duplicate: int
    rejected: int
    items: _containers.RepeatedCompositeFieldContainer[IngestItemResult]
    def __init__(self, inserted: _Optional[int] = ..., duplicate: _Optional[int] = ..., rejected: _Optional[int] = ..., items: _Optional[_Iterable[_Union[IngestItemResult, _Mapping]]] = ...) -> None: ...

class ImportEpisodesRequest(_message.Message):
    __slots__ = ("episodes",)
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    episodes: _containers.RepeatedCompositeFieldContainer[NewEpisode]
    def __init__(self, episodes: _Optional[_Iterable[_Union[NewEpisode, _Mapping]]] = ...) -> None: ...

class ImportEpisodesReply(_message.Message):
    __slots__ = ("items", "inserted", "duplicate", "rejected", "vectors_pending")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    INSERTED_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    VECTORS_PENDING_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[IngestItemResult]
    inserted: int
    duplicate: int
    rejected: int
    vectors_pending: int
    def __init__(self, items: _Optional[_Iterable[_Union[IngestItemResult, _Mapping]]] = ..., inserted: _Optional[int] = ..., duplicate: _Optional[int] = ..., rejected: _Optional[int] = ..., vectors_pending: _Optional[int] = ...) -> None: ...

class ListEpisodesRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "occurred_from", "occurred_to", "page_size", "page_token")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_FROM_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_TO_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    occurred_from: _timestamp_pb2.Timestamp
    occurred_to: _timestamp_pb2.Timestamp
    page_size: int
    page_token: str
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., occurred_from: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., occurred_to: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListEpisodesReply(_message.Message):
    __slots__ = ("episodes", "next_page_token")
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    episodes: _containers.RepeatedCompositeFieldContainer[Episode]
    next_page_token: str
    def __init__(self, episodes: _Optional[_Iterable[_Union[Episode, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ChainBreak(_message.Message):
    __slots__ = ("seq", "episode_id", "reason")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seq: int
    episode_id: int
    reason: str
    def __init__(self, seq: _Optional[int] = ..., episode_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class SignedCheckpoint(_message.Message):
    __slots__ = ("tenant", "student_id", "subject_id", "length", "head_hash", "created_at", "signed_payload", "signature", "public_key")
    TENANT_FIELD_NUMBER: _ClassVar[int]
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    HEAD_HASH_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    SIGNED_PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    PUBLIC_KEY_FIELD_NUMBER: _ClassVar[int]
    tenant: str
    student_id: str
    subject_id: str
    length: int
    head_hash: bytes
    created_at: _timestamp_pb2.Timestamp
    signed_payload: bytes
    signature: bytes
    public_key: bytes
    def __init__(self, tenant: _Optional[str] = ..., student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., length: _Optional[int] = ..., head_hash: _Optional[bytes] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., signed_payload: _Optional[bytes] = ..., signature: _Optional[bytes] = ..., public_key: _Optional[bytes] = ...) -> None: ...

class VerifyChainRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "checkpoint")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    checkpoint: SignedCheckpoint
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., checkpoint: _Optional[_Union[SignedCheckpoint, _Mapping]] = ...) -> None: ...

class VerifyChainReply(_message.Message):
    __slots__ = ("ok", "length", "head_hash", "first_break", "checkpoint_status", "erased", "erasure")
    OK_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    HEAD_HASH_FIELD_NUMBER: _ClassVar[int]
    FIRST_BREAK_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_STATUS_FIELD_NUMBER: _ClassVar[int]
    ERASED_FIELD_NUMBER: _ClassVar[int]
    ERASURE_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    length: int
    head_hash: bytes
    first_break: ChainBreak
    checkpoint_status: CheckpointStatus
    erased: bool
    erasure: ErasureRecord
    def __init__(self, ok: _Optional[bool] = ..., length: _Optional[int] = ..., head_hash: _Optional[bytes] = ..., first_break: _Optional[_Union[ChainBreak, _Mapping]] = ..., checkpoint_status: _Optional[_Union[CheckpointStatus, str]] = ..., erased: _Optional[bool] = ..., erasure: _Optional[_Union[ErasureRecord, _Mapping]] = ...) -> None: ...

class CheckpointRequest(_message.Message):
    __slots__ = ("student_id", "subject_id")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ...) -> None: ...

class CheckpointReply(_message.Message):
    __slots__ = ("checkpoint",)
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    checkpoint: SignedCheckpoint
    def __init__(self, checkpoint: _Optional[_Union[SignedCheckpoint, _Mapping]] = ...) -> None: ...

class BuildBlockRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "query", "budget_tokens", "now", "time_zone", "mode", "explain")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    BUDGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    query: str
    budget_tokens: int
    now: _timestamp_pb2.Timestamp
    time_zone: str
    mode: BlockMode
    explain: bool
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., query: _Optional[str] = ..., budget_tokens: _Optional[int] = ..., now: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_zone: _Optional[str] = ..., mode: _Optional[_Union[BlockMode, str]] = ..., explain: _Optional[bool] = ...) -> None: ...

class CandidateReason(_message.Message):
    __slots__ = ("episode_id", "kind", "occurred_at", "summary", "found_by", "relevance", "matched", "salience", "recency", "score", "rank", "outcome", "collapsed_into")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    FOUND_BY_FIELD_NUMBER: _ClassVar[int]
    RELEVANCE_FIELD_NUMBER: _ClassVar[int]
    MATCHED_FIELD_NUMBER: _ClassVar[int]
    SALIENCE_FIELD_NUMBER: _ClassVar[int]
    RECENCY_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    COLLAPSED_INTO_FIELD_NUMBER: _ClassVar[int]
    episode_id: int
    kind: EpisodeKind
    occurred_at: _timestamp_pb2.Timestamp
    summary: str
    found_by: _containers.RepeatedScalarFieldContainer[CandidateSource]
    relevance: float
    matched: bool
    salience: float
    recency: float
    score: float
    rank: int
    outcome: CandidateOutcome
    collapsed_into: int
    def __init__(self, episode_id: _Optional[int] = ..., kind: _Optional[_Union[EpisodeKind, str]] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., summary: _Optional[str] = ..., found_by: _Optional[_Iterable[_Union[CandidateSource, str]]] = ..., relevance: _Optional[float] = ..., matched: _Optional[bool] = ..., salience: _Optional[float] = ..., recency: _Optional[float] = ..., score: _Optional[float] = ..., rank: _Optional[int] = ..., outcome: _Optional[_Union[CandidateOutcome, str]] = ..., collapsed_into: _Optional[int] = ...) -> None: ...

class BlockMemory(_message.Message):
    __slots__ = ("episode_id", "kind", "occurred_at", "repeats", "repeated_ids", "score", "line")
    EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    REPEATS_FIELD_NUMBER: _ClassVar[int]
    REPEATED_IDS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    episode_id: int
    kind: EpisodeKind
    occurred_at: _timestamp_pb2.Timestamp
    repeats: int
    repeated_ids: _containers.RepeatedScalarFieldContainer[int]
    score: float
    line: str
    def __init__(self, episode_id: _Optional[int] = ..., kind: _Optional[_Union[EpisodeKind, str]] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., repeats: _Optional[int] = ..., repeated_ids: _Optional[_Iterable[int]] = ..., score: _Optional[float] = ..., line: _Optional[str] = ...) -> None: ...

class BlockSection(_message.Message):
    __slots__ = ("title", "lines", "episode_ids", "concepts")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    EPISODE_IDS_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    title: str
    lines: _containers.RepeatedScalarFieldContainer[str]
    episode_ids: _containers.RepeatedScalarFieldContainer[int]
    concepts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, title: _Optional[str] = ..., lines: _Optional[_Iterable[str]] = ..., episode_ids: _Optional[_Iterable[int]] = ..., concepts: _Optional[_Iterable[str]] = ...) -> None: ...

class TimeWindow(_message.Message):
    __slots__ = ("start", "end", "label")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    start: _timestamp_pb2.Timestamp
    end: _timestamp_pb2.Timestamp
    label: str
    def __init__(self, start: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., label: _Optional[str] = ...) -> None: ...

class StageTiming(_message.Message):
    __slots__ = ("stage", "ms")
    STAGE_FIELD_NUMBER: _ClassVar[int]
    MS_FIELD_NUMBER: _ClassVar[int]
    stage: str
    ms: float
    def __init__(self, stage: _Optional[str] = ..., ms: _Optional[float] = ...) -> None: ...

class BuildBlockReply(_message.Message):
    __slots__ = ("text", "sections", "memories", "block_id", "tokens_used", "budget_tokens", "record_mode", "time_window", "no_record", "dropped", "timings", "tokenizer", "candidates", "candidates_considered", "vectors_pending", "lexical_weight", "dense_weight")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SECTIONS_FIELD_NUMBER: _ClassVar[int]
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    TOKENS_USED_FIELD_NUMBER: _ClassVar[int]
    BUDGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    RECORD_MODE_FIELD_NUMBER: _ClassVar[int]
    TIME_WINDOW_FIELD_NUMBER: _ClassVar[int]
    NO_RECORD_FIELD_NUMBER: _ClassVar[int]
    DROPPED_FIELD_NUMBER: _ClassVar[int]
    TIMINGS_FIELD_NUMBER: _ClassVar[int]
    TOKENIZER_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_CONSIDERED_FIELD_NUMBER: _ClassVar[int]
    VECTORS_PENDING_FIELD_NUMBER: _ClassVar[int]
    LEXICAL_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    DENSE_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    text: str
    sections: _containers.RepeatedCompositeFieldContainer[BlockSection]
    memories: _containers.RepeatedCompositeFieldContainer[BlockMemory]
    block_id: str
    tokens_used: int
    budget_tokens: int
    record_mode: bool
    time_window: TimeWindow
    no_record: bool
    dropped: bool
    timings: _containers.RepeatedCompositeFieldContainer[StageTiming]
    tokenizer: str
    candidates: _containers.RepeatedCompositeFieldContainer[CandidateReason]
    candidates_considered: int
    vectors_pending: int
    lexical_weight: float
    dense_weight: float
    def __init__(self, text: _Optional[str] = ..., sections: _Optional[_Iterable[_Union[BlockSection, _Mapping]]] = ..., memories: _Optional[_Iterable[_Union[BlockMemory, _Mapping]]] = ..., block_id: _Optional[str] = ..., tokens_used: _Optional[int] = ..., budget_tokens: _Optional[int] = ..., record_mode: _Optional[bool] = ..., time_window: _Optional[_Union[TimeWindow, _Mapping]] = ..., no_record: _Optional[bool] = ..., dropped: _Optional[bool] = ..., timings: _Optional[_Iterable[_Union[StageTiming, _Mapping]]] = ..., tokenizer: _Optional[str] = ..., candidates: _Optional[_Iterable[_Union[CandidateReason, _Mapping]]] = ..., candidates_considered: _Optional[int] = ..., vectors_pending: _Optional[int] = ..., lexical_weight: _Optional[float] = ..., dense_weight: _Optional[float] = ...) -> None: ...

class AnnotateAnswerRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "answer_episode_id", "block_id", "memory_ids")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    ANSWER_EPISODE_ID_FIELD_NUMBER: _ClassVar[int]
    BLOCK_ID_FIELD_NUMBER: _ClassVar[int]
    MEMORY_IDS_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    answer_episode_id: int
    block_id: str
    memory_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., answer_episode_id: _Optional[int] = ..., block_id: _Optional[str] = ..., memory_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class SentenceTrace(_message.Message):
    __slots__ = ("sentence", "passages", "episode_ids", "labels")
    SENTENCE_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    EPISODE_IDS_FIELD_NUMBER: _ClassVar[int]
    LABELS_FIELD_NUMBER: _ClassVar[int]
    sentence: str
    passages: _containers.RepeatedCompositeFieldContainer[PassageRef]
    episode_ids: _containers.RepeatedScalarFieldContainer[int]
    labels: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, sentence: _Optional[str] = ..., passages: _Optional[_Iterable[_Union[PassageRef, _Mapping]]] = ..., episode_ids: _Optional[_Iterable[int]] = ..., labels: _Optional[_Iterable[str]] = ...) -> None: ...

class AnnotateAnswerReply(_message.Message):
    __slots__ = ("annotation_id", "grounding", "sentences")
    ANNOTATION_ID_FIELD_NUMBER: _ClassVar[int]
    GROUNDING_FIELD_NUMBER: _ClassVar[int]
    SENTENCES_FIELD_NUMBER: _ClassVar[int]
    annotation_id: int
    grounding: Grounding
    sentences: _containers.RepeatedCompositeFieldContainer[SentenceTrace]
    def __init__(self, annotation_id: _Optional[int] = ..., grounding: _Optional[_Union[Grounding, str]] = ..., sentences: _Optional[_Iterable[_Union[SentenceTrace, _Mapping]]] = ...) -> None: ...

class ConceptInput(_message.Message):
    __slots__ = ("name", "summary", "definition", "builds_on", "pages")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    BUILDS_ON_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    name: str
    summary: str
    definition: str
    builds_on: _containers.RepeatedScalarFieldContainer[str]
    pages: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, name: _Optional[str] = ..., summary: _Optional[str] = ..., definition: _Optional[str] = ..., builds_on: _Optional[_Iterable[str]] = ..., pages: _Optional[_Iterable[int]] = ...) -> None: ...

class IngestFileRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "file_id", "filename", "media_type", "content", "occurred_at", "concepts")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    file_id: str
    filename: str
    media_type: str
    content: bytes
    occurred_at: _timestamp_pb2.Timestamp
    concepts: _containers.RepeatedCompositeFieldContainer[ConceptInput]
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., file_id: _Optional[str] = ..., filename: _Optional[str] = ..., media_type: _Optional[str] = ..., content: _Optional[bytes] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., concepts: _Optional[_Iterable[_Union[ConceptInput, _Mapping]]] = ...) -> None: ...

class RejectedConcept(_message.Message):
    __slots__ = ("name", "reason")
    NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    name: str
    reason: str
    def __init__(self, name: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class IngestFileReply(_message.Message):
    __slots__ = ("file_id", "version", "fingerprint", "unchanged", "pages", "passages", "extractor", "concepts", "rejected", "episode", "map_concepts")
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    EXTRACTOR_FIELD_NUMBER: _ClassVar[int]
    CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    MAP_CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    file_id: str
    version: int
    fingerprint: str
    unchanged: bool
    pages: int
    passages: int
    extractor: str
    concepts: _containers.RepeatedScalarFieldContainer[str]
    rejected: _containers.RepeatedCompositeFieldContainer[RejectedConcept]
    episode: Episode
    map_concepts: int
    def __init__(self, file_id: _Optional[str] = ..., version: _Optional[int] = ..., fingerprint: _Optional[str] = ..., unchanged: _Optional[bool] = ..., pages: _Optional[int] = ..., passages: _Optional[int] = ..., extractor: _Optional[str] = ..., concepts: _Optional[_Iterable[str]] = ..., rejected: _Optional[_Iterable[_Union[RejectedConcept, _Mapping]]] = ..., episode: _Optional[_Union[Episode, _Mapping]] = ..., map_concepts: _Optional[int] = ...) -> None: ...

class RemoveFileRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "file_id", "occurred_at")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    file_id: str
    occurred_at: _timestamp_pb2.Timestamp
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., file_id: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RemoveFileReply(_message.Message):
    __slots__ = ("episode", "map_concepts")
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    MAP_CONCEPTS_FIELD_NUMBER: _ClassVar[int]
    episode: Episode
    map_concepts: int
    def __init__(self, episode: _Optional[_Union[Episode, _Mapping]] = ..., map_concepts: _Optional[int] = ...) -> None: ...

class PassageRef(_message.Message):
    __slots__ = ("file_id", "version", "page")
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PAGE_FIELD_NUMBER: _ClassVar[int]
    file_id: str
    version: int
    page: int
    def __init__(self, file_id: _Optional[str] = ..., version: _Optional[int] = ..., page: _Optional[int] = ...) -> None: ...

class Passage(_message.Message):
    __slots__ = ("ref", "text", "score", "file_fingerprint")
    REF_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    FILE_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    ref: PassageRef
    text: str
    score: float
    file_fingerprint: str
    def __init__(self, ref: _Optional[_Union[PassageRef, _Mapping]] = ..., text: _Optional[str] = ..., score: _Optional[float] = ..., file_fingerprint: _Optional[str] = ...) -> None: ...

class SearchPassagesRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "query", "limit")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    query: str
    limit: int
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., query: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class SearchPassagesReply(_message.Message):
    __slots__ = ("passages",)
    PASSAGES_FIELD_NUMBER: _ClassVar[int]
    passages: _containers.RepeatedCompositeFieldContainer[Passage]
    def __init__(self, passages: _Optional[_Iterable[_Union[Passage, _Mapping]]] = ...) -> None: ...

class Provenance(_message.Message):
    __slots__ = ("file_id", "version", "pages")
    FILE_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    PAGES_FIELD_NUMBER: _ClassVar[int]
    file_id: str
    version: int
    pages: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, file_id: _Optional[str] = ..., version: _Optional[int] = ..., pages: _Optional[_Iterable[int]] = ...) -> None: ...

class ConceptNode(_message.Message):
    __slots__ = ("name", "key", "summary", "definition", "readiness", "band", "centrality", "provenance", "assumed", "taught", "layer")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KEY_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_FIELD_NUMBER: _ClassVar[int]
    READINESS_FIELD_NUMBER: _ClassVar[int]
    BAND_FIELD_NUMBER: _ClassVar[int]
    CENTRALITY_FIELD_NUMBER: _ClassVar[int]
    PROVENANCE_FIELD_NUMBER: _ClassVar[int]
    ASSUMED_FIELD_NUMBER: _ClassVar[int]
    TAUGHT_FIELD_NUMBER: _ClassVar[int]
    LAYER_FIELD_NUMBER: _ClassVar[int]
    name: str
    key: str
    summary: str
    definition: str
    readiness: float
    band: ReadinessBand
    centrality: float
    provenance: _containers.RepeatedCompositeFieldContainer[Provenance]
    assumed: _containers.RepeatedScalarFieldContainer[str]
    taught: _containers.RepeatedScalarFieldContainer[str]
    layer: int
    def __init__(self, name: _Optional[str] = ..., key: _Optional[str] = ..., summary: _Optional[str] = ..., definition: _Optional[str] = ..., readiness: _Optional[float] = ..., band: _Optional[_Union[ReadinessBand, str]] = ..., centrality: _Optional[float] = ..., provenance: _Optional[_Iterable[_Union[Provenance, _Mapping]]] = ..., assumed: _Optional[_Iterable[str]] = ..., taught: _Optional[_Iterable[str]] = ..., layer: _Optional[int] = ...) -> None: ...

class ConceptEdge(_message.Message):
    __slots__ = ("prerequisite", "concept", "weight")
    PREREQUISITE_FIELD_NUMBER: _ClassVar[int]
    CONCEPT_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    prerequisite: str
    concept: str
    weight: float
    def __init__(self, prerequisite: _Optional[str] = ..., concept: _Optional[str] = ..., weight: _Optional[float] = ...) -> None: ...

class GetMapRequest(_message.Message):
    __slots__ = ("student_id", "subject_id")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ...) -> None: ...

class GetMapReply(_message.Message):
    __slots__ = ("nodes", "edges", "teaching_order", "cycles", "subject_readiness", "header")
    NODES_FIELD_NUMBER: _ClassVar[int]
    EDGES_FIELD_NUMBER: _ClassVar[int]
    TEACHING_ORDER_FIELD_NUMBER: _ClassVar[int]
    CYCLES_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_READINESS_FIELD_NUMBER: _ClassVar[int]
    HEADER_FIELD_NUMBER: _ClassVar[int]
    nodes: _containers.RepeatedCompositeFieldContainer[ConceptNode]
    edges: _containers.RepeatedCompositeFieldContainer[ConceptEdge]
    teaching_order: _containers.RepeatedScalarFieldContainer[str]
    cycles: _containers.RepeatedCompositeFieldContainer[ConceptCycle]
    subject_readiness: float
    header: str
    def __init__(self, nodes: _Optional[_Iterable[_Union[ConceptNode, _Mapping]]] = ..., edges: _Optional[_Iterable[_Union[ConceptEdge, _Mapping]]] = ..., teaching_order: _Optional[_Iterable[str]] = ..., cycles: _Optional[_Iterable[_Union[ConceptCycle, _Mapping]]] = ..., subject_readiness: _Optional[float] = ..., header: _Optional[str] = ...) -> None: ...

class ConceptCycle(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class TeachRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "text", "occurred_at")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    text: str
    occurred_at: _timestamp_pb2.Timestamp
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., text: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class TeachReply(_message.Message):
    __slots__ = ("concept", "created", "note", "episode")
    CONCEPT_FIELD_NUMBER: _ClassVar[int]
    CREATED_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    concept: str
    created: bool
    note: str
    episode: Episode
    def __init__(self, concept: _Optional[str] = ..., created: _Optional[bool] = ..., note: _Optional[str] = ..., episode: _Optional[_Union[Episode, _Mapping]] = ...) -> None: ...

class RecordCheckRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "topic", "outcome", "evaluation", "predicted_mastery", "student_answer", "occurred_at", "client_key")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    TOPIC_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    EVALUATION_FIELD_NUMBER: _ClassVar[int]
    PREDICTED_MASTERY_FIELD_NUMBER: _ClassVar[int]
    STUDENT_ANSWER_FIELD_NUMBER: _ClassVar[int]
    OCCURRED_AT_FIELD_NUMBER: _ClassVar[int]
    CLIENT_KEY_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    topic: str
    outcome: CheckOutcome
    evaluation: str
    predicted_mastery: float
    student_answer: str
    occurred_at: _timestamp_pb2.Timestamp
    client_key: str
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., topic: _Optional[str] = ..., outcome: _Optional[_Union[CheckOutcome, str]] = ..., evaluation: _Optional[str] = ..., predicted_mastery: _Optional[float] = ..., student_answer: _Optional[str] = ..., occurred_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., client_key: _Optional[str] = ...) -> None: ...

class Belief(_message.Message):
    __slots__ = ("belief_id", "concept", "claim", "confidence", "supporting_episode_ids", "created_at", "reason", "superseded_by", "needs_reconfirmation", "line", "evidence_at")
    BELIEF_ID_FIELD_NUMBER: _ClassVar[int]
    CONCEPT_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    SUPPORTING_EPISODE_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SUPERSEDED_BY_FIELD_NUMBER: _ClassVar[int]
    NEEDS_RECONFIRMATION_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    EVIDENCE_AT_FIELD_NUMBER: _ClassVar[int]
    belief_id: int
    concept: str
    claim: Claim
    confidence: float
    supporting_episode_ids: _containers.RepeatedScalarFieldContainer[int]
    created_at: _timestamp_pb2.Timestamp
    reason: str
    superseded_by: int
    needs_reconfirmation: bool
    line: str
    evidence_at: _timestamp_pb2.Timestamp
    def __init__(self, belief_id: _Optional[int] = ..., concept: _Optional[str] = ..., claim: _Optional[_Union[Claim, str]] = ..., confidence: _Optional[float] = ..., supporting_episode_ids: _Optional[_Iterable[int]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reason: _Optional[str] = ..., superseded_by: _Optional[int] = ..., needs_reconfirmation: _Optional[bool] = ..., line: _Optional[str] = ..., evidence_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RecordCheckReply(_message.Message):
    __slots__ = ("episode", "routing", "concept", "belief", "duplicate")
    EPISODE_FIELD_NUMBER: _ClassVar[int]
    ROUTING_FIELD_NUMBER: _ClassVar[int]
    CONCEPT_FIELD_NUMBER: _ClassVar[int]
    BELIEF_FIELD_NUMBER: _ClassVar[int]
    DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    episode: Episode
    routing: TopicRouting
    concept: str
    belief: Belief
    duplicate: bool
    def __init__(self, episode: _Optional[_Union[Episode, _Mapping]] = ..., routing: _Optional[_Union[TopicRouting, str]] = ..., concept: _Optional[str] = ..., belief: _Optional[_Union[Belief, _Mapping]] = ..., duplicate: _Optional[bool] = ...) -> None: ...

class GetBeliefHistoryRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "concept")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    CONCEPT_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    concept: str
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., concept: _Optional[str] = ...) -> None: ...

class BeliefHistory(_message.Message):
    __slots__ = ("concept", "rows", "changes")
    CONCEPT_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    concept: str
    rows: _containers.RepeatedCompositeFieldContainer[Belief]
    changes: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, concept: _Optional[str] = ..., rows: _Optional[_Iterable[_Union[Belief, _Mapping]]] = ..., changes: _Optional[_Iterable[str]] = ...) -> None: ...

class GetBeliefHistoryReply(_message.Message):
    __slots__ = ("histories",)
    HISTORIES_FIELD_NUMBER: _ClassVar[int]
    histories: _containers.RepeatedCompositeFieldContainer[BeliefHistory]
    def __init__(self, histories: _Optional[_Iterable[_Union[BeliefHistory, _Mapping]]] = ...) -> None: ...

class RederiveRequest(_message.Message):
    __slots__ = ("student_id", "subject_id")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ...) -> None: ...

class RederiveReply(_message.Message):
    __slots__ = ("retired", "derived", "checks_replayed")
    RETIRED_FIELD_NUMBER: _ClassVar[int]
    DERIVED_FIELD_NUMBER: _ClassVar[int]
    CHECKS_REPLAYED_FIELD_NUMBER: _ClassVar[int]
    retired: int
    derived: int
    checks_replayed: int
    def __init__(self, retired: _Optional[int] = ..., derived: _Optional[int] = ..., checks_replayed: _Optional[int] = ...) -> None: ...

class CalibrationBin(_message.Message):
    __slots__ = ("lower", "upper", "count", "mean_predicted", "observed_right")
    LOWER_FIELD_NUMBER: _ClassVar[int]
    UPPER_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    MEAN_PREDICTED_FIELD_NUMBER: _ClassVar[int]
    OBSERVED_RIGHT_FIELD_NUMBER: _ClassVar[int]
    lower: float
    upper: float
    count: int
    mean_predicted: float
    observed_right: float
    def __init__(self, lower: _Optional[float] = ..., upper: _Optional[float] = ..., count: _Optional[int] = ..., mean_predicted: _Optional[float] = ..., observed_right: _Optional[float] = ...) -> None: ...

class Calibration(_message.Message):
    __slots__ = ("checks_with_prediction", "bins", "expected_calibration_error", "calibrated", "statement")
    CHECKS_WITH_PREDICTION_FIELD_NUMBER: _ClassVar[int]
    BINS_FIELD_NUMBER: _ClassVar[int]
    EXPECTED_CALIBRATION_ERROR_FIELD_NUMBER: _ClassVar[int]
    CALIBRATED_FIELD_NUMBER: _ClassVar[int]
    STATEMENT_FIELD_NUMBER: _ClassVar[int]
    checks_with_prediction: int
    bins: _containers.RepeatedCompositeFieldContainer[CalibrationBin]
    expected_calibration_error: float
    calibrated: bool
    statement: str
    def __init__(self, checks_with_prediction: _Optional[int] = ..., bins: _Optional[_Iterable[_Union[CalibrationBin, _Mapping]]] = ..., expected_calibration_error: _Optional[float] = ..., calibrated: _Optional[bool] = ..., statement: _Optional[str] = ...) -> None: ...

class GetReportRequest(_message.Message):
    __slots__ = ("student_id", "subject_id")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ...) -> None: ...

class GetReportReply(_message.Message):
    __slots__ = ("beliefs", "checks", "checks_right", "checks_wrong", "checks_linked", "unanswered", "calibration", "working_set", "lines", "text")
    BELIEFS_FIELD_NUMBER: _ClassVar[int]
    CHECKS_FIELD_NUMBER: _ClassVar[int]
    CHECKS_RIGHT_FIELD_NUMBER: _ClassVar[int]
    CHECKS_WRONG_FIELD_NUMBER: _ClassVar[int]
    CHECKS_LINKED_FIELD_NUMBER: _ClassVar[int]
    UNANSWERED_FIELD_NUMBER: _ClassVar[int]
    CALIBRATION_FIELD_NUMBER: _ClassVar[int]
    WORKING_SET_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    beliefs: _containers.RepeatedCompositeFieldContainer[Belief]
    checks: int
    checks_right: int
    checks_wrong: int
    checks_linked: int
    unanswered: _containers.RepeatedCompositeFieldContainer[Episode]
    calibration: Calibration
    working_set: _containers.RepeatedScalarFieldContainer[str]
    lines: _containers.RepeatedScalarFieldContainer[str]
    text: str
    def __init__(self, beliefs: _Optional[_Iterable[_Union[Belief, _Mapping]]] = ..., checks: _Optional[int] = ..., checks_right: _Optional[int] = ..., checks_wrong: _Optional[int] = ..., checks_linked: _Optional[int] = ..., unanswered: _Optional[_Iterable[_Union[Episode, _Mapping]]] = ..., calibration: _Optional[_Union[Calibration, _Mapping]] = ..., working_set: _Optional[_Iterable[str]] = ..., lines: _Optional[_Iterable[str]] = ..., text: _Optional[str] = ...) -> None: ...

class ConsolidateRequest(_message.Message):
    __slots__ = ("student_id", "subject_id", "now", "window_hours", "citation_batch", "time_zone")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    WINDOW_HOURS_FIELD_NUMBER: _ClassVar[int]
    CITATION_BATCH_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    now: _timestamp_pb2.Timestamp
    window_hours: int
    citation_batch: int
    time_zone: str
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., now: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., window_hours: _Optional[int] = ..., citation_batch: _Optional[int] = ..., time_zone: _Optional[str] = ...) -> None: ...

class ConsolidateReply(_message.Message):
    __slots__ = ("chains_active", "consolidation_episodes", "beliefs_decayed", "citations_verified", "citations_changed", "chains_already_done")
    CHAINS_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    CONSOLIDATION_EPISODES_FIELD_NUMBER: _ClassVar[int]
    BELIEFS_DECAYED_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_VERIFIED_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_CHANGED_FIELD_NUMBER: _ClassVar[int]
    CHAINS_ALREADY_DONE_FIELD_NUMBER: _ClassVar[int]
    chains_active: int
    consolidation_episodes: int
    beliefs_decayed: int
    citations_verified: int
    citations_changed: int
    chains_already_done: int
    def __init__(self, chains_active: _Optional[int] = ..., consolidation_episodes: _Optional[int] = ..., beliefs_decayed: _Optional[int] = ..., citations_verified: _Optional[int] = ..., citations_changed: _Optional[int] = ..., chains_already_done: _Optional[int] = ...) -> None: ...

class ForgetStudentRequest(_message.Message):
    __slots__ = ("student_id", "allow_plaintext_history")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    ALLOW_PLAINTEXT_HISTORY_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    allow_plaintext_history: bool
    def __init__(self, student_id: _Optional[str] = ..., allow_plaintext_history: _Optional[bool] = ...) -> None: ...

class ErasureRecord(_message.Message):
    __slots__ = ("erased_at", "erased_by", "chains", "episodes", "plaintext_episodes", "plaintext_history_kept")
    ERASED_AT_FIELD_NUMBER: _ClassVar[int]
    ERASED_BY_FIELD_NUMBER: _ClassVar[int]
    CHAINS_FIELD_NUMBER: _ClassVar[int]
    EPISODES_FIELD_NUMBER: _ClassVar[int]
    PLAINTEXT_EPISODES_FIELD_NUMBER: _ClassVar[int]
    PLAINTEXT_HISTORY_KEPT_FIELD_NUMBER: _ClassVar[int]
    erased_at: _timestamp_pb2.Timestamp
    erased_by: str
    chains: int
    episodes: int
    plaintext_episodes: int
    plaintext_history_kept: bool
    def __init__(self, erased_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., erased_by: _Optional[str] = ..., chains: _Optional[int] = ..., episodes: _Optional[int] = ..., plaintext_episodes: _Optional[int] = ..., plaintext_history_kept: _Optional[bool] = ...) -> None: ...

class ForgetStudentReply(_message.Message):
    __slots__ = ("erasure", "already_erased")
    ERASURE_FIELD_NUMBER: _ClassVar[int]
    ALREADY_ERASED_FIELD_NUMBER: _ClassVar[int]
    erasure: ErasureRecord
    already_erased: bool
    def __init__(self, erasure: _Optional[_Union[ErasureRecord, _Mapping]] = ..., already_erased: _Optional[bool] = ...) -> None: ...
