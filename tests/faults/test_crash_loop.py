"""Crash loops: SIGKILL ``escalated serve`` again and again under load, with a
receiver that fails in every way it can, then prove nothing was lost or doubled.

CI runs a bounded form; ``ESCALATED_FAULTS_LONG=1 .venv/bin/python -m pytest
tests/faults -s`` runs the long one. The figures are printed at the end.
The flaky-receiver loop runs on each backend: one server process on a
SQLite file, and one on a PostgreSQL database (killed with its connections,
as a replica would be; several replicas at once are the multi-replica
loop's business). The receiver-outage loop runs on PostgreSQL only in the
long run: its extra behaviour (deliveries held through an outage, then sent
once) is the sender's, the same over either store, and a second PostgreSQL
loop costs CI about 45 s of a 12-minute budget.
"""

from __future__ import annotations

import asyncio
import random
import time

import aiohttp
import attrs
import pytest

from tests.faults.checks import Figures, check, drain
from tests.faults.conftest import LONG
from tests.faults.receiver import FlakyReceiver
from tests.faults.workload import MANUAL_POLICY, QUORUM_POLICY, SLA_POLICY, VOTERS, Api, Killer, Workload
from tests.conftest import fresh_db
from tests.support.server import ServerProcess
from tests.support.wait import eventually

SERVE_ARGS = ("--retry-schedule", "200ms,500ms,1s", "--retry-for", "10m", "--delivery-timeout", "1s")


@attrs.frozen
class Size:
    kills: int
    max_escalations: int
    agents: int
    outage_s: float
    drain_s: float


SIZE = Size(kills=60, max_escalations=6000, agents=8, outage_s=30.0, drain_s=180.0) if LONG else Size(
    kills=6, max_escalations=400, agents=6, outage_s=4.0, drain_s=90.0
)


@pytest.fixture(params=["full"])
def crashing_server(tmp_path, request, fn_backend):
    """``--durability`` is the fixture's param; SIGKILL is a process crash,
    which both levels must survive (only power loss separates them)."""
    with fresh_db(request, fn_backend, tmp_path) as db:
        proc = ServerProcess(db=db, args=(*SERVE_ARGS, "--durability", request.param)).start()
        proc.cli("policy", "set", SLA_POLICY, "--sla", "1s", "--default-choice", "deny")
        proc.cli("policy", "set", MANUAL_POLICY)
        yield proc
        proc.kill()


@pytest.fixture
def voters(crashing_server) -> dict[str, str]:
    """Users who approve under a quorum of two (CONTRACT §15): name -> token."""
    tokens = {name: crashing_server.cli("users", "add", name) for name in VOTERS}
    quorum = ("--quorum", "2", "--quorum-choice", "approve")
    crashing_server.cli("policy", "set", QUORUM_POLICY, "--sla", "1s", "--default-choice", "deny", *quorum)
    return tokens


def named(what: str, crashing_server: ServerProcess) -> str:
    return f"{what}; {'postgres' if str(crashing_server.db).startswith('postgresql://') else 'sqlite'}"


async def crash_loop(
    name: str, crashing_server: ServerProcess, flaky_receiver: FlakyReceiver, rng: random.Random, *, outage: bool, voters: dict[str, str]
) -> tuple[Figures, list[str]]:
    started = time.monotonic()
    deadline = started + (SIZE.kills * 8 + 60 + (SIZE.outage_s if outage else 0))
    killer = Killer(server=crashing_server, rng=rng)
    done = asyncio.Event()
    async with aiohttp.ClientSession() as session:
        api = Api(session=session, server=crashing_server, key=crashing_server.bootstrap_key)
        workload = Workload(api=api, receiver=flaky_receiver, rng=rng, voters=voters)
        chaos = [asyncio.create_task(killer.run(kills=SIZE.kills, done=done), name="killer")]
        if outage:
            chaos.append(asyncio.create_task(_outage(flaky_receiver, killer), name="receiver-outage"))
        await workload.run_agents(agents=SIZE.agents, until=done, max_escalations=SIZE.max_escalations, deadline=deadline)
        await asyncio.gather(*chaos)
        await flaky_receiver.stop_flapping()
        escalations = await drain(api, flaky_receiver, deadline=time.monotonic() + SIZE.drain_s)
        figures = Figures(name=name, kills=killer.kills, client_reconnects=api.reconnects)
        problems = check(figures, workload.ledger, escalations, flaky_receiver)
    figures.seconds = time.monotonic() - started
    return figures, problems


async def _outage(flaky_receiver: FlakyReceiver, killer: Killer) -> None:
    """Take the receiver down once a third of the kills are done; back after SIZE.outage_s."""
    await eventually(lambda: killer.kills >= max(1, SIZE.kills // 3), timeout_s=600, what="a third of the kills")
    await flaky_receiver.go_down()
    await asyncio.sleep(SIZE.outage_s)  # the outage itself, not a wait for something
    await flaky_receiver.come_up()


async def test_crash_loop_with_a_flaky_receiver_loses_and_doubles_nothing(crashing_server, voters, flaky_receiver, rng, record_figures):
    flaky_receiver.flap()
    name = named("flaky receiver; --durability full", crashing_server)
    figures, problems = await crash_loop(name, crashing_server, flaky_receiver, rng, outage=False, voters=voters)
    record_figures(figures)
    assert not problems, "\n".join(problems[:30])
    assert figures.kills == SIZE.kills
    assert figures.creates_acknowledged == figures.creates_found > 0
    assert figures.callbacks_owed == figures.callbacks_delivered > 0
    assert figures.double_resolutions == 0
    assert figures.resolved_by_human > 0 and figures.resolved_by_timeout > 0
    assert figures.quorum_resolved_by_approvals > 0
    assert figures.failed_attempts_injected > 0


def on_postgres_in_the_long_run(test):
    if LONG:
        return test
    return pytest.mark.only_on("sqlite", reason="the CI time budget: see the module docstring")(test)


@on_postgres_in_the_long_run
@pytest.mark.parametrize("crashing_server", ["normal"], indirect=True)
async def test_crash_loop_with_the_receiver_down_for_a_while_delivers_everything_once_it_is_back(
    crashing_server, voters, flaky_receiver, rng, record_figures
):
    name = named("receiver down, then back; --durability normal", crashing_server)
    figures, problems = await crash_loop(name, crashing_server, flaky_receiver, rng, outage=True, voters=voters)
    record_figures(figures)
    assert not problems, "\n".join(problems[:30])
    assert figures.kills == SIZE.kills
    assert figures.refused_windows == 1
    assert figures.creates_acknowledged == figures.creates_found > 0
    assert figures.callbacks_owed == figures.callbacks_delivered > 0
    assert figures.double_resolutions == 0
