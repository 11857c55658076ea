"""CONTRACT §7 and the order of checks: 401 → 403 → 404 → 400/413/415 → 409 → 422."""

from __future__ import annotations

import pytest

from escalated.domain import scopes
from tests.support.api import escalation_body

UNKNOWN = "esc_01JD0000000000000000000000"
LIMIT = 256 * 1024


def test_problem_json_has_the_pinned_shape(api, admin_key):
    resp = api.post("/escalations", token=admin_key, json_body=escalation_body(choices=[], agentId=...))
    assert resp.status == 422
    assert resp.headers["Content-Type"].startswith("application/problem+json")
    body = resp.json()
    assert body == {
        "type": "urn:escalated:error:validation_failed",
        "title": "Validation failed",
        "status": 422,
        "detail": "2 problems",
        "code": "validation_failed",
        "errors": body["errors"],
    }
    assert sorted(e["field"] for e in body["errors"]) == ["agentId", "choices"]
    assert all(set(e) == {"field", "message"} for e in body["errors"])


@pytest.mark.parametrize(
    ("status", "code", "make"),
    [
        (400, "invalid_json", lambda api, k: api.post("/escalations", token=k, body=b"{", headers={"Content-Type": "application/json"})),
        (401, "unauthenticated", lambda api, k: api.get("/escalations")),
        (403, "insufficient_scope", lambda api, k: api.get("/api-keys", token=k)),
        (404, "not_found", lambda api, k: api.get(f"/escalations/{UNKNOWN}", token=k)),
        (405, "method_not_allowed", lambda api, k: api.request("PUT", "/escalations", token=k)),
        (415, "unsupported_media_type", lambda api, k: api.post("/escalations", token=k, body=b"{}", headers={"Content-Type": "text/plain"})),
    ],
    ids=["400", "401", "403", "404", "405", "415"],
)
def test_every_error_is_problem_json_with_type_title_status_detail_code(live, api, status, code, make):
    key = live.key(scopes.READ, scopes.WRITE) if status != 403 else live.user("errors-reviewer")
    resp = make(api, key)
    body = resp.problem(status, code)
    assert body["type"] == f"urn:escalated:error:{code}" and body["status"] == status
    assert isinstance(body["title"], str) and body["title"]
    assert isinstance(body["detail"], str) and body["detail"]


def test_403_names_the_missing_scope(live, api):
    problem = api.get("/escalations", token=live.key(scopes.WRITE)).problem(403, "insufficient_scope")
    assert scopes.READ in problem["detail"]


# -- body syntax ---------------------------------------------------------------

JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize("raw", [b"not json", b"{", b"[1, 2]", b'"string"', b"42", b"null", b"\xff\xfe"])
def test_body_that_is_not_a_json_object_is_400(api, admin_key, raw):
    api.post("/escalations", token=admin_key, body=raw, headers=JSON).problem(400, "invalid_json")


@pytest.mark.parametrize("charset", ["", "; charset=latin-1"])
def test_a_body_that_is_not_utf8_is_400_saying_so(api, admin_key, charset):
    raw = '{"policy": "refunds.large", "question": "Caf\u00e9?"}'.encode("latin-1")
    problem = api.post("/escalations", token=admin_key, body=raw, headers={"Content-Type": "application/json" + charset}).problem(
        400, "invalid_json"
    )
    assert problem["detail"].startswith("body is not UTF-8 (byte 44 is 0xe9)"), problem


def test_empty_body_on_create_is_400(api, admin_key):
    api.post("/escalations", token=admin_key, body=b"", headers=JSON).problem(400, "invalid_json")


def test_body_without_content_type_is_415(api, admin_key):
    api.post("/escalations", token=admin_key, body=b"{}").problem(415, "unsupported_media_type")


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"])
def test_body_with_another_content_type_is_415(api, admin_key, ctype):
    body = b'{"policy": "refunds.large"}'
    api.post("/escalations", token=admin_key, body=body, headers={"Content-Type": ctype}).problem(
        415, "unsupported_media_type"
    )


