"""How ``escalated serve`` logs: one line per event on stderr, times in RFC 3339 UTC.

The API speaks RFC 3339 (createdAt, deadlineAt); the log uses the same form
so an operator can match a log line with a resource by eye.
"""

from __future__ import annotations

import logging
import sys

from escalated.timeutil import format_ms

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class Rfc3339Formatter(logging.Formatter):
    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return format_ms(int(record.created * 1000))


def configure(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(Rfc3339Formatter(FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler])
    # aiosqlite logs every statement with its parameters at DEBUG: token hashes
    # and idempotency keys have no place in a log, whatever the level.
    logging.getLogger("aiosqlite").setLevel(max(logging.INFO, logging.getLogger().level))
