"""`tutor-memory serve --console-listen`: what refuses to start, and that a bare port is
loopback."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

from tests.helpers.server_process import START_TIMEOUT, ServerProcess


def _console_port(server: ServerProcess) -> int:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        for line in list(server.lines):
            if '"console serving"' in line:
                entry = json.loads(line)
                assert entry["listen"].startswith("127.0.0.1:")
                return int(entry["port"])
        time.sleep(0.05)
    raise AssertionError("the console did not start:\n" + "".join(server.lines))


def test_development_mode_refuses_a_console_beyond_loopback(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", None, "--console-listen", "0.0.0.0:0")
    assert server.wait_exit() == 2
    log = "".join(server.lines)
    assert "cannot start" in log
    assert "loopback" in log


def test_a_malformed_console_address_refuses_to_start(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", None, "--console-listen", "127.0.0.1:http")
    assert server.wait_exit() == 2
    assert "--console-listen must be HOST:PORT" in "".join(server.lines)


def test_a_bare_port_serves_the_console_on_loopback_until_sigterm(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", None, "--console-listen", "0")
    try:
        server.wait_ready()
        port = _console_port(server)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/") as reply:
            page = reply.read().decode()
        assert "development mode" in page
    finally:
        assert server.terminate() == 0
