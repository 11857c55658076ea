"""CONTRACT §15 in the web app, through a real ``escalated serve`` on both
backends: claiming, the assignee in the inbox and on the page, and
"remember for matching escalations" on the decide form."""

from __future__ import annotations

import pytest

from tests.support.api import escalation_body, unique
from tests.web.support import WebClient, api


def create(world, policy: str = "refunds", **overrides) -> dict:
    status, esc = api(world.url, "POST", "/escalations", world.key, escalation_body(policy, **overrides))
    assert status == 201, esc
    return esc


def get(world, esc_id: str) -> dict:
    return api(world.url, "GET", f"/escalations/{esc_id}", world.key)[1]


@pytest.fixture(scope="module")
def alice(world) -> WebClient:
    browser = WebClient(world.url)
    assert browser.sign_in(world.alice).status == 303
    return browser


def test_claiming_from_the_page_assigns_and_the_inbox_and_page_say_so(world, alice):
    esc = create(world)
    path = f"/app/escalations/{esc['id']}"
    assert 'id="claim-form"' in alice.get(path).text
    page = alice.submit(path, f"{path}/claim", {})
    assert (page.status, page.location) == (303, path)
    body = get(world, esc["id"])
    assert body["assignee"] == "alice" and body["acknowledgedBy"] == "alice"
    detail = alice.get(path).text
    assert '<dd id="assignee">alice</dd>' in detail and 'id="claim-form"' not in detail  # already hers
    row = alice.get("/app/").text.split(f'data-id="{esc["id"]}"', 1)[1].split("</li>", 1)[0]
    assert "with alice" in row


def test_an_escalation_claimed_by_someone_else_offers_to_take_it_over(world, alice):
    esc = create(world, policy="everyone")
    api(world.url, "POST", f"/escalations/{esc['id']}/claim", world.bob)
    page = alice.get(f"/app/escalations/{esc['id']}").text
    assert "Claim (assign it to me, instead of bob)" in page


def test_deciding_with_remember_makes_a_rule_that_decides_the_next_one(world, alice):
    agent = unique("agent")
    esc = create(world, agentId=agent)
    path = f"/app/escalations/{esc['id']}"
    assert "Remember for matching escalations" in alice.get(path).text
    form = {"choice": "approve", "reason": "regular", "remember": "yes", "remember_match": "agent-type", "remember_for": "7d"}
    assert alice.submit(path, f"{path}/decide", form).status == 303
    [rule] = [r for r in api(world.url, "GET", "/rules", world.key)[1]["data"] if r["match"].get("agentId") == agent]
    assert (rule["createdBy"], rule["choice"], rule["reason"]) == ("alice", "approve", "regular")
    assert rule["match"] == {"agentId": agent, "subjectType": "order"} and rule["policy"] == "refunds"
    following = create(world, agentId=agent)
    status, done = api(world.url, "GET", f"/escalations/{following['id']}/wait?timeout=10", world.key)
    assert status == 200 and done["resolution"]["answeredBy"] == f"rule:{rule['id']}"
    page = alice.get(f"/app/escalations/{following['id']}").text
    assert "decided by a remembered decision of alice" in page
    assert create(world, agentId=unique("other-agent"))["status"] == "open"


def test_deciding_without_remember_makes_no_rule(world, alice):
    agent = unique("agent")
    esc = create(world, agentId=agent)
    path = f"/app/escalations/{esc['id']}"
    assert alice.submit(path, f"{path}/decide", {"choice": "deny", "remember_match": "policy"}).status == 303
    assert not [r for r in api(world.url, "GET", "/rules", world.key)[1]["data"] if r["match"].get("agentId") == agent]


def test_the_form_offers_no_remember_where_a_response_is_asked(world, alice):
    esc = create(world, responseFields=[{"type": "number", "name": "amount", "label": "Amount"}])
    assert "Remember for matching escalations" not in alice.get(f"/app/escalations/{esc['id']}").text


def test_the_remembered_page_lists_each_rule_its_author_and_uses_and_revokes(world, alice):
    agent = unique("agent")
    esc = create(world, agentId=agent)
    path = f"/app/escalations/{esc['id']}"
    alice.submit(path, f"/app/escalations/{esc['id']}/decide", {"choice": "deny", "reason": "not again", "remember": "yes"})
    [rule] = [r for r in api(world.url, "GET", "/rules", world.key)[1]["data"] if r["match"].get("agentId") == agent]
    used = create(world, agentId=agent)
    listing = alice.get("/app/rules")
    assert listing.status == 200
    row = listing.text.split(f'data-id="{rule["id"]}"', 1)[1].split("</tr>", 1)[0]
    assert "not again" in row and f"from {agent}" in row and "alice" in row and "active until" in row
    assert f'href="/app/escalations/{used["id"]}"' in row
    assert alice.submit("/app/rules", f"/app/rules/{rule['id']}/revoke", {}).status == 303
    assert api(world.url, "GET", f"/rules/{rule['id']}", world.key)[1]["revokedBy"] == "alice"
    row = alice.get("/app/rules").text.split(f'data-id="{rule["id"]}"', 1)[1].split("</tr>", 1)[0]
    assert "revoked by alice" in row and "Revoke" not in row


def test_a_rule_of_a_policy_not_routed_to_the_user_is_not_listed_nor_revocable(world):
    status, rule = api(world.url, "POST", "/rules", world.key, {"policy": "refunds", "choice": "deny", "reason": "finance only"})
    assert status == 201, rule
    try:
        bob = WebClient(world.url)
        assert bob.sign_in(world.bob).status == 303
        assert rule["id"] not in bob.get("/app/rules").text
        assert bob.submit("/app/rules", f"/app/rules/{rule['id']}/revoke", {}).status == 404
    finally:  # a rule for every escalation of the policy: the module's server is shared
        api(world.url, "DELETE", f"/rules/{rule['id']}", world.key)


def test_remembering_a_quorum_choice_records_the_approval_and_says_it_is_not_remembered(world, alice):
    world.server.cli("policy", "set", "pair.approve", "--quorum", "2", "--quorum-choice", "approve")
    esc = create(world, policy="pair.approve")
    path = f"/app/escalations/{esc['id']}"
    page = alice.submit(path, f"{path}/decide", {"choice": "approve", "remember": "yes"})
    assert page.status == 422
    assert "Your decision is recorded, but not remembered" in page.text and "a quorum" in page.text
    body = get(world, esc["id"])
    assert body["status"] in ("open", "acknowledged") and [a["by"] for a in body["approvals"]] == ["alice"]
    assert not [r for r in api(world.url, "GET", "/rules", world.key)[1]["data"] if r["policy"] == "pair.approve"]


def test_the_inbox_filter_only_mine_shows_what_the_user_claimed(world, alice):
    mine, other = create(world), create(world)
    alice.submit(f"/app/escalations/{mine['id']}", f"/app/escalations/{mine['id']}/claim", {})
    page = alice.get("/app/?mine=1").text
    assert mine["id"] in page and other["id"] not in page and 'id="mine" checked' in page
    assert other["id"] in alice.get("/app/").text
