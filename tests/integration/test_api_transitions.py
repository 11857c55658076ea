"""CONTRACT §3: acknowledge, decide, cancel; decide validation; 409 on settled escalations."""

from __future__ import annotations

import pytest

from escalated.timeutil import parse_timestamp_ms

NUMBER = {"type": "number", "name": "amount", "label": "Amount", "min": 10, "step": 5}
SELECT = {
    "type": "select",
    "name": "reason",
    "label": "Reason",
    "options": [{"value": "dup", "label": "Duplicate"}, {"value": "fraud", "label": "Fraud"}],
}


def decide(api, token, esc_id, body):
    return api.post(f"/escalations/{esc_id}/decide", token=token, json_body=body)


# -- acknowledge ---------------------------------------------------------------


def test_acknowledge_moves_open_to_acknowledged_and_records_who(live, api, admin_key):
    esc = live.create(admin_key)
    resp = api.post(f"/escalations/{esc['id']}/acknowledge", token=admin_key)
    assert resp.status == 200
    body = resp.json()
    assert body["status"] == "acknowledged" and body["acknowledgedBy"] == "key:ci-bot"
    assert parse_timestamp_ms(body["acknowledgedAt"]) >= parse_timestamp_ms(body["createdAt"])
    assert [h["event"] for h in body["history"]] == ["created", "acknowledged"]


def test_acknowledge_is_idempotent_and_keeps_the_first_acknowledger(live, api, admin_key):
    esc = live.create(admin_key)
    first = api.post(f"/escalations/{esc['id']}/acknowledge", token=admin_key).json()
    again = api.post(f"/escalations/{esc['id']}/acknowledge", token=live.user("second-acker"))
    assert again.status == 200
    body = again.json()
    assert body["acknowledgedBy"] == "key:ci-bot" and body["acknowledgedAt"] == first["acknowledgedAt"]
    assert [h["event"] for h in body["history"]] == ["created", "acknowledged"]


def test_acknowledge_does_not_stop_the_sla_clock(live, api, admin_key):
    esc = live.create(admin_key, policy=live.policy(sla="1h", default_choice="deny"))
    acked = api.post(f"/escalations/{esc['id']}/acknowledge", token=admin_key).json()
    assert acked["deadlineAt"] == esc["deadlineAt"]


def test_acknowledged_escalation_can_be_decided(live, api, admin_key):
    esc = live.create(admin_key)
    api.post(f"/escalations/{esc['id']}/acknowledge", token=admin_key)
    body = decide(api, admin_key, esc["id"], {"choice": "approve"}).json()
    assert body["status"] == "resolved" and body["acknowledgedBy"] == "key:ci-bot"
    assert [h["event"] for h in body["history"]] == ["created", "acknowledged", "decided"]


# -- decide --------------------------------------------------------------------


def test_decide_resolves_with_a_human_resolution(live, api, admin_key):
    esc = live.create(admin_key)
    resp = decide(api, admin_key, esc["id"], {"choice": "deny", "reason": "over limit"})
    assert resp.status == 200
    res = resp.json()["resolution"]
    assert resp.json()["status"] == "resolved"
    assert {k: res[k] for k in ("choice", "reason", "resolvedBy", "answeredBy")} == {
        "choice": "deny",
        "reason": "over limit",
        "resolvedBy": "human",
        "answeredBy": "key:ci-bot",
    }
    assert "response" not in res
    assert api.get(f"/escalations/{esc['id']}", token=admin_key).json() == resp.json()


def test_decide_by_a_user_token_answers_by_the_user_name(live, api, admin_key):
    esc = live.create(admin_key)
    body = decide(api, live.user("erin"), esc["id"], {"choice": "approve"}).json()
    assert body["resolution"]["answeredBy"] == "erin"
    assert body["history"][-1] == {"event": "decided", "by": "erin", "at": body["resolution"]["answeredAt"]}


