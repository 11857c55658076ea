"""CONTRACT §3 Create: the resource returned, and every validation error with its field path."""

from __future__ import annotations

import re

import pytest

from escalated.timeutil import parse_timestamp_ms
from tests.support.api import escalation_body

TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
RESOURCE_FIELDS = {
    "id", "status", "policy", "agentId", "runId", "subject", "question", "evidence", "choices",
    "responseFields", "resume", "createdAt", "deadlineAt", "acknowledgedBy", "acknowledgedAt",
    "resolution", "cancellation", "history", "assignee", "defaultChoice", "level", "approvals",
}  # fmt: skip
SECRET = "whsec_do_not_echo_4711"


def test_create_returns_201_and_an_open_escalation_with_every_field(live, api, admin_key):
    body = escalation_body()
    resp = api.post("/escalations", token=admin_key, json_body=body)
    assert resp.status == 201
    assert resp.content_type == "application/json"
    esc = resp.json()
    assert set(esc) == RESOURCE_FIELDS
    assert esc["id"].startswith("esc_") and esc["status"] == "open"
    for field in ("policy", "agentId", "runId", "subject", "question", "evidence", "choices"):
        assert esc[field] == body[field]
    assert esc["responseFields"] == [] and esc["resume"] is None
    assert esc["acknowledgedBy"] is None and esc["resolution"] is None and esc["cancellation"] is None
    assert esc["level"] == 0 and esc["approvals"] == []  # CONTRACT §15


def test_create_sets_location_to_the_new_escalation(live, api, admin_key):
    resp = api.post("/escalations", token=admin_key, json_body=escalation_body())
    location = resp.headers["Location"]
    assert location.endswith(f"/escalations/{resp.json()['id']}")
    assert api.get(location.removeprefix(live.url), token=admin_key).json() == resp.json()


def test_get_returns_what_create_returned(live, api, admin_key):
    esc = live.create(admin_key)
    assert api.get(f"/escalations/{esc['id']}", token=admin_key).json() == esc


def test_timestamps_are_rfc3339_utc_with_milliseconds(live, admin_key):
    esc = live.create(admin_key)
    assert TS.match(esc["createdAt"]) and TS.match(esc["history"][0]["at"])


def test_history_starts_with_created_by_the_key_name(live, admin_key):
    esc = live.create(admin_key)
    assert [(h["event"], h["by"]) for h in esc["history"]] == [("created", "key:ci-bot")]
    assert esc["history"][0]["at"] == esc["createdAt"]


def test_history_names_an_unnamed_key_by_its_id(live):
    key = live.key()
    esc = live.create(key)
    assert esc["history"][0]["by"] == f"key:{live.key_id(key)}"


def test_resume_secret_is_never_returned_and_signed_says_it_exists(live, api, admin_key):
    resume = {"mode": "webhook", "url": "http://127.0.0.1:9/resume", "secret": SECRET}
    resp = api.post("/escalations", token=admin_key, json_body=escalation_body(resume=resume))
    esc = resp.json()
    assert esc["resume"] == {"mode": "webhook", "url": "http://127.0.0.1:9/resume", "signed": True}
    assert SECRET.encode() not in resp.body
    run = esc["runId"]
    for path in (f"/escalations/{esc['id']}", f"/escalations?runId={run}"):
        assert SECRET.encode() not in api.get(path, token=admin_key).body
    decided = api.post(f"/escalations/{esc['id']}/decide", token=admin_key, json_body={"choice": "approve"})
    assert SECRET.encode() not in decided.body


def test_resume_without_secret_is_unsigned(live, admin_key):
    esc = live.create(admin_key, resume={"mode": "webhook", "url": "https://agent.example/resume"})
    assert esc["resume"]["signed"] is False


def test_deadline_is_created_at_plus_the_policy_sla(live, admin_key):
    policy = live.policy(sla="15m", default_choice="deny")
    esc = live.create(admin_key, policy=policy)
    delta = parse_timestamp_ms(esc["deadlineAt"]) - parse_timestamp_ms(esc["createdAt"])
    assert delta == 15 * 60 * 1000
    assert TS.match(esc["deadlineAt"])


def test_deadline_is_null_without_an_sla(live, admin_key):
    assert live.create(admin_key)["deadlineAt"] is None


