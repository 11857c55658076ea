"""CONTRACT §3: Idempotency-Key on create. No retry makes a second escalation."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.conftest import fresh_db
from tests.integration.conftest import LiveServer
from tests.support.api import escalation_body, unique


def create(api, token, body, key):
    return api.post("/escalations", token=token, json_body=body, headers={"Idempotency-Key": key})


def count_run(api, token, run_id) -> int:
    return len(api.get("/escalations", token=token, query={"runId": run_id}).json()["data"])


def test_repeat_with_same_key_and_body_replays_the_original(api, admin_key):
    body, key = escalation_body(), unique("idem")
    first = create(api, admin_key, body, key)
    second = create(api, admin_key, body, key)
    assert first.status == second.status == 201
    assert second.json() == first.json()
    assert second.headers["Idempotent-Replayed"] == "true"
    assert second.headers["Location"] == first.headers["Location"]
    assert count_run(api, admin_key, body["runId"]) == 1


def test_first_create_is_not_marked_replayed(api, admin_key):
    resp = create(api, admin_key, escalation_body(), unique("idem"))
    assert "Idempotent-Replayed" not in resp.headers


def test_replay_returns_the_original_even_after_a_state_change(api, admin_key):
    body, key = escalation_body(), unique("idem")
    first = create(api, admin_key, body, key).json()
    api.post(f"/escalations/{first['id']}/acknowledge", token=admin_key)
    again = create(api, admin_key, body, key)
    assert again.json() == first and again.json()["status"] == "open"


def test_same_key_with_a_different_body_is_422(api, admin_key):
    body, key = escalation_body(), unique("idem")
    create(api, admin_key, body, key)
    create(api, admin_key, {**body, "question": "Something else?"}, key).problem(422, "idempotency_key_reused")
    assert count_run(api, admin_key, body["runId"]) == 1


def test_same_body_with_keys_in_a_different_order_is_the_same_body(api, admin_key):
    body, key = escalation_body(), unique("idem")
    first = create(api, admin_key, body, key)
    reordered = dict(reversed(list(body.items())))
    assert create(api, admin_key, reordered, key).json()["id"] == first.json()["id"]


def test_without_a_key_each_create_is_new(api, admin_key):
    body = escalation_body()
    a = api.post("/escalations", token=admin_key, json_body=body).json()
    b = api.post("/escalations", token=admin_key, json_body=body).json()
    assert a["id"] != b["id"]


def test_different_keys_make_different_escalations(api, admin_key):
    body = escalation_body()
    a = create(api, admin_key, body, unique("k")).json()
    b = create(api, admin_key, body, unique("k")).json()
    assert a["id"] != b["id"]


def test_keys_are_scoped_to_the_workspace(live, api, admin_key):
    ws = live.workspace()
    live.policy("refunds.large", workspace=ws)
    other_key = live.key(workspace=ws)
    body, key = escalation_body(), unique("idem")
    a = create(api, admin_key, body, key)
    b = create(api, other_key, body, key)
    assert a.status == b.status == 201
    assert a.json()["id"] != b.json()["id"]
    assert "Idempotent-Replayed" not in b.headers


def test_two_keys_of_one_workspace_share_idempotency(live, api, admin_key):
    body, key = escalation_body(), unique("idem")
    first = create(api, admin_key, body, key).json()
    assert create(api, live.key(), body, key).json()["id"] == first["id"]


def test_a_failed_create_is_not_remembered(live, api, admin_key):
    key = unique("idem")
    create(api, admin_key, escalation_body(policy="not.yet"), key).problem(422, "unknown_policy")
    live.policy("not.yet")
    assert create(api, admin_key, escalation_body(policy="not.yet"), key).status == 201


def test_idempotency_key_over_255_characters_is_422(api, admin_key):
    create(api, admin_key, escalation_body(), "k" * 256).problem(422, "validation_failed")


def test_idempotency_key_of_255_characters_is_accepted(api, admin_key):
    assert create(api, admin_key, escalation_body(), unique("k").ljust(255, "x")).status == 201


def test_concurrent_identical_creates_with_one_key_make_exactly_one_escalation(api, admin_key):
    body, key = escalation_body(), unique("race")
    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(lambda _: create(api, admin_key, body, key), range(16)))
    assert {r.status for r in responses} == {201}
    assert len({r.json()["id"] for r in responses}) == 1
    assert sum(1 for r in responses if "Idempotent-Replayed" not in r.headers) == 1
    assert count_run(api, admin_key, body["runId"]) == 1


def test_idempotency_key_with_non_ascii_bytes_is_422_not_500(api, admin_key):
    resp = create(api, admin_key, escalation_body(), "clé-é")  # sent as latin-1 bytes by http.client
    problem = resp.problem(422, "validation_failed")
    assert problem["errors"][0]["field"] == "Idempotency-Key"


def test_empty_idempotency_key_is_422(api, admin_key):
    create(api, admin_key, escalation_body(), "").problem(422, "validation_failed")


def test_a_key_is_remembered_for_24_hours_and_then_forgotten(request, fn_backend, tmp_path):
    """On the server's own clock (moved, not waited): a repeat within 24 h
    replays the first create; past 24 h the same key and body make a new one."""
    with fresh_db(request, fn_backend, tmp_path) as db:
        live = LiveServer(db).start()
        try:
            live.policy("refunds.large")
            token, body, key = live.key(name="window"), escalation_body(), unique("window")
            first = create(live.api, token, body, key)
            assert first.status == 201
            live.advance(24 * 3600 - 60)  # a minute before the window ends
            within = create(live.api, token, body, key)
            assert within.headers.get("Idempotent-Replayed") == "true" and within.json()["id"] == first.json()["id"]
            live.advance(120)  # a minute after
            after = create(live.api, token, body, key)
            assert after.status == 201 and "Idempotent-Replayed" not in after.headers
            assert after.json()["id"] != first.json()["id"]
        finally:
            live.stop()
