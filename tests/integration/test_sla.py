"""The SLA clock (CONTRACT §6) against a real server and, for the logic, in
process with time as an argument (no sleeping through real deadlines)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from escalated.core.admin import AdminService, PolicyRequest
from escalated.core.service import Service
from escalated.core.stores import open_store
from escalated.domain.models import Principal
from escalated.domain.scopes import ALL_SCOPES
from escalated.engine.clock import SlaClock
from escalated.core.settings import Settings, parse_db
from escalated.agent.signing import verify
from tests.conftest import fresh_db
from tests.support.api import Api, escalation_body
from tests.support.receiver import Receiver
from escalated.timeutil import now_ms
from tests.support.server import ServerProcess
from tests.support.wait import eventually


@contextlib.asynccontextmanager
async def service_on(db) -> AsyncIterator[Service]:
    """The core on a real store, with policy ``refunds.large`` (10 s SLA, default deny)."""
    settings = Settings(db_path=parse_db(db))
    store = await open_store(settings)
    try:
        admin = AdminService(store)
        operator = await admin.operator(workspace="default")
        await admin.set_policy(operator, request=PolicyRequest(key="refunds.large", sla="10s", default_choice="deny"))
        svc = Service(store, settings)
        svc.test_principal = Principal(
            kind="key", id="key_test", name="test", workspace_id=operator.workspace_id, scopes=frozenset(ALL_SCOPES)
        )
        yield svc
    finally:
        await store.close()


@pytest.fixture
async def service(tmp_path):
    """The clock's logic, in process: its heap and windows are the same on either backend."""
    async with service_on(tmp_path / "clock.db") as svc:
        yield svc


async def _create(service: Service, **overrides) -> str:
    created = await service.create(service.test_principal, escalation_body(**overrides))
    return created.escalation.id


async def test_tick_before_the_deadline_breaches_nothing(service):
    clock = SlaClock(service)
    service.bus.add_listener(clock.on_event)
    esc_id = await _create(service)
    esc = await service.get(service.test_principal, esc_id)
    assert await clock.tick(esc.deadline_ms - 1) == 0
    assert (await service.get(service.test_principal, esc_id)).status == "open"


async def test_tick_at_the_deadline_applies_the_default_choice(service):
    clock = SlaClock(service)
    await clock.refill(now_ms())
    service.bus.add_listener(clock.on_event)
    esc_id = await _create(service)
    esc = await service.get(service.test_principal, esc_id)
    assert clock.armed == 1
    assert await clock.tick(esc.deadline_ms) == 1
    after = await service.get(service.test_principal, esc_id)
    assert after.status == "resolved"
    assert (after.resolution.choice, after.resolution.resolved_by, after.resolution.answered_by) == ("deny", "timeout", "system")
    assert [h.event for h in after.history] == ["created", "breached"]


async def test_acknowledged_escalations_still_breach(service):
    clock = SlaClock(service)
    esc_id = await _create(service)
    esc = await service.get(service.test_principal, esc_id)
    await service.acknowledge(service.test_principal, esc)
    assert await clock.tick(esc.deadline_ms + 5) == 1


async def test_a_decided_escalation_is_not_breached(service):
    clock = SlaClock(service)
    await clock.refill(now_ms())
    service.bus.add_listener(clock.on_event)
    esc_id = await _create(service)
    esc = await service.get(service.test_principal, esc_id)
    await service.decide(service.test_principal, esc, {"choice": "approve"})
    assert await clock.tick(esc.deadline_ms + 1) == 0
    assert (await service.get(service.test_principal, esc_id)).resolution.resolved_by == "human"


async def test_a_rebuilt_clock_breaches_overdue_deadlines_in_deadline_order(service):
    ids = [await _create(service, runId=f"run-{i}") for i in range(5)]
    first = await service.get(service.test_principal, ids[0])
    events = []
    service.bus.add_listener(lambda e: events.append(e.escalation.id))
    clock = SlaClock(service)  # a fresh clock, as after a restart
    assert await clock.tick(first.deadline_ms + 60_000) == 5
    assert events == ids


async def test_far_deadlines_stay_in_the_database_until_the_window_reaches_them(service):
    clock = SlaClock(service, window_ms=1_000)
    esc_id = await _create(service)
    esc = await service.get(service.test_principal, esc_id)
    await clock.tick(esc.created_ms)
    assert clock.armed == 0  # 10 s away, beyond a 1 s window
    assert await clock.tick(esc.deadline_ms) == 1


