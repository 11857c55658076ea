"""Deciding from Slack (issue #16), through the real surface.

A real ``escalated serve`` (SQLite, and PostgreSQL) with a signing secret
from the environment, Slack played by tests/support/slack.py (a real HTTP
server recording the webhook messages and ``response_url`` replies, and
interaction requests signed as Slack documents), and a real callback
receiver checking the signed callback. One server per backend per module;
each test has its own policy, webhook URL and escalations.
"""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import pytest

from escalated.agent.signing import verify
from escalated.domain.masking import mask_target
from escalated.timeutil import now_ms, parse_timestamp_ms
from tests.conftest import fresh_db
from tests.support.api import Api, unique
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess
from tests.support.slack import SlackStandIn, send
from tests.support.wait import eventually

SECRET = "slack-signing-secret-for-tests-0123456789"
ALICE, BOB, NOBODY = "U0ALICE", "U0BOB", "U0NOBODY"
PUBLIC_URL = "https://escalated.example"


@pytest.fixture(scope="module")
def slack():
    stand_in = SlackStandIn(SECRET).start()
    yield stand_in
    stand_in.stop()


@pytest.fixture(scope="module")
def slack_server(request, backend, tmp_path_factory):
    with fresh_db(request, backend, tmp_path_factory.mktemp("slack")) as db:
        proc = ServerProcess(
            db=db,
            args=("--retry-schedule", "100ms", "--public-url", PUBLIC_URL),
            env={"ESCALATED_SLACK_SIGNING_SECRET": SECRET},
        ).start()
        proc.cli("users", "add", "alice", "--slack-id", ALICE)
        proc.cli("users", "add", "bob", "--slack-id", BOB)
        yield proc
        proc.stop()


@pytest.fixture
async def api(slack_server):
    async with aiohttp.ClientSession() as session:
        yield Api(slack_server.url, slack_server.bootstrap_key, session)


@pytest.fixture
async def agent():
    receiver = await Receiver().start()
    yield receiver
    await receiver.stop()


def routed_policy(slack_server: ServerProcess, webhook: str, *reviewers: str, sla: str | None = None) -> str:
    key = f"{unique('slack')}.test"
    args = ["policy", "set", key, "--notify", f"slack:{webhook}"]
    for reviewer in reviewers:
        args += ["--reviewer", reviewer]
    if sla:
        args += ["--sla", sla, "--default-choice", "deny"]
    slack_server.cli(*args)
    return key


async def escalate(api: Api, slack: SlackStandIn, slack_server: ServerProcess, agent: Receiver, *reviewers: str, **kw):
    """A policy posting to a fresh webhook, an escalation under it, and the message Slack received."""
    webhook = slack.webhook_url()
    policy = routed_policy(slack_server, webhook, *reviewers, sla=kw.pop("sla", None))
    esc = await api.create(policy=policy, resume={"mode": "webhook", "url": agent.url, "secret": "agent-secret"}, **kw)
    [message] = await slack.wait_posts(webhook)
    return esc, message


def reply_text(reply: dict) -> str:
    return json.dumps(reply)


async def test_the_message_shows_question_evidence_deadline_and_one_button_per_choice(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent, "alice", sla="1h")
    text = json.dumps(message)
    assert "Refund 1,200 EUR?" in text and "Order #981" in text and "customer since 2019" in text
    assert "If nobody answers by <!date^" in text and esc["deadlineAt"] in text and "*Deny* applies" in text
    [actions] = [b for b in message["blocks"] if b["type"] == "actions"]
    assert [e["text"]["text"] for e in actions["elements"]] == ["Approve", "Deny"]
    assert f"<{PUBLIC_URL}/app/escalations/{esc['id']}|" in text


async def test_an_escalation_with_response_fields_gets_a_link_not_buttons(api, slack, slack_server, agent):
    fields = [{"type": "number", "name": "amount", "label": "Amount to refund", "min": 0}]
    esc, message = await escalate(api, slack, slack_server, agent, "alice", responseFields=fields)
    assert not [b for b in message["blocks"] if b["type"] == "actions"]
    assert f"<{PUBLIC_URL}/app/escalations/{esc['id']}|" in json.dumps(message) and "needs some input" in json.dumps(message)


