"""The README's table of limits and the proto's `Limit:` comments are the ones the code generates
from the constants that enforce them (issue 12): changing a limit without regenerating them, or
adding a request field without a limit, fails here."""

from __future__ import annotations

import pytest

from tests.helpers.paths import REPO_ROOT
from tutor_memory.api import limits_doc
from tutor_memory.api.limits_doc import (
    BEGIN,
    END,
    LIMITS_BY_PATTERN,
    PROTO,
    markdown_table,
    rows,
    with_proto_limits,
    with_table,
)
from tutor_memory.api.proto_limits import UndocumentedFields, expected_limits, request_fields
from tutor_memory.domain import limits

PROTO_PATH = REPO_ROOT / PROTO
IMPORT_PATH = PROTO.relative_to("proto").as_posix()
REGENERATE = "run `.venv/bin/python -m tutor_memory.api.limits_doc`, then `make proto`"


def _proto() -> str:
    return PROTO_PATH.read_text(encoding="utf-8")


def test_the_readme_lists_the_limits_the_code_enforces() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert BEGIN in readme
    assert END in readme
    assert with_table(readme) == readme, f"README.md's limits table is stale: {REGENERATE}"


def test_the_table_shows_the_values_of_the_constants() -> None:
    table = markdown_table()
    for value in (limits.MAX_QUERY_CHARS, limits.MAX_TEXT_BYTES, limits.MAX_FILE_TEXT_CHARS):
        assert f"{value:,}" in table
    assert len({field for field, _ in rows()}) == len(rows())


def test_every_request_field_of_the_proto_has_a_limit_comment() -> None:
    # Read from the proto's own comments, not from the generator: a field added by hand with no
    # `Limit:` line is named here.
    fields = request_fields(_proto(), IMPORT_PATH)
    without = [f.name for f in fields if not f.limits()]
    assert not without, f"request fields without a `Limit:` comment: {without}; {REGENERATE}"


def test_the_proto_comments_state_the_limits_the_code_enforces() -> None:
    fields = request_fields(_proto(), IMPORT_PATH)
    expected = expected_limits(fields, LIMITS_BY_PATTERN)
    differ = {
        f.name: {"proto": f.limits(), "code": expected[f.name]}
        for f in fields
        if f.limits() != expected[f.name]
    }
    assert not differ, f"Limit: comments that disagree with the code: {differ}; {REGENERATE}"
    assert with_proto_limits(_proto()) == _proto()


def test_the_request_fields_are_those_the_rpcs_take() -> None:
    names = {f.name for f in request_fields(_proto(), IMPORT_PATH)}
    # Reached through a request (NewEpisode inside AppendEpisodeRequest, Evidence inside it, the
    # checkpoint VerifyChain takes), and never a reply's.
    assert {"AppendEpisodeRequest.episode", "NewEpisode.text", "Evidence.page"} <= names
    assert "SignedCheckpoint.signature" in names
    assert not any(n.startswith(("Episode.", "BuildBlockReply.")) for n in names)


NEW_RPC = """
  rpc ForgetSomething(ForgetSomethingRequest) returns (ForgetSomethingReply);
"""
NEW_MESSAGES = """
message ForgetSomethingRequest {
  string student_id = 1;
  // What to forget.
  string what = 2;
}

message ForgetSomethingReply {
  uint32 forgotten = 1;
}
"""


def _with_new_rpc(proto: str) -> str:
    service_end = proto.index("\n}\n", proto.index("service Memory"))
    return proto[:service_end] + NEW_RPC + proto[service_end:] + NEW_MESSAGES


def test_a_new_request_field_without_a_limit_is_named() -> None:
    proto = _with_new_rpc(_proto())
    fields = request_fields(proto, IMPORT_PATH)
    assert [f.name for f in fields if not f.limits()] == [
        "ForgetSomethingRequest.student_id",
        "ForgetSomethingRequest.what",
    ]
    with pytest.raises(UndocumentedFields) as err:
        with_proto_limits(proto)
    # student_id is covered by the limit every request's student_id shares; `what` by none.
    assert err.value.missing == ["ForgetSomethingRequest.what"]
    assert "ForgetSomethingRequest.what" in str(err.value)
    assert "ForgetSomethingReply" not in str(err.value)


def test_a_limit_for_a_new_field_is_written_into_its_comment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    patterns = (*LIMITS_BY_PATTERN, ("ForgetSomethingRequest.what", "at most 3 words"))
    monkeypatch.setattr(limits_doc, "LIMITS_BY_PATTERN", patterns)
    written = with_proto_limits(_with_new_rpc(_proto()))
    assert "  // What to forget.\n  // Limit: at most 3 words\n  string what = 2;" in written
    assert with_proto_limits(written) == written  # rewriting is idempotent


def test_a_limit_naming_no_request_field_is_refused() -> None:
    fields = request_fields(_proto(), IMPORT_PATH)
    with pytest.raises(UndocumentedFields) as err:
        expected_limits(fields, (*LIMITS_BY_PATTERN, ("Episode.text", "at most 1 byte")))
    assert err.value.unknown == ["Episode.text"]
