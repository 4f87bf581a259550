"""The server key: several servers started at once on one data directory (nodes sharing it) all
start, with one key."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from tutor_memory.store.keyfile import KEY_FILE_NAME, load_or_create_server_key


def _public_key(data_dir: str, out: multiprocessing.Queue[bytes]) -> None:
    out.put(load_or_create_server_key(Path(data_dir)).public_bytes)


def test_servers_starting_together_on_one_directory_share_one_key(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    out: multiprocessing.Queue[bytes] = context.Queue()
    starting = [context.Process(target=_public_key, args=(str(tmp_path), out)) for _ in range(4)]
    for process in starting:
        process.start()
    for process in starting:
        process.join(timeout=60)
    assert [p.exitcode for p in starting] == [0, 0, 0, 0]
    keys = {out.get(timeout=5) for _ in starting}
    assert len(keys) == 1
    assert [p.name for p in tmp_path.iterdir()] == [KEY_FILE_NAME]
    assert load_or_create_server_key(tmp_path).public_bytes in keys