async def test_a_message_slack_refuses_for_good_fails_at_once_and_one_it_cannot_take_now_is_tried_again(api, slack, slack_server):
    refused, flaky = slack.webhook_url(), slack.webhook_url()
    slack.fail_next(refused, times=1, status=400)
    slack.fail_next(flaky, times=1, status=500)
    key = f"{unique('slack')}.test"
    slack_server.cli("policy", "set", key, "--notify", f"slack:{refused}", "--notify", f"slack:{flaky}")
    esc = await api.create(policy=key)
    await slack.wait_posts(flaky)
    # Deliveries show a Slack URL masked (CONTRACT §16).
    wanted = {mask_target(f"slack:{refused}"): "failed", mask_target(f"slack:{flaky}"): "delivered"}

    async def settled() -> bool:
        return {d["target"]: d["status"] for d in await api.deliveries(esc["id"])} == wanted

    await eventually(settled, timeout_s=15, what="one Slack post failed, the other delivered")
    [failed] = [d for d in await api.deliveries(esc["id"]) if d["status"] == "failed"]
    assert [a["statusCode"] for a in failed["attempts"]] == [400]


async def test_a_button_press_decides_and_the_agent_gets_the_signed_callback_answered_by_the_user(api, slack, slack_server, agent):
    _esc, message = await escalate(api, slack, slack_server, agent, "alice")
    click = slack.interaction(message, user_id=ALICE, choice="approve")
    assert (await send(slack_server.url, click))[0] == 200
    [callback] = await agent.wait_for(1)
    assert verify(callback.body, callback.headers["x-service-signature"], "agent-secret")
    resolution = json.loads(callback.body)
    assert (resolution["choice"], resolution["resolvedBy"], resolution["answeredBy"]) == ("approve", "human", "alice")
    [reply] = await slack.wait_posts(click.response_url)
    assert reply["replace_original"] is True
    assert not [b for b in reply["blocks"] if b["type"] == "actions"]
    assert "*Approve*, decided by *alice*" in reply_text(reply)


async def test_a_reply_slack_fails_to_take_is_tried_again(api, slack, slack_server, agent):
    _esc, message = await escalate(api, slack, slack_server, agent, "alice")
    click = slack.interaction(message, user_id=ALICE, choice="deny")
    slack.fail_next(click.response_url, times=1)
    assert (await send(slack_server.url, click))[0] == 200
    [reply] = await slack.wait_posts(click.response_url)
    assert reply["replace_original"] is True and "*Deny*, decided by *alice*" in reply_text(reply)


async def test_of_two_clicks_at_once_the_first_wins_and_the_other_is_told_who_decided(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent, "alice", "bob")
    clicks = [slack.interaction(message, user_id=ALICE, choice="approve"), slack.interaction(message, user_id=BOB, choice="deny")]
    statuses = await asyncio.gather(*(send(slack_server.url, c) for c in clicks))
    assert [s for s, _ in statuses] == [200, 200]
    replies = [(await slack.wait_posts(c.response_url))[0] for c in clicks]
    [won] = [r for r in replies if r.get("replace_original")]
    [lost] = [r for r in replies if r.get("response_type") == "ephemeral"]
    resolution = (await api.get(esc["id"]))["resolution"]
    label = {"approve": "Approve", "deny": "Deny"}[resolution["choice"]]
    assert f"*{label}*, decided by *{resolution['answeredBy']}*" in reply_text(won)
    assert "Too late" in lost["text"] and f"decided by *{resolution['answeredBy']}*" in lost["text"]
    await agent.wait_for(1)
    assert len([d for d in await api.deliveries(esc["id"]) if d["kind"] == "callback"]) == 1


async def test_a_slack_user_linked_to_no_user_is_refused_only_to_them(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent)
    click = slack.interaction(message, user_id=NOBODY, choice="approve")
    assert (await send(slack_server.url, click))[0] == 200
    [reply] = await slack.wait_posts(click.response_url)
    assert reply["response_type"] == "ephemeral" and reply["replace_original"] is False
    assert "not linked" in reply["text"] and f"--slack-id {NOBODY}" in reply["text"]
    assert (await api.get(esc["id"]))["status"] == "open"


