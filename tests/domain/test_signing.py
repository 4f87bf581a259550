"""The server key persists across restarts and signs checkpoints anyone can check."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tutor_memory.domain.episodes import ChainKey
from tutor_memory.domain.signing import CHECKPOINT_FORMAT
from tutor_memory.store.keyfile import KEY_FILE_NAME, load_or_create_server_key

CHAIN = ChainKey("t", "s", "bio")


def test_key_is_created_private_and_reloaded(tmp_path: Path) -> None:
    first = load_or_create_server_key(tmp_path)
    mode = stat.S_IMODE((tmp_path / KEY_FILE_NAME).stat().st_mode)
    assert mode == 0o600
    again = load_or_create_server_key(tmp_path)
    assert again.public_bytes == first.public_bytes


def test_checkpoint_payload_states_what_is_signed(tmp_path: Path) -> None:
    key = load_or_create_server_key(tmp_path)
    cp = key.sign(CHAIN, 7, b"\x01" * 32, 123)
    body = json.loads(cp.payload)
    assert body == {
        "format": CHECKPOINT_FORMAT,
        "tenant": "t",
        "student": "s",
        "subject": "bio",
        "length": 7,
        "head_hash": "01" * 32,
        "created_at_us": 123,
    }
    assert key.is_authentic(cp, CHAIN)


def test_checkpoint_is_not_authentic_for_another_chain_or_key(tmp_path: Path) -> None:
    key = load_or_create_server_key(tmp_path / "a")
    other = load_or_create_server_key(tmp_path / "b")
    cp = key.sign(CHAIN, 1, b"\x02" * 32, 5)
    assert not key.is_authentic(cp, ChainKey("t", "other-student", "bio"))
    assert not other.is_authentic(cp, CHAIN)
