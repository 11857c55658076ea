"""The crash loop on three replicas: three ``escalated serve`` on one
PostgreSQL database, agents whose client moves to another replica when one
does not answer, a flaky receiver, and SIGKILLs of random replicas (the
SLA clock's leader half of the time) each restarted at once.

Checked afterwards, as in test_crash_loop.py: every 201 exists, nothing is
resolved twice, every resolution's callback was delivered and correctly
signed (by whichever replica's sender claimed it). And, across replicas:
breach lateness through leader kills (failover under 5 s), and ``/wait`` on
one replica returning within 1 s of a decide on another.

CI runs a bounded form; ``ESCALATED_FAULTS_LONG=1 .venv/bin/python -m pytest
tests/faults/test_replica_crash_loop.py -s`` runs the long one.
"""

from __future__ import annotations

import asyncio
import random
import time
from datetime import datetime

import aiohttp
import attrs
import orjson
import pytest

from tests.faults.checks import Figures, check, drain
from tests.faults.conftest import LONG
from tests.faults.workload import MANUAL_POLICY, REQUEST_TIMEOUT_S, SLA_POLICY, Api, Unreachable, Workload
from tests.support.server import ServerProcess, cli

pytestmark = pytest.mark.postgres

REPLICAS = 3
SERVE_ARGS = ("--retry-schedule", "200ms,500ms,1s", "--retry-for", "10m", "--delivery-timeout", "1s")
LEADS = "now runs the SLA clock"
FAILOVER_BOUND_S = 5.0  # the contract's clock failover bound
WAIT_BOUND_S = 1.0  # /wait on one replica after a decide on another


@attrs.frozen
class Size:
    kills: int
    max_escalations: int
    agents: int
    drain_s: float


SIZE = Size(kills=40, max_escalations=4000, agents=9, drain_s=240.0) if LONG else Size(
    kills=5, max_escalations=300, agents=6, drain_s=120.0
)


@attrs.define
class ReplicaApi:
    """HTTP to the replicas in turn; a connection error moves the same
    request on to the next replica (what a load balancer's retry does)."""

    session: aiohttp.ClientSession
    replicas: list[ServerProcess]
    key: str
    reconnects: int = 0
    _turn: int = 0

    async def call(
        self, method: str, path: str, *, json=None, headers: dict | None = None, deadline: float, on: int | None = None
    ) -> tuple[int, dict]:
        """``on``: start at this replica instead of the next in turn."""
        index = self._next() if on is None else on
        while time.monotonic() < deadline:
            replica = self.replicas[index % len(self.replicas)]
            try:
                async with self.session.request(
                    method,
                    replica.url + path,
                    json=json,
                    headers={"Authorization": f"Bearer {self.key}", **(headers or {})},
                    timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S),
                ) as response:
                    raw = await response.read()
                    return response.status, (orjson.loads(raw) if raw else {})
            except (aiohttp.ClientError, TimeoutError, orjson.JSONDecodeError):
                self.reconnects += 1
                index += 1
                await asyncio.sleep(0.02)
        raise Unreachable(f"{method} {path}")

    def _next(self) -> int:
        self._turn += 1
        return self._turn

    all_escalations = Api.all_escalations


@attrs.define
class ReplicaKiller:
    """SIGKILL a replica (the clock leader every other time), start it again at once."""

    replicas: list[ServerProcess]
    rng: random.Random
    kills: int = 0
    leader_kills: int = 0
    uptime_s: tuple[float, float] = (0.8, 2.5)
    down: set[int] = attrs.field(factory=set)  # replicas killed and not yet listening again
    _log_from: dict[int, int] = attrs.field(factory=dict)  # replica -> its first output line since its start

    def leader(self) -> ServerProcess | None:
        leading = [
            r for i, r in enumerate(self.replicas) if any(LEADS in line for line in r.output[self._log_from.get(i, 0):])
        ]
        return leading[0] if len(leading) == 1 else None

    async def run(self, *, kills: int, done: asyncio.Event) -> None:
        try:
            for n in range(kills):
                await asyncio.sleep(self.rng.uniform(*self.uptime_s))
                leader = self.leader()
                victim = leader if leader is not None and n % 2 == 0 else self.rng.choice(self.replicas)
                self.leader_kills += victim is leader
                index = self.replicas.index(victim)
                self.down.add(index)
                await asyncio.to_thread(victim.kill)
                self.kills += 1
                await asyncio.sleep(self.rng.uniform(0, 0.3))  # down for a moment, deadlines keep passing
                self._log_from[index] = len(victim.output)
                await asyncio.to_thread(victim.start, timeout_s=60)
                self.down.discard(index)
        finally:
            done.set()


