"""Replicas whose PostgreSQL connections are terminated stay up and go on.

``pg_terminate_backend`` on every session of the database, as a pooler
restart, an idle reaper or a failover does. Before, a replica with no load
stopped within a second ("outbox-sender died: AdminShutdown", "change-feed
died"). Checked through two real ``escalated serve`` replicas: each still
creates, decides, calls back, breaches, and hears the other's decisions,
and neither process exits. Stopping PostgreSQL itself under load is
tests/faults/test_database_outage.py.
"""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from tests.support.api import Api, escalation_body
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess, cli
from tests.support.wait import eventually

pytestmark = pytest.mark.postgres


@pytest.fixture
async def replicas(postgres_server):
    url = postgres_server.create_database()
    cli(url, "policy", "set", "refunds.large")
    cli(url, "policy", "set", "sla.short", "--sla", "2s", "--default-choice", "deny")
    started = [ServerProcess(db=url).start(), ServerProcess(db=url).start()]
    yield url, started
    for replica in started:
        replica.stop()
    postgres_server.drop_database(url)


async def answered(api: Api, method: str, path: str, *, json=None, headers=None, timeout_s: float = 30) -> tuple[int, dict]:
    """The first answer that is not 503 ``unavailable``; every 503 must carry ``Retry-After``."""
    async with asyncio.timeout(timeout_s):
        while True:
            status, body, got = await api.call(method, path, json=json, headers=headers)
            if status != 503:
                return status, body
            assert body["code"] == "unavailable" and int(got["Retry-After"]) >= 1, (body, got)
            await asyncio.sleep(0.1)


async def test_replicas_whose_connections_are_terminated_stay_up_and_recover(postgres_server, replicas):
    url, (one, two) = replicas
    receiver = await Receiver().start()
    try:
        async with aiohttp.ClientSession() as session:
            key = one.bootstrap_key or two.bootstrap_key
            a, b = Api(one.url, key, session), Api(two.url, key, session)
            await a.create()  # every connection of both replicas is open and used
            assert postgres_server.terminate_backends(url) >= 4
            status, esc = await answered(
                a, "POST", "/escalations", json=escalation_body(resume={"mode": "webhook", "url": receiver.url}),
                headers={"Idempotency-Key": "after-terminate"},
            )  # fmt: skip
            assert status == 201, esc
            waiting = asyncio.create_task(answered(a, "GET", f"/escalations/{esc['id']}/wait?timeout=20"))
            assert (await answered(b, "POST", f"/escalations/{esc['id']}/decide", json={"choice": "approve"}))[0] == 200
            status, waited = await waiting  # A heard B's decision: its change feed lives
            assert (status, waited["status"]) == (200, "resolved")
            (callback,) = await receiver.wait_for(1, timeout_s=30)  # a sender lives
            assert b'"approve"' in callback.body
            status, timed = await answered(b, "POST", "/escalations", json=escalation_body(policy="sla.short"))
            await eventually(  # the one SLA clock lives
                lambda: resolved(b, timed["id"]), timeout_s=30, interval_s=0.1, what="the SLA's breach"
            )
            # Terminated again while idle: what stopped a replica with no load.
            postgres_server.terminate_backends(url)
            idle_from = time.monotonic()
            while time.monotonic() - idle_from < 3:  # a dying task took under a second before the fix
                for api in (a, b):
                    assert (await answered(api, "GET", "/escalations?limit=1"))[0] == 200
                await asyncio.sleep(0.2)
    finally:
        await receiver.stop()
    for replica in (one, two):
        output = "".join(replica.output)
        assert replica.running, output[-3000:]
        assert "died" not in output and "Traceback" not in output, output[-3000:]


async def resolved(replica, escalation_id: str) -> bool:
    return (await answered(replica, "GET", f"/escalations/{escalation_id}"))[1]["status"] == "resolved"
