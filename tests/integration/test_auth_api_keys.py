"""CONTRACT §2: /api-keys. No call can mint or revoke more power than it has."""

from __future__ import annotations

import pytest

import re

from escalated.domain import scopes
from escalated.domain.nul import NUL_MESSAGE
from escalated.domain.scopes import ALL_SCOPES
from escalated.timeutil import parse_timestamp_ms

TS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


def test_post_api_keys_issues_a_working_key_shown_once(live, api, admin_key):
    resp = api.post("/api-keys", token=admin_key, json_body={"name": "narrow", "scopes": [scopes.READ]})
    assert resp.status == 201
    body = resp.json()
    assert set(body) >= {"id", "key", "name", "scopes", "createdAt", "expiresAt"}
    assert body["id"].startswith("key_") and body["key"].startswith("ain_live_")
    assert body["name"] == "narrow" and body["scopes"] == [scopes.READ] and body["expiresAt"] is None
    assert TS.match(body["createdAt"])
    assert api.get("/escalations", token=body["key"]).status == 200
    api.post("/escalations", token=body["key"], json_body={}).problem(403, "insufficient_scope")


def test_post_api_keys_without_scopes_gets_the_callers_own(live, api):
    caller = live.key(scopes.READ, scopes.DECIDE)
    body = api.post("/api-keys", token=caller, json_body={}).json()
    assert sorted(body["scopes"]) == sorted([scopes.READ, scopes.DECIDE])


def test_post_api_keys_with_an_empty_body_is_allowed(live, api):
    caller = live.key(scopes.READ)
    resp = api.post("/api-keys", token=caller)
    assert resp.status == 201 and resp.json()["scopes"] == [scopes.READ]


def test_post_api_keys_asking_for_more_scopes_than_the_caller_has_is_403(live, api):
    caller = live.key(scopes.READ, scopes.ACKNOWLEDGE)
    problem = api.post("/api-keys", token=caller, json_body={"scopes": [scopes.READ, scopes.DECIDE]}).problem(
        403, "insufficient_scope"
    )
    assert scopes.DECIDE in problem["detail"]


def test_post_api_keys_with_a_subset_of_scopes_succeeds(live, api):
    caller = live.key(scopes.READ, scopes.ACKNOWLEDGE, scopes.CANCEL)
    resp = api.post("/api-keys", token=caller, json_body={"scopes": [scopes.CANCEL]})
    assert resp.status == 201 and resp.json()["scopes"] == [scopes.CANCEL]


def test_post_api_keys_with_an_unknown_scope_is_422(api, admin_key):
    problem = api.post("/api-keys", token=admin_key, json_body={"scopes": ["escalations:everything"]}).problem(
        422, "validation_failed"
    )
    assert problem["errors"][0]["field"] == "scopes[0]"


def test_post_api_keys_with_a_name_holding_nul_is_422_saying_so(api, admin_key):
    problem = api.post("/api-keys", token=admin_key, json_body={"name": "k\x00"}).problem(422, "validation_failed")
    assert problem["errors"] == [{"field": "name", "message": NUL_MESSAGE}]


@pytest.mark.parametrize("name", ["ci\nbot", "ci\tbot", "   "])
def test_post_api_keys_with_an_empty_or_unprintable_name_is_422(api, admin_key, name):
    problem = api.post("/api-keys", token=admin_key, json_body={"name": name}).problem(422, "validation_failed")
    assert problem["errors"] == [{"field": "name", "message": "must be a non-empty string of at most 200 characters, no control characters"}]


def test_post_api_keys_expires_in_sets_expires_at(api, admin_key):
    body = api.post("/api-keys", token=admin_key, json_body={"expiresIn": "2h"}).json()
    delta_ms = parse_timestamp_ms(body["expiresAt"]) - parse_timestamp_ms(body["createdAt"])
    assert abs(delta_ms - 2 * 3600 * 1000) < 5_000


