"""The sharding key every PostgreSQL row carries: one 64-bit number per (tenant, student).

Every table has it first in its primary key, so a Citus cluster can distribute all of them by it
and keep one student's rows together on one shard (docs/DEPLOYMENT.md). It is derived, never
chosen: any node computes it from the chain it serves, with no lookup.
"""

from __future__ import annotations

import hashlib


def student_key(tenant: str, student: str) -> int:
    """A signed 64-bit key (PostgreSQL's bigint) from the first 8 bytes of a SHA-256 over the
    length-prefixed tenant and the student: stable across nodes, versions and machines. Two
    students sharing a key only share a shard; every query also names the chain."""
    digest = hashlib.sha256(f"{len(tenant)}:{tenant}\x1f{student}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)
