"""CONTRACT §2: tokens and scopes. 401 before 403; each route needs its one scope."""

from __future__ import annotations

import pytest

from escalated.domain import scopes
from escalated.domain.scopes import ALL_SCOPES
from escalated.timeutil import now_ms
from tests.support.api import escalation_body

# route name -> (scope it needs, how to call it on a fresh open escalation)
ROUTES = {
    "create": scopes.WRITE,
    "list+get": scopes.READ,
    "acknowledge": scopes.ACKNOWLEDGE,
    "decide": scopes.DECIDE,
    "cancel": scopes.CANCEL,
}


def call(api, route: str, token: str, esc_id: str) -> list:
    """The route's request(s); ``list+get`` makes both calls."""
    if route == "create":
        return [api.post("/escalations", token=token, json_body=escalation_body())]
    if route == "list+get":
        return [api.get("/escalations", token=token), api.get(f"/escalations/{esc_id}", token=token)]
    if route == "acknowledge":
        return [api.post(f"/escalations/{esc_id}/acknowledge", token=token)]
    if route == "decide":
        return [api.post(f"/escalations/{esc_id}/decide", token=token, json_body={"choice": "approve"})]
    return [api.post(f"/escalations/{esc_id}/cancel", token=token, json_body={"reason": "test"})]


@pytest.fixture(scope="module")
def single_scope_keys(live) -> dict[str, str]:
    return {scope: live.key(scope, name=f"only-{scope}") for scope in ALL_SCOPES}


@pytest.mark.parametrize("scope", ALL_SCOPES)
@pytest.mark.parametrize("route", list(ROUTES))
def test_single_scope_key_may_use_only_the_route_of_its_scope(live, admin_key, single_scope_keys, route, scope):
    esc = live.create(admin_key)
    responses = call(live.api, route, single_scope_keys[scope], esc["id"])
    needed = ROUTES[route]
    for resp in responses:
        if scope == needed:
            assert resp.status in (200, 201), resp.body
        else:
            problem = resp.problem(403, "insufficient_scope")
            assert needed in problem["detail"] and problem["scope"] == needed  # named in words and as a member
    if scope != needed:  # nothing happened
        assert live.api.get(f"/escalations/{esc['id']}", token=admin_key).json()["status"] == "open"


# The table's other routes: (method, path) -> the one scope that passes the scope check.
MORE_ROUTES = {
    ("GET", "/escalations/{id}/wait?timeout=0"): scopes.READ,
    ("GET", "/escalations/{id}/deliveries"): scopes.READ,
    ("POST", "/escalations/{id}/deliveries/retry"): scopes.DECIDE,
}


@pytest.mark.parametrize(("method", "path"), list(MORE_ROUTES))
def test_wait_deliveries_and_redeliver_need_their_scope(live, admin_key, single_scope_keys, method, path):
    esc = live.create(admin_key)
    url = path.format(id=esc["id"])
    needed = MORE_ROUTES[(method, path)]
    for scope, key in single_scope_keys.items():
        resp = live.api.request(method, url, token=key)
        if scope == needed:  # past the scope check (redeliver: no callback to queue is not a 403)
            assert resp.status != 403, resp.body
        else:
            problem = resp.problem(403, "insufficient_scope")
            assert needed in problem["detail"] and problem["scope"] == needed


def test_a_key_with_no_expiry_and_all_scopes_can_do_everything(live, admin_key):
    esc = live.create(admin_key)
    assert live.api.post(f"/escalations/{esc['id']}/acknowledge", token=admin_key).status == 200
    assert live.api.post(f"/escalations/{esc['id']}/decide", token=admin_key, json_body={"choice": "deny"}).status == 200


def assert_401(resp) -> None:
    resp.problem(401, "unauthenticated")
    assert resp.headers.get("WWW-Authenticate", "").startswith("Bearer")


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "ain_live_0123456789abcdefghijABCDEFGHIJ012345",
        "Bearer not-a-token",
        "Bearer ain_live_short",
        "Bearer ain_test_0123456789abcdefghijABCDEFGHIJ012345",
    ],
    ids=["missing", "empty", "scheme-only", "scheme-space", "basic", "no-scheme", "garbage", "short", "wrong-prefix"],
)
def test_missing_or_malformed_token_is_401_with_www_authenticate(api, header):
    headers = {} if header is None else {"Authorization": header}
    assert_401(api.get("/escalations", headers=headers))


def test_well_formed_but_unknown_api_key_is_401(api):
    from escalated.domain import tokens

    assert_401(api.get("/escalations", token=tokens.mint(tokens.API_KEY_PREFIX)))


def test_well_formed_but_unknown_user_token_is_401(api):
    from escalated.domain import tokens

    assert_401(api.get("/escalations", token=tokens.mint(tokens.USER_TOKEN_PREFIX)))


def test_key_with_a_corrupted_character_is_401(live, api):
    key = live.key()
    corrupted = key[:-1] + ("A" if key[-1] != "A" else "B")
    assert_401(api.get("/escalations", token=corrupted))


def test_revoked_key_is_401_on_every_route(live, admin_key):
    key = live.key()
    esc = live.create(admin_key)
    assert live.api.get("/escalations", token=key).status == 200
    live.api.delete(f"/api-keys/{live.key_id(key)}", token=admin_key)
    for route in ROUTES:
        for resp in call(live.api, route, key, esc["id"]):
            assert_401(resp)


def test_expired_key_is_401(live, api):
    key = live.key(expires_ms=now_ms() - 1)
    assert_401(api.get("/escalations", token=key))


def test_key_before_its_expiry_works(live, api):
    key = live.key(expires_ms=now_ms() + 3_600_000)
    assert api.get("/escalations", token=key).status == 200


def test_bearer_scheme_is_case_insensitive(live, api, admin_key):
    assert api.get("/escalations", headers={"Authorization": f"bearer {admin_key}"}).status == 200


@pytest.mark.parametrize("scheme", ["Basic", "Token", "Bearer:", "Bearerx"])
def test_a_valid_key_under_another_scheme_is_401(api, admin_key, scheme):
    """Only ``Authorization: Bearer <token>`` carries a token: a real key sent
    under another scheme is refused, not read past its scheme."""
    assert_401(api.get("/escalations", headers={"Authorization": f"{scheme} {admin_key}"}))


def test_401_comes_before_403(live, api):
    """An unknown token on a route it could never use is still 401, not 403."""
    assert_401(api.post("/escalations", headers={"Authorization": "Bearer nope"}, json_body=escalation_body()))


def test_reviewer_user_token_has_every_scope_but_write(live, admin_key):
    token = live.user("scope-reviewer")
    live.api.post("/escalations", token=token, json_body=escalation_body()).problem(403, "insufficient_scope")
    esc = live.create(admin_key)
    assert live.api.get(f"/escalations/{esc['id']}", token=token).status == 200
    assert live.api.post(f"/escalations/{esc['id']}/acknowledge", token=token).status == 200
    assert live.api.post(f"/escalations/{esc['id']}/decide", token=token, json_body={"choice": "approve"}).status == 200
    other = live.create(admin_key)
    assert live.api.post(f"/escalations/{other['id']}/cancel", token=token).status == 200


def test_admin_user_token_can_create(live):
    token = live.user("scope-admin", role="admin")
    resp = live.api.post("/escalations", token=token, json_body=escalation_body())
    assert resp.status == 201
    assert resp.json()["history"][0]["by"] == "scope-admin"