def test_decide_by_an_unnamed_key_answers_by_key_id(live, api, admin_key):
    key = live.key()
    esc = live.create(admin_key)
    body = decide(api, key, esc["id"], {"choice": "approve"}).json()
    assert body["resolution"]["answeredBy"] == f"key:{live.key_id(key)}"


def test_decide_with_a_choice_not_offered_is_422(live, api, admin_key):
    esc = live.create(admin_key)
    problem = decide(api, admin_key, esc["id"], {"choice": "maybe"}).problem(422, "validation_failed")
    assert problem["errors"][0]["field"] == "choice"
    assert api.get(f"/escalations/{esc['id']}", token=admin_key).json()["status"] == "open"


@pytest.mark.parametrize("body", [{}, {"choice": None}, {"choice": 1}, {"reason": "no choice"}])
def test_decide_without_a_string_choice_is_422(live, api, admin_key, body):
    esc = live.create(admin_key)
    problem = decide(api, admin_key, esc["id"], body).problem(422, "validation_failed")
    assert "choice" in [e["field"] for e in problem["errors"]]


def test_decide_with_an_unknown_field_is_422(live, api, admin_key):
    esc = live.create(admin_key)
    problem = decide(api, admin_key, esc["id"], {"choice": "approve", "comment": "x"}).problem(422, "validation_failed")
    assert problem["errors"][0]["field"] == "comment"


def test_decide_with_a_response_when_no_fields_are_configured_is_422(live, api, admin_key):
    esc = live.create(admin_key)
    problem = decide(api, admin_key, esc["id"], {"choice": "approve", "response": {}}).problem(422, "validation_failed")
    assert problem["errors"][0]["field"] == "response"


@pytest.fixture
def with_fields(live, admin_key):
    return live.create(admin_key, responseFields=[NUMBER, SELECT])


def test_decide_with_a_valid_response_stores_it(live, api, admin_key, with_fields):
    resp = decide(api, admin_key, with_fields["id"], {"choice": "approve", "response": {"amount": 25, "reason": "dup"}})
    assert resp.status == 200
    assert resp.json()["resolution"]["response"] == {"amount": 25, "reason": "dup"}


def test_decide_without_response_when_fields_are_configured_is_422(api, admin_key, with_fields):
    problem = decide(api, admin_key, with_fields["id"], {"choice": "approve"}).problem(422, "validation_failed")
    assert problem["errors"][0]["field"] == "response"


def test_decide_with_a_missing_response_name_is_422(api, admin_key, with_fields):
    body = {"choice": "approve", "response": {"amount": 15}}
    problem = decide(api, admin_key, with_fields["id"], body).problem(422, "validation_failed")
    assert [e["field"] for e in problem["errors"]] == ["response.reason"]


def test_decide_with_an_extra_response_name_is_422(api, admin_key, with_fields):
    body = {"choice": "approve", "response": {"amount": 15, "reason": "dup", "note": "x"}}
    problem = decide(api, admin_key, with_fields["id"], body).problem(422, "validation_failed")
    assert [e["field"] for e in problem["errors"]] == ["response.note"]


def test_decide_with_a_response_that_is_not_an_object_is_422(api, admin_key, with_fields):
    problem = decide(api, admin_key, with_fields["id"], {"choice": "approve", "response": [15, "dup"]}).problem(
        422, "validation_failed"
    )
    assert problem["errors"][0]["field"] == "response"


@pytest.mark.parametrize(
    ("amount", "ok"),
    [(10, True), (15, True), (10.0, True), (100, True), (5, False), (9.99, False), (12, False), (-10, False),
     ("15", False), (True, False), (None, False)],
)  # fmt: skip
def test_number_must_be_at_least_min_and_on_the_step_grid_from_min(live, api, admin_key, amount, ok):
    esc = live.create(admin_key, responseFields=[NUMBER])  # min 10, step 5
    resp = decide(api, admin_key, esc["id"], {"choice": "approve", "response": {"amount": amount}})
    if ok:
        assert resp.status == 200, resp.body
    else:
        assert resp.problem(422, "validation_failed")["errors"][0]["field"] == "response.amount"


