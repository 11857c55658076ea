"""CONTRACT §15: remembered decisions (``/rules``) through a real server, on both backends."""

from __future__ import annotations

import json

import pytest

from escalated.core.admin import PolicyRequest
from escalated.domain import scopes
from escalated.timeutil import parse_timestamp_ms
from tests.support import setup
from tests.support.api import unique
from tests.support.receiver import Receiver


def add_rule(api, token, **body):
    return api.post("/rules", token=token, json_body={"choice": "approve", "reason": "known customer", **body})


def test_a_rule_is_created_with_its_author_and_a_default_life_of_a_day(live, api, admin_key):
    policy = live.policy()
    resp = add_rule(api, admin_key, policy=policy, match={"agentId": "billing-agent"})
    assert resp.status == 201, resp.body
    rule = resp.json()
    assert rule["id"].startswith("rul_") and resp.headers["Location"] == f"/rules/{rule['id']}"
    assert rule["createdBy"] == "key:ci-bot" and rule["status"] == "active"
    assert rule["match"] == {"agentId": "billing-agent"} and rule["uses"] == []
    life_ms = parse_timestamp_ms(rule["expiresAt"]) - parse_timestamp_ms(rule["createdAt"])
    assert life_ms == 24 * 3600 * 1000


def test_a_matching_new_escalation_is_answered_open_then_resolved_by_the_rule(live, api, admin_key):
    policy = live.policy()
    author = unique("remembering")
    rule = add_rule(api, live.user(author), policy=policy, match={"subjectType": "order"}).json()
    created = live.create(admin_key, policy=policy)
    assert created["status"] == "open"
    # Decided before the create's answer was sent: resolved at the very next read.
    esc = api.get(f"/escalations/{created['id']}", token=admin_key).json()
    assert esc["status"] == "resolved"
    res = esc["resolution"]
    assert (res["choice"], res["resolvedBy"], res["answeredBy"]) == ("approve", "human", f"rule:{rule['id']}")
    assert res["rule"] == {"id": rule["id"], "createdBy": author} and res["reason"] == "known customer"
    assert [(h["event"], h["by"]) for h in esc["history"]][-1] == ("decided", f"rule:{rule['id']}")
    uses = api.get(f"/rules/{rule['id']}", token=admin_key).json()["uses"]
    assert [u["escalationId"] for u in uses] == [created["id"]]


async def test_a_rules_decision_calls_the_agent_back_as_usual(live, admin_key):
    receiver = await Receiver().start()
    try:
        policy = live.policy()
        rule = add_rule(live.api, admin_key, policy=policy).json()
        live.create(admin_key, policy=policy, resume={"mode": "webhook", "url": receiver.url, "secret": "s"})
        [got] = await receiver.wait_for(1)
    finally:
        await receiver.stop()
    assert got.headers["x-service-event"] == "escalation.decided"
    body = json.loads(got.body)
    assert (body["resolvedBy"], body["answeredBy"], body["choice"]) == ("human", f"rule:{rule['id']}", "approve")


@pytest.mark.parametrize(
    "overrides",
    [
        {"agentId": "another-agent"},
        {"subject": {"type": "invoice", "id": "o-981", "label": "Invoice"}},
        {"choices": [{"id": "deny", "label": "Deny"}, {"id": "escalate", "label": "Escalate"}]},
        {"responseFields": [{"type": "number", "name": "amount", "label": "Amount"}]},
    ],
    ids=["other-agent", "other-subject-type", "choice-not-offered", "asks-a-response"],
)
def test_a_rule_leaves_an_escalation_it_does_not_answer_open(live, api, admin_key, overrides):
    policy = live.policy()
    add_rule(api, admin_key, policy=policy, match={"agentId": "billing-agent", "subjectType": "order"})
    created = live.create(admin_key, policy=policy, **overrides)
    # The rule's decision is made before the create's answer is sent, so a
    # read after it shows whether there was one.
    assert api.get(f"/escalations/{created['id']}", token=admin_key).json()["status"] == "open"


def test_a_revoked_rule_decides_nothing_and_stays_listed(live, api, admin_key):
    policy = live.policy()
    revoker = unique("revoker")
    rule = add_rule(api, admin_key, policy=policy).json()
    assert api.delete(f"/rules/{rule['id']}", token=live.user(revoker)).status == 204
    assert api.delete(f"/rules/{rule['id']}", token=admin_key).status == 204  # the first revocation is kept
    created = live.create(admin_key, policy=policy)
    assert api.get(f"/escalations/{created['id']}", token=admin_key).json()["status"] == "open"
    [listed] = [r for r in api.get("/rules", token=admin_key).json()["data"] if r["id"] == rule["id"]]
    assert listed["status"] == "revoked" and listed["revokedBy"] == revoker and listed["createdBy"] == "key:ci-bot"


