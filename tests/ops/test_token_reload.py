"""The tokens file on a running server: rotation through SIGHUP without a restart, a malformed
reload that keeps the old tokens, and a malformed file that stops the server from starting."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import grpc
import pytest

from tests.helpers.harness import auth
from tests.helpers.server_process import ServerProcess
from tutor_memory.api.auth import token_sha256
from tutor_memory_client._proto import memory_pb2 as pb
from tutor_memory_client._proto import memory_pb2_grpc as pb_grpc

OLD, NEW = "old-token-of-chat", "new-token-of-chat"
# Seconds a test waits for the server to log that it handled a SIGHUP.
RELOAD_SECONDS = 10.0


def _entry(token: str) -> str:
    return f'[[tokens]]\ntenant = "school"\nname = "chat"\nsha256 = "{token_sha256(token)}"\n\n'


def _code(stub: pb_grpc.MemoryStub, token: str) -> grpc.StatusCode:
    try:
        stub.ListEpisodes(
            pb.ListEpisodesRequest(student_id="s1", subject_id="bio"), metadata=auth(token)
        )
    except grpc.RpcError as err:
        code: grpc.StatusCode = err.code()
        return code
    return grpc.StatusCode.OK


def _reload(server: ServerProcess) -> dict[str, object]:
    """Sends SIGHUP and returns the log entry of the reload it caused."""
    seen = len(server.lines)
    server.proc.send_signal(signal.SIGHUP)
    deadline = time.monotonic() + RELOAD_SECONDS
    while time.monotonic() < deadline:
        for line in server.lines[seen:]:
            entry: dict[str, object] = json.loads(line)
            if str(entry.get("msg", "")).startswith("tokens file"):
                return entry
        time.sleep(0.05)
    raise AssertionError("no reload in the log:\n" + "".join(server.lines[seen:]))


def test_rotation_and_a_bad_reload_on_a_running_server(tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(_entry(OLD))
    server = ServerProcess(tmp_path / "data", tokens)
    server.wait_ready()
    try:
        with grpc.insecure_channel(server.target) as channel:
            stub = pb_grpc.MemoryStub(channel)
            assert _code(stub, OLD) is grpc.StatusCode.OK
            assert _code(stub, NEW) is grpc.StatusCode.UNAUTHENTICATED
            # Rotation, step 1: both tokens of the caller are valid.
            tokens.write_text(_entry(OLD) + _entry(NEW))
            assert _reload(server)["msg"] == "tokens file reloaded"
            assert _code(stub, OLD) is grpc.StatusCode.OK
            assert _code(stub, NEW) is grpc.StatusCode.OK
            # A malformed file changes nothing, and the log says why, with the line.
            tokens.write_text(_entry(NEW) + "[[tokens]]\ntenant = 'school'\nreadonly = true\n")
            refused = _reload(server)
            assert refused["msg"] == "tokens file not reloaded; the old tokens stay"
            assert "line 8" in str(refused["reason"])
            assert "unknown scope 'readonly'" in str(refused["reason"])
            assert _code(stub, OLD) is grpc.StatusCode.OK
            assert _code(stub, NEW) is grpc.StatusCode.OK
            # Rotation, step 2: the old token is retired.
            tokens.write_text(_entry(NEW))
            assert _reload(server)["msg"] == "tokens file reloaded"
            assert _code(stub, OLD) is grpc.StatusCode.UNAUTHENTICATED
            assert _code(stub, NEW) is grpc.StatusCode.OK
    finally:
        assert server.terminate() == 0


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (_entry(OLD) + '[[tokens]]\ntenant = "school"\nsubject = ["bio"]\n', "line 8"),
        (_entry(OLD) + "[tenants.school]\nrequests_per_second = 'fast'\n", "line 7"),
        ("[[tokens]\n", "line 1"),
    ],
)
def test_a_malformed_tokens_file_stops_the_start_naming_the_line(
    tmp_path: Path, body: str, named: str
) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text(body)
    server = ServerProcess(tmp_path / "data", tokens)
    assert server.wait_exit() == 2
    (refusal,) = [json.loads(x) for x in server.lines if "cannot start" in x]
    assert named in refusal["msg"]
    assert str(tokens) in refusal["msg"]
