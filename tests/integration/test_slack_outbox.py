"""A ``slack:`` notification waiting in the outbox when ``escalated serve``
starts, on either backend: the outbox keeps the escalation and the Slack
settings of when it was queued, and the sender renders the message; a row
queued as Block Kit (what earlier versions stored) is posted as it is.

The rows are written through the core (and, for the earlier form, the store)
before the real server starts on the same database; Slack is played by
tests/support/slack.py.
"""

from __future__ import annotations

import asyncio

import msgspec
import orjson
import pytest

from escalated.core.admin import AdminService, PolicyRequest
from escalated.core.service import Service
from escalated.core.settings import Settings, parse_db
from escalated.core.stores import open_store
from escalated.domain.convert import content_to_json
from escalated.domain.ids import new_id
from escalated.domain.models import NOTIFICATION, Delivery, Principal
from escalated.domain.scopes import ALL_SCOPES
from escalated.timeutil import now_ms
from tests.conftest import fresh_db
from tests.support.api import escalation_body
from tests.support.server import ServerProcess
from tests.support.slack import SlackStandIn

# A message as an earlier version stored it: rendered at creation, Block Kit.
QUEUED_BLOCK_KIT = {
    "text": "Reminder: Order o-1: Refund 1,200 EUR?",
    "blocks": [
        {"type": "section", "text": {"type": "mrkdwn", "text": "*Order o-1* · refunds.large\nRefund 1,200 EUR?"}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": "No deadline: it waits until someone decides · escalation esc_x"}]},
        {"type": "section", "text": {"type": "mrkdwn", "text": "To decide: Open escalation esc_x in escalated's web app."}},
    ],
}


@pytest.fixture(scope="module")
def slack():
    stand_in = SlackStandIn("unused-signing-secret").start()
    yield stand_in
    stand_in.stop()


async def _queue(db, *, new_webhook: str, old_webhook: str) -> tuple[str, str]:
    """An escalation notifying ``new_webhook`` (queued by the core as it is
    now), and a second one with a Block Kit body queued for ``old_webhook``;
    the first one's id and the web app's URL the core linked to."""
    settings = Settings(db_path=parse_db(db))
    store = await open_store(settings)
    try:
        admin = AdminService(store)
        operator = await admin.operator(workspace="default")
        await admin.set_policy(operator, request=PolicyRequest(key="refunds.large", notify=(f"slack:{new_webhook}",)))
        service = Service(store, settings)
        agent = Principal(kind="key", id="key_test", name="test", workspace_id=operator.workspace_id, scopes=frozenset(ALL_SCOPES))
        created = await service.create(agent, escalation_body(question="Refund 1,200 EUR?"))
        esc = created.escalation
        earlier = msgspec.structs.replace(esc, id=new_id("esc"))
        queued = Delivery(
            id=new_id("dlv"),
            escalation_id=earlier.id,
            kind=NOTIFICATION,
            target=f"slack:{old_webhook}",
            event="escalation.created",
            body=orjson.dumps(QUEUED_BLOCK_KIT),
            next_attempt_ms=now_ms(),
            created_ms=now_ms(),
        )
        await store.create_escalation(
            escalation=earlier, routes=(), notifications=[queued], idempotency=None, not_before_ms=0, content_json=content_to_json(esc.content)
        )
        assert service.web_url
        return esc.id, service.web_url
    finally:
        await store.close()


async def test_queued_slack_notifications_are_delivered_by_a_server_started_later(request, fn_backend, tmp_path, slack):
    new_webhook, old_webhook = slack.webhook_url(), slack.webhook_url()
    with fresh_db(request, fn_backend, tmp_path) as db:
        escalation_id, web_url = await _queue(db, new_webhook=new_webhook, old_webhook=old_webhook)
        assert not slack.posts_to(new_webhook) and not slack.posts_to(old_webhook)
        proc = await asyncio.to_thread(ServerProcess(db=db).start)
        try:
            [rendered] = await slack.wait_posts(new_webhook)
            [as_queued] = await slack.wait_posts(old_webhook)
        finally:
            await asyncio.to_thread(proc.stop)
    assert as_queued == QUEUED_BLOCK_KIT
    # Rendered with the settings of when it was queued: no signing secret, so
    # no buttons, and the link to the web app of then, not the server's now.
    assert [b["type"] for b in rendered["blocks"]] == ["section", "section", "context", "section"]  # question, evidence, deadline, link
    assert "Refund 1,200 EUR?" in rendered["blocks"][0]["text"]["text"] and "refunds.large" in rendered["blocks"][0]["text"]["text"]
    assert rendered["blocks"][-1]["text"]["text"] == f"To decide: <{web_url}/app/escalations/{escalation_id}|Open it in escalated>."
    assert not web_url.startswith(proc.url)
    assert rendered["text"].endswith("Refund 1,200 EUR?") and "escalation" not in rendered
