"""The crash loop: agents and reviewers against a server that keeps dying.

Agents create escalations (always with an Idempotency-Key, retried until
answered, as real agents do); each escalation then meets one fate: left to
breach its 1 s SLA, decided (sometimes after an acknowledge), decided in a
race with the breach, cancelled, left open, or (given voters) approved by
two or three users at once under a quorum of two with a 1 s SLA: the last
approvals race each other and the breach. Meanwhile a killer sends
SIGKILL to ``escalated serve`` at random moments and starts it again on the
same database. Every answer the client received is recorded, so the checks
afterwards compare what the server promised with what is in the database
and what reached the receiver.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections import Counter

import aiohttp
import attrs
import orjson

from tests.faults.receiver import FlakyReceiver, secret_for
from tests.support.server import ServerProcess

SLA_POLICY = "faults.sla"
MANUAL_POLICY = "faults.manual"
QUORUM_POLICY = "faults.quorum"  # quorum 2 for approve, 1 s SLA to deny (CONTRACT §15)
VOTERS = ("vera", "walt", "xena")
FATES = (("breach", 0.30), ("decide", 0.30), ("race", 0.15), ("cancel", 0.10), ("open", 0.15))
QUORUM_SHARE = 0.2  # of escalations, when the workload has voters
REQUEST_TIMEOUT_S = 5.0


class Unreachable(Exception):
    """The server did not answer before the caller's deadline."""


@attrs.define
class Ledger:
    """What the server acknowledged to its clients."""

    created: dict[str, str] = attrs.field(factory=dict)  # escalation id -> runId, for every 201
    create_attempts: int = 0
    replayed: int = 0
    decided: dict[str, str] = attrs.field(factory=dict)  # id -> choice, for every 200 on decide
    decide_200s: Counter = attrs.field(factory=Counter)  # 200s that resolved it
    votes: dict[str, set[str]] = attrs.field(factory=dict)  # id -> users whose approval answered 200 short of the quorum
    cancelled: set[str] = attrs.field(factory=set)
    acknowledged: set[str] = attrs.field(factory=set)
    conflicts: int = 0  # 409 answers (a race lost, or a retry of a committed request)
    fates: Counter = attrs.field(factory=Counter)
    errors: list[str] = attrs.field(factory=list)  # unexpected answers


@attrs.define
class Api:
    """HTTP to whichever server process is current; retries across restarts."""

    session: aiohttp.ClientSession
    server: ServerProcess
    key: str
    reconnects: int = 0

    async def call(
        self, method: str, path: str, *, json=None, headers: dict | None = None, deadline: float, token: str | None = None
    ) -> tuple[int, dict]:
        while time.monotonic() < deadline:
            try:
                async with self.session.request(
                    method,
                    self.server.url + path,
                    json=json,
                    headers={"Authorization": f"Bearer {token or self.key}", **(headers or {})},
                    timeout=aiohttp.ClientTimeout(total=REQUEST_TIMEOUT_S),
                ) as response:
                    raw = await response.read()
                    return response.status, (orjson.loads(raw) if raw else {})
            except (aiohttp.ClientError, TimeoutError, orjson.JSONDecodeError):
                self.reconnects += 1
                await asyncio.sleep(0.05)
        raise Unreachable(f"{method} {path}")

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


def escalation_body(*, policy: str, run_id: str, receiver_url: str) -> dict:
    return {
        "policy": policy,
        "agentId": "faults-agent",
        "runId": run_id,
        "subject": {"type": "order", "id": run_id, "label": f"Order {run_id}"},
        "question": "Refund?",
        "evidence": ["crash loop"],
        "choices": [{"id": "approve", "label": "Approve"}, {"id": "deny", "label": "Deny"}],
        "resume": {"mode": "webhook", "url": receiver_url, "secret": secret_for(run_id)},
    }