def test_an_expired_rule_decides_nothing(live, api, admin_key):
    policy = live.policy()
    rule = add_rule(api, admin_key, policy=policy, expiresIn="1s").json()
    assert rule["status"] == "active"
    live.advance(1.5)  # past the shortest life a rule has, on the server's clock
    assert api.get(f"/rules/{rule['id']}", token=admin_key).json()["status"] == "expired"
    created = live.create(admin_key, policy=policy)
    assert api.get(f"/escalations/{created['id']}", token=admin_key).json()["status"] == "open"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"policy": "no.such.policy"}, "policy"),
        ({"policy": "refunds.large", "expiresIn": "31d"}, "expiresIn"),
        ({"policy": "refunds.large", "expiresIn": "soon"}, "expiresIn"),
        ({"policy": "refunds.large", "reason": ""}, "reason"),
        ({"policy": "refunds.large", "choice": "not a choice"}, "choice"),
        ({"policy": "refunds.large", "match": {"runId": "r"}}, "match.runId"),
        ({"policy": "refunds.large", "match": []}, "match"),
        ({"policy": "refunds.large", "extra": 1}, "extra"),
    ],
)
def test_a_malformed_rule_is_422_naming_the_field(api, admin_key, body, field):
    resp = add_rule(api, admin_key, **body)
    assert resp.status == 422, resp.body
    assert field in {e["field"] for e in resp.json()["errors"]}


def test_a_reviewer_makes_rules_only_for_policies_routed_to_them(live, api, admin_key):
    policy = live.policy(reviewers=(unique("owner"),))
    outsider = live.user(unique("outsider"))
    add_rule(api, outsider, policy=policy).problem(422, "validation_failed")
    rule = add_rule(api, admin_key, policy=policy).json()
    api.get(f"/rules/{rule['id']}", token=outsider).problem(404, "not_found")
    api.delete(f"/rules/{rule['id']}", token=outsider).problem(404, "not_found")
    assert rule["id"] not in {r["id"] for r in api.get("/rules", token=outsider).json()["data"]}


def test_rules_need_the_decide_scope(live, api):
    reader = live.key(scopes.READ)
    add_rule(api, reader, policy="refunds.large").problem(403, "insufficient_scope")
    api.get("/rules", token=reader).problem(403, "insufficient_scope")
    api.delete("/rules/rul_x", token=reader).problem(403, "insufficient_scope")


def test_an_unknown_rule_is_404(api, admin_key):
    api.get("/rules/rul_nothing", token=admin_key).problem(404, "not_found")
    api.delete("/rules/rul_nothing", token=admin_key).problem(404, "not_found")


def _quorum_policy(live) -> str:
    """A policy where "approve" needs two approvals (quorum, CONTRACT §15)."""
    key = f"{unique('q')}.quorum"
    request = PolicyRequest(key=key, quorum="2", quorum_choices=("approve",), allow_unknown_reviewers=True)
    live._run(lambda: setup.set_policy(live.app, request))
    return key


def test_a_rule_cannot_be_made_for_a_quorum_choice(live, api, admin_key):
    policy = _quorum_policy(live)
    problem = add_rule(api, admin_key, policy=policy, choice="approve").problem(422, "validation_failed")
    assert [e["field"] for e in problem["errors"]] == ["choice"]
    assert add_rule(api, admin_key, policy=policy, choice="deny").status == 201  # not a quorum choice: fine


def test_a_rule_made_before_its_choice_needed_a_quorum_never_satisfies_it(live, api, admin_key):
    policy = live.policy()
    rule = add_rule(api, admin_key, policy=policy, choice="approve").json()
    # The policy changes under the rule: "approve" now needs two approvals.
    request = PolicyRequest(key=policy, quorum="2", quorum_choices=("approve",), allow_unknown_reviewers=True)
    live._run(lambda: setup.set_policy(live.app, request))
    created = live.create(admin_key, policy=policy)
    esc = api.get(f"/escalations/{created['id']}", token=admin_key).json()
    assert esc["status"] == "open" and esc.get("approvals", []) == []
    assert api.get(f"/rules/{rule['id']}", token=admin_key).json()["uses"] == []


def test_rules_of_another_workspace_are_not_found(live, api, admin_key):
    workspace = live.workspace()
    other_key = live.key(workspace=workspace)
    live.policy("refunds.large", workspace=workspace)
    rule = add_rule(api, admin_key, policy="refunds.large", match={"agentId": unique("agent")}).json()
    api.get(f"/rules/{rule['id']}", token=other_key).problem(404, "not_found")
    api.delete(f"/rules/{rule['id']}", token=other_key).problem(404, "not_found")
    assert rule["id"] not in {r["id"] for r in api.get("/rules", token=other_key).json()["data"]}
    other = live.create(other_key, agentId=rule["match"]["agentId"])  # the same policy key, in its own workspace
    assert api.get(f"/escalations/{other['id']}", token=other_key).json()["status"] == "open"
