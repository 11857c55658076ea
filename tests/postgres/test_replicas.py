"""Several ``escalated serve`` replicas on one PostgreSQL database, through
the real surface: real server processes, real HTTP, a real receiver."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest

from escalated.agent.signing import verify
from tests.support.api import Api
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess, cli
from tests.support.wait import eventually

pytestmark = pytest.mark.postgres


async def put_policy(url: str, key: str, *, sla: str | None = None) -> None:
    """Set-up through the real CLI, on the database URL."""
    args = ["policy", "set", key] + (["--sla", sla, "--default-choice", "deny"] if sla else [])
    await asyncio.to_thread(cli, url, *args)


@pytest.fixture
async def two(postgres_server):
    """Two replicas on a fresh (unmigrated) database, started one after the other."""
    url = postgres_server.create_database(migrated=False)
    replicas = [ServerProcess(db=url).start(), ServerProcess(db=url).start()]
    await put_policy(url, "refunds.large")
    yield url, replicas
    for replica in replicas:
        replica.stop()
    postgres_server.drop_database(url)


@pytest.fixture
async def session():
    async with aiohttp.ClientSession() as s:
        yield s


def apis(replicas: list[ServerProcess], session) -> list[Api]:
    key = next(r.bootstrap_key for r in replicas if r.bootstrap_key)
    return [Api(r.url, key, session) for r in replicas]


def test_of_two_replicas_starting_on_a_new_database_one_prints_a_bootstrap_key(two):
    _, replicas = two
    assert sum(r.bootstrap_key is not None for r in replicas) == 1


async def test_wait_on_one_replica_returns_within_1_s_of_a_decision_on_the_other(two, session):
    _, replicas = two
    a, b = apis(replicas, session)
    esc = await a.create()
    waiting = asyncio.create_task(b.call("GET", f"/escalations/{esc['id']}/wait?timeout=20"))
    await asyncio.sleep(0.3)  # the wait is parked on replica B
    status, _ = await a.decide(esc["id"])
    decided_at = time.monotonic()
    wait_status, body, _ = await waiting
    assert (status, wait_status) == (200, 200)
    assert body["status"] == "resolved"
    assert time.monotonic() - decided_at < 1.0


async def test_events_on_one_replica_carry_the_other_replicas_changes_with_rising_ids(two, session):
    _, replicas = two
    a, b = apis(replicas, session)
    seen: list[tuple[int, str]] = []

    async def read_events() -> None:
        async with session.get(b.url + "/events", headers=b._headers()) as resp:
            event_id = None
            async for raw in resp.content:
                line = raw.decode().strip()
                if line.startswith("id: "):
                    event_id = int(line[4:])
                elif line.startswith("event: ") and event_id is not None:
                    seen.append((event_id, line[7:]))
                    if line.endswith("decided"):
                        return

    reader = asyncio.create_task(read_events())
    await asyncio.sleep(0.3)
    esc = await a.create()
    await a.decide(esc["id"])
    await asyncio.wait_for(reader, 5)
    assert [event for _, event in seen] == ["escalation.created", "escalation.decided"]
    assert seen[0][0] < seen[1][0]


async def test_concurrent_creates_with_one_idempotency_key_on_two_replicas_make_one_escalation(two, session):
    _, replicas = two
    a, b = apis(replicas, session)
    from tests.support.api import escalation_body

    body = escalation_body()
    headers = {"Idempotency-Key": "same-key-on-both"}
    results = await asyncio.gather(
        a.call("POST", "/escalations", json=body, headers=headers), b.call("POST", "/escalations", json=body, headers=headers)
    )
    assert {status for status, _, _ in results} <= {200, 201}
    assert len({body["id"] for _, body, _ in results}) == 1
    status, listed, _ = await a.call("GET", "/escalations?runId=" + body["runId"])
    assert status == 200 and len(listed["data"]) == 1


async def test_a_decision_made_on_one_replica_is_called_back_once_and_signed(two, session):
    _, replicas = two
    a, b = apis(replicas, session)
    receiver = await Receiver().start()
    try:
        esc = await a.create(resume={"mode": "webhook", "url": receiver.url, "secret": "s3cret"})
        await b.decide(esc["id"])
        (got,) = await receiver.wait_for(1)
        await a.wait_delivery(esc["id"], "delivered")
        await asyncio.sleep(0.5)  # a second sender would have posted by now
    finally:
        await receiver.stop()
    assert len(receiver.received) == 1
    assert verify(got.body, got.headers["x-service-signature"], "s3cret")


async def test_a_deadline_is_breached_once_by_the_one_clock_of_two_replicas(two, session):
    url, replicas = two
    await put_policy(url, "sla.short", sla="1s")
    a, b = apis(replicas, session)
    esc = await a.create(policy="sla.short")

    async def breached():
        got = await b.get(esc["id"])
        return got if got["status"] == "resolved" else None

    got = await eventually(breached, timeout_s=10)
    assert got["resolution"]["resolvedBy"] == "timeout"
    assert [h["event"] for h in got["history"]].count("breached") == 1


async def test_when_the_clock_leader_is_killed_the_other_replica_breaches_within_5_s(two, session):
    url, replicas = two
    await put_policy(url, "sla.short", sla="1s")
    leader = await eventually(lambda: _leader_now(replicas), timeout_s=5)
    survivor = next(r for r in replicas if r is not leader)
    api = Api(survivor.url, survivor.bootstrap_key or leader.bootstrap_key, session)
    leader.kill()  # SIGKILL: its session, and so its lock, end with the process
    killed_at = time.monotonic()
    esc = await api.create(policy="sla.short")

    async def breached():
        return (await api.get(esc["id"]))["status"] == "resolved"

    await eventually(breached, timeout_s=10)
    assert time.monotonic() - killed_at < 1.0 + 5.0  # the deadline, plus failover under 5 s


async def _leader_now(replicas: list[ServerProcess]) -> ServerProcess | None:
    leading = [r for r in replicas if any("now runs the SLA clock" in line for line in r.output)]
    return leading[0] if len(leading) == 1 else None


async def test_a_reviewer_added_with_the_cli_on_the_url_sees_what_its_policy_routes_to_it(two, session):
    url, replicas = two
    token = await asyncio.to_thread(cli, url, "users", "add", "ann")
    await asyncio.to_thread(cli, url, "policy", "set", "refunds.ann", "--reviewer", "ann")
    a, b = apis(replicas, session)
    esc = await a.create(policy="refunds.ann")
    status, body, _ = await Api(b.url, token, session).call("GET", f"/escalations/{esc['id']}")
    assert status == 200 and body["id"] == esc["id"]


def test_policy_set_on_the_url_refuses_a_reviewer_that_matches_no_user(postgres_url):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "escalated", "policy", "set", "refunds.bob", "--reviewer", "bob", "--db", postgres_url],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert "no user or group matches bob" in proc.stderr and "Traceback" not in proc.stderr


def test_users_add_against_no_database_server_exits_1_without_a_traceback():
    import subprocess
    import sys

    from tests.support.postgres import free_port

    url = f"postgresql://postgres:hunter2-secret@127.0.0.1:{free_port()}/nothing?connect_timeout=5"
    proc = subprocess.run(
        [sys.executable, "-m", "escalated", "users", "add", "ann", "--db", url], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert "database error:" in proc.stderr and "Traceback" not in proc.stderr
    assert "hunter2-secret" not in proc.stderr + proc.stdout
