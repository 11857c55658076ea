"""A per-token token bucket (``serve --rate-limit``); off unless configured."""

from __future__ import annotations

import time

from escalated.errors import RateLimited


class RateLimiter:
    def __init__(self, per_s: float, *, burst: float | None = None) -> None:
        self.per_s = per_s
        self.burst = burst if burst is not None else max(1.0, per_s)
        self._buckets: dict[str, tuple[float, float]] = {}

    def check(self, token_id: str, *, now_s: float | None = None) -> None:
        now_s = time.monotonic() if now_s is None else now_s
        tokens, last = self._buckets.get(token_id, (self.burst, now_s))
        tokens = min(self.burst, tokens + (now_s - last) * self.per_s)
        if tokens < 1.0:
            self._buckets[token_id] = (tokens, now_s)
            raise RateLimited("too many requests for this token", retry_after_s=(1.0 - tokens) / self.per_s)
        self._buckets[token_id] = (tokens - 1.0, now_s)

