"""Webhook and Slack URLs are shown masked, and the web form keeps them (CONTRACT §16).

Through a real ``escalated serve`` on both backends: ``policy list`` and
``policy show``, the admin's policies page and form, an escalation's
deliveries (API and page), the server's log; and the web admin's new-key
form ticks only what an agent needs.
"""

from __future__ import annotations

import json

import pytest

from tests.support.api import escalation_body, unique
from tests.support.receiver import Receiver
from tests.web.support import WebClient, api
from tests.support.wait import eventually

SLACK_SECRET = "T0SECRET/B0SECRET/xoxSECRETslack1234"
HOOK_SECRET = "hooks/SECRET-token-wxyz"


@pytest.fixture(scope="module")
def root(world) -> WebClient:
    browser = WebClient(world.url)
    assert browser.sign_in(world.admin).status == 303
    return browser


def _policy_form(key: str, **fields) -> dict:
    return {"key": key, "reviewers": "", "notify": "", "sla": "", "default_choice": "", **fields}


def _set_masked_policy(world, key: str, port: int) -> tuple[str, str]:
    slack, hook = f"slack:http://127.0.0.1:{port}/{SLACK_SECRET}", f"webhook:http://127.0.0.1:{port}/{HOOK_SECRET}"
    world.server.cli("policy", "set", key, "--notify", slack, "--notify", hook, "--notify", "email:ops@example.com")
    return slack, hook


def _json_text(printed: str) -> str:
    return json.dumps(json.loads(printed), ensure_ascii=False)  # … as itself, not \u2026


def test_policy_list_show_and_the_admin_page_mask_webhook_and_slack_urls(world, root):
    key = unique("masked").replace("-", "")
    _set_masked_policy(world, key, 9)
    shown = {
        "policy list": world.server.cli("policy", "list"),
        "policy list --json": _json_text(world.server.cli("policy", "list", "--json")),
        "policy show": _json_text(world.server.cli("policy", "show", key)),
        "policies page": root.get("/app/policies").text,
        "edit form": root.get(f"/app/policies?edit={key}").text,
    }
    for where, text in shown.items():
        assert "SECRET" not in text, where
        assert "slack:http://127.0.0.1:9/…1234" in text and "webhook:http://127.0.0.1:9/…wxyz" in text, where
        assert "email:ops@example.com" in text, where  # an address is no secret
    assert json.loads(shown["policy show"])["notify"] == [
        "slack:http://127.0.0.1:9/…1234", "webhook:http://127.0.0.1:9/…wxyz", "email:ops@example.com"
    ]


def _edit_form_notify(root: WebClient, key: str) -> str:
    text = root.get(f"/app/policies?edit={key}").text
    return text.split('name="notify"', 1)[1].split(">", 1)[1].split("</textarea>", 1)[0]


async def test_saving_the_form_as_shown_keeps_the_urls_and_deliveries_show_them_masked(world, root):
    receiver = await Receiver().start()
    try:
        key = unique("kept").replace("-", "")
        _set_masked_policy(world, key, receiver.port)
        shown = _edit_form_notify(root, key)
        assert "SECRET" not in shown and "…1234" in shown
        page = root.submit("/app/policies", "/app/policies", _policy_form(key, notify=shown, sla="1h", default_choice="deny"))
        assert (page.status, page.location) == (303, "/app/policies")
        status, esc = api(world.url, "POST", "/escalations", world.key, escalation_body(key))
        assert status == 201
        received = await receiver.wait_for(2)
        assert sorted(r.path for r in received) == sorted([f"/{SLACK_SECRET}", f"/{HOOK_SECRET}"])  # the stored URLs, whole
        status, deliveries = api(world.url, "GET", f"/escalations/{esc['id']}/deliveries", world.key)
        targets = [d["target"] for d in deliveries["data"] if d["kind"] == "notification"]
        assert f"slack:http://127.0.0.1:{receiver.port}/…1234" in targets and "SECRET" not in str(deliveries)
    finally:
        await receiver.stop()
    reviewer = WebClient(world.url)
    reviewer.sign_in(world.alice)
    assert "SECRET" not in reviewer.get(f"/app/escalations/{esc['id']}").text
    assert "SECRET" not in "".join(world.server.output)  # nor in the server's log


def test_a_blank_notify_field_keeps_the_saved_targets_and_the_box_clears_them(world, root):
    key = unique("blank").replace("-", "")
    _set_masked_policy(world, key, 9)
    before = json.loads(world.server.cli("policy", "show", key))["notify"]
    assert root.submit("/app/policies", "/app/policies", _policy_form(key, reviewers="bob")).status == 303
    after = json.loads(world.server.cli("policy", "show", key))
    assert after["notify"] == before and after["reviewers"] == ["bob"]
    assert root.submit("/app/policies", "/app/policies", _policy_form(key, notify_none="1")).status == 303
    assert json.loads(world.server.cli("policy", "show", key))["notify"] == []


def test_a_masked_line_that_stands_for_no_saved_target_is_refused(world, root):
    key = unique("stale").replace("-", "")
    page = root.submit("/app/policies", "/app/policies", _policy_form(key, notify="slack:https://hooks.slack.com/…1234"))
    assert page.status == 422 and "write it in full" in page.text
    assert key not in world.server.cli("policy", "list")


def test_the_new_key_form_ticks_write_and_read_and_says_why(root):
    page = root.get("/app/keys").text
    ticked = {s for s in ("write", "read", "acknowledge", "decide", "cancel") if f'value="escalations:{s}" checked' in page}
    assert ticked == {"write", "read"}
    assert "could answer its own escalations" in page


def test_a_failing_webhooks_url_is_in_no_attempt_error_and_no_log_line(world):
    key = unique("failing").replace("-", "")
    world.server.cli("policy", "set", key, "--notify", f"webhook:http://127.0.0.1:9/{HOOK_SECRET}")  # port 9: refused
    status, esc = api(world.url, "POST", "/escalations", world.key, escalation_body(key))
    assert status == 201
    attempts = eventually(lambda: _notification_attempts(world, esc["id"]), timeout_s=30, what="an attempt recorded")
    assert attempts[0]["error"] and "SECRET" not in str(attempts)
    eventually(
        lambda: [line for line in list(world.server.output) if esc["id"] in line and "failed" in line], timeout_s=30, what="the failed attempt logged"
    )
    assert "SECRET" not in "".join(world.server.output)


def _notification_attempts(world, escalation_id: str) -> list[dict]:
    _, deliveries = api(world.url, "GET", f"/escalations/{escalation_id}/deliveries", world.key)
    return [a for d in deliveries["data"] if d["kind"] == "notification" for a in d["attempts"]]