async def test_deadlines_passed_while_down_breach_at_start_up(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        await _deadlines_passed_while_down_breach_at_start_up(ServerProcess(db=db, args=("--retry-schedule", "100ms")))


async def _deadlines_passed_while_down_breach_at_start_up(proc: ServerProcess) -> None:
    receiver = await Receiver().start()
    await asyncio.to_thread(proc.start)
    try:
        proc.cli("policy", "set", "refunds.large", "--sla", "1s", "--default-choice", "deny")
        async with aiohttp.ClientSession() as session:
            api = Api(proc.url, proc.bootstrap_key, session)
            ids = [
                (await api.create(runId=f"r{i}", resume={"mode": "webhook", "url": receiver.url, "secret": "k"}))["id"]
                for i in range(5)
            ]
            proc.kill()
            await asyncio.sleep(1.2)  # the deadlines pass while the server is down (a real 1 s SLA)
            proc.start()
            api.url = proc.url
            got = await receiver.wait_for(5, timeout_s=60)  # a start-up catch-up on a loaded machine
            bodies = [json.loads(g.body) for g in got]
            assert sorted(b["escalationId"] for b in bodies) == sorted(ids)
            # (breach order is asserted in process: test_a_rebuilt_clock_breaches_overdue_deadlines_in_deadline_order)
            assert all(b["resolvedBy"] == "timeout" and b["choice"] == "deny" for b in bodies)
            assert all(g.headers["x-service-event"] == "escalation.breached" for g in got)
            assert all(verify(g.body, g.headers["x-service-signature"], "k") for g in got)
    finally:
        proc.stop()
        await receiver.stop()


async def test_decisions_racing_deadlines_resolve_once_with_one_callback(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        await _decisions_racing_deadlines_resolve_once_with_one_callback(ServerProcess(db=db, args=("--retry-schedule", "100ms")))


async def _decisions_racing_deadlines_resolve_once_with_one_callback(proc: ServerProcess) -> None:
    receiver = await Receiver().start()
    await asyncio.to_thread(proc.start)
    try:
        proc.cli("policy", "set", "refunds.large", "--sla", "1500ms", "--default-choice", "deny")
        async with aiohttp.ClientSession() as session:
            api = Api(proc.url, proc.bootstrap_key, session)
            created = await asyncio.gather(
                *(api.create(runId=f"race-{i}", resume={"mode": "webhook", "url": receiver.url}) for i in range(40))
            )
            await asyncio.sleep(1.45)  # decide right around the deadline
            outcomes = await asyncio.gather(*(api.decide(e["id"]) for e in created))
            got = await receiver.wait_for(40, timeout_s=60)  # 40 callbacks from a loaded machine (two test workers per two cores)
            await asyncio.sleep(0.5)  # any duplicate would arrive within this
            assert len(receiver.received) == 40
            by_id = {json.loads(g.body)["escalationId"]: json.loads(g.body) for g in got}
            assert len(by_id) == 40
            for esc, (status, _) in zip(created, outcomes, strict=True):
                stored = await api.get(esc["id"])
                resolutions = [h for h in stored["history"] if h["event"] in ("decided", "breached")]
                assert len(resolutions) == 1
                assert by_id[esc["id"]]["choice"] == stored["resolution"]["choice"]
                assert by_id[esc["id"]]["resolvedBy"] == stored["resolution"]["resolvedBy"]
                assert (status == 200) == (stored["resolution"]["resolvedBy"] == "human")
                assert status in (200, 409)
    finally:
        proc.stop()
        await receiver.stop()


async def test_a_breach_whose_write_fails_is_retried_with_backoff_until_it_commits(service, monkeypatch):
    import sqlite3

    from escalated.engine import clock as clockmod
    from escalated.store.sqlite import db as dbmod

    monkeypatch.setattr(dbmod, "BUSY_TIMEOUT_S", 0.1)
    clock = SlaClock(service)
    esc_id = await _create(service)
    deadline_ms = (await service.get(service.test_principal, esc_id)).deadline_ms
    holder = sqlite3.connect(str(service.settings.db_path), isolation_level=None, timeout=0)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock past the writer's patience
    try:
        assert await clock.tick(deadline_ms) == 0
        assert clock.next_wake_ms(deadline_ms) == deadline_ms + clockmod.RETRY_FIRST_MS
        assert await clock.tick(deadline_ms + clockmod.RETRY_FIRST_MS) == 0  # still held: backs off further
        assert clock.next_wake_ms(deadline_ms) == deadline_ms + 3 * clockmod.RETRY_FIRST_MS
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert await clock.tick(deadline_ms + 2 * clockmod.RETRY_FIRST_MS) == 0  # not before its backoff
    assert await clock.tick(deadline_ms + 3 * clockmod.RETRY_FIRST_MS) == 1
    assert (await service.get(service.test_principal, esc_id)).resolution.resolved_by == "timeout"


@pytest.mark.postgres
async def test_a_breach_blocked_by_a_lock_held_elsewhere_is_retried_with_backoff_until_it_commits(postgres_url, monkeypatch):
    """The PostgreSQL twin of the test above: a session holding a lock on the
    escalations past the writer's lock timeout. Before that timeout existed,
    the breach (and the clock with it) waited for as long as that session lived."""
    import psycopg

    from escalated.engine import clock as clockmod
    from escalated.store.postgres import writer

    monkeypatch.setattr(writer, "LOCK_TIMEOUT_S", 0.1)
    async with service_on(postgres_url) as service:
        clock = SlaClock(service)
        esc_id = await _create(service)
        deadline_ms = (await service.get(service.test_principal, esc_id)).deadline_ms
        async with await psycopg.AsyncConnection.connect(postgres_url) as holder:
            await holder.execute("LOCK TABLE escalations IN EXCLUSIVE MODE")  # held until the block ends
            assert await clock.tick(deadline_ms) == 0
            assert clock.next_wake_ms(deadline_ms) == deadline_ms + clockmod.RETRY_FIRST_MS
            await holder.rollback()
        assert await clock.tick(deadline_ms + clockmod.RETRY_FIRST_MS) == 1
        assert (await service.get(service.test_principal, esc_id)).resolution.resolved_by == "timeout"


async def test_the_periodic_sweep_breaches_a_past_deadline_the_heap_never_held(service):
    clock = SlaClock(service, sweep_ms=20_000)  # the policy's SLA is 10 s
    at_ms = now_ms()
    await clock.tick(at_ms)  # the window is loaded; the clock hears of nothing created from here on
    esc_id = await _create(service)
    deadline_ms = (await service.get(service.test_principal, esc_id)).deadline_ms
    assert await clock.tick(deadline_ms) == 0
    assert clock.next_wake_ms(deadline_ms) == at_ms + 20_000
    assert await clock.tick(at_ms + 20_000) == 1
    assert (await service.get(service.test_principal, esc_id)).status == "resolved"


async def test_a_deadline_armed_while_a_refill_reads_is_kept(service):
    clock = SlaClock(service)
    at_ms = now_ms()
    refilling = asyncio.ensure_future(clock.refill(at_ms))
    await asyncio.sleep(0)  # the refill is now waiting for its query
    assert not refilling.done()
    esc_id = await _create(service)  # committed after the refill's query began
    clock.arm(esc_id, at_ms + 1_000)
    await refilling
    assert await clock.tick(at_ms + 1_000) == 1



async def test_the_running_clock_breaches_when_its_injected_time_reaches_the_deadline(service):
    """``run`` reads the time from the clock it is given: a 10 s SLA breaches
    as soon as that clock says the deadline has come, with no real wait."""
    esc_id = await _create(service)
    deadline_ms = (await service.get(service.test_principal, esc_id)).deadline_ms
    running = asyncio.create_task(SlaClock(service, now=lambda: deadline_ms).run(asyncio.Event()))
    try:

        async def breached() -> bool:
            return (await service.get(service.test_principal, esc_id)).status == "resolved"

        await eventually(breached, timeout_s=5, what="the breach at the injected deadline")  # 10 s away on the wall clock
    finally:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
    assert (await service.get(service.test_principal, esc_id)).resolution.resolved_by == "timeout"


async def test_an_acknowledged_escalation_is_breached_when_a_later_refill_loads_its_deadline(service):
    """Acknowledging does not stop the clock (CONTRACT §3, §6): a deadline the
    first window did not reach is loaded by a later refill (the
    ``deadlines_between`` read), acknowledged or not. No sweep runs here, so
    nothing but that refill can find it."""
    clock = SlaClock(service, window_ms=1_000, sweep_ms=10**9)
    esc_id = await _create(service)
    esc = await service.get(service.test_principal, esc_id)
    await clock.tick(esc.created_ms)  # the first window ends 1 s on; the 10 s deadline is beyond it
    assert clock.armed == 0
    await service.acknowledge(service.test_principal, esc)
    assert await clock.tick(esc.deadline_ms) == 1
    assert (await service.get(service.test_principal, esc_id)).resolution.resolved_by == "timeout"


async def test_a_deadline_at_the_far_end_of_a_refill_is_loaded_by_it(service):
    """A refill reads (horizon, target], target included: the next one starts
    after it, so a deadline exactly at the target would otherwise wait for
    the periodic sweep (a minute) instead of breaching at its time."""
    clock = SlaClock(service, window_ms=1_000, sweep_ms=10**9)
    esc_id = await _create(service)
    esc = await service.get(service.test_principal, esc_id)
    await clock.tick(esc.created_ms)
    await clock.tick(esc.deadline_ms - 1_000)  # this refill's target is the deadline itself
    assert clock.armed == 1
    assert await clock.tick(esc.deadline_ms) == 1


async def test_a_clock_that_leads_again_reads_every_live_deadline_afresh(service):
    """``lead`` forgets the window a process held when it led before: while another
    replica led, deadlines can have come and gone unheard (created elsewhere, its
    feed away), and only a fresh first pass reads them from the index. Without
    the reset the old horizon says they were loaded, the heap never held them,
    and they would wait for the sweep (none runs here)."""
    time_ms = [now_ms()]
    clock = SlaClock(service, sweep_ms=10**9, now=lambda: time_ms[0])
    await clock.tick(time_ms[0])  # it led once: its window reaches two minutes on
    esc_id = await _create(service)  # unheard: nothing tells this clock of it
    time_ms[0] = (await service.get(service.test_principal, esc_id)).deadline_ms
    assert await clock.tick(time_ms[0]) == 0  # the old window says it was loaded

    stop = asyncio.Event()
    leading = asyncio.create_task(clock.lead(stop))  # leading again, at the deadline
    try:

        async def breached() -> bool:
            return (await service.get(service.test_principal, esc_id)).status == "resolved"

        await eventually(breached, timeout_s=5, what="the unheard deadline breached on leading again")
    finally:
        stop.set()
        leading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await leading
