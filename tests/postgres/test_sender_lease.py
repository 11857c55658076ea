"""A replica killed while it holds a delivery's claim: another replica
sends it when the claim's lease ends, ``--delivery-timeout`` plus
``LEASE_MARGIN_S`` after the claim (it was ``--delivery-timeout`` + 30 s)."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import psycopg
import pytest

from escalated.engine.sender import LEASE_MARGIN_S
from tests.support.api import Api
from tests.support.receiver import Receiver, sender_pid
from tests.support.server import ServerProcess, cli

pytestmark = pytest.mark.postgres

DELIVERY_TIMEOUT_S = 2.0
SERVE_ARGS = ("--delivery-timeout", f"{DELIVERY_TIMEOUT_S:g}s", "--retry-schedule", "200ms", "--retry-for", "10m")
SLACK_S = 3.0  # a busy machine: the survivor's pass after the lease, its claim and POST


@pytest.fixture
async def two(postgres_server):
    url = postgres_server.create_database(migrated=False)
    replicas = [ServerProcess(db=url, args=SERVE_ARGS).start(), ServerProcess(db=url, args=SERVE_ARGS).start()]
    await asyncio.to_thread(cli, url, "policy", "set", "refunds.large")
    yield url, replicas
    for replica in replicas:
        replica.stop()
    postgres_server.drop_database(url)


async def _claim_of(url: str, escalation_id: str) -> tuple[int | None, str]:
    """The callback's claimed_until_ms and its attempts as stored."""
    async with await psycopg.AsyncConnection.connect(url) as conn:
        sql = "SELECT claimed_until_ms, attempts_json FROM deliveries WHERE escalation_id = %s AND kind = 'callback'"
        return await (await conn.execute(sql, (escalation_id,))).fetchone()


async def test_a_replica_killed_mid_attempt_leaves_the_callback_to_another_when_its_short_lease_ends(two):
    url, replicas = two
    receiver = await Receiver(hold=asyncio.Event()).start()  # hangs until released
    try:
        async with aiohttp.ClientSession() as session:
            key = next(r.bootstrap_key for r in replicas if r.bootstrap_key)
            api = Api(replicas[0].url, key, session)
            esc = await api.create(resume={"mode": "webhook", "url": receiver.url})
            await api.decide(esc["id"])
            await receiver.wait_for(1)
            claimed_at = time.monotonic()
            pid = sender_pid(receiver.peer_ports[0], [r.pid for r in replicas])
            holder = next(r for r in replicas if r.pid == pid)
            holder.kill()
            # Killed mid-attempt: the claim stands and nothing was recorded.
            claimed_until_ms, attempts = await _claim_of(url, esc["id"])
            assert claimed_until_ms is not None and attempts == "[]"
            receiver.hold.set()  # the receiver recovers; only the survivor can send now
            survivor = Api(next(r for r in replicas if r is not holder).url, key, session)
            await survivor.wait_delivery(esc["id"], "delivered", timeout_s=DELIVERY_TIMEOUT_S + LEASE_MARGIN_S + SLACK_S)
            after_s = time.monotonic() - claimed_at
    finally:
        await receiver.stop()
    assert after_s < DELIVERY_TIMEOUT_S + LEASE_MARGIN_S + SLACK_S
    assert len(receiver.received) == 2  # the killed replica's attempt, then the survivor's one
