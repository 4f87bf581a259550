"""Every RPC of tutor_memory.v1.Memory classified once: does it write, does it add episodes, and
which chains does a request name. The call gate checks a token's scope and its tenant's quotas
from this table; a test holds it to the proto, so a new RPC cannot be served unclassified.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tutor_memory.app.access import Access, Named

READ, WRITE = Access.READ, Access.WRITE


@dataclass(frozen=True, slots=True)
class RpcPolicy:
    access: Access
    # Episodes one request adds at most (a stream: per item), checked against the tenant's
    # ceiling before the call; 0 for calls that add none a caller asked for.
    adds_episodes: int = 0


# Checkpoint signs the head without storing anything; BuildBlock writes nothing (SPEC R6); the
# nightly cycle's digests are the server's own episodes, so Consolidate is a write that the
# episode ceiling does not stop (the cycle must keep running for a full tenant).
RPC_POLICIES: dict[str, RpcPolicy] = {
    "AppendEpisode": RpcPolicy(WRITE, adds_episodes=1),
    "IngestEpisodes": RpcPolicy(WRITE, adds_episodes=1),
    "ImportEpisodes": RpcPolicy(WRITE, adds_episodes=1),
    "ListEpisodes": RpcPolicy(READ),
    "VerifyChain": RpcPolicy(READ),
    "Checkpoint": RpcPolicy(READ),
    "BuildBlock": RpcPolicy(READ),
    "AnnotateAnswer": RpcPolicy(WRITE),
    "IngestFile": RpcPolicy(WRITE, adds_episodes=1),
    "RemoveFile": RpcPolicy(WRITE, adds_episodes=1),
    "SearchPassages": RpcPolicy(READ),
    "GetMap": RpcPolicy(READ),
    "Teach": RpcPolicy(WRITE, adds_episodes=1),
    "RecordCheck": RpcPolicy(WRITE, adds_episodes=1),
    "GetBeliefHistory": RpcPolicy(READ),
    "Rederive": RpcPolicy(WRITE),
    "GetReport": RpcPolicy(READ),
    "Consolidate": RpcPolicy(WRITE),
    # Erasure writes (it deletes, and records itself) and covers every subject of the student.
    "ForgetStudent": RpcPolicy(WRITE),
}


# The stream messages that carry a batch of episodes, each naming its own chain.
BATCH_MESSAGES = frozenset({"IngestEpisodesRequest", "ImportEpisodesRequest"})


def named_chains(request: Any) -> Iterator[Named]:
    """The chains one request message names. An episode names its own; a Consolidate request
    with an empty student (or subject) covers every student (subject) of the tenant; an
    IngestEpisodes or ImportEpisodes message names every item's chain."""
    descriptor = request.DESCRIPTOR
    fields = descriptor.fields_by_name
    if "episodes" in fields and descriptor.name in BATCH_MESSAGES:
        for item in request.episodes:
            yield Named(item.student_id, item.subject_id)
    elif "episode" in fields:
        yield Named(request.episode.student_id, request.episode.subject_id)
    elif "student_id" in fields:
        student: str = request.student_id
        subject: str = request.subject_id if "subject_id" in fields else ""
        if descriptor.name == "ConsolidateRequest":
            yield Named(student or None, subject or None)
        elif "subject_id" not in fields:
            # A call about a student as a whole (ForgetStudent) covers every subject of theirs.
            yield Named(student, None)
        else:
            yield Named(student, subject)
    else:
        # A request that names no chain reaches every chain of the tenant.
        yield Named(None, None)


def items_in(request: Any) -> int:
    """How many episodes one message of the request carries (a batch message: its items)."""
    if request.DESCRIPTOR.name in BATCH_MESSAGES:
        return len(request.episodes)
    return 1
