"""MalformedRequests: what aiohttp's request handler logs, with an injected clock."""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import BadHttpMessage

from escalated.http.malformed import MalformedRequests


def _raise_and_log(adapter: MalformedRequests, exc: BaseException) -> None:
    try:
        raise exc
    except BaseException:
        adapter.exception("Error handling request from %s", "192.0.2.7", exc_info=exc)


def test_malformed_requests_are_one_line_then_a_count_once_a_minute(caplog):
    now = [1000.0]
    adapter = MalformedRequests(logging.getLogger("aiohttp.server"), every_s=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.INFO):
        for _ in range(50):
            _raise_and_log(adapter, BadHttpMessage("Invalid header value char:\n\n  b'X: ain_live_x\\x00'\n   ^"))
        now[0] += 59.0
        _raise_and_log(adapter, BadHttpMessage("Invalid header value char"))
        now[0] += 1.0
        _raise_and_log(adapter, BadHttpMessage("Invalid char in url path"))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert lines[0].startswith("malformed request from 192.0.2.7 answered 400: Invalid header value char;")
    assert "Invalid char in url path (50 more since the last report)" in lines[1]
    assert all(r.exc_info is None and "ain_live_" not in r.getMessage() for r in caplog.records)


def test_any_other_error_keeps_its_traceback(caplog):
    adapter = MalformedRequests(logging.getLogger("aiohttp.server"))
    with caplog.at_level(logging.INFO):
        _raise_and_log(adapter, RuntimeError("a handler's own bug"))
    [record] = caplog.records
    assert record.name == "aiohttp.server" and record.exc_info and record.exc_info[0] is RuntimeError
