"""Frozen settings. Only the CLI reads the environment and builds these."""

from __future__ import annotations

import os
from pathlib import Path

import attrs

DEFAULT_PORT = 8470
DEFAULT_RETRY_SCHEDULE_S = (5.0, 30.0, 120.0, 600.0, 1800.0, 3600.0, 10800.0)
DEFAULT_RETRY_FOR_S = 24 * 3600.0
MAX_BODY_BYTES = 256 * 1024


def default_db_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "escalated" / "escalated.db"


@attrs.frozen(kw_only=True)
class Settings:
    db_path: Path
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    durability: str = "full"  # "full": fsync each commit group; "normal": may lose the last commits on power loss
    retry_schedule_s: tuple[float, ...] = DEFAULT_RETRY_SCHEDULE_S
    retry_for_s: float = DEFAULT_RETRY_FOR_S
    delivery_timeout_s: float = 10.0
    smtp_url: str | None = None
    allow_callback_hosts: tuple[str, ...] = ()
    max_body_bytes: int = MAX_BODY_BYTES
    rate_limit_per_s: float | None = None  # per token; None = off
    # Callbacks share the event loop with the API and the SLA clock; 8 in
    # flight kept breach lateness p99 at 160-240 ms where 32 gave 340-490 ms,
    # with no slower callbacks (docs/performance.md).
    sender_concurrency: int = 8
    # At most this many attempts to one receiver (scheme, host, port) at a
    # time, so a receiver that hangs holds at most this many of the slots above
    # and every other receiver keeps capacity (docs/reliability.md).
    sender_per_host: int = 4