def test_response_fields_are_returned_as_sent(live, admin_key):
    fields = [
        {"type": "number", "name": "amount", "label": "Amount", "min": 0, "step": 0.5},
        {"type": "select", "name": "reason", "label": "Reason", "options": [{"value": "dup", "label": "Duplicate"}]},
    ]
    assert live.create(admin_key, responseFields=fields)["responseFields"] == fields


def test_unknown_policy_is_422_unknown_policy(api, admin_key):
    problem = api.post("/escalations", token=admin_key, json_body=escalation_body(policy="no.such.policy")).problem(
        422, "unknown_policy"
    )
    assert problem["errors"][0]["field"] == "policy"


def test_policy_sla_default_choice_must_be_among_the_choices(live, api, admin_key):
    policy = live.policy(sla="1h", default_choice="escalate")
    problem = api.post("/escalations", token=admin_key, json_body=escalation_body(policy=policy)).problem(
        422, "default_choice_not_offered"
    )
    assert "escalate" in problem["detail"]


def test_policy_with_sla_accepts_choices_that_include_the_default(live, admin_key):
    policy = live.policy(sla="1h", default_choice="deny")
    assert live.create(admin_key, policy=policy)["status"] == "open"


def choices(n: int) -> list[dict]:
    return [{"id": f"c{i}", "label": f"Choice {i}"} for i in range(n)]


NUM = {"type": "number", "name": "amount", "label": "Amount"}
SEL = {"type": "select", "name": "kind", "label": "Kind", "options": [{"value": "a", "label": "A"}]}

# (what is wrong, overrides of a valid body, the field path reported)
INVALID = [
    ("missing policy", {"policy": ...}, "policy"),
    ("missing agentId", {"agentId": ...}, "agentId"),
    ("missing runId", {"runId": ...}, "runId"),
    ("missing subject", {"subject": ...}, "subject"),
    ("missing question", {"question": ...}, "question"),
    ("missing evidence", {"evidence": ...}, "evidence"),
    ("missing choices", {"choices": ...}, "choices"),
    ("null agentId", {"agentId": None}, "agentId"),
    ("agentId not a string", {"agentId": 7}, "agentId"),
    ("runId not a string", {"runId": ["r"]}, "runId"),
    ("question not a string", {"question": {"q": 1}}, "question"),
    ("policy not a string", {"policy": 3}, "policy"),
    ("policy key format", {"policy": "Refunds Large"}, "policy"),
    ("policy key upper-case word", {"policy": "Refunds.large"}, "policy"),
    ("policy key empty word", {"policy": "refunds..large"}, "policy"),
    ("subject not an object", {"subject": "order"}, "subject"),
    ("subject.type missing", {"subject": {"id": "1", "label": "x"}}, "subject.type"),
    ("subject.id not a string", {"subject": {"type": "t", "id": 1, "label": "x"}}, "subject.id"),
    ("subject unknown field", {"subject": {"type": "t", "id": "1", "label": "x", "url": "u"}}, "subject.url"),
    ("evidence not an array", {"evidence": "one fact"}, "evidence"),
    ("evidence item not a string", {"evidence": ["ok", 2]}, "evidence[1]"),
    ("choices not an array", {"choices": {"id": "a"}}, "choices"),
    ("choices empty", {"choices": []}, "choices"),
    ("choices over 20", {"choices": choices(21)}, "choices"),
    ("choice not an object", {"choices": ["approve"]}, "choices[0]"),
    ("choice id missing", {"choices": [{"label": "A"}]}, "choices[0].id"),
    ("choice label missing", {"choices": [{"id": "a"}]}, "choices[0].label"),
    ("choice id pattern", {"choices": [{"id": "has space", "label": "A"}]}, "choices[0].id"),
    ("choice id too long", {"choices": [{"id": "x" * 65, "label": "A"}]}, "choices[0].id"),
    ("duplicate choice id", {"choices": [{"id": "a", "label": "A"}, {"id": "a", "label": "B"}]}, "choices[1].id"),
    ("choice unknown field", {"choices": [{"id": "a", "label": "A", "value": 1}]}, "choices[0].value"),
    ("responseFields not an array", {"responseFields": {}}, "responseFields"),
    ("response field type text", {"responseFields": [{**NUM, "type": "text"}]}, "responseFields[0].type"),
    ("response field without type", {"responseFields": [{"name": "n", "label": "N"}]}, "responseFields[0].type"),
    ("response field name missing", {"responseFields": [{"type": "number", "label": "N"}]}, "responseFields[0].name"),
    ("duplicate response field names", {"responseFields": [NUM, {**SEL, "name": "amount"}]}, "responseFields[1].name"),
    ("step zero", {"responseFields": [{**NUM, "step": 0}]}, "responseFields[0].step"),
    ("step negative", {"responseFields": [{**NUM, "step": -1}]}, "responseFields[0].step"),
    ("step not a number", {"responseFields": [{**NUM, "step": "1"}]}, "responseFields[0].step"),
    ("min not a number", {"responseFields": [{**NUM, "min": "0"}]}, "responseFields[0].min"),
    ("number field unknown key", {"responseFields": [{**NUM, "max": 5}]}, "responseFields[0].max"),
    ("select options empty", {"responseFields": [{**SEL, "options": []}]}, "responseFields[0].options"),
    ("select options missing", {"responseFields": [{k: v for k, v in SEL.items() if k != "options"}]}, "responseFields[0].options"),
    (
        "select option values duplicate",
        {"responseFields": [{**SEL, "options": [{"value": "a", "label": "A"}, {"value": "a", "label": "B"}]}]},
        "responseFields[0].options[1].value",
    ),
    ("resume not an object", {"resume": "http://127.0.0.1:9/x"}, "resume"),
    ("resume mode not webhook", {"resume": {"mode": "email", "url": "http://127.0.0.1:9/x"}}, "resume.mode"),
    ("resume url missing", {"resume": {"mode": "webhook"}}, "resume.url"),
    ("resume url relative", {"resume": {"mode": "webhook", "url": "/resume"}}, "resume.url"),
    ("resume url ftp", {"resume": {"mode": "webhook", "url": "ftp://127.0.0.1/x"}}, "resume.url"),
    ("resume url no host", {"resume": {"mode": "webhook", "url": "http:///x"}}, "resume.url"),
    ("resume url cloud metadata", {"resume": {"mode": "webhook", "url": "http://169.254.169.254/latest"}}, "resume.url"),
    ("resume unknown field", {"resume": {"mode": "webhook", "url": "http://127.0.0.1:9/x", "token": "t"}}, "resume.token"),
    ("unknown top-level field", {"policyKey": "refunds.large"}, "policyKey"),
    ("sla sent by the agent", {"sla": "15m"}, "sla"),
]


