"""PostgreSQL stopped under load: three replicas wait it out and recover by themselves.

Three ``escalated serve`` replicas on one PostgreSQL server of the test's
own (this test stops it), agents creating, deciding and cancelling as in the
crash loops (tests/faults/workload.py), a receiver that answers every
callback. Mid-run PostgreSQL is stopped (``pg_ctl stop -m fast``, what a
restart or a failover does to its sessions) for ``ESCALATED_OUTAGE_S``
seconds (4 in CI; 20 with ``ESCALATED_FAULTS_LONG=1``), then started again;
the load goes on throughout. Clients honour ``503`` + ``Retry-After`` and
send the same request again (creates with their Idempotency-Key).

Checked: no replica exits; while the database is gone every answer that is
not a success is ``503 unavailable`` with ``Retry-After`` (never a 500);
afterwards, the crash loops' checks (every 201 is in the database, nothing
resolved twice, every callback owed delivered and signed), and every
deadline that passed during the outage is breached once it is back.
Figures: creates lost, callbacks owed, breach lateness, time to recover
(from PostgreSQL accepting connections to every replica answering 200).

Before the fix all three replicas stopped ("outbox-sender died",
"change-feed died") and exited 0.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections import Counter
from datetime import datetime

import aiohttp
import attrs
import orjson
import pytest

from tests.faults.checks import Figures, check, drain
from tests.faults.conftest import LONG
from tests.faults.receiver import FlakyReceiver
from tests.faults.workload import MANUAL_POLICY, REQUEST_TIMEOUT_S, SLA_POLICY, Unreachable, Workload
from tests.support.server import ServerProcess, cli

pytestmark = pytest.mark.postgres

REPLICAS = 3
OUTAGE_S = float(os.environ.get("ESCALATED_OUTAGE_S") or (20 if LONG else 4))
SERVE_ARGS = ("--retry-schedule", "200ms,500ms,1s", "--retry-for", "10m", "--delivery-timeout", "1s")
AGENTS = 6
BEFORE_S, AFTER_S = 3.0, 4.0  # load before the stop and after the start


@attrs.define
class PatientApi:
    """HTTP to the replicas in turn, honouring 503 + ``Retry-After`` as a
    client should: the same request again after the wait (at most 2 s here,
    to measure recovery finely). Counts what came back."""

    session: aiohttp.ClientSession
    replicas: list[ServerProcess]
    key: str
    statuses: Counter = attrs.field(factory=Counter)
    improper_503s: list[str] = attrs.field(factory=list)  # a 503 not ``unavailable`` + ``Retry-After``
    reconnects: int = 0
    _turn: int = 0

    async def call(
        self, method: str, path: str, *, json=None, headers: dict | None = None, deadline: float, on: int | None = None
    ) -> tuple[int, dict]:
        self._turn += 1
        index = self._turn if on is None else on
        while time.monotonic() < deadline:
            replica = self.replicas[index % len(self.replicas)]
            try:
                status, body, retry_after = await self._once(replica, method, path, json=json, headers=headers)
            except (aiohttp.ClientError, TimeoutError, orjson.JSONDecodeError):
                self.reconnects += 1
                index += 1
                await asyncio.sleep(0.05)
                continue
            self.statuses[status] += 1
            if status != 503:
                return status, body
            if body.get("code") not in ("unavailable", "busy") or retry_after is None:
                self.improper_503s.append(f"{method} {path}: {body} Retry-After={retry_after}")
            await asyncio.sleep(min(2.0, float(retry_after or 1)))
        raise Unreachable(f"{method} {path}")

    async def _once(self, replica: ServerProcess, method: str, path: str, *, json, headers) -> tuple[int, dict, str | None]:
        async with self.session.request(
            method, replica.url + path, json=json,
            headers={"Authorization": f"Bearer {self.key}", **(headers or {})},
            timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S),
        ) as response:  # fmt: skip
            raw = await response.read()
            return response.status, (orjson.loads(raw) if raw else {}), response.headers.get("Retry-After")

    async def all_escalations(self, *, deadline: float) -> list[dict]:
        out, cursor = [], None
        while True:
            path = "/escalations?limit=200&order=asc" + (f"&cursor={cursor}" if cursor else "")
            status, page = await self.call("GET", path, deadline=deadline)
            assert status == 200, page
            out.extend(page["data"])
            cursor = page["nextCursor"]
            if cursor is None:
                return out


async def first_200_s(session: aiohttp.ClientSession, replica: ServerProcess, key: str, *, since: float) -> float:
    """Seconds from ``since`` until ``replica`` answers a read with 200."""
    while True:
        try:
            async with session.get(
                replica.url + "/escalations?limit=1", headers={"Authorization": f"Bearer {key}"},
                timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S),
            ) as response:  # fmt: skip
                if response.status == 200:
                    return time.monotonic() - since
        except (aiohttp.ClientError, TimeoutError):
            pass
        await asyncio.sleep(0.05)


def breach_lateness_s(escalations: list[dict], *, back_at: float) -> tuple[list[float], list[float]]:
    """Each breach's lateness (answeredAt - deadlineAt), and for deadlines that
    passed while the database was gone, how long after it was back they were breached."""
    def at(text: str) -> float:
        return datetime.fromisoformat(text).timestamp()

    breaches = [e for e in escalations if e["status"] == "resolved" and e["resolution"]["resolvedBy"] == "timeout"]
    late = sorted(at(e["resolution"]["answeredAt"]) - at(e["deadlineAt"]) for e in breaches)
    after_back = sorted(at(e["resolution"]["answeredAt"]) - back_at for e in breaches if at(e["deadlineAt"]) < back_at)
    return late, after_back


@pytest.fixture(scope="module")
def own_postgres(postgres_server):
    """A PostgreSQL server for this test alone (asking for the session's one
    first gives the same skip or failure when PostgreSQL is missing)."""
    from tests.support.postgres import PostgresServer

    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def replicas(own_postgres):
    own_postgres.execute("CREATE DATABASE outage")
    url = own_postgres.url("outage")
    started = [ServerProcess(db=url, args=SERVE_ARGS).start(timeout_s=60) for _ in range(REPLICAS)]
    await asyncio.to_thread(cli, url, "policy", "set", SLA_POLICY, "--sla", "1s", "--default-choice", "deny")
    await asyncio.to_thread(cli, url, "policy", "set", MANUAL_POLICY)
    yield started
    for replica in started:
        replica.kill()


async def test_three_replicas_wait_out_a_stopped_database_and_recover(own_postgres, replicas, record_figures):
    started = time.monotonic()
    rng = random.Random(int(os.environ.get("ESCALATED_FAULTS_SEED", "0")) or random.randrange(1, 2**31))
    receiver = await FlakyReceiver(rng=rng, ok_share=1.0).start()
    key = next(r.bootstrap_key for r in replicas if r.bootstrap_key)
    deadline = started + BEFORE_S + OUTAGE_S + AFTER_S + 120
    done = asyncio.Event()
    try:
        async with aiohttp.ClientSession() as session:
            api = PatientApi(session=session, replicas=replicas, key=key)
            workload = Workload(api=api, receiver=receiver, rng=rng)
            agents = asyncio.create_task(workload.run_agents(agents=AGENTS, until=done, max_escalations=100_000, deadline=deadline))
            await asyncio.sleep(BEFORE_S)  # load before the outage
            await asyncio.to_thread(own_postgres.pause)
            await asyncio.sleep(OUTAGE_S)  # the outage: the load goes on
            await asyncio.to_thread(own_postgres.resume)  # returns once PostgreSQL accepts connections
            back, back_at = time.monotonic(), time.time()
            async with asyncio.timeout(60):
                recovery_s = max(await asyncio.gather(*(first_200_s(session, r, key, since=back) for r in replicas)))
            await asyncio.sleep(AFTER_S)
            done.set()
            await agents
            escalations = await drain(api, receiver, deadline=time.monotonic() + 120)
            figures = Figures(name=f"{REPLICAS} replicas, PostgreSQL stopped {OUTAGE_S:g} s under load", client_reconnects=api.reconnects)
            problems = check(figures, workload.ledger, escalations, receiver)
    finally:
        await receiver.close()
    figures.seconds = time.monotonic() - started
    late, after_back = breach_lateness_s(escalations, back_at=back_at)
    record_figures(figures)
    print(
        f"  answers {dict(sorted(api.statuses.items()))}; time to recover {recovery_s:.2f} s "
        f"(PostgreSQL accepting connections -> every replica answers 200); breach lateness max {late[-1] if late else 0:.2f} s; "
        f"deadlines passed during the outage: {len(after_back)}, breached {max(after_back, default=0):.2f} s after it was back at most"
    )
    for replica in replicas:
        output = "".join(replica.output)
        assert replica.running, output[-3000:]
        assert " died" not in output and "Traceback" not in output, output[-3000:]
    assert not problems, "\n".join(problems[:30])
    assert not api.improper_503s, api.improper_503s[:5]
    assert api.statuses[503] > 0, "the outage was never seen"
    assert not any(status >= 500 and status != 503 for status in api.statuses), api.statuses
    assert figures.creates_acknowledged == figures.creates_found > 0
    assert figures.callbacks_owed == figures.callbacks_delivered > 0
    assert after_back, "no deadline passed during the outage"