def test_post_api_keys_with_a_bad_duration_is_422(api, admin_key):
    problem = api.post("/api-keys", token=admin_key, json_body={"expiresIn": "soon"}).problem(422, "validation_failed")
    assert problem["errors"][0]["field"] == "expiresIn"


def test_get_api_keys_lists_the_workspace_keys_without_secrets(live, api):
    ws = live.workspace()
    caller = live.key(workspace=ws, name="lister")
    issued = api.post("/api-keys", token=caller, json_body={"name": "second"}).json()
    resp = api.get("/api-keys", token=caller)
    assert resp.status == 200
    keys = resp.json()["data"]
    assert {k["name"] for k in keys} == {"lister", "second"}
    assert issued["key"].encode() not in resp.body and caller.encode() not in resp.body
    assert all("key" not in k and "tokenHash" not in k for k in keys)


def test_delete_api_key_revokes_it(live, api):
    caller = live.key()
    target = api.post("/api-keys", token=caller, json_body={"scopes": [scopes.READ]}).json()
    assert api.delete(f"/api-keys/{target['id']}", token=caller).status == 204
    api.get("/escalations", token=target["key"]).problem(401, "unauthenticated")


def test_delete_api_key_with_scopes_the_caller_lacks_is_403(live, api):
    target = live.key()  # all five
    caller = live.key(scopes.READ, scopes.WRITE)
    api.delete(f"/api-keys/{live.key_id(target)}", token=caller).problem(403, "insufficient_scope")
    assert api.get("/escalations", token=target).status == 200


def test_delete_api_key_whose_scopes_are_a_subset_succeeds(live, api):
    target = live.key(scopes.READ)
    caller = live.key(scopes.READ, scopes.WRITE)
    assert api.delete(f"/api-keys/{live.key_id(target)}", token=caller).status == 204


def test_delete_unknown_api_key_is_404(api, admin_key):
    api.delete("/api-keys/key_01JD0000000000000000000000", token=admin_key).problem(404, "not_found")


def test_delete_api_key_of_another_workspace_is_404(live, api, admin_key):
    ws = live.workspace()
    other = live.key(workspace=ws)
    api.delete(f"/api-keys/{live.key_id(other)}", token=admin_key).problem(404, "not_found")
    assert api.get("/escalations", token=other).status == 200


def test_reviewer_user_token_gets_403_on_every_api_keys_route(live, api, admin_key):
    token = live.user("keys-reviewer")
    api.post("/api-keys", token=token, json_body={"scopes": [scopes.READ]}).problem(403, "insufficient_scope")
    api.get("/api-keys", token=token).problem(403, "insufficient_scope")
    api.delete(f"/api-keys/{live.key_id(admin_key)}", token=token).problem(403, "insufficient_scope")


def test_admin_user_token_may_manage_api_keys(live, api):
    token = live.user("keys-admin", role="admin")
    issued = api.post("/api-keys", token=token, json_body={"scopes": list(ALL_SCOPES)})
    assert issued.status == 201
    assert api.get("/api-keys", token=token).status == 200
    assert api.delete(f"/api-keys/{issued.json()['id']}", token=token).status == 204


def test_api_keys_without_a_token_is_401(api):
    resp = api.get("/api-keys")
    resp.problem(401, "unauthenticated")
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")


def test_post_api_keys_with_an_absurd_expiry_is_422_and_issues_nothing(live, api):
    ws = live.workspace()
    caller = live.key(workspace=ws)
    problem = api.post("/api-keys", token=caller, json_body={"expiresIn": "99999999999d"}).problem(422, "validation_failed")
    assert problem["errors"][0]["field"] == "expiresIn"
    assert len(api.get("/api-keys", token=caller).json()["data"]) == 1


def test_validation_detail_counts_problems_in_the_singular(api, admin_key):
    assert api.post("/api-keys", token=admin_key, json_body={"bogus": 1}).json()["detail"] == "1 problem"