@attrs.define
class Workload:
    api: Api
    receiver: FlakyReceiver
    rng: random.Random
    voters: dict[str, str] = attrs.field(factory=dict)  # name -> user token: the quorum fate runs only with them
    ledger: Ledger = attrs.field(factory=Ledger)
    _tasks: set = attrs.field(factory=set)

    def _fate(self) -> str:
        if self.voters and self.rng.random() < QUORUM_SHARE:
            return "quorum"
        roll, total = self.rng.random(), 0.0
        for fate, share in FATES:
            total += share
            if roll < total:
                return fate
        return FATES[-1][0]

    async def create(self, policy: str, *, deadline: float) -> str:
        run_id = f"run-{uuid.uuid4().hex[:12]}"
        body = escalation_body(policy=policy, run_id=run_id, receiver_url=self.receiver.url)
        headers = {"Idempotency-Key": uuid.uuid4().hex}
        while True:  # the same key on every retry: no retry may make a second escalation
            self.ledger.create_attempts += 1
            status, data = await self.api.call("POST", "/escalations", json=body, headers=headers, deadline=deadline)
            if status == 201:
                self.ledger.created[data["id"]] = run_id
                return data["id"]
            if status >= 500:
                self.ledger.errors.append(f"create answered {status}: {data}")
                continue
            raise AssertionError(f"create answered {status}: {data}")

    async def decide(self, esc_id: str, choice: str, *, deadline: float) -> None:
        status, data = await self.api.call(
            "POST", f"/escalations/{esc_id}/decide", json={"choice": choice, "reason": "crash loop"}, deadline=deadline
        )
        if status == 200:
            self.ledger.decided[esc_id] = choice
            self.ledger.decide_200s[esc_id] += 1
        elif status == 409:
            self.ledger.conflicts += 1
        else:
            self.ledger.errors.append(f"decide {esc_id} answered {status}: {data}")

    async def approve(self, esc_id: str, voter: str, *, deadline: float) -> None:
        """A user's approval: a vote (200, still live), the vote that resolved it (200, resolved), or 409."""
        status, data = await self.api.call(
            "POST", f"/escalations/{esc_id}/decide", json={"choice": "approve"}, deadline=deadline, token=self.voters[voter]
        )
        if status == 200 and data["status"] == "resolved":
            self.ledger.decided[esc_id] = "approve"
            self.ledger.decide_200s[esc_id] += 1
        elif status == 200:
            self.ledger.votes.setdefault(esc_id, set()).add(voter)
        elif status == 409:  # already approved (a retry of a committed vote), or ended (the race lost)
            self.ledger.conflicts += 1
        else:
            self.ledger.errors.append(f"approve {esc_id} as {voter} answered {status}: {data}")

    async def quorum_race(self, esc_id: str, *, started: float, deadline: float) -> None:
        """Two or three users approve at once, now or aimed at the 1 s breach."""
        if self.rng.random() < 0.5:
            await asyncio.sleep(max(0.0, started + self.rng.uniform(0.85, 1.15) - time.monotonic()))
        voters = self.rng.sample(sorted(self.voters), self.rng.choice((2, 3)))
        await asyncio.gather(*(self.approve(esc_id, v, deadline=deadline) for v in voters))

    async def acknowledge(self, esc_id: str, *, deadline: float) -> None:
        status, data = await self.api.call("POST", f"/escalations/{esc_id}/acknowledge", deadline=deadline)
        if status == 200:
            self.ledger.acknowledged.add(esc_id)
        elif status == 409:
            self.ledger.conflicts += 1
        else:
            self.ledger.errors.append(f"acknowledge {esc_id} answered {status}: {data}")

    async def cancel(self, esc_id: str, *, deadline: float) -> None:
        status, data = await self.api.call("POST", f"/escalations/{esc_id}/cancel", json={"reason": "x"}, deadline=deadline)
        if status == 200:
            self.ledger.cancelled.add(esc_id)
        elif status == 409:
            self.ledger.conflicts += 1
        else:
            self.ledger.errors.append(f"cancel {esc_id} answered {status}: {data}")

    async def one_escalation(self, *, deadline: float) -> None:
        fate = self._fate()
        self.ledger.fates[fate] += 1
        policy = {"breach": SLA_POLICY, "race": SLA_POLICY, "quorum": QUORUM_POLICY}.get(fate, MANUAL_POLICY)
        esc_id = await self.create(policy, deadline=deadline)
        started = time.monotonic()
        if fate == "quorum":
            await self.quorum_race(esc_id, started=started, deadline=deadline)
        if fate in ("breach", "decide") and self.rng.random() < 0.5:
            await self.acknowledge(esc_id, deadline=deadline)
        if fate == "decide":
            await asyncio.sleep(self.rng.uniform(0, 0.5))
            await self.decide(esc_id, self.rng.choice(("approve", "deny")), deadline=deadline)
        elif fate == "race":
            # The SLA is 1 s: aim the decision at the breach.
            await asyncio.sleep(max(0.0, started + self.rng.uniform(0.85, 1.15) - time.monotonic()))
            await self.decide(esc_id, "approve", deadline=deadline)
        elif fate == "cancel":
            await self.cancel(esc_id, deadline=deadline)

    async def run_agents(self, *, agents: int, until: asyncio.Event, max_escalations: int, deadline: float) -> None:
        """Create and act until ``until`` is set (or the cap), ``agents`` at a time."""
        slots = asyncio.Semaphore(agents)
        started = 0
        tasks = []
        while not until.is_set() and started < max_escalations and time.monotonic() < deadline:
            await slots.acquire()
            started += 1

            async def one() -> None:
                try:
                    await self.one_escalation(deadline=deadline)
                finally:
                    slots.release()

            tasks.append(asyncio.create_task(one(), name=f"escalation-{started}"))
            await asyncio.sleep(self.rng.uniform(0, 0.02))
        await asyncio.gather(*tasks)


@attrs.define
class Killer:
    """SIGKILL the server at random moments and start it again, ``kills`` times."""

    server: ServerProcess
    rng: random.Random
    kills: int = 0
    uptime_s: tuple[float, float] = (0.3, 1.6)

    async def run(self, *, kills: int, done: asyncio.Event) -> None:
        try:
            for _ in range(kills):
                await asyncio.sleep(self.rng.uniform(*self.uptime_s))
                await asyncio.to_thread(self.server.kill)
                self.kills += 1
                await asyncio.sleep(self.rng.uniform(0, 0.3))  # down for a moment, deadlines keep passing
                await asyncio.to_thread(self.server.start)
        finally:
            done.set()
