"""Reminders and escalation levels (CONTRACT §15), driven by the SLA clock.

In process on a real store of either backend, with time as an argument
(``SlaClock.tick(at_ms)``: no waiting through real intervals); then a real
``escalated serve`` killed with -9, whose reminders and levels come back
from the database alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

import aiohttp
import pytest

from escalated.core.admin import AdminService, PolicyRequest
from escalated.core.principals import user_principal
from escalated.core.service import Service
from escalated.core.settings import Settings, parse_db
from escalated.core.stores import open_store
from escalated.domain.models import Principal
from escalated.domain.scopes import ALL_SCOPES
from escalated.engine.clock import SlaClock
from escalated.errors import NotFound
from escalated.domain.mailserver import parse_mail_server
from tests.conftest import fresh_db
from tests.integration.conftest import LiveServer
from tests.support import setup
from tests.support.api import Api, escalation_body
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess
from tests.support.smtp import smtp_server
from tests.support.wait import eventually

MINUTE_MS = 60_000
HOOK = "webhook:http://127.0.0.1:9/hook"  # never sent in process: the tests read the outbox


@contextlib.asynccontextmanager
async def service_on(db, **policy) -> AsyncIterator[Service]:
    """The core on a real store with policy ``ops.test`` (reviewer alice) and users alice and bob."""
    settings = Settings(db_path=parse_db(db))
    store = await open_store(settings)
    try:
        admin = AdminService(store)
        operator = await admin.operator(workspace="default")
        for name in ("alice", "bob"):
            await admin.add_user(operator, name=name, role="reviewer", groups=("leads",) if name == "bob" else ())
        request = PolicyRequest(key="ops.test", reviewers=("alice",), notify=(HOOK,), **policy)
        await admin.set_policy(operator, request=request)
        svc = Service(store, settings)
        svc.test_key = Principal(
            kind="key", id="key_test", name="test", workspace_id=operator.workspace_id, scopes=frozenset(ALL_SCOPES)
        )
        svc.users = {u.name: user_principal(u) for u in await admin.users(operator)}
        yield svc
    finally:
        await store.close()


@pytest.fixture
def db(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as found:
        yield found


async def _create(svc: Service):
    created = await svc.create(svc.test_key, escalation_body(policy="ops.test"))
    return await svc.get(svc.test_key, created.escalation.id)


async def _notices(svc: Service, esc_id: str) -> list[str]:
    """The events of the escalation's notifications, oldest first."""
    return [d.event for d in (await svc.deliveries(svc.test_key, esc_id))[1] if d.kind == "notification"]


async def test_reminders_repeat_while_open_and_stop_once_acknowledged(db):
    async with service_on(db, remind_every="10m") as svc:
        clock = SlaClock(svc)
        esc = await _create(svc)
        assert await clock.nudge(esc.created_ms + 10 * MINUTE_MS - 1) == 0
        assert await _notices(svc, esc.id) == ["escalation.created"]
        assert await clock.nudge(esc.created_ms + 10 * MINUTE_MS) == 1
        assert await clock.nudge(esc.created_ms + 20 * MINUTE_MS) == 1
        assert await _notices(svc, esc.id) == ["escalation.created", "escalation.reminded", "escalation.reminded"]
        await svc.acknowledge(svc.users["alice"], await svc.get(svc.test_key, esc.id))
        assert await clock.nudge(esc.created_ms + 60 * MINUTE_MS) == 0
        assert len(await _notices(svc, esc.id)) == 3


async def test_a_level_adds_its_reviewers_who_then_see_and_decide_it(db):
    async with service_on(db, levels=("15m:bob",)) as svc:
        clock = SlaClock(svc)
        esc = await _create(svc)
        with pytest.raises(NotFound):
            await svc.get(svc.users["bob"], esc.id)
        assert (await svc.get(svc.test_key, esc.id)).level == 0
        assert await clock.nudge(esc.created_ms + 15 * MINUTE_MS) == 1
        seen = await svc.get(svc.users["bob"], esc.id)
        assert seen.level == 1
        assert [(h.event, h.by, h.level) for h in seen.history] == [("created", "key:test", None), ("escalated", "system", 1)]
        assert await _notices(svc, esc.id) == ["escalation.created", "escalation.escalated"]
        decided = await svc.decide(svc.users["bob"], seen, {"choice": "approve"})
        assert decided.resolution.answered_by == "bob"


async def test_levels_passed_while_nobody_ran_the_clock_are_all_reached_on_the_first_pass(db):
    async with service_on(db, levels=("15m:bob|webhook:http://127.0.0.1:9/bob", "1h:group:leads"), remind_every="5m") as svc:
        esc = await _create(svc)
        clock = SlaClock(svc)  # a fresh clock, as after a restart: it knows only the database
        assert await clock.nudge(esc.created_ms + 3 * 60 * MINUTE_MS) == 1
        after = await svc.get(svc.test_key, esc.id)
        assert after.level == 2
        assert [h.level for h in after.history if h.event == "escalated"] == [1, 2]
        targets = [(d.event, d.target) for d in (await svc.deliveries(svc.test_key, esc.id))[1]]
        # Level 1 notifies its own target, level 2 the policy's; one reminder (not 36) to whoever was not just told.
        assert targets == [
            ("escalation.created", HOOK),
            ("escalation.escalated", "webhook:http://127.0.0.1:9/bob"),
            ("escalation.escalated", HOOK),
        ]
        assert after.remind_ms == esc.created_ms + 3 * 60 * MINUTE_MS + 5 * MINUTE_MS