async def test_a_user_the_escalation_is_not_routed_to_is_refused_only_to_them(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent, "alice")
    click = slack.interaction(message, user_id=BOB, choice="approve")
    assert (await send(slack_server.url, click))[0] == 200
    [reply] = await slack.wait_posts(click.response_url)
    assert reply["response_type"] == "ephemeral" and "not routed to you" in reply["text"]
    assert (await api.get(esc["id"]))["status"] == "open"


async def test_a_button_pointed_at_another_escalation_is_judged_by_that_escalations_routing(api, slack, slack_server, agent):
    mine, message = await escalate(api, slack, slack_server, agent, "bob")
    theirs, _ = await escalate(api, slack, slack_server, agent, "alice")
    forged = _with_value(slack, message, user_id=BOB, escalation_id=theirs["id"], choice="approve")
    assert (await send(slack_server.url, forged))[0] == 200
    [reply] = await slack.wait_posts(forged.response_url)
    assert "not routed to you" in reply["text"]
    assert (await api.get(theirs["id"]))["status"] == "open"
    assert (await api.get(mine["id"]))["status"] == "open"


async def test_a_button_for_a_choice_the_escalation_does_not_offer_decides_nothing(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent, "alice")
    forged = json.loads(json.dumps(message))
    [actions] = [b for b in forged["blocks"] if b["type"] == "actions"]
    actions["elements"][0]["value"] = json.dumps({"escalation": esc["id"], "choice": "pay-double"})
    click = slack.interaction(forged, user_id=ALICE, choice="pay-double")
    assert (await send(slack_server.url, click))[0] == 200
    [reply] = await slack.wait_posts(click.response_url)
    assert reply["response_type"] == "ephemeral" and "cannot decide" in reply["text"]
    assert (await api.get(esc["id"]))["status"] == "open"


def _with_value(slack: SlackStandIn, message: dict, *, user_id: str, escalation_id: str, choice: str):
    """``message`` with its buttons' values rewritten, as someone holding the webhook URL could post it."""
    forged = json.loads(json.dumps(message))
    for block in forged["blocks"]:
        for element in block.get("elements", []) if block["type"] == "actions" else []:
            element["value"] = json.dumps({"escalation": escalation_id, "choice": json.loads(element["value"])["choice"]})
    return slack.interaction(forged, user_id=user_id, choice=choice)


async def test_a_wrongly_signed_click_is_401_and_decides_nothing(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent, "alice")
    click = slack.interaction(message, user_id=ALICE, choice="approve", secret="not-the-apps-secret")
    status, problem = await send(slack_server.url, click)
    assert (status, problem["code"]) == (401, "unauthenticated")
    assert (await api.get(esc["id"]))["status"] == "open"
    assert slack.posts_to(click.response_url) == []


@pytest.mark.parametrize("header", ["X-Slack-Signature", "X-Slack-Request-Timestamp"])
async def test_a_click_without_slacks_headers_is_401(api, slack, slack_server, agent, header):
    esc, message = await escalate(api, slack, slack_server, agent, "alice")
    click = slack.interaction(message, user_id=ALICE, choice="approve")
    status, problem = await send(slack_server.url, click, headers={header: None})
    assert (status, problem["code"]) == (401, "unauthenticated")
    assert (await api.get(esc["id"]))["status"] == "open"


async def test_a_replay_of_a_signed_click_over_five_minutes_old_is_401(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent, "alice")
    stale = slack.interaction(message, user_id=ALICE, choice="approve", timestamp=int(time.time()) - 301)
    status, problem = await send(slack_server.url, stale)
    assert (status, problem["code"]) == (401, "unauthenticated") and "5 minutes" in problem["detail"]
    assert (await api.get(esc["id"]))["status"] == "open"


async def test_a_replay_within_five_minutes_changes_nothing_more(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent, "alice")
    click = slack.interaction(message, user_id=ALICE, choice="approve")
    assert (await send(slack_server.url, click))[0] == 200
    assert (await send(slack_server.url, click))[0] == 200
    first, again = await slack.wait_posts(click.response_url, 2)
    assert first["replace_original"] is True and "Too late" in again["text"]
    await agent.wait_for(1)
    assert len([d for d in await api.deliveries(esc["id"]) if d["kind"] == "callback"]) == 1


