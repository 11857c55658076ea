"""CONTRACT §15: claim and assign through a real server, on both backends."""

from __future__ import annotations

from escalated.domain import scopes
from tests.support.api import unique


def claim(api, token, esc_id):
    return api.post(f"/escalations/{esc_id}/claim", token=token)


def assign(api, token, esc_id, body):
    return api.post(f"/escalations/{esc_id}/assign", token=token, json_body=body)


def test_claim_makes_the_caller_the_assignee_and_acknowledges(live, api, admin_key):
    name = unique("claimer")
    token = live.user(name)
    esc = live.create(admin_key)
    assert esc["assignee"] is None
    resp = claim(api, token, esc["id"])
    assert resp.status == 200, resp.body
    body = resp.json()
    assert body["assignee"] == name
    assert body["status"] == "acknowledged" and body["acknowledgedBy"] == name
    assert [(h["event"], h["by"]) for h in body["history"]] == [
        ("created", "key:ci-bot"), ("acknowledged", name), ("claimed", name)
    ]  # fmt: skip
    assert api.get(f"/escalations/{esc['id']}", token=admin_key).json()["assignee"] == name


def test_claim_of_an_acknowledged_escalation_keeps_the_first_acknowledger(live, api, admin_key):
    esc = live.create(admin_key)
    api.post(f"/escalations/{esc['id']}/acknowledge", token=admin_key)
    name = unique("late-claimer")
    body = claim(api, live.user(name), esc["id"]).json()
    assert body["acknowledgedBy"] == "key:ci-bot" and body["assignee"] == name
    assert [h["event"] for h in body["history"]] == ["created", "acknowledged", "claimed"]


def test_a_second_claim_takes_it_over_and_a_claim_is_advisory(live, api, admin_key):
    first, second, third = unique("first"), unique("second"), unique("third")
    esc = live.create(admin_key)
    claim(api, live.user(first), esc["id"])
    assert claim(api, live.user(second), esc["id"]).json()["assignee"] == second
    decided = api.post(f"/escalations/{esc['id']}/decide", token=live.user(third), json_body={"choice": "deny"})
    assert decided.status == 200, decided.body
    assert decided.json()["resolution"]["answeredBy"] == third


def test_an_api_key_cannot_claim(live, api, admin_key):
    esc = live.create(admin_key)
    claim(api, admin_key, esc["id"]).problem(403, "user_token_required")


def test_claim_needs_the_acknowledge_scope(live, api, admin_key):
    esc = live.create(admin_key)
    claim(api, live.key(scopes.READ), esc["id"]).problem(403, "insufficient_scope")


def test_claim_of_a_resolved_escalation_is_409(live, api, admin_key):
    esc = live.create(admin_key)
    api.post(f"/escalations/{esc['id']}/decide", token=admin_key, json_body={"choice": "approve"})
    body = claim(api, live.user(unique("too-late")), esc["id"]).problem(409, "invalid_state")
    assert body["currentStatus"] == "resolved"


def test_claim_of_an_escalation_not_routed_to_the_user_is_404(live, api, admin_key):
    esc = live.create(admin_key, policy=live.policy(reviewers=(unique("someone-else"),)))
    claim(api, live.user(unique("outsider")), esc["id"]).problem(404, "not_found")


def test_assign_sets_a_routed_user_and_null_unassigns(live, api, admin_key):
    bob = unique("bob")
    live.user(bob, "leads")
    esc = live.create(admin_key, policy=live.policy(reviewers=("group:leads",)))
    resp = assign(api, admin_key, esc["id"], {"user": bob})
    assert resp.status == 200, resp.body
    assert resp.json()["assignee"] == bob and resp.json()["status"] == "open"
    assert resp.json()["history"][-1]["event"] == "assigned"
    assert assign(api, admin_key, esc["id"], {"user": None}).json()["assignee"] is None


def test_assign_to_a_user_not_routed_or_unknown_is_422(live, api, admin_key):
    outsider = unique("outsider")
    live.user(outsider)
    esc = live.create(admin_key, policy=live.policy(reviewers=("group:nobody-here",)))
    for body in ({"user": outsider}, {"user": "no-such-user"}, {"user": 7}, {}, {"user": outsider, "x": 1}):
        problem = assign(api, admin_key, esc["id"], body).problem(422, "validation_failed")
        assert "user" in {e["field"] for e in problem["errors"]}


def test_assign_needs_the_decide_scope(live, api, admin_key):
    esc = live.create(admin_key)
    assign(api, live.key(scopes.ACKNOWLEDGE, scopes.READ), esc["id"], {"user": "x"}).problem(403, "insufficient_scope")


def test_list_filters_by_assignee_and_me(live, api, admin_key):
    policy = live.policy()
    alice, bob = unique("alice"), unique("bob")
    alice_token = live.user(alice)
    live.user(bob)
    mine = live.create(admin_key, policy=policy)
    bobs = live.create(admin_key, policy=policy)
    live.create(admin_key, policy=policy)
    claim(api, alice_token, mine["id"])
    assign(api, admin_key, bobs["id"], {"user": bob})

    def ids(token, **query):
        resp = api.get("/escalations", token=token, query={"policy": policy, **query})
        assert resp.status == 200, resp.body
        return [e["id"] for e in resp.json()["data"]]

    assert ids(alice_token, assignee="me") == [mine["id"]]
    assert ids(admin_key, assignee=bob) == [bobs["id"]]
    assert ids(admin_key, assignee=alice) == [mine["id"]]
    assert ids(admin_key, assignee="me") == []  # a key is no one's assignee


def test_claim_and_assign_in_another_workspace_are_404(live, api, admin_key):
    workspace = live.workspace()
    outsider = live.user(unique("outsider"), workspace=workspace)
    outsider_key = live.key(workspace=workspace)
    esc = live.create(admin_key)
    claim(api, outsider, esc["id"]).problem(404, "not_found")
    assign(api, outsider_key, esc["id"], {"user": None}).problem(404, "not_found")
    assert api.get(f"/escalations/{esc['id']}", token=admin_key).json()["history"][-1]["event"] == "created"
