"""CONTRACT §2: workspaces are isolated (404, never 403); user tokens see only what routes to them."""

from __future__ import annotations

import pytest

from tests.support.api import escalation_body, unique


@pytest.fixture(scope="module")
def other_ws(live) -> tuple[str, str]:
    """Workspace B with its own key and its own ``refunds.large`` policy."""
    ws = live.workspace()
    live.policy("refunds.large", workspace=ws)
    return ws, live.key(workspace=ws)


ACTIONS = {
    "get": lambda api, i, t: api.get(f"/escalations/{i}", token=t),
    "acknowledge": lambda api, i, t: api.post(f"/escalations/{i}/acknowledge", token=t),
    "decide": lambda api, i, t: api.post(f"/escalations/{i}/decide", token=t, json_body={"choice": "approve"}),
    "cancel": lambda api, i, t: api.post(f"/escalations/{i}/cancel", token=t, json_body={}),
}


@pytest.mark.parametrize("action", list(ACTIONS))
def test_key_of_another_workspace_gets_404(live, admin_key, other_ws, action):
    esc = live.create(admin_key)
    ACTIONS[action](live.api, esc["id"], other_ws[1]).problem(404, "not_found")
    assert live.api.get(f"/escalations/{esc['id']}", token=admin_key).json()["status"] == "open"


def test_list_does_not_show_another_workspaces_escalations(live, admin_key, other_ws):
    run = unique("iso")
    live.create(admin_key, runId=run)
    resp = live.api.get("/escalations", token=other_ws[1], query={"runId": run})
    assert resp.json()["data"] == []


def test_policy_of_another_workspace_is_unknown(live, other_ws):
    _ws, key = other_ws
    only_in_default = live.policy()
    live.api.post("/escalations", token=key, json_body=escalation_body(policy=only_in_default)).problem(
        422, "unknown_policy"
    )


def test_same_names_in_two_workspaces_are_independent(live, admin_key, other_ws):
    _ws, key = other_ws
    esc = live.create(key)
    assert live.api.get(f"/escalations/{esc['id']}", token=key).status == 200
    live.api.get(f"/escalations/{esc['id']}", token=admin_key).problem(404, "not_found")


# -- routing ----------------------------------------------------------------


@pytest.fixture(scope="module")
def routing(live, admin_key):
    """Users alice (group finance), bob (group ops), carol (no group)."""
    tokens = {
        "alice": live.user("alice", "finance"),
        "bob": live.user("bob", "ops"),
        "carol": live.user("carol"),
    }
    policies = {
        "by_name": live.policy("route.by-name", reviewers=("alice",)),
        "by_group": live.policy("route.by-group", reviewers=("group:ops",)),
        "everyone": live.policy("route.everyone"),
    }
    escs = {name: live.create(admin_key, policy=key, runId=f"route-{name}") for name, key in policies.items()}
    return tokens, escs


def visible_ids(live, token) -> set[str]:
    resp = live.api.get("/escalations", token=token, query={"limit": 200})
    assert resp.status == 200
    return {e["id"] for e in resp.json()["data"]}


def test_user_named_as_reviewer_sees_the_escalation(live, routing):
    tokens, escs = routing
    assert escs["by_name"]["id"] in visible_ids(live, tokens["alice"])
    assert live.api.get(f"/escalations/{escs['by_name']['id']}", token=tokens["alice"]).status == 200


def test_user_in_a_reviewer_group_sees_the_escalation(live, routing):
    tokens, escs = routing
    assert escs["by_group"]["id"] in visible_ids(live, tokens["bob"])
    assert live.api.get(f"/escalations/{escs['by_group']['id']}", token=tokens["bob"]).status == 200


def test_policy_without_reviewers_routes_to_every_user(live, routing):
    tokens, escs = routing
    for token in tokens.values():
        assert escs["everyone"]["id"] in visible_ids(live, token)


@pytest.mark.parametrize(("user", "esc"), [("bob", "by_name"), ("carol", "by_name"), ("alice", "by_group"), ("carol", "by_group")])
def test_unrouted_user_does_not_see_the_escalation_in_lists(live, routing, user, esc):
    tokens, escs = routing
    assert escs[esc]["id"] not in visible_ids(live, tokens[user])


@pytest.mark.parametrize("action", list(ACTIONS))
def test_unrouted_user_gets_404_on_access(live, routing, action):
    tokens, escs = routing
    ACTIONS[action](live.api, escs["by_name"]["id"], tokens["carol"]).problem(404, "not_found")


def test_routed_user_may_decide_and_is_named_in_the_resolution(live, admin_key):
    name = unique("dora")
    token = live.user(name, "legal")
    policy = live.policy(reviewers=("group:legal",))
    esc = live.create(admin_key, policy=policy)
    resp = live.api.post(f"/escalations/{esc['id']}/decide", token=token, json_body={"choice": "deny"})
    assert resp.status == 200
    assert resp.json()["resolution"]["answeredBy"] == name


def test_api_keys_are_not_subject_to_routing(live, admin_key, routing):
    _tokens, escs = routing
    narrow = live.key()
    assert live.api.get(f"/escalations/{escs['by_name']['id']}", token=narrow).status == 200


def test_user_of_another_workspace_named_like_the_reviewer_gets_404(live, routing, other_ws):
    _tokens, escs = routing
    stranger = live.user("alice", "finance", workspace=other_ws[0])
    live.api.get(f"/escalations/{escs['by_name']['id']}", token=stranger).problem(404, "not_found")