def test_json_with_charset_parameter_is_accepted(api, admin_key):
    import json

    resp = api.post(
        "/escalations",
        token=admin_key,
        body=json.dumps(escalation_body()).encode(),
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert resp.status == 201


def oversized_body() -> bytes:
    return b'{"question": "' + b"x" * (LIMIT + 10) + b'"}'


def test_body_over_256_kib_is_413(api, admin_key):
    api.post("/escalations", token=admin_key, body=oversized_body(), headers=JSON).problem(413, "payload_too_large")


def test_chunked_body_over_256_kib_is_413(api, admin_key):
    raw = oversized_body()
    chunks = (raw[i : i + 16384] for i in range(0, len(raw), 16384))
    resp = api.post("/escalations", token=admin_key, body=chunks, headers=JSON, chunked=True)
    resp.problem(413, "payload_too_large")


def test_chunked_body_under_the_limit_is_accepted(api, admin_key):
    import json

    raw = json.dumps(escalation_body()).encode()
    resp = api.post("/escalations", token=admin_key, body=iter([raw[:10], raw[10:]]), headers=JSON, chunked=True)
    assert resp.status == 201


def test_body_just_under_256_kib_is_not_413(api, admin_key):
    import json

    body = escalation_body(evidence=["x" * 9000] * 28)
    raw = json.dumps(body).encode()
    assert len(raw) < LIMIT
    assert api.post("/escalations", token=admin_key, body=raw, headers=JSON).status != 413


# -- routing errors ------------------------------------------------------------


@pytest.mark.parametrize("path", ["/nope", "/escalations/x/y/z", "/api-keys/a/b", "/app.json"])
def test_unknown_route_is_404_problem_json(api, path):
    api.get(path).problem(404, "not_found")


def test_the_root_leads_to_the_web_app(api):
    resp = api.get("/")
    assert resp.status == 302 and resp.headers["Location"] == "/app/"


@pytest.mark.parametrize(
    ("method", "path"),
    [("PUT", "/escalations"), ("DELETE", "/escalations/esc_x"), ("GET", "/escalations/esc_x/decide"), ("POST", "/healthz"), ("PATCH", "/api-keys")],
)
def test_wrong_method_is_405_problem_json_with_allow(api, admin_key, method, path):
    resp = api.request(method, path, token=admin_key)
    resp.problem(405, "method_not_allowed")
    assert resp.headers.get("Allow")


# -- order of checks -----------------------------------------------------------


def test_bad_token_comes_before_a_bad_body(api):
    api.post("/escalations", body=b"nope", headers={"Authorization": "Bearer x"}).problem(401, "unauthenticated")


def test_missing_scope_comes_before_a_bad_body(live, api):
    api.post("/escalations", token=live.key(scopes.READ), body=b"nope", headers=JSON).problem(403, "insufficient_scope")


def test_missing_scope_comes_before_an_unknown_id(live, api):
    api.post(f"/escalations/{UNKNOWN}/decide", token=live.key(scopes.READ), json_body={"choice": "a"}).problem(
        403, "insufficient_scope"
    )


@pytest.mark.parametrize("action", ["decide", "cancel", "acknowledge"])
def test_invalid_json_on_an_unknown_id_is_404(api, admin_key, action):
    api.post(f"/escalations/{UNKNOWN}/{action}", token=admin_key, body=b"{oops", headers=JSON).problem(404, "not_found")


def test_oversized_body_on_an_unknown_id_is_404(api, admin_key):
    api.post(f"/escalations/{UNKNOWN}/decide", token=admin_key, body=oversized_body(), headers=JSON).problem(
        404, "not_found"
    )


def test_wrong_content_type_on_an_unknown_id_is_404(api, admin_key):
    api.post(f"/escalations/{UNKNOWN}/decide", token=admin_key, body=b"{}", headers={"Content-Type": "text/plain"}).problem(
        404, "not_found"
    )


def test_invalid_json_on_another_workspaces_escalation_is_404(live, api, admin_key):
    ws = live.workspace()
    esc = live.create(admin_key)
    api.post(f"/escalations/{esc['id']}/decide", token=live.key(workspace=ws), body=b"{", headers=JSON).problem(
        404, "not_found"
    )


@pytest.fixture
def resolved(live, api, admin_key) -> str:
    esc = live.create(admin_key)
    assert api.post(f"/escalations/{esc['id']}/decide", token=admin_key, json_body={"choice": "approve"}).status == 200
    return esc["id"]


@pytest.mark.parametrize("action", ["decide", "cancel", "acknowledge"])
def test_invalid_json_on_a_resolved_escalation_is_400(api, admin_key, resolved, action):
    api.post(f"/escalations/{resolved}/{action}", token=admin_key, body=b"{oops", headers=JSON).problem(400, "invalid_json")


def test_wrong_content_type_on_a_resolved_escalation_is_415(api, admin_key, resolved):
    api.post(f"/escalations/{resolved}/decide", token=admin_key, body=b"{}", headers={"Content-Type": "text/plain"}).problem(
        415, "unsupported_media_type"
    )


def test_oversized_body_on_a_resolved_escalation_is_413(api, admin_key, resolved):
    api.post(f"/escalations/{resolved}/decide", token=admin_key, body=oversized_body(), headers=JSON).problem(
        413, "payload_too_large"
    )


def test_bad_choice_on_a_resolved_escalation_is_409(api, admin_key, resolved):
    api.post(f"/escalations/{resolved}/decide", token=admin_key, json_body={"choice": "not-offered"}).problem(
        409, "invalid_state"
    )


def test_unknown_field_on_a_cancelled_escalation_is_409(live, api, admin_key):
    esc = live.create(admin_key)
    api.post(f"/escalations/{esc['id']}/cancel", token=admin_key)
    api.post(f"/escalations/{esc['id']}/cancel", token=admin_key, json_body={"bogus": 1}).problem(409, "invalid_state")


def test_unrouted_user_gets_404_before_body_errors(live, api, admin_key):
    token = live.user("order-outsider")
    esc = live.create(admin_key, policy=live.policy(reviewers=("somebody-else",)))
    api.post(f"/escalations/{esc['id']}/decide", token=token, body=b"{", headers=JSON).problem(404, "not_found")


def test_error_bodies_never_carry_a_stack_trace(api, admin_key):
    for resp in (
        api.post("/escalations", token=admin_key, body=b"{", headers=JSON),
        api.post("/escalations", token=admin_key, json_body={"policy": {"deep": [1, {"x": None}]}}),
    ):
        assert b"Traceback" not in resp.body and b'File "' not in resp.body


@pytest.mark.only_on("sqlite", reason="SQLite's database-wide write lock; the twin below holds a table lock on PostgreSQL")
def test_a_write_lock_held_elsewhere_too_long_is_503_busy_with_retry_after(live, api, admin_key, monkeypatch):
    import sqlite3

    from escalated.store.sqlite import db as dbmod

    monkeypatch.setattr(dbmod, "BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(str(live.db), isolation_level=None, timeout=0)
    holder.execute("BEGIN IMMEDIATE")  # another process, say a stuck sqlite3 shell
    try:
        resp = api.post("/escalations", token=admin_key, json_body=escalation_body())
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    body = resp.problem(503, "busy")
    assert resp.headers["Retry-After"] == "1"
    assert "write lock" in body["detail"] and "Traceback" not in resp.body.decode()
    assert api.post("/escalations", token=admin_key, json_body=escalation_body()).status == 201


@pytest.mark.only_on("postgres", reason="the twin of the SQLite write-lock test: a lock another session holds")
def test_a_table_lock_held_elsewhere_too_long_is_503_busy_with_retry_after(live, api, admin_key, monkeypatch):
    """Found running this suite on PostgreSQL: a write waited for the lock
    for as long as the other session lived, and every write of the replica
    (one writer connection) queued behind it."""
    import psycopg

    from escalated.store.postgres import writer

    monkeypatch.setattr(writer, "LOCK_TIMEOUT_S", 0.2)
    with psycopg.connect(live.db) as holder:  # another session, say a stuck psql shell
        holder.execute("LOCK TABLE escalations IN EXCLUSIVE MODE")
        resp = api.post("/escalations", token=admin_key, json_body=escalation_body())
    body = resp.problem(503, "busy")
    assert resp.headers["Retry-After"] == "1"
    assert "lock" in body["detail"] and "Traceback" not in resp.body.decode()
    assert api.post("/escalations", token=admin_key, json_body=escalation_body()).status == 201
