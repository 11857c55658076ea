"""The per-address sign-in bucket, with an injected clock."""

from __future__ import annotations

import pytest

from escalated.errors import RateLimited
from escalated.http.ratelimit import SignInLimiter, address_key


def test_an_address_gets_its_burst_then_waits_for_a_refill():
    limiter = SignInLimiter(burst=3, per_s=1 / 20)
    for _ in range(3):
        limiter.check("192.0.2.1", now_s=100.0)
    with pytest.raises(RateLimited) as refused:
        limiter.check("192.0.2.1", now_s=100.0)
    assert refused.value.extra["retry_after_s"] == pytest.approx(20.0)
    limiter.check("192.0.2.2", now_s=100.0)  # another address has its own bucket
    limiter.check("192.0.2.1", now_s=120.0)  # one try back after 20 s


@pytest.mark.parametrize(
    ("remote", "key"),
    [
        ("192.0.2.1", "192.0.2.1"),
        ("::ffff:192.0.2.1", "192.0.2.1"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:bbbb::9", "2001:db8:1:2::/64"),  # the same host's /64
        (None, "unknown"),
    ],
)
def test_one_bucket_per_ipv4_address_and_per_ipv6_64(remote, key):
    assert address_key(remote) == key