async def test_a_click_racing_the_sla_breach_resolves_once(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent, "alice", sla="1s")
    click = slack.interaction(message, user_id=ALICE, choice="approve")
    await asyncio.sleep(max(0.0, (parse_timestamp_ms(esc["deadlineAt"]) - now_ms()) / 1000))  # click at the deadline
    assert (await send(slack_server.url, click))[0] == 200
    [reply] = await slack.wait_posts(click.response_url)
    [callback] = await agent.wait_for(1)
    resolution = json.loads(callback.body)
    if reply.get("replace_original"):  # the click won
        assert (resolution["resolvedBy"], resolution["answeredBy"]) == ("human", "alice")
    else:
        assert resolution["resolvedBy"] == "timeout" and "Timed out" in reply["text"]
    final = await api.get(esc["id"])
    assert [h["event"] for h in final["history"] if h["event"] in ("decided", "breached")] in (["decided"], ["breached"])
    assert len([d for d in await api.deliveries(esc["id"]) if d["kind"] == "callback"]) == 1


async def test_a_response_url_the_server_may_not_call_is_refused_before_deciding(api, slack, slack_server, agent):
    esc, message = await escalate(api, slack, slack_server, agent, "alice")
    click = slack.interaction(message, user_id=ALICE, choice="approve")
    body = click.body.replace(b"http%3A%2F%2F127.0.0.1", b"http%3A%2F%2F169.254.169.254")
    assert body != click.body
    status, problem = await send(slack_server.url, slack.signed(body))
    assert (status, problem["code"]) == (422, "validation_failed")
    assert problem["errors"][0]["field"] == "payload.response_url"
    assert (await api.get(esc["id"]))["status"] == "open"


@pytest.mark.parametrize(
    "body, content_type, status, code",
    [
        (b"payload=%7Bnot+json", "application/x-www-form-urlencoded", 400, "invalid_json"),
        (b"nothing=here", "application/x-www-form-urlencoded", 422, "validation_failed"),
        (b'payload=%7B%22type%22%3A%22block_actions%22%7D', "application/x-www-form-urlencoded", 422, "validation_failed"),
        (b'{"payload": {}}', "application/json", 415, "unsupported_media_type"),
    ],
)
async def test_a_signed_but_malformed_interaction_is_problem_json(slack, slack_server, body, content_type, status, code):
    request = slack.signed(body)
    got, problem = await send(slack_server.url, request, headers={"Content-Type": content_type})
    assert (got, problem["code"]) == (status, code)


async def test_an_interaction_over_the_body_limit_is_413(slack, slack_server):
    request = slack.signed(b"payload=" + b"x" * (256 * 1024 + 1))
    status, problem = await send(slack_server.url, request)
    assert (status, problem["code"]) == (413, "payload_too_large")


async def test_another_kind_of_interaction_is_acknowledged_and_ignored(slack, slack_server):
    request = slack.signed(b"payload=%7B%22type%22%3A%22shortcut%22%7D")
    assert await send(slack_server.url, request) == (200, None)


def test_the_signing_secret_never_appears_in_the_servers_output(slack_server):
    assert slack_server.output and not [line for line in slack_server.output if SECRET in line]
    assert any("/integrations/slack/interactions" in line for line in slack_server.output)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """A server with no signing secret (Slack cannot call it back) and no --public-url."""
    proc = ServerProcess(db=tmp_path_factory.mktemp("plain") / "escalated.db").start()
    yield proc
    proc.stop()


async def test_without_a_signing_secret_the_message_links_to_the_web_page_instead_of_buttons(slack, plain):
    webhook = slack.webhook_url()
    plain.cli("policy", "set", "slack.plain", "--notify", f"slack:{webhook}")
    async with aiohttp.ClientSession() as session:
        esc = await Api(plain.url, plain.bootstrap_key, session).create(policy="slack.plain")
    [message] = await slack.wait_posts(webhook)
    assert not [b for b in message["blocks"] if b["type"] == "actions"]
    # Without --public-url, the address serve listens on (port 0 resolved).
    assert f"<{plain.url}/app/escalations/{esc['id']}|Open it in escalated>" in json.dumps(message)
    assert "Refund 1,200 EUR?" in json.dumps(message)


async def test_without_a_signing_secret_the_interaction_route_is_404_saying_why(slack, plain):
    status, problem = await send(plain.url, slack.signed(b"payload=%7B%7D"))
    assert (status, problem["code"]) == (404, "not_found") and "--slack-signing-secret" in problem["detail"]