@pytest.mark.parametrize(("amount", "ok"), [(0, True), (0.75, True), (-1.5, True), (0.3, False)])
def test_step_without_min_counts_from_zero(live, api, admin_key, amount, ok):
    esc = live.create(admin_key, responseFields=[{"type": "number", "name": "amount", "label": "A", "step": 0.25}])
    resp = decide(api, admin_key, esc["id"], {"choice": "approve", "response": {"amount": amount}})
    assert (resp.status == 200) is ok, resp.body


@pytest.mark.parametrize(("amount", "ok"), [(3, True), (3.14159, True), (2.9, False)])
def test_min_without_step_allows_any_number_at_least_min(live, api, admin_key, amount, ok):
    esc = live.create(admin_key, responseFields=[{"type": "number", "name": "amount", "label": "A", "min": 3}])
    resp = decide(api, admin_key, esc["id"], {"choice": "approve", "response": {"amount": amount}})
    assert (resp.status == 200) is ok, resp.body


def test_number_without_min_or_step_accepts_any_number(live, api, admin_key):
    esc = live.create(admin_key, responseFields=[{"type": "number", "name": "amount", "label": "A"}])
    resp = decide(api, admin_key, esc["id"], {"choice": "approve", "response": {"amount": -123.456}})
    assert resp.status == 200


@pytest.mark.parametrize(("value", "ok"), [("dup", True), ("fraud", True), ("Duplicate", False), ("other", False), (1, False)])
def test_select_value_must_be_one_of_the_option_values(live, api, admin_key, value, ok):
    esc = live.create(admin_key, responseFields=[SELECT])
    resp = decide(api, admin_key, esc["id"], {"choice": "approve", "response": {"reason": value}})
    if ok:
        assert resp.status == 200, resp.body
    else:
        assert resp.problem(422, "validation_failed")["errors"][0]["field"] == "response.reason"


# -- cancel --------------------------------------------------------------------


def test_cancel_records_reason_and_canceller(live, api, admin_key):
    esc = live.create(admin_key)
    resp = api.post(f"/escalations/{esc['id']}/cancel", token=admin_key, json_body={"reason": "agent gave up"})
    assert resp.status == 200
    body = resp.json()
    assert body["status"] == "cancelled" and body["resolution"] is None
    assert body["cancellation"]["reason"] == "agent gave up" and body["cancellation"]["cancelledBy"] == "key:ci-bot"
    assert [h["event"] for h in body["history"]] == ["created", "cancelled"]


def test_cancel_without_a_body_is_allowed(live, api, admin_key):
    esc = live.create(admin_key)
    resp = api.post(f"/escalations/{esc['id']}/cancel", token=admin_key)
    assert resp.status == 200 and resp.json()["cancellation"]["reason"] is None


def test_cancel_with_an_unknown_field_is_422(live, api, admin_key):
    esc = live.create(admin_key)
    api.post(f"/escalations/{esc['id']}/cancel", token=admin_key, json_body={"why": "x"}).problem(422, "validation_failed")


def test_acknowledged_escalation_can_be_cancelled(live, api, admin_key):
    esc = live.create(admin_key)
    api.post(f"/escalations/{esc['id']}/acknowledge", token=admin_key)
    assert api.post(f"/escalations/{esc['id']}/cancel", token=admin_key).json()["status"] == "cancelled"


# -- 409 on settled escalations ------------------------------------------------

