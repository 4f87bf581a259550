"""Per-tenant quotas, set in the tokens file: a request rate (a token bucket per tenant) and a
ceiling on stored episodes.

A denied call is refused before it does any work, so one tenant over its rate costs the others
almost nothing. The rate is checked per call; the episode ceiling before every call that adds
episodes and before every batch message, against a count kept from the store's own total at
start plus every committed insert. It is a soft ceiling: calls already admitted when the count
reaches it still commit, so a tenant can pass it by what its calls in flight carry.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tutor_memory.domain.errors import ResourceExhausted
from tutor_memory.store.protocols import AppendOutcome, AppendStatus

# The names of the two limits, as metrics and status details report them.
RATE_LIMIT = "requests_per_second"
EPISODE_LIMIT = "max_episodes"


@dataclass(frozen=True, slots=True)
class TenantLimits:
    """None: no limit of that kind."""

    requests_per_second: float | None = None
    # Calls a tenant may make at once after being idle; default: one second's worth (at least 1).
    burst: int | None = None
    max_episodes: int | None = None

    @property
    def bucket_size(self) -> float:
        if self.burst is not None:
            return float(self.burst)
        return max(1.0, self.requests_per_second or 1.0)


class QuotaExceeded(ResourceExhausted):
    """A tenant's limit was reached. `retry_after` (seconds) when waiting helps: the rate; None
    when it does not: the episode ceiling, which only the operator can raise."""

    def __init__(
        self,
        message: str,
        *,
        tenant: str,
        limit: str,
        retry_after: float | None,
        rate: float | None = None,
    ) -> None:
        super().__init__(message)
        self.tenant = tenant
        self.limit = limit
        self.retry_after = retry_after
        self.rate = rate

    @classmethod
    def over_rate(cls, tenant: str, rate: float, wait: float) -> QuotaExceeded:
        # Whole milliseconds, rounded up and at least 1: a client that waits that long finds a
        # request in its bucket (unless its other calls took it first).
        millis = max(1, math.ceil(wait * 1000))
        return cls(
            f"tenant {tenant!r} is over its rate of {rate:g} requests per second; "
            f"retry in {millis} ms",
            tenant=tenant,
            limit=RATE_LIMIT,
            retry_after=millis / 1000,
            rate=rate,
        )

    def after(self, seconds: float) -> QuotaExceeded:
        """The same refusal `seconds` later: the wait it hints is shorter by that much."""
        if self.retry_after is None or self.rate is None:
            return self
        return QuotaExceeded.over_rate(self.tenant, self.rate, self.retry_after - seconds)


class _Bucket:
    __slots__ = ("level", "updated")

    def __init__(self, level: float, now: float) -> None:
        self.level = level
        self.updated = now


class Quotas:
    """Thread-safe: calls are admitted on the event loop, inserts are counted on the writer."""

    def __init__(
        self,
        limits: Mapping[str, TenantLimits] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limits: dict[str, TenantLimits] = dict(limits or {})
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}
        self._episodes: dict[str, int] = {}
        self._lock = threading.Lock()

    def replace_limits(self, limits: Mapping[str, TenantLimits]) -> None:
        """New limits (a reloaded tokens file). A tenant's bucket keeps its level, capped by the
        new size, so a reload neither refills nor empties it."""
        with self._lock:
            self._limits = dict(limits)
            for tenant, bucket in list(self._buckets.items()):
                limit = self._limits.get(tenant)
                if limit is None or limit.requests_per_second is None:
                    del self._buckets[tenant]
                else:
                    bucket.level = min(bucket.level, limit.bucket_size)

    def limits_of(self, tenant: str) -> TenantLimits:
        return self._limits.get(tenant, TenantLimits())

    # -- the rate --------------------------------------------------------------------------------

    def admit(self, tenant: str) -> None:
        """Takes one request from the tenant's bucket, or raises QuotaExceeded with the seconds
        until the next one is there."""
        limit = self._limits.get(tenant)
        if limit is None or limit.requests_per_second is None:
            return
        rate, size = limit.requests_per_second, limit.bucket_size
        with self._lock:
            now = self._clock()
            bucket = self._buckets.get(tenant)
            if bucket is None:
                bucket = self._buckets[tenant] = _Bucket(size, now)
            bucket.level = min(size, bucket.level + (now - bucket.updated) * rate)
            bucket.updated = now
            if bucket.level >= 1.0:
                bucket.level -= 1.0
                return
            wait = (1.0 - bucket.level) / rate
        raise QuotaExceeded.over_rate(tenant, rate, wait)

    # -- stored episodes -------------------------------------------------------------------------

    def set_episode_counts(self, counts: Mapping[str, int]) -> None:
        """Every tenant's stored episodes, from the store (at start)."""
        with self._lock:
            self._episodes = dict(counts)

    def episodes_of(self, tenant: str) -> int:
        return self._episodes.get(tenant, 0)

    def episode_counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._episodes)

    def count_inserted(self, outcomes: Sequence[AppendOutcome]) -> None:
        """The ledger's hook: called after every commit with its outcomes."""
        with self._lock:
            for outcome in outcomes:
                if outcome.status is AppendStatus.INSERTED:
                    tenant = outcome.episode.chain.tenant
                    self._episodes[tenant] = self._episodes.get(tenant, 0) + 1

    def check_room(self, tenant: str, adding: int) -> None:
        """Raises QuotaExceeded when the tenant's stored episodes plus `adding` pass its
        ceiling."""
        limit = self._limits.get(tenant)
        if limit is None or limit.max_episodes is None:
            return
        stored = self.episodes_of(tenant)
        if stored + adding > limit.max_episodes:
            raise QuotaExceeded(
                f"tenant {tenant!r} stores {stored} episodes and its limit is "
                f"{limit.max_episodes}; this call would add {adding} (the operator can raise "
                "max_episodes in the tokens file)",
                tenant=tenant,
                limit=EPISODE_LIMIT,
                retry_after=None,
            )