@pytest.mark.parametrize(("overrides", "field"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID])
def test_invalid_create_is_422_naming_the_field(api, admin_key, overrides, field):
    resp = api.post("/escalations", token=admin_key, json_body=escalation_body(**overrides))
    problem = resp.problem(422, "validation_failed")
    assert field in [e["field"] for e in problem["errors"]], problem["errors"]


def test_every_problem_is_listed_in_one_response(api, admin_key):
    body = escalation_body(agentId=..., question=5, choices=[{"id": "a", "label": "A"}, {"id": "a", "label": "A"}])
    problem = api.post("/escalations", token=admin_key, json_body=body).problem(422, "validation_failed")
    assert {"agentId", "question", "choices[1].id"} <= {e["field"] for e in problem["errors"]}
    assert all(set(e) == {"field", "message"} and e["message"] for e in problem["errors"])


def test_a_rejected_create_makes_no_escalation(live, api, admin_key):
    run = "rejected-run"
    api.post("/escalations", token=admin_key, json_body=escalation_body(runId=run, choices=[]))
    assert api.get("/escalations", token=admin_key, query={"runId": run}).json()["data"] == []


@pytest.mark.parametrize("n", [1, 20])
def test_one_to_twenty_choices_are_accepted(live, admin_key, n):
    assert len(live.create(admin_key, choices=choices(n))["choices"]) == n


def test_loopback_https_and_http_resume_urls_are_accepted(live, admin_key):
    for url in ("http://localhost:9000/resume", "https://127.0.0.1/resume", "http://[::1]:8000/r"):
        assert live.create(admin_key, resume={"mode": "webhook", "url": url})["resume"]["url"] == url
