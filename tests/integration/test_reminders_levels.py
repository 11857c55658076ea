"""Reminders and escalation levels (CONTRACT §15), driven by the SLA clock,
and the remembered decisions it makes when a process stopped before making
them.

In process on a real store of either backend, with time as an argument
(``SlaClock.tick(at_ms)``: no waiting through real intervals); then a real
``escalated serve`` killed with -9, whose reminders and levels come back
from the database alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator

import aiohttp
import psycopg
import pytest

from escalated.core.admin import AdminService, PolicyRequest
from escalated.core.principals import user_principal
from escalated.core.service import Service
from escalated.core.settings import Settings, parse_db
from escalated.core.stores import open_store
from escalated.domain.models import Principal
from escalated.domain.scopes import ALL_SCOPES
from escalated.domain.ids import new_id
from escalated.domain.models import OPEN, RESOLVED
from escalated.domain.rules import Rule, RuleMatch
from escalated.engine.clock import RULE_GRACE_MS, SlaClock
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
DAY_MS = 24 * 60 * MINUTE_MS
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


# -- remembered decisions a stopped process never made ------------------------------------
#
# A create commits, then its matching rule decides it (ReviewerOps.answer_new).
# A process killed in between leaves an open escalation and a rule that was
# active when it was created: the tests build that state with the real store
# (the rule added afterwards, dated before the escalation) and let the clock
# find it.


def _rule_for(esc, *, created_ms: int, **match: str) -> Rule:
    return Rule(
        id=new_id("rul"), workspace_id=esc.workspace_id, policy=esc.policy, choice="approve",
        match=RuleMatch(**match), reason="known customer", created_by="user:alice",
        created_ms=created_ms, expires_ms=created_ms + DAY_MS,
    )  # fmt: skip


async def test_a_rule_decision_never_made_is_made_once_by_the_clocks_next_pass(db):
    async with service_on(db) as svc:
        esc = await _create(svc)
        rule = _rule_for(esc, created_ms=esc.created_ms - 1_000, agent_id=esc.agent_id)
        await svc.store.add_rule(rule=rule)
        clock = SlaClock(svc)
        assert await clock.answer_missed(esc.created_ms + RULE_GRACE_MS - 1) == 0  # still the create's own to make
        await clock.tick(esc.created_ms + RULE_GRACE_MS)  # a leader's first pass
        got = await svc.get(svc.test_key, esc.id)
        assert (got.status, got.resolution.answered_by, got.resolution.resolved_by) == (RESOLVED, f"rule:{rule.id}", "human")
        # Another leader (a restart, a replica) later finds nothing left to decide.
        assert await SlaClock(svc).answer_missed(esc.created_ms + 10 * MINUTE_MS) == 0
        assert [h.event for h in got.history].count("decided") == 1
        uses = (await svc.store.rule(rule_id=rule.id, workspace_id=esc.workspace_id)).uses
        assert [u.escalation_id for u in uses] == [esc.id]


async def test_a_rule_made_after_the_escalation_or_revoked_since_decides_nothing(db):
    async with service_on(db) as svc:
        esc = await _create(svc)
        later = _rule_for(esc, created_ms=esc.created_ms + 1)
        revoked = _rule_for(esc, created_ms=esc.created_ms - 1_000)
        other_agent = _rule_for(esc, created_ms=esc.created_ms - 1_000, agent_id="another-agent")
        for r in (later, revoked, other_agent):
            await svc.store.add_rule(rule=r)
        await svc.store.revoke_rule(rule_id=revoked.id, workspace_id=esc.workspace_id, by="user:bob", at_ms=esc.created_ms + 5)
        clock = SlaClock(svc)
        await clock.tick(esc.created_ms + MINUTE_MS)
        assert await clock.answer_missed(esc.created_ms + 2 * MINUTE_MS) == 0
        assert (await svc.get(svc.test_key, esc.id)).status == OPEN


# A real serve killed with -9 between a create's commit and its rule's
# decision: a trigger the test puts in the real database holds the rule's
# decision inside its transaction, after the create committed (PostgreSQL
# sleeps there, and the test kills the server once the database shows it
# asleep; SQLite cannot sleep in a trigger, so the decision's transaction
# fails there, the create is answered 201 all the same, and the server is
# killed after the decision rolled back: the same state).
HOLD = "hold_rule_decision"


def _hold_rule_decisions(db) -> None:
    if isinstance(db, str):
        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute(
                f"CREATE FUNCTION {HOLD}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(3600); RETURN NEW; END $$"
            )
            conn.execute(f"CREATE TRIGGER {HOLD} BEFORE INSERT ON rule_uses FOR EACH ROW EXECUTE FUNCTION {HOLD}()")
    else:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            conn.execute(f"CREATE TRIGGER {HOLD} BEFORE INSERT ON rule_uses BEGIN SELECT RAISE(ABORT, 'held'); END")
            conn.commit()


def _held(db) -> bool:
    """The rule's decision is asleep in its transaction (PostgreSQL)."""
    with psycopg.connect(db, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND wait_event = 'PgSleep'", (db.rsplit("/", 1)[1],)
        ).fetchone()
    return bool(row and row[0])


