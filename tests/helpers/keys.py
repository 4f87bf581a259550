"""A fixed master key for tests that open a store directly (a server makes its own)."""

from __future__ import annotations

from tutor_memory.domain.sealing import KEY_BYTES, MasterKey

TEST_MASTER_KEY = MasterKey(bytes(range(KEY_BYTES)))
