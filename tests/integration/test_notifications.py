"""Reviewer notifications through the outbox (CONTRACT §4): webhook, email, desktop."""

from __future__ import annotations

import json

import aiohttp
import pytest

from tests.support.api import Api
from tests.support.receiver import Receiver
from tests.support.server import start_server
from tests.support.smtp import smtp_server
from tests.support.wait import eventually


@pytest.fixture
def smtp():
    with smtp_server() as server:
        yield server


async def test_reviewers_are_notified_by_webhook_and_email(tmp_path, smtp):
    hook = await Receiver().start()
    proc = start_server(tmp_path, "--smtp-url", f"smtp://127.0.0.1:{smtp.port}", "--retry-schedule", "100ms")
    try:
        proc.cli(
            "policy", "set", "refunds.large",
            "--notify", f"webhook:{hook.url}", "--notify", "email:ops@example.com",
        )  # fmt: skip
        async with aiohttp.ClientSession() as session:
            api = Api(proc.url, proc.bootstrap_key, session)
            esc = await api.create(resume={"mode": "webhook", "url": "http://127.0.0.1:9/x", "secret": "never-shown"})
            [got] = await hook.wait_for(1)
            payload = json.loads(got.body)
            assert payload["event"] == "escalation.created"
            assert esc["id"] in payload["text"] and "Refund 1,200 EUR?" in payload["text"]
            assert payload["escalation"]["id"] == esc["id"]
            assert b"never-shown" not in got.body
            [message] = await smtp.inbox.wait_for(1)
            assert message.rcpt_tos == ("ops@example.com",)
            assert esc["id"] in message.message.get_body(preferencelist=("plain",)).get_content()
            deliveries = await api.deliveries(esc["id"])
            assert [d["kind"] for d in deliveries] == ["notification", "notification"]
            await eventually(lambda: statuses_are(api, esc["id"], {"delivered"}), timeout_s=10, what="both delivered")
    finally:
        proc.stop()
        await hook.stop()


async def test_callback_is_listed_before_notifications(tmp_path):
    hook = await Receiver().start()
    proc = start_server(tmp_path)
    try:
        proc.cli("policy", "set", "refunds.large", "--notify", f"webhook:{hook.url}")
        async with aiohttp.ClientSession() as session:
            api = Api(proc.url, proc.bootstrap_key, session)
            esc = await api.create(resume={"mode": "webhook", "url": hook.url})
            await api.decide(esc["id"])
            await hook.wait_for(2)
            kinds = [d["kind"] for d in await api.deliveries(esc["id"])]
            assert kinds == ["callback", "notification"]
    finally:
        proc.stop()
        await hook.stop()


async def test_email_without_smtp_server_fails_visibly(tmp_path):
    proc = start_server(tmp_path)
    try:
        proc.cli("policy", "set", "refunds.large", "--notify", "email:ops@example.com")
        async with aiohttp.ClientSession() as session:
            api = Api(proc.url, proc.bootstrap_key, session)
            esc = await api.create()
            await eventually(lambda: statuses_are(api, esc["id"], {"failed"}), timeout_s=10, what="the email failed")
            d = (await api.deliveries(esc["id"]))[0]
            assert "smtp-url" in d["attempts"][0]["error"]
    finally:
        proc.stop()


def test_unknown_notify_target_is_refused_by_the_cli(tmp_path):
    from tests.support.server import cli

    with pytest.raises(AssertionError, match="unknown notify target"):
        cli(tmp_path / "n.db", "policy", "set", "a.b", "--notify", "pager:42")


async def test_webhook_text_is_escaped_like_slack(tmp_path):
    """Issue #24 point 7: ``text`` is Slack-compatible (CONTRACT §4), so the
    agent's words in it cannot ping ``<!channel>``, disguise a link or start an
    entity; the escalation itself keeps them as written."""
    hook = await Receiver().start()
    proc = start_server(tmp_path)
    try:
        proc.cli("policy", "set", "refunds.large", "--notify", f"webhook:{hook.url}")
        question = "<!channel> refund? see <http://evil.example|the invoice> & <@U123>"
        async with aiohttp.ClientSession() as session:
            api = Api(proc.url, proc.bootstrap_key, session)
            esc = await api.create(question=question, subject={"type": "order", "id": "o-1", "label": "A <b>&</b>"})
            [got] = await hook.wait_for(1)
        payload = json.loads(got.body)
        text = payload["text"]
        assert "<" not in text and ">" not in text
        assert "&lt;!channel&gt; refund? see &lt;http://evil.example|the invoice&gt; &amp; &lt;@U123&gt;" in text
        assert "A &lt;b&gt;&amp;&lt;/b&gt;" in text
        assert payload["escalation"]["question"] == question
        assert esc["id"] in text
    finally:
        proc.stop()
        await hook.stop()


async def statuses_are(api: Api, escalation_id: str, wanted: set[str]) -> bool:
    return {d["status"] for d in await api.deliveries(escalation_id)} == wanted
