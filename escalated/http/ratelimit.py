"""Token buckets: per token (``serve --rate-limit``, off unless configured)
and per client address for sign-in (``serve --sign-in-rate-limit``)."""

from __future__ import annotations

import ipaddress
import time

from escalated.errors import RateLimited

# Buckets are forgotten once full again; past this many at once, the full
# ones are dropped on the next insert, so many addresses cannot grow memory
# without bound (the ones still limited stay).
MAX_TRACKED = 10_000


class RateLimiter:
    def __init__(self, per_s: float, *, burst: float | None = None) -> None:
        self.per_s = per_s
        self.burst = burst if burst is not None else max(1.0, per_s)
        self._buckets: dict[str, tuple[float, float]] = {}

    def check(self, token_id: str, *, now_s: float | None = None, words: str = "too many requests for this token") -> None:
        now_s = time.monotonic() if now_s is None else now_s
        tokens, last = self._buckets.get(token_id, (self.burst, now_s))
        tokens = min(self.burst, tokens + (now_s - last) * self.per_s)
        if tokens < 1.0:
            self._buckets[token_id] = (tokens, now_s)
            raise RateLimited(words, retry_after_s=(1.0 - tokens) / self.per_s)
        if token_id not in self._buckets and len(self._buckets) >= MAX_TRACKED:
            self._forget_full(now_s)
        self._buckets[token_id] = (tokens - 1.0, now_s)

    def _forget_full(self, now_s: float) -> None:
        refill_s = self.burst / self.per_s
        self._buckets = {k: v for k, v in self._buckets.items() if now_s - v[1] < refill_s}


def address_key(remote: str | None) -> str:
    """One bucket per IPv4 address and per IPv6 /64 (one host often holds a
    whole /64, so counting its addresses apart would not limit it)."""
    try:
        address = ipaddress.ip_address(remote or "")
    except ValueError:
        return remote or "unknown"
    if address.version == 4:
        return str(address)
    if address.ipv4_mapped is not None:  # ::ffff:192.0.2.1 is that IPv4 client
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


class SignInLimiter:
    """Sign-in posts, sign-in links and decision links, per client address:
    a bucket of ``burst`` tries refilled at ``per_s``."""

    def __init__(self, *, burst: float, per_s: float) -> None:
        self._buckets = RateLimiter(per_s, burst=max(1.0, burst))

    def check(self, remote: str | None, *, now_s: float | None = None) -> None:
        words = "too many sign-in or link attempts from this address; wait a little and try again"
        self._buckets.check(address_key(remote), now_s=now_s, words=words)
