"""The one scope check (app.access) and the RPC table it is applied with (api.rpc_access)."""

from __future__ import annotations

import pytest

from tutor_memory._proto import memory_pb2 as pb
from tutor_memory.api.rpc_access import RPC_POLICIES, items_in, named_chains
from tutor_memory.app.access import Access, Named, Scope
from tutor_memory.domain.errors import PermissionDenied

SERVICE = pb.DESCRIPTOR.services_by_name["Memory"]


def test_every_rpc_of_the_proto_is_classified_and_nothing_else() -> None:
    assert set(RPC_POLICIES) == {m.name for m in SERVICE.methods}


@pytest.mark.parametrize("method", [m.name for m in SERVICE.methods])
def test_every_request_names_the_chains_it_reaches(method: str) -> None:
    request_class = getattr(pb, SERVICE.methods_by_name[method].input_type.name)
    request = request_class()
    if method in ("IngestEpisodes", "ImportEpisodes"):
        request.episodes.add(student_id="s7", subject_id="art")
        request.episodes.add(student_id="s8", subject_id="music")
        assert list(named_chains(request)) == [Named("s7", "art"), Named("s8", "music")]
        assert items_in(request) == 2
        return
    if method == "AppendEpisode":
        request.episode.student_id, request.episode.subject_id = "s7", "art"
    elif method == "ForgetStudent":
        # A call about the student as a whole reaches every subject of theirs.
        request.student_id = "s7"
        assert list(named_chains(request)) == [Named("s7", None)]
        return
    else:
        request.student_id, request.subject_id = "s7", "art"
    assert list(named_chains(request)) == [Named("s7", "art")]


def test_a_whole_tenant_consolidate_names_every_student_and_subject() -> None:
    assert list(named_chains(pb.ConsolidateRequest())) == [Named(None, None)]
    assert list(named_chains(pb.ConsolidateRequest(student_id="s1"))) == [Named("s1", None)]


def test_reads_never_write_and_the_writers_are_the_ones_that_store() -> None:
    writes = {name for name, policy in RPC_POLICIES.items() if policy.access is Access.WRITE}
    assert writes == {
        "AppendEpisode", "IngestEpisodes", "ImportEpisodes", "AnnotateAnswer", "IngestFile",
        "RemoveFile", "Teach", "RecordCheck", "Rederive", "Consolidate", "ForgetStudent",
    }  # fmt: skip
    adders = {name for name, policy in RPC_POLICIES.items() if policy.adds_episodes}
    assert adders <= writes
    assert "Consolidate" not in adders  # the nightly cycle keeps running for a full tenant


def test_the_default_scope_allows_everything() -> None:
    Scope().check("AppendEpisode", Access.WRITE, [Named(None, None), Named("x", "y")])
    assert Scope().is_unlimited


def test_a_read_only_scope_refuses_writes_and_allows_reads() -> None:
    scope = Scope(read_only=True)
    scope.check("ListEpisodes", Access.READ, [Named("s1", "bio")])
    with pytest.raises(PermissionDenied, match="read-only"):
        scope.check("AppendEpisode", Access.WRITE, [Named("s1", "bio")])


def test_a_student_prefix_scope_refuses_other_students_and_the_whole_tenant() -> None:
    scope = Scope(student_prefix="7b-")
    scope.check("BuildBlock", Access.READ, [Named("7b-ada", "bio")])
    with pytest.raises(PermissionDenied, match="'7a-bob' is outside"):
        scope.check("BuildBlock", Access.READ, [Named("7a-bob", "bio")])
    with pytest.raises(PermissionDenied, match="covers every student"):
        scope.check("Consolidate", Access.WRITE, [Named(None, None)])


def test_a_subjects_scope_refuses_other_subjects_and_every_subject() -> None:
    scope = Scope(subjects=frozenset({"bio", "chem"}))
    scope.check("GetMap", Access.READ, [Named("s1", "chem")])
    with pytest.raises(PermissionDenied, match="'art' is outside this token's scope"):
        scope.check("GetMap", Access.READ, [Named("s1", "art")])
    with pytest.raises(PermissionDenied, match="covers every subject"):
        scope.check("Consolidate", Access.WRITE, [Named("s1", None)])


def test_one_chain_outside_the_scope_refuses_the_whole_message() -> None:
    scope = Scope(student_prefix="7b-")
    with pytest.raises(PermissionDenied):
        scope.check("IngestEpisodes", Access.WRITE, [Named("7b-a", "x"), Named("8c-b", "x")])


def test_scopes_describe_themselves_for_logs() -> None:
    assert Scope().describe() == "all"
    described = Scope(True, "7b-", frozenset({"bio"})).describe()
    assert described == "read-only; students 7b-*; subjects bio"
