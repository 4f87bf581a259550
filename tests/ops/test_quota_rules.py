"""Per-tenant quotas: the token bucket and the episode ceiling, on a clock the test moves."""

from __future__ import annotations

import pytest

from tutor_memory.app.quotas import EPISODE_LIMIT, RATE_LIMIT, QuotaExceeded, Quotas, TenantLimits


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate_then_a_retry_hint() -> None:
    clock = Clock()
    quotas = Quotas({"a": TenantLimits(requests_per_second=2, burst=3)}, clock=clock)
    for _ in range(3):
        quotas.admit("a")
    with pytest.raises(QuotaExceeded) as err:
        quotas.admit("a")
    assert err.value.limit == RATE_LIMIT
    assert err.value.retry_after == pytest.approx(0.5)
    clock.now += 0.5
    quotas.admit("a")  # one token came back after the hinted wait


def test_other_tenants_and_unlimited_tenants_are_not_affected() -> None:
    clock = Clock()
    quotas = Quotas({"a": TenantLimits(requests_per_second=1, burst=1)}, clock=clock)
    quotas.admit("a")
    with pytest.raises(QuotaExceeded):
        quotas.admit("a")
    for _ in range(1000):
        quotas.admit("b")


def test_the_default_burst_is_one_seconds_worth() -> None:
    assert TenantLimits(requests_per_second=10).bucket_size == 10
    assert TenantLimits(requests_per_second=0.2).bucket_size == 1


def test_a_reload_keeps_the_bucket_level_within_the_new_size() -> None:
    clock = Clock()
    quotas = Quotas({"a": TenantLimits(requests_per_second=1, burst=10)}, clock=clock)
    for _ in range(8):
        quotas.admit("a")
    quotas.replace_limits({"a": TenantLimits(requests_per_second=1, burst=5)})
    quotas.admit("a")
    quotas.admit("a")
    with pytest.raises(QuotaExceeded):
        quotas.admit("a")
    quotas.replace_limits({})
    quotas.admit("a")  # the limit was removed


def test_the_episode_ceiling_counts_from_the_store_and_every_insert() -> None:
    quotas = Quotas({"a": TenantLimits(max_episodes=5)})
    quotas.set_episode_counts({"a": 4})
    quotas.check_room("a", 1)
    with pytest.raises(QuotaExceeded) as err:
        quotas.check_room("a", 2)
    assert err.value.limit == EPISODE_LIMIT
    assert err.value.retry_after is None
    assert "stores 4 episodes" in str(err.value)
