"""Every RPC's request conversion, fuzzed: whatever a client can build, converting it either
succeeds or raises one of the project's errors (which carry their status), never anything that
would surface as INTERNAL."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given

from tests.helpers.fuzz import fuzz_settings, messages
from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.api.convert import beliefs as beliefs_pb
from tutor_memory.api.convert import blocks as blocks_pb
from tutor_memory.api.convert import episodes as episodes_pb
from tutor_memory.api.convert import files as files_pb
from tutor_memory.api.convert.common import chain_of, occurred_at
from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.errors import TutorMemoryError
from tutor_memory.domain.limits import check_identifier

NOW_US = 1_780_000_000_000_000
CHAIN = ChainKey("tenant", "student", "subject")


def _chain(msg: Any) -> ChainKey:
    return chain_of("tenant", msg.student_id, msg.subject_id)


def _batch_items(msg: Any) -> list[object]:
    return [
        episodes_pb.new_episode_from_proto(e, tenant="t", now_us=NOW_US, client_key_required=True)
        for e in msg.episodes
    ]


CONVERSIONS: dict[type[Any], Callable[[Any], object]] = {
    pb.AppendEpisodeRequest: lambda m: episodes_pb.new_episode_from_proto(
        m.episode, tenant="t", now_us=NOW_US, client_key_required=False
    ),
    pb.IngestEpisodesRequest: lambda m: _batch_items(m),
    pb.ImportEpisodesRequest: lambda m: _batch_items(m),
    pb.ListEpisodesRequest: lambda m: (
        _chain(m),
        episodes_pb.page_size(m.page_size),
        episodes_pb.decode_page_token(m),
        episodes_pb.optional_time("occurred_from", m.HasField("occurred_from"), m.occurred_from),
        episodes_pb.optional_time("occurred_to", m.HasField("occurred_to"), m.occurred_to),
    ),
    pb.VerifyChainRequest: lambda m: episodes_pb.checkpoint_from_proto(m.checkpoint, _chain(m)),
    # Requests that name a chain and nothing else the servicer converts (their other fields are
    # read by the use case: SearchPassages' query and limit by FileIngest.search_passages).
    pb.CheckpointRequest: _chain,
    pb.SearchPassagesRequest: _chain,
    pb.GetMapRequest: _chain,
    pb.RederiveRequest: _chain,
    pb.GetReportRequest: _chain,
    pb.ForgetStudentRequest: lambda m: check_identifier("student_id", m.student_id),
    pb.BuildBlockRequest: lambda m: blocks_pb.block_request_from_proto(
        m, tenant="t", now_us=NOW_US
    ),
    pb.AnnotateAnswerRequest: lambda m: (_chain(m), beliefs_pb.shown_from_proto(m)),
    pb.IngestFileRequest: lambda m: files_pb.upload_from_proto(m, _chain(m)),
    pb.RemoveFileRequest: lambda m: (
        _chain(m),
        files_pb.file_id_of(m),
        occurred_at("occurred_at", m.HasField("occurred_at"), m.occurred_at),
    ),
    pb.TeachRequest: lambda m: (
        _chain(m),
        occurred_at("occurred_at", m.HasField("occurred_at"), m.occurred_at),
    ),
    pb.RecordCheckRequest: lambda m: beliefs_pb.check_report_from_proto(m, _chain(m)),
    pb.GetBeliefHistoryRequest: lambda m: (_chain(m), beliefs_pb.history_concept(m)),
    pb.ConsolidateRequest: lambda m: beliefs_pb.consolidate_from_proto(m, "t"),
}


@pytest.mark.parametrize("request_type", list(CONVERSIONS), ids=lambda t: t.__name__)
def test_converting_any_request_raises_nothing_but_project_errors(request_type: type[Any]) -> None:
    convert = CONVERSIONS[request_type]

    @fuzz_settings
    @given(messages(request_type))
    def check(msg: Any) -> None:
        with contextlib.suppress(TutorMemoryError):
            convert(msg)

    check()


def test_every_rpc_of_the_service_has_its_request_fuzzed() -> None:
    service = pb.DESCRIPTOR.services_by_name["Memory"]
    fuzzed = {t.DESCRIPTOR.full_name for t in CONVERSIONS}
    assert {m.input_type.full_name for m in service.methods} == fuzzed
