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
    __slots__ = ("ok", "length", "head_hash", "first_break", "checkpoint_status")
    OK_FIELD_NUMBER: _ClassVar[int]
    LENGTH_FIELD_NUMBER: _ClassVar[int]
    HEAD_HASH_FIELD_NUMBER: _ClassVar[int]
    FIRST_BREAK_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_STATUS_FIELD_NUMBER: _ClassVar[int]
    ok: bool
    length: int
    head_hash: bytes
    first_break: ChainBreak
    checkpoint_status: CheckpointStatus
    def __init__(self, ok: _Optional[bool] = ..., length: _Optional[int] = ..., head_hash: _Optional[bytes] = ..., first_break: _Optional[_Union[ChainBreak, _Mapping]] = ..., checkpoint_status: _Optional[_Union[CheckpointStatus, str]] = ...) -> None: ...

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
    __slots__ = ("student_id", "subject_id", "query", "budget_tokens", "now", "time_zone", "mode")
    STUDENT_ID_FIELD_NUMBER: _ClassVar[int]
    SUBJECT_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    BUDGET_TOKENS_FIELD_NUMBER: _ClassVar[int]
    NOW_FIELD_NUMBER: _ClassVar[int]
    TIME_ZONE_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    student_id: str
    subject_id: str
    query: str
    budget_tokens: int
    now: _timestamp_pb2.Timestamp
    time_zone: str
    mode: BlockMode
    def __init__(self, student_id: _Optional[str] = ..., subject_id: _Optional[str] = ..., query: _Optional[str] = ..., budget_tokens: _Optional[int] = ..., now: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_zone: _Optional[str] = ..., mode: _Optional[_Union[BlockMode, str]] = ...) -> None: ...

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
    __slots__ = ("title", "lines", "episode_ids")
    TITLE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    EPISODE_IDS_FIELD_NUMBER: _ClassVar[int]
    title: str
    lines: _containers.RepeatedScalarFieldContainer[str]
    episode_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, title: _Optional[str] = ..., lines: _Optional[_Iterable[str]] = ..., episode_ids: _Optional[_Iterable[int]] = ...) -> None: ...

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
    __slots__ = ("text", "sections", "memories", "block_id", "tokens_used", "budget_tokens", "record_mode", "time_window", "no_record", "dropped", "timings", "tokenizer")
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
    def __init__(self, text: _Optional[str] = ..., sections: _Optional[_Iterable[_Union[BlockSection, _Mapping]]] = ..., memories: _Optional[_Iterable[_Union[BlockMemory, _Mapping]]] = ..., block_id: _Optional[str] = ..., tokens_used: _Optional[int] = ..., budget_tokens: _Optional[int] = ..., record_mode: _Optional[bool] = ..., time_window: _Optional[_Union[TimeWindow, _Mapping]] = ..., no_record: _Optional[bool] = ..., dropped: _Optional[bool] = ..., timings: _Optional[_Iterable[_Union[StageTiming, _Mapping]]] = ..., tokenizer: _Optional[str] = ...) -> None: ...

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

class AnnotateAnswerReply(_message.Message):
    __slots__ = ("annotation_id",)
    ANNOTATION_ID_FIELD_NUMBER: _ClassVar[int]
    annotation_id: int
    def __init__(self, annotation_id: _Optional[int] = ...) -> None: ...
