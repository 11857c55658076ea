"""SLA clock leadership across replicas: one holder of the advisory lock at a time."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time

import psycopg
import pytest

from escalated.store.postgres.leader import Leadership
from tests.support.wait import eventually

pytestmark = pytest.mark.postgres

# A replica in miniature: leads with the real Leadership, says so, then sleeps.
HOLDER = """
import asyncio, sys
from escalated.store.postgres.leader import Leadership

async def main():
    async def lead():
        print("leading", flush=True)
        await asyncio.Event().wait()
    await Leadership(sys.argv[1], poll_s=0.2).run(asyncio.Event(), lead)

asyncio.run(main())
"""


@contextlib.contextmanager
def leading_holder(postgres_url: str):
    """HOLDER in a process of its own, once it says it leads; killed at the end whatever happened."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, postgres_url], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "leading"
        yield holder
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


async def failover_s(holder: subprocess.Popen, led: asyncio.Event, *, wait_s: float) -> float:
    """SIGKILL the holder (no clean-up code runs); seconds until the candidate leads."""
    holder.kill()
    killed_at = time.monotonic()
    await asyncio.wait_for(led.wait(), wait_s)
    return time.monotonic() - killed_at


async def test_of_two_candidates_exactly_one_leads(postgres_url):
    stop = asyncio.Event()
    leading: list[str] = []

    def leader(name):
        async def lead():
            leading.append(name)
            await asyncio.Event().wait()

        return lead

    a, b = Leadership(postgres_url, poll_s=0.1), Leadership(postgres_url, poll_s=0.1)
    tasks = [asyncio.create_task(a.run(stop, leader("a"))), asyncio.create_task(b.run(stop, leader("b")))]
    await eventually(lambda: leading, timeout_s=5)
    await asyncio.sleep(0.5)  # several polls of the other candidate
    stop.set()
    await asyncio.gather(*tasks)
    assert len(leading) == 1


async def test_a_killed_leader_process_is_replaced_within_5_s(postgres_url):
    with leading_holder(postgres_url) as holder:
        stop = asyncio.Event()
        candidate = Leadership(postgres_url, poll_s=0.2)
        led = asyncio.Event()

        async def lead():
            led.set()
            await asyncio.Event().wait()

        task = asyncio.create_task(candidate.run(stop, lead))
        await asyncio.sleep(0.6)
        assert not led.is_set()  # the lock is held elsewhere
        took_s = await failover_s(holder, led, wait_s=5.0)
        stop.set()
        await task
    assert took_s < 5.0


async def test_a_leader_whose_session_is_ended_stops_leading_and_the_clock_is_led_again(postgres_url):
    stop = asyncio.Event()
    events: list[str] = []

    async def lead():
        events.append("start")
        try:
            await asyncio.Event().wait()
        finally:
            events.append("stop")

    candidates = [Leadership(postgres_url, poll_s=0.1) for _ in range(2)]
    tasks = [asyncio.create_task(c.run(stop, lead)) for c in candidates]
    await eventually(lambda: events == ["start"], timeout_s=5)
    async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as admin:
        # End the session holding the clock lock, as a database restart or a network cut would.
        await admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        )
    await eventually(lambda: events[-2:] == ["stop", "start"] or events[1:] == ["start", "stop"], timeout_s=5)
    assert sum(c.leading for c in candidates) == 1
    stop.set()
    await asyncio.gather(*tasks)


async def test_a_replica_with_the_default_poll_takes_over_within_5_s_even_if_the_leader_dies_just_after_its_try(postgres_url):
    """The worst case of CONTRACT §10's failover: the leader dies right after
    a candidate (built as the store builds it, default poll) last found the
    lock taken. Its next try must still come within the 5 s."""
    with leading_holder(postgres_url) as holder:
        await asyncio.sleep(0.5)  # past the holder's first SELECT 1 check (every 0.2 s)
        stop, led = asyncio.Event(), asyncio.Event()

        async def lead():
            led.set()
            await asyncio.Event().wait()

        task = asyncio.create_task(Leadership(postgres_url).run(stop, lead))
        async with await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as watcher:

            async def candidate_tried() -> bool:
                cur = await watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND state = 'idle' AND query LIKE 'SELECT pg_try_advisory_lock%'"
                )
                return (await cur.fetchone())[0] == 1  # the holder's last query is its SELECT 1 check

            await eventually(candidate_tried, timeout_s=10, interval_s=0.01, what="the candidate's first try")
        # just after that try: the candidate waits a whole poll before the next
        took_s = await failover_s(holder, led, wait_s=10.0)
        stop.set()
        await task
    assert took_s < 5.0
