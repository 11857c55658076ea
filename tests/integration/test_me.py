"""CONTRACT §14: ``GET /me`` says who a token is and what it may do, for any
valid token and without a scope (the MCP server lists its tools from it)."""

from __future__ import annotations

from escalated.domain import scopes
from escalated.domain.scopes import ALL_SCOPES


def test_me_names_an_api_key_its_workspace_and_its_scopes(live, api):
    workspace = live.workspace()
    key = live.key(scopes.WRITE, scopes.READ, workspace=workspace, name="agent-7")
    resp = api.get("/me", token=key)
    assert resp.status == 200 and resp.content_type == "application/json"
    assert resp.json() == {"kind": "key", "name": "agent-7", "workspace": workspace, "scopes": sorted([scopes.WRITE, scopes.READ])}


def test_me_of_an_unnamed_key_is_its_id(live, api):
    key = live.key(scopes.READ)
    assert api.get("/me", token=key).json()["name"] == live.key_id(key)


def test_me_of_a_reviewer_token_has_the_roles_scopes(live, api):
    token = live.user("rita-me")
    assert api.get("/me", token=token).json() == {
        "kind": "user",
        "name": "rita-me",
        "workspace": "default",
        "scopes": sorted([scopes.READ, scopes.ACKNOWLEDGE, scopes.DECIDE, scopes.CANCEL]),
    }


def test_me_needs_no_scope(live, api):
    key = live.key(scopes.CANCEL)  # no read scope: /me answers all the same
    assert api.get("/me", token=key).json()["scopes"] == [scopes.CANCEL]


def test_me_without_a_valid_token_is_401(api):
    resp = api.get("/me")
    resp.problem(401, "unauthenticated")
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    api.get("/me", token="ain_live_" + "x" * 40).problem(401, "unauthenticated")


def test_me_is_in_openapi(api):
    doc = api.get("/openapi.json").json()
    assert "get" in doc["paths"]["/me"]
    assert doc["components"]["schemas"]["Me"]["properties"]["scopes"]["items"]["enum"] == list(ALL_SCOPES)
