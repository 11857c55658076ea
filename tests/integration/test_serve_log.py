"""serve's log lines name the escalation and give times in RFC 3339 (issue 12, point 15)."""

from __future__ import annotations

import re

import aiohttp
import pytest

from tests.support.api import Api
from tests.support.receiver import Receiver
from tests.support.server import start_server
from tests.support.wait import eventually

RFC3339 = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"


@pytest.fixture
async def failing_receiver():
    rcv = await Receiver(script=[500] * 10).start()
    yield rcv
    await rcv.stop()


async def log_line_about(server, needle: str, *, timeout_s: float = 15.0) -> str:
    found = await eventually(
        lambda: [line for line in list(server.output) if needle in line],
        timeout_s=timeout_s,
        what=f"a log line with {needle!r}",
    )
    return found[0]


async def test_a_failed_attempt_logs_the_escalation_and_an_rfc3339_retry_time(tmp_path, failing_receiver):
    server = start_server(tmp_path, "--retry-schedule", "1h")
    try:
        server.cli("policy", "set", "refunds.large")
        async with aiohttp.ClientSession() as session:
            api = Api(server.url, server.bootstrap_key, session)
            esc = await api.create(resume={"mode": "webhook", "url": failing_receiver.url, "secret": "s"})
            await api.decide(esc["id"])
            line = await log_line_about(server, "next try at")
        assert f"escalation {esc['id']}" in line
        assert re.match(RFC3339 + " INFO ", line), line  # the line's own time
        assert re.search("next try at " + RFC3339, line), line
        assert not re.search(r"\b1\d{12}\b", line), line  # no epoch milliseconds
    finally:
        server.stop()
