"""The nightly cycle's promises, checked on one chain's listing: no episode is digested twice, and
every item acknowledged before an acknowledged Consolidate call, on a day that had ended by the
call's `now`, is covered by a digest.

A digest's client key names what it covers, `digest:<day start µs>:<first seq>:<last seq>`: the
episodes of that day with a sequence number in that range. The format is the server's, not a
documented contract, so a digest whose key does not read that way is reported as a problem (the
check must then follow the server) rather than skipped.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import accumulate

from bench._chaos_acks import MICROS_PER_SECOND, AckBook
from bench._chaos_plan import DAY_SECONDS, Chain
from tutor_memory_client._proto import memory_pb2 as pb

DAY_US = DAY_SECONDS * MICROS_PER_SECOND
_DIGEST_KEY = re.compile(r"digest:(-?\d+):(\d+):(\d+)")


@dataclass(slots=True)
class DigestFindings:
    digests: int = 0
    # Keyed by "<chain> <client key>", like the audit's other problems.
    undigested: dict[str, str] = field(default_factory=dict)
    digested_twice: dict[str, str] = field(default_factory=dict)
    bad_digests: dict[str, str] = field(default_factory=dict)


def _occurred_us(ep: pb.Episode) -> int:
    return ep.occurred_at.seconds * MICROS_PER_SECOND + ep.occurred_at.nanos // 1_000


def _day_start_us(ep: pb.Episode) -> int:
    """The UTC day of an episode: no call names a time zone, so every chain's days are UTC."""
    at = _occurred_us(ep)
    return at - at % DAY_US


def check_digests(chain: Chain, episodes: list[pb.Episode], book: AckBook) -> DigestFindings:
    out = DigestFindings()
    by_seq = {ep.seq: ep for ep in episodes}
    ranges: defaultdict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for ep in episodes:
        if ep.kind != pb.EPISODE_KIND_CONSOLIDATION:
            continue
        out.digests += 1
        subject = f"{chain} {ep.client_key}"
        match = _DIGEST_KEY.fullmatch(ep.client_key)
        if match is None:
            out.bad_digests[subject] = f"digest {ep.client_key!r} of {chain}: key not understood"
            continue
        day, first, last = (int(g) for g in match.groups())
        ends = [by_seq.get(first), by_seq.get(last)]
        if any(
            e is None or e.kind == pb.EPISODE_KIND_CONSOLIDATION or _day_start_us(e) != day
            for e in ends
        ):
            out.bad_digests[subject] = (
                f"digest {ep.client_key} of {chain}: seq {first} or {last} is not an episode "
                "of its day"
            )
            continue
        ranges[day].append((first, last, ep.client_key))

    deadline = _digest_deadlines(chain, book)
    for ep in episodes:
        if ep.kind == pb.EPISODE_KIND_CONSOLIDATION:
            continue
        day = _day_start_us(ep)
        covering = [key for first, last, key in ranges.get(day, ()) if first <= ep.seq <= last]
        subject = f"{chain} {ep.client_key}"
        if len(covering) > 1:
            out.digested_twice[subject] = (
                f"{ep.client_key} of {chain} (seq {ep.seq}) is in {len(covering)} digests: "
                + ", ".join(covering)
            )
        ack = book.acks.get(ep.client_key)
        if not covering and ack is not None and deadline(ack.order) >= day + DAY_US:
            out.undigested[subject] = (
                f"{ep.client_key} of {chain} (seq {ep.seq}, acknowledged before a Consolidate "
                "reply whose now ended its day) is in no digest"
            )
    return out


def _digest_deadlines(chain: Chain, book: AckBook) -> _Deadline:
    """For an acknowledgement's order, the latest `now` of an acknowledged Consolidate call on the
    chain that was sent after it (or -1): days ending by then must be digested."""
    sends = sorted(
        (a.send.watermark, a.send.now_us)
        for a in book.consolidation_acks
        if a.send.call.chain == chain
    )
    watermarks = [w for w, _ in sends]
    # Latest `now` among the calls from each position on.
    latest = list(accumulate(reversed([now for _, now in sends]), max))[::-1]
    return _Deadline(watermarks, latest)


@dataclass(frozen=True, slots=True)
class _Deadline:
    watermarks: list[int]
    latest: list[int]

    def __call__(self, order: int) -> int:
        i = bisect.bisect_right(self.watermarks, order)
        return self.latest[i] if i < len(self.latest) else -1