async def test_an_acknowledged_escalation_reaches_no_level(db):
    async with service_on(db, levels=("15m:bob",)) as svc:
        esc = await _create(svc)
        await svc.acknowledge(svc.users["alice"], esc)
        assert await SlaClock(svc).nudge(esc.created_ms + 60 * MINUTE_MS) == 0
        assert (await svc.get(svc.test_key, esc.id)).level == 0


async def test_the_clock_wakes_for_a_new_escalations_first_nudge(db):
    async with service_on(db, remind_every="10m") as svc:
        clock = SlaClock(svc)
        svc.bus.add_listener(clock.on_event)
        first = await _create(svc)
        await clock.tick(first.created_ms)
        assert clock.next_wake_ms(first.created_ms) <= first.created_ms + 10 * MINUTE_MS


# -- a real server killed with -9 ------------------------------------------------------


async def test_reminders_and_levels_are_rebuilt_from_the_database_after_kill_9(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        await _rebuilt_after_kill_9(ServerProcess(db=db, args=("--retry-schedule", "100ms")))


async def _rebuilt_after_kill_9(proc: ServerProcess) -> None:
    hook = await Receiver().start()
    await asyncio.to_thread(proc.start)
    try:
        proc.cli("users", "add", "bob")
        proc.cli(
            "policy", "set", "refunds.large", "--notify", f"webhook:{hook.url}",
            "--remind-every", "1s", "--level", "2s:bob", "--allow-unknown-reviewers",
        )  # fmt: skip
        async with aiohttp.ClientSession() as session:
            api = Api(proc.url, proc.bootstrap_key, session)
            esc = await api.create()
            await hook.wait_for(1)  # escalation.created
            proc.kill()
            await asyncio.sleep(2.2)  # the level and a reminder fall due while the server is down (real 1 s / 2 s)
            proc.start()
            api.url = proc.url
            events: list[str] = []
            while "escalation.reminded" not in events:  # each wait is bounded by the receiver's deadline
                events = [json.loads(g.body)["event"] for g in await hook.wait_for(len(events) + 1)]
            # The first pass reaches the level (which tells the policy's hook) and owes the
            # hook no reminder on top; the next reminder comes a full second later. (A
            # notification may arrive twice: the kill can come before its delivery is recorded.)
            assert list(dict.fromkeys(events)) == ["escalation.created", "escalation.escalated", "escalation.reminded"]
            stored = await api.get(esc["id"])
            assert stored["level"] == 1
            assert [h for h in stored["history"] if h["event"] == "escalated"] == [
                {"event": "escalated", "by": "system", "at": stored["history"][1]["at"], "level": 1}
            ]
    finally:
        proc.stop()
        await hook.stop()


async def test_reminder_and_level_emails_say_so_in_their_subject(tmp_path):
    """The real app in process, on a clock the test moves: the level an hour
    on, a reminder (every two hours) after it, with no real wait."""
    with smtp_server() as smtp:
        mail = parse_mail_server(f"smtp://127.0.0.1:{smtp.port}")
        live = await asyncio.to_thread(lambda: LiveServer(tmp_path / "mail.db", mail_server=mail, retry_schedule_s=(0.1,)).start())
        try:
            policy = PolicyRequest(
                key="refunds.large", notify=("email:ops@example.com",), remind_every="2h",
                levels=("1h:bob|email:bob@example.com",), allow_unknown_reviewers=True,
            )  # fmt: skip
            await asyncio.to_thread(live._run, lambda: setup.add_user(live.app, "bob", email="bob@example.com"))
            await asyncio.to_thread(live._run, lambda: setup.set_policy(live.app, policy))
            key = await asyncio.to_thread(live.key)
            subject = lambda m: (m.rcpt_tos, m.message["Subject"].split(":")[0])  # noqa: E731
            reminder = (("ops@example.com",), "Reminder, decision needed")
            async with aiohttp.ClientSession() as session:
                await Api(live.url, key, session).create()
                await asyncio.to_thread(live.advance, 3600)
                first = list(await smtp.inbox.wait_for(2))  # created (the policy's address), then the level (bob)
                await asyncio.to_thread(live.advance, 7200)
                await eventually(lambda: reminder in [subject(m) for m in smtp.inbox.received[2:]], what="the reminder")
            assert {subject(m) for m in first[:2]} == {
                (("ops@example.com",), "Decision needed"),
                (("bob@example.com",), "Escalated to you, decision needed"),
            }
            # After them, reminders only (the level's reviewer may get one too).
            assert {subject(m)[1] for m in smtp.inbox.received[2:]} == {"Reminder, decision needed"}
        finally:
            await asyncio.to_thread(live.stop)