def _release_rule_decisions(db) -> None:
    if isinstance(db, str):
        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute(  # the killed server's sessions, the sleeping one among them
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (db.rsplit("/", 1)[1],),
            )
            conn.execute(f"DROP TRIGGER {HOLD} ON rule_uses")
            conn.execute(f"DROP FUNCTION {HOLD}()")
    else:
        with contextlib.closing(sqlite3.connect(db)) as conn:
            conn.execute(f"DROP TRIGGER {HOLD}")
            conn.commit()


async def test_a_serve_killed_between_a_create_and_its_rule_decision_decides_and_calls_back_once_after_restart(
    request, fn_backend, tmp_path
):
    with fresh_db(request, fn_backend, tmp_path) as db:
        proc = ServerProcess(db=db, args=("--retry-schedule", "100ms"))
        agent = await Receiver().start()
        await asyncio.to_thread(proc.start)
        try:
            proc.cli("policy", "set", "refunds.large")
            async with aiohttp.ClientSession() as session:
                api = Api(proc.url, proc.bootstrap_key, session)
                status, rule, _ = await api.call("POST", "/rules", json={"policy": "refunds.large", "choice": "approve", "reason": "known customer"})
                assert status == 201, rule
                _hold_rule_decisions(db)
                body = escalation_body(resume={"mode": "webhook", "url": agent.url, "secret": "s"})
                key = {"Idempotency-Key": new_id("idem")}
                create = asyncio.create_task(api.call("POST", "/escalations", json=body, headers=key))
                if isinstance(db, str):
                    await eventually(lambda: _held(db))
                else:
                    # Its rule's decision failed and rolled back; the create had committed, and says so.
                    status, answered, _ = await create
                    assert (status, answered["status"]) == (201, "open"), answered
                proc.kill()
                killed_at = time.time()
                with contextlib.suppress(aiohttp.ClientError):
                    await create
                _release_rule_decisions(db)
                assert agent.received == []
                # The restarted leader's first pass leaves creations younger than the grace to their create.
                await asyncio.sleep(max(0.0, killed_at + RULE_GRACE_MS / 1000 - time.time()))
                await asyncio.to_thread(proc.start)
                api.url = proc.url
                status, created, _ = await api.call("POST", "/escalations", json=body, headers=key)  # the agent's retry
                assert status in (200, 201), created
                [callback] = await agent.wait_for(1)
                sent = json.loads(callback.body)
                assert callback.headers["x-service-event"] == "escalation.decided"
                assert (sent["escalationId"], sent["resolvedBy"], sent["answeredBy"], sent["choice"]) == (
                    created["id"], "human", f"rule:{rule['id']}", "approve"
                )
                stored = await api.get(created["id"])
                assert stored["status"] == "resolved"
                assert [h["event"] for h in stored["history"]].count("decided") == 1
                assert [d["event"] for d in await api.deliveries(created["id"]) if d["kind"] == "callback"] == ["escalation.decided"]
        finally:
            proc.stop()
            await agent.stop()
