"""CONTRACT §3 list: filters, newest first, order=asc, limit+cursor pagination."""

from __future__ import annotations

import pytest

from tests.support.api import unique


@pytest.fixture(scope="module")
def batch(live, admin_key):
    """Seven escalations of one agent, oldest first; two policies, mixed states."""
    agent = unique("lister")
    other_policy = live.policy()
    escs = []
    for i in range(7):
        policy = other_policy if i % 3 == 0 else "refunds.large"
        escs.append(live.create(admin_key, agentId=agent, runId=f"{agent}-run-{i % 2}", policy=policy))
    live.api.post(f"/escalations/{escs[1]['id']}/acknowledge", token=admin_key)
    live.api.post(f"/escalations/{escs[2]['id']}/decide", token=admin_key, json_body={"choice": "approve"})
    live.api.post(f"/escalations/{escs[3]['id']}/cancel", token=admin_key)
    return agent, other_policy, [e["id"] for e in escs]


def ids(live, token, **query) -> list[str]:
    resp = live.api.get("/escalations", token=token, query=query)
    assert resp.status == 200, resp.body
    return [e["id"] for e in resp.json()["data"]]


def test_list_shape_is_data_and_next_cursor(live, admin_key, batch):
    body = live.api.get("/escalations", token=admin_key, query={"agentId": batch[0]}).json()
    assert set(body) == {"data", "nextCursor"} and body["nextCursor"] is None
    assert all(e["agentId"] == batch[0] for e in body["data"])


def test_list_is_newest_first(live, admin_key, batch):
    assert ids(live, admin_key, agentId=batch[0]) == batch[2][::-1]


def test_order_asc_is_oldest_first(live, admin_key, batch):
    assert ids(live, admin_key, agentId=batch[0], order="asc") == batch[2]


@pytest.mark.parametrize(("status", "index"), [("acknowledged", [1]), ("resolved", [2]), ("cancelled", [3]), ("open", [6, 5, 4, 0])])
def test_status_filter(live, admin_key, batch, status, index):
    assert ids(live, admin_key, agentId=batch[0], status=status) == [batch[2][i] for i in index]


def test_policy_filter(live, admin_key, batch):
    assert ids(live, admin_key, agentId=batch[0], policy=batch[1]) == [batch[2][i] for i in (6, 3, 0)]


def test_run_id_filter(live, admin_key, batch):
    assert ids(live, admin_key, runId=f"{batch[0]}-run-1") == [batch[2][i] for i in (5, 3, 1)]


def test_agent_id_filter_excludes_other_agents(live, admin_key, batch):
    live.create(admin_key, agentId=unique("someone-else"))
    assert set(ids(live, admin_key, agentId=batch[0])) == set(batch[2])


def test_filters_combine(live, admin_key, batch):
    assert ids(live, admin_key, agentId=batch[0], policy="refunds.large", status="open") == [batch[2][i] for i in (5, 4)]


@pytest.mark.parametrize("order", ["desc", "asc"])
@pytest.mark.parametrize("limit", [1, 2, 3, 7])
def test_cursor_pagination_has_no_duplicates_or_gaps(live, admin_key, batch, order, limit):
    seen, cursor, pages = [], None, 0
    while True:
        body = live.api.get(
            "/escalations", token=admin_key, query={"agentId": batch[0], "limit": limit, "cursor": cursor, "order": order}
        ).json()
        assert len(body["data"]) <= limit
        seen += [e["id"] for e in body["data"]]
        pages += 1
        cursor = body["nextCursor"]
        if cursor is None:
            break
        assert pages < 20
    assert seen == (batch[2] if order == "asc" else batch[2][::-1])
    assert pages >= -(-7 // limit)


def test_cursor_keeps_the_filter(live, admin_key, batch):
    first = live.api.get("/escalations", token=admin_key, query={"agentId": batch[0], "status": "open", "limit": 2}).json()
    rest = live.api.get(
        "/escalations", token=admin_key, query={"agentId": batch[0], "status": "open", "limit": 2, "cursor": first["nextCursor"]}
    ).json()
    assert [e["id"] for e in first["data"] + rest["data"]] == [batch[2][i] for i in (6, 5, 4, 0)]


def test_escalations_created_after_the_first_page_do_not_shift_the_next(live, admin_key):
    agent = unique("shift")
    made = [live.create(admin_key, agentId=agent)["id"] for _ in range(4)]
    first = live.api.get("/escalations", token=admin_key, query={"agentId": agent, "limit": 2}).json()
    live.create(admin_key, agentId=agent)
    second = live.api.get(
        "/escalations", token=admin_key, query={"agentId": agent, "limit": 2, "cursor": first["nextCursor"]}
    ).json()
    assert [e["id"] for e in first["data"] + second["data"]] == made[::-1]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"status": "pending"}, "status"), ({"limit": "0"}, "limit"), ({"limit": "abc"}, "limit"), ({"limit": "100000"}, "limit"),
        ({"order": "up"}, "order"),
    ],
)
def test_bad_query_is_422_naming_the_parameter(live, admin_key, query, field):
    problem = live.api.get("/escalations", token=admin_key, query=query).problem(422, "validation_failed")
    assert problem["errors"][0]["field"] == field


@pytest.mark.parametrize("cursor", ["%%%not-a-cursor", "zzz", "aaa", "esc_01", "esc_01M8J91FZ6BMJWMNM1D2ZY7V6I"])
def test_a_cursor_no_page_gave_is_422_not_a_wrong_page(live, admin_key, batch, cursor):
    # Compared as text, "zzz" listed every escalation again and "aaa" none, both as a normal page.
    problem = live.api.get("/escalations", token=admin_key, query={"cursor": cursor}).problem(422, "validation_failed")
    assert problem["errors"] == [{"field": "cursor", "message": "must be a nextCursor of an earlier page"}]


@pytest.mark.parametrize("name", ["status", "policy", "agentId", "runId", "limit", "cursor", "order"])
def test_a_repeated_filter_is_422_not_read_as_its_first_value(live, admin_key, name):
    value = {"status": "open", "limit": "5", "order": "asc", "cursor": "esc_" + "0" * 26}.get(name, "x")
    problem = live.api.get(f"/escalations?{name}={value}&{name}={value}", token=admin_key).problem(422, "validation_failed")
    assert problem["errors"] == [{"field": name, "message": "must be given at most once"}]


def test_a_repeated_wait_timeout_is_422(live, admin_key):
    esc = live.create(admin_key)
    problem = live.api.get(f"/escalations/{esc['id']}/wait?timeout=0&timeout=0", token=admin_key).problem(422, "validation_failed")
    assert problem["errors"][0]["field"] == "timeout"
