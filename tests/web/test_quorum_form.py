"""A quorum (CONTRACT §15) on the web decide form, through a real ``escalated
serve`` on both backends: a choice is one approval, the page says who
approved and how many are needed, a second approval by the same person is
refused in words, and the quorum-th approval resolves it."""

from __future__ import annotations

import pytest

from tests.support.api import escalation_body
from tests.web.support import WebClient, api

POLICY = "web.quorum"


@pytest.fixture(scope="module")
def quorum_policy(world) -> str:
    world.server.cli("policy", "set", POLICY, "--quorum", "2", "--quorum-choice", "approve")
    return POLICY


@pytest.fixture(scope="module")
def alice(world) -> WebClient:
    browser = WebClient(world.url)
    assert browser.sign_in(world.alice).status == 303
    return browser


def test_a_quorum_choice_on_the_form_is_an_approval_until_the_quorum(world, alice, quorum_policy):
    status, esc = api(world.url, "POST", "/escalations", world.key, escalation_body(quorum_policy))
    assert status == 201, esc
    path = f"/app/escalations/{esc['id']}"
    assert "Approve takes effect once 2 different people chose it" in alice.get(path).text
    page = alice.submit(path, f"{path}/decide", {"choice": "approve"})
    assert (page.status, page.location) == (303, path)
    detail = alice.get(path).text
    assert '<dd id="approvals">alice (Approve); 2 different people must choose the same</dd>' in detail
    assert 'id="status">open<' in detail
    again = alice.submit(path, f"{path}/decide", {"choice": "approve"})
    assert again.status == 409 and "alice already approved this escalation" in again.text
    status, done = api(world.url, "POST", f"/escalations/{esc['id']}/decide", world.bob, {"choice": "approve"})
    assert status == 200 and done["status"] == "resolved" and done["resolution"]["answeredBy"] == "bob"
    assert '<dd id="approvals">alice (Approve), bob (Approve)</dd>' in alice.get(path).text