@attrs.define
class WaitProbe:
    """Now and then: ``/wait`` parked on one replica, the decide sent to another;
    how long after the decide's 200 the wait answered."""

    workload: Workload
    api: ReplicaApi
    killer: ReplicaKiller
    rng: random.Random
    seconds: list[float] = attrs.field(factory=list)
    lost: int = 0  # a replica killed under the probe: no figure

    async def run(self, *, until: asyncio.Event, deadline: float) -> None:
        while not until.is_set():
            await self.once(deadline=deadline)
            await asyncio.sleep(self.rng.uniform(0.05, 0.2))

    async def once(self, *, deadline: float) -> None:
        esc_id = await self.workload.create(MANUAL_POLICY, deadline=deadline)
        up = [i for i in range(REPLICAS) if i not in self.killer.down]
        if len(up) < 2:
            return
        waiter, decider = self.rng.sample(up, 2)
        wait_url = self.api.replicas[waiter].url + f"/escalations/{esc_id}/wait?timeout=20"
        waiting = asyncio.create_task(self._request("GET", wait_url))
        await asyncio.sleep(0.2)  # parked on the waiter
        # Sent once, to that replica only: killed under it, the escalation
        # may stay open or be resolved unseen, both of which the checks allow.
        decided = await self._request("POST", self.api.replicas[decider].url + f"/escalations/{esc_id}/decide")
        decided_at = time.monotonic()
        if decided is not None and decided[0] == 200:
            self.workload.ledger.decided[esc_id] = "approve"
            self.workload.ledger.decide_200s[esc_id] += 1
        waited = await waiting
        if decided is None or decided[0] != 200 or waited is None or waited[1].get("status") != "resolved":
            self.lost += 1
            return
        self.seconds.append(max(0.0, waited[2] - decided_at))

    async def _request(self, method: str, url: str) -> tuple[int, dict, float] | None:
        """(status, body, when answered); None when the replica was killed under it."""
        json = {"choice": "approve"} if method == "POST" else None
        try:
            async with self.api.session.request(
                method, url, json=json, headers={"Authorization": f"Bearer {self.api.key}"},
                timeout=aiohttp.ClientTimeout(total=30),
            ) as response:  # fmt: skip
                return response.status, await response.json(), time.monotonic()
        except (aiohttp.ClientError, TimeoutError):
            return None


def breach_lateness_s(escalations: list[dict]) -> list[float]:
    def at(text: str) -> float:
        return datetime.fromisoformat(text).timestamp()

    return sorted(
        at(e["resolution"]["answeredAt"]) - at(e["deadlineAt"])
        for e in escalations
        if e["status"] == "resolved" and e["resolution"]["resolvedBy"] == "timeout"
    )


@pytest.fixture
async def replicas(postgres_server):
    url = postgres_server.create_database(migrated=False)
    started = [ServerProcess(db=url, args=SERVE_ARGS).start(timeout_s=60) for _ in range(REPLICAS)]
    await asyncio.to_thread(cli, url, "policy", "set", SLA_POLICY, "--sla", "1s", "--default-choice", "deny")
    await asyncio.to_thread(cli, url, "policy", "set", MANUAL_POLICY)
    yield started
    for replica in started:
        replica.kill()
    postgres_server.drop_database(url)


async def test_three_replicas_killed_at_random_lose_and_double_nothing(replicas, flaky_receiver, rng, record_figures):
    started = time.monotonic()
    deadline = started + SIZE.kills * 10 + 90
    key = next(r.bootstrap_key for r in replicas if r.bootstrap_key)
    killer, done = ReplicaKiller(replicas=replicas, rng=rng), asyncio.Event()
    flaky_receiver.flap()
    async with aiohttp.ClientSession() as session:
        api = ReplicaApi(session=session, replicas=replicas, key=key)
        workload = Workload(api=api, receiver=flaky_receiver, rng=rng)
        probe = WaitProbe(workload=workload, api=api, killer=killer, rng=rng)
        chaos = [asyncio.create_task(killer.run(kills=SIZE.kills, done=done)), asyncio.create_task(probe.run(until=done, deadline=deadline))]
        await workload.run_agents(agents=SIZE.agents, until=done, max_escalations=SIZE.max_escalations, deadline=deadline)
        await asyncio.gather(*chaos)
        await flaky_receiver.stop_flapping()
        escalations = await drain(api, flaky_receiver, deadline=time.monotonic() + SIZE.drain_s)
        figures = Figures(name=f"{REPLICAS} PostgreSQL replicas, flaky receiver", kills=killer.kills, client_reconnects=api.reconnects)
        problems = check(figures, workload.ledger, escalations, flaky_receiver)
    figures.seconds = time.monotonic() - started
    late = breach_lateness_s(escalations)
    record_figures(figures)
    print(
        f"  leader kills {killer.leader_kills}; breach lateness p50 {_pct(late, 50):.2f} s, "
        f"p99 {_pct(late, 99):.2f} s, max {late[-1] if late else 0:.2f} s (n={len(late)}); "
        f"/wait after a decide on another replica: max {max(probe.seconds, default=0):.3f} s "
        f"(n={len(probe.seconds)}, {probe.lost} lost to kills); client reconnects {api.reconnects}"
    )
    assert not problems, "\n".join(problems[:30])
    assert figures.kills == SIZE.kills and killer.leader_kills > 0
    assert figures.creates_acknowledged == figures.creates_found > 0
    assert figures.callbacks_owed == figures.callbacks_delivered > 0
    assert figures.double_resolutions == 0
    assert figures.resolved_by_human > 0 and figures.resolved_by_timeout > 0
    assert late and late[-1] < FAILOVER_BOUND_S
    assert probe.seconds and max(probe.seconds) < WAIT_BOUND_S


def _pct(values: list[float], p: float) -> float:
    return values[min(len(values) - 1, int(len(values) * p / 100))] if values else 0.0
