"""`tutor-memory serve` starts loading the model before it imports the server, beside the rest of
the start-up; a start refused meanwhile waits for that load to end and exits with status 2,
never aborted by the runtime's loading threads."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.server_process import ServerProcess

# Before the start waited for the model's load, 3 of 8 starts refused for their tokens file
# aborted (status 134, SIGABRT): six in a row all exiting with 2 is what a fixed start gives.
STARTS = 6


@pytest.mark.slow
def test_a_start_refused_while_the_model_loads_exits_with_status_2_every_time(
    tmp_path: Path,
) -> None:
    tokens = tmp_path / "tokens.toml"
    tokens.write_text("[[tokens]\n")
    statuses = []
    for _ in range(STARTS):
        server = ServerProcess(tmp_path / "data", tokens)
        statuses.append(server.wait_exit())
        assert "cannot start" in "".join(server.lines)
    assert statuses == [2] * STARTS