SETTLE = {
    "resolved": lambda api, t, i: decide(api, t, i, {"choice": "approve"}),
    "cancelled": lambda api, t, i: api.post(f"/escalations/{i}/cancel", token=t, json_body={}),
}
ACT = {
    "decide": lambda api, t, i: decide(api, t, i, {"choice": "deny"}),
    "cancel": lambda api, t, i: api.post(f"/escalations/{i}/cancel", token=t, json_body={}),
    "acknowledge": lambda api, t, i: api.post(f"/escalations/{i}/acknowledge", token=t),
}


@pytest.mark.parametrize("settled", list(SETTLE))
@pytest.mark.parametrize("action", list(ACT))
def test_action_on_a_settled_escalation_is_409_with_the_current_status(live, api, admin_key, settled, action):
    esc = live.create(admin_key)
    before = SETTLE[settled](api, admin_key, esc["id"]).json()
    problem = ACT[action](api, admin_key, esc["id"]).problem(409, "invalid_state")
    assert settled in problem["detail"] and problem["currentStatus"] == settled
    assert api.get(f"/escalations/{esc['id']}", token=admin_key).json() == before


@pytest.mark.parametrize(("lo", "amount"), [(None, 1e308), (None, -1e308), (-1e308, 1e308), (0, 1.7976931348623157e308)])
def test_huge_numbers_on_a_small_step_are_422_not_500(live, api, admin_key, lo, amount):
    field = {"type": "number", "name": "amount", "label": "A", "step": 0.25}
    if lo is not None:
        field["min"] = lo
    esc = live.create(admin_key, responseFields=[field])
    resp = decide(api, admin_key, esc["id"], {"choice": "approve", "response": {"amount": amount}})
    assert resp.problem(422, "validation_failed")["errors"][0]["field"] == "response.amount"


# -- races -----------------------------------------------------------------------


def test_concurrent_decides_resolve_once_and_the_rest_are_409(live, api, admin_key):
    from concurrent.futures import ThreadPoolExecutor

    esc = live.create(admin_key)
    choices = ["approve", "deny"] * 6
    with ThreadPoolExecutor(max_workers=12) as pool:
        responses = list(pool.map(lambda c: decide(api, admin_key, esc["id"], {"choice": c}), choices))
    winners = [r for r in responses if r.status == 200]
    assert len(winners) == 1
    assert all(r.problem(409, "invalid_state") for r in responses if r.status != 200)
    final = api.get(f"/escalations/{esc['id']}", token=admin_key).json()
    assert final["resolution"] == winners[0].json()["resolution"]
    assert [h["event"] for h in final["history"]] == ["created", "decided"]


def test_concurrent_decide_and_cancel_leave_exactly_one_outcome(live, api, admin_key):
    from concurrent.futures import ThreadPoolExecutor

    esc = live.create(admin_key)
    calls = [
        lambda: decide(api, admin_key, esc["id"], {"choice": "approve"}),
        lambda: api.post(f"/escalations/{esc['id']}/cancel", token=admin_key),
    ] * 4
    with ThreadPoolExecutor(max_workers=8) as pool:
        responses = list(pool.map(lambda f: f(), calls))
    assert sum(r.status == 200 for r in responses) == 1
    final = api.get(f"/escalations/{esc['id']}", token=admin_key).json()
    assert (final["resolution"] is None) != (final["cancellation"] is None)
    assert len(final["history"]) == 2


def test_concurrent_acknowledges_all_succeed_with_one_acknowledger(live, api, admin_key):
    from concurrent.futures import ThreadPoolExecutor

    esc = live.create(admin_key)
    tokens = [live.user(f"acker-{esc['id'][-6:]}-{i}") for i in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        responses = list(pool.map(lambda t: api.post(f"/escalations/{esc['id']}/acknowledge", token=t), tokens))
    assert {r.status for r in responses} == {200}
    assert len({r.json()["acknowledgedBy"] for r in responses}) == 1
    final = api.get(f"/escalations/{esc['id']}", token=admin_key).json()
    assert [h["event"] for h in final["history"]] == ["created", "acknowledged"]
