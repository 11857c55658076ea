"""``cancel_callback`` (CONTRACT §5): cancelling tells the agent only when its
policy asks, with a signed ``escalation.cancelled`` callback. A real
``escalated serve``, the real CLI, a real receiver."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import aiohttp
import pytest

from escalated.agent.client import EscalatedClient
from escalated.agent.receiver import Callback, Cancelled, make_receiver_app, start_receiver
from escalated.agent.signing import verify
from tests.conftest import fresh_db
from tests.support.api import Api
from tests.support.server import ServerProcess

CANCELLED_FIELDS = ["escalationId", "runId", "agentId", "policy", "reason", "cancelledBy", "cancelledAt"]


@pytest.fixture(scope="module")
def cancel_server(request, backend, tmp_path_factory):
    """One server per module and backend; each test makes its own escalations."""
    with fresh_db(request, backend, tmp_path_factory.mktemp("cancel")) as db:
        proc = ServerProcess(db=db).start()
        proc.cli("policy", "set", "refunds.quiet")
        proc.cli("policy", "set", "refunds.told", "--cancel-callback")
        yield proc
        proc.stop()


@pytest.fixture
async def api(cancel_server):
    async with aiohttp.ClientSession() as session:
        yield Api(cancel_server.url, cancel_server.bootstrap_key, session)


async def cancel(api: Api, escalation_id: str, **body) -> dict:
    status, out, _ = await api.call("POST", f"/escalations/{escalation_id}/cancel", json=body)
    assert status == 200, out
    return out


async def test_cancel_sends_no_callback_when_the_policy_does_not_ask(api, receiver):
    esc = await api.create(policy="refunds.quiet", resume={"mode": "webhook", "url": receiver.url, "secret": "s"})
    await cancel(api, esc["id"], reason="agent gave up")
    assert await api.deliveries(esc["id"]) == []


async def test_a_cancel_callback_policy_sends_a_signed_escalation_cancelled_callback(api, receiver):
    esc = await api.create(policy="refunds.told", resume={"mode": "webhook", "url": receiver.url, "secret": "s3cret"})
    await cancel(api, esc["id"], reason="order withdrawn")
    [got] = await receiver.wait_for(1)
    assert got.headers["x-service-event"] == "escalation.cancelled"
    assert got.headers["x-service-delivery"].startswith("dlv_")
    assert verify(got.body, got.headers["x-service-signature"], "s3cret")
    delivered = await api.wait_delivery(esc["id"], "delivered")
    assert delivered["event"] == "escalation.cancelled" and got.headers["x-service-delivery"] == delivered["id"]


async def test_the_cancelled_callback_body_holds_exactly_the_contract_fields(api, receiver):
    esc = await api.create(policy="refunds.told", runId="run-7", resume={"mode": "webhook", "url": receiver.url})
    cancelled = await cancel(api, esc["id"], reason="order withdrawn")
    [got] = await receiver.wait_for(1)
    body = json.loads(got.body)
    assert list(body) == CANCELLED_FIELDS
    assert (body["escalationId"], body["runId"], body["agentId"]) == (esc["id"], "run-7", "billing-agent")
    assert (body["policy"], body["reason"], body["cancelledBy"]) == ("refunds.told", "order withdrawn", "key:bootstrap")
    assert body["cancelledAt"] == cancelled["cancellation"]["cancelledAt"]


async def test_a_cancel_without_a_reason_sends_reason_null(api, receiver):
    esc = await api.create(policy="refunds.told", resume={"mode": "webhook", "url": receiver.url})
    await cancel(api, esc["id"])
    [got] = await receiver.wait_for(1)
    assert json.loads(got.body)["reason"] is None


async def test_a_cancel_refused_as_409_sends_no_callback(api, receiver):
    esc = await api.create(policy="refunds.told", resume={"mode": "webhook", "url": receiver.url})
    await api.decide(esc["id"])
    status, _, _ = await api.call("POST", f"/escalations/{esc['id']}/cancel", json={})
    assert status == 409
    assert [d["event"] for d in await api.deliveries(esc["id"])] == ["escalation.decided"]


def test_policy_show_and_list_say_whether_cancel_sends_a_callback(cancel_server):
    assert json.loads(cancel_server.cli("policy", "show", "refunds.told"))["cancelCallback"] is True
    assert json.loads(cancel_server.cli("policy", "show", "refunds.quiet"))["cancelCallback"] is False
    listed = {p["key"]: p["cancelCallback"] for p in json.loads(cancel_server.cli("policy", "list", "--json"))}
    assert listed["refunds.quiet"] is False and listed["refunds.told"] is True
    lines = dict(line.split("\t", 1) for line in cancel_server.cli("policy", "list").splitlines())
    assert "cancel_callback" in lines["refunds.told"] and "cancel_callback" not in lines["refunds.quiet"]


def test_a_policy_file_turns_cancel_callback_on(cancel_server, tmp_path):
    path = tmp_path / "policies.toml"
    path.write_text('[policies."refunds.filed"]\ncancel_callback = true\n', encoding="utf-8")
    cancel_server.cli("policy", "apply", str(path))
    assert json.loads(cancel_server.cli("policy", "show", "refunds.filed"))["cancelCallback"] is True


def test_a_policy_file_with_a_non_boolean_cancel_callback_is_refused(cancel_server, tmp_path):
    path = tmp_path / "policies.toml"
    path.write_text('[policies."refunds.filed"]\ncancel_callback = "yes"\n', encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "escalated", "policy", "apply", str(path), "--db", str(cancel_server.db)],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1 and "cancel_callback must be true or false" in done.stderr


# -- the library: the receiver and the client's /wait path --------------------


class Collected:
    """A user handler for ``escalated.agent.receiver``: records what it is handed."""

    def __init__(self) -> None:
        self.got: list = []
        self.arrived = asyncio.Event()

    def __call__(self, outcome) -> None:
        self.got.append(outcome)
        self.arrived.set()

    async def first(self, *, timeout_s: float = 15.0):
        async with asyncio.timeout(timeout_s):
            await self.arrived.wait()
        return self.got[0]


async def test_the_receiver_hands_a_cancellation_to_user_code_as_cancelled(api):
    handler = Collected()
    async with await start_receiver(make_receiver_app(handler, secret="s3cret")) as rcv:
        esc = await api.create(policy="refunds.told", resume={"mode": "webhook", "url": rcv.url + "/resume", "secret": "s3cret"})
        await cancel(api, esc["id"], reason="order withdrawn")
        got = await handler.first()
    assert isinstance(got, Cancelled) and got.cancelled
    assert (got.escalation_id, got.reason, got.cancelled_by) == (esc["id"], "order withdrawn", "key:bootstrap")
    assert list(got.body) == CANCELLED_FIELDS and got.event == "escalation.cancelled"


async def test_on_cancel_gets_the_cancellations_and_the_handler_only_decisions(api):
    decisions, cancellations = Collected(), Collected()
    app = make_receiver_app(decisions, secret="s", on_cancel=cancellations)
    async with await start_receiver(app) as rcv:
        resume = {"mode": "webhook", "url": rcv.url + "/resume", "secret": "s"}
        cancelled = await api.create(policy="refunds.told", resume=resume)
        decided = await api.create(policy="refunds.told", resume=resume)
        await cancel(api, cancelled["id"])
        await api.decide(decided["id"])
        assert (await cancellations.first()).escalation_id == cancelled["id"]
        got = await decisions.first()
    assert isinstance(got, Callback) and not got.cancelled and got.escalation_id == decided["id"]
    assert len(cancellations.got) == 1 and len(decisions.got) == 1


async def test_wait_for_outcome_sees_a_cancellation_that_sent_no_callback(cancel_server, api):
    esc = await api.create(policy="refunds.quiet")
    async with EscalatedClient(cancel_server.url, cancel_server.bootstrap_key) as client:
        waiting = asyncio.ensure_future(client.wait_for_outcome(esc["id"], timeout_s=30))
        await cancel(api, esc["id"], reason="not needed")
        got = await waiting
    assert isinstance(got, Cancelled) and got.reason == "not needed"
    assert list(got.body) == CANCELLED_FIELDS


async def test_wait_for_outcome_gives_the_body_the_callback_carried(cancel_server, api, receiver):
    esc = await api.create(policy="refunds.told", resume={"mode": "webhook", "url": receiver.url})
    await api.decide(esc["id"], reason="fine")
    [got] = await receiver.wait_for(1)
    async with EscalatedClient(cancel_server.url, cancel_server.bootstrap_key) as client:
        outcome = await client.wait_for_outcome(esc["id"], timeout_s=5)
    assert isinstance(outcome, Callback) and outcome.body == json.loads(got.body)


async def test_wait_for_outcome_is_none_when_its_time_runs_out(cancel_server, api):
    esc = await api.create(policy="refunds.quiet")
    async with EscalatedClient(cancel_server.url, cancel_server.bootstrap_key) as client:
        assert await client.wait_for_outcome(esc["id"], timeout_s=0.2) is None
