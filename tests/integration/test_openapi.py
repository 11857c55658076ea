"""CONTRACT §3: /openapi.json is an OpenAPI 3.1 document of exactly the app's routes."""

from __future__ import annotations

import re

import pytest

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}


@pytest.fixture(scope="module")
def document(live) -> dict:
    resp = live.api.get("/openapi.json")
    assert resp.status == 200 and resp.content_type == "application/json"
    return resp.json()


def _is_web_app(path: str) -> bool:
    """The browser app (HTML pages, its assets, ``/`` leading to it) is not part of the JSON API,
    nor are the integrations' routes (Slack's form-encoded, Slack-signed protocol, not ours)."""
    return path in ("/", "/app") or path.startswith(("/app/", "/integrations/"))


def router_operations(app) -> set[tuple[str, str]]:
    ops = set()
    for route in app.router.routes():
        if route.method in ("HEAD", "*"):
            continue
        info = route.resource.get_info()
        path = info.get("path") or info.get("formatter") or info.get("prefix", "")
        if _is_web_app(path):
            continue
        ops.add((re.sub(r"\{(\w+)(:[^}]*)?\}", r"{\1}", path), route.method.lower()))
    assert len(ops) >= 16  # the walk found the routes at all
    return ops


def document_operations(doc: dict) -> set[tuple[str, str]]:
    return {(path, method) for path, item in doc["paths"].items() for method in item if method in HTTP_METHODS}


def test_openapi_is_version_3_1_without_a_token(document):
    assert document["openapi"].startswith("3.1")
    assert document["info"]["title"] and document["info"]["version"]


def test_every_router_route_is_documented(live, document):
    missing = router_operations(live.app) - document_operations(document)
    assert not missing, f"routes not in openapi.json: {sorted(missing)}"


def test_every_documented_operation_exists_in_the_router(live, document):
    extra = document_operations(document) - router_operations(live.app)
    assert not extra, f"openapi.json documents routes the app lacks: {sorted(extra)}"


def test_every_contract_route_is_documented(document):
    contract = {
        ("/escalations", "post"), ("/escalations", "get"), ("/escalations/{id}", "get"),
        ("/escalations/{id}/wait", "get"), ("/escalations/{id}/acknowledge", "post"),
        ("/escalations/{id}/decide", "post"), ("/escalations/{id}/cancel", "post"),
        ("/escalations/{id}/deliveries", "get"), ("/escalations/{id}/deliveries/retry", "post"),
        ("/events", "get"), ("/api-keys", "post"), ("/api-keys", "get"), ("/api-keys/{id}", "delete"),
        ("/healthz", "get"), ("/openapi.json", "get"), ("/metrics", "get"),
    }  # fmt: skip
    assert contract <= document_operations(document)


def test_every_operation_has_responses_and_every_ref_resolves(document):
    schemas = document["components"]["schemas"]
    text = str(document)
    for ref in re.findall(r"#/components/schemas/(\w+)", text):
        assert ref in schemas, ref
    for path, item in document["paths"].items():
        for method, op in item.items():
            if method in HTTP_METHODS:
                assert op["responses"], (path, method)


def test_create_request_schema_names_the_contract_fields(document):
    schemas = document["components"]["schemas"]
    create = next(s for name, s in schemas.items() if name.lower().startswith("create") and "escalation" in name.lower())
    assert set(create["required"]) == {"policy", "agentId", "runId", "subject", "question", "evidence", "choices"}


UNKNOWN = "esc_01JD0000000000000000000000"
JSON = {"Content-Type": "application/json"}


def _observed(live, key) -> list[tuple[str, str, object]]:
    """(documented path, method, response) for requests that reach each error path."""
    api = live.api
    esc = live.create(key)
    done = live.create(key)
    api.post(f"/escalations/{done['id']}/decide", token=key, json_body={"choice": "approve"})
    out = []

    def hit(path, method, resp):
        out.append((path, method, resp))

    for action in ("acknowledge", "decide", "cancel"):
        p = f"/escalations/{{id}}/{action}"
        hit(p, "post", api.post(f"/escalations/{UNKNOWN}/{action}", token=key, json_body={}))
        hit(p, "post", api.post(f"/escalations/{done['id']}/{action}", token=key, body=b"{", headers=JSON))
        hit(p, "post", api.post(f"/escalations/{done['id']}/{action}", token=key, body=b"{}", headers={"Content-Type": "text/plain"}))
        hit(p, "post", api.post(f"/escalations/{done['id']}/{action}", token=key, json_body={}))
        hit(p, "post", api.post(f"/escalations/{UNKNOWN}/{action}", headers={"Authorization": "Bearer x"}))
    hit("/escalations/{id}/decide", "post", api.post(f"/escalations/{esc['id']}/decide", token=key, json_body={"choice": "?"}))
    hit("/escalations", "post", api.post("/escalations", token=key, body=b"[]", headers=JSON))
    hit("/escalations", "post", api.post("/escalations", token=key, json_body={}))
    hit("/escalations", "post", api.post("/escalations", token=key, body=b"{}"))
    hit("/escalations", "get", api.get("/escalations", token=key, query={"limit": "0"}))
    hit("/escalations/{id}", "get", api.get(f"/escalations/{UNKNOWN}", token=key))
    hit("/api-keys", "post", api.post("/api-keys", token=key, json_body={"scopes": ["nope"]}))
    hit("/api-keys/{id}", "delete", api.delete("/api-keys/key_unknown", token=key))
    hit("/api-keys", "get", api.get("/api-keys", token=live.user("openapi-reviewer")))
    reader = api.post("/api-keys", token=key, json_body={"scopes": ["escalations:read"]}).json()["key"]
    hit("/escalations/{id}/decide", "post", api.post(f"/escalations/{esc['id']}/decide", token=reader, json_body={"choice": "approve"}))
    return out


@pytest.fixture(scope="module")
def observed(live) -> list[tuple[str, str, object]]:
    return _observed(live, live.key())  # once per server: it adds a named user


def test_every_status_the_server_answers_is_documented_for_its_operation(observed, document):
    undocumented = [
        f"{method.upper()} {path} -> {resp.status}"
        for path, method, resp in observed
        if str(resp.status) not in document["paths"][path][method]["responses"]
    ]
    assert not undocumented, undocumented


def test_every_member_of_a_problem_the_server_answers_is_in_the_problem_schema(observed, document):
    """Extension members (403's ``scope``, 409's ``currentStatus``) are documented, not only emitted."""
    documented = set(document["components"]["schemas"]["Problem"]["properties"])
    seen: dict[str, str] = {}
    for path, method, resp in observed:
        if resp.content_type == "application/problem+json":
            for member in resp.json():
                seen.setdefault(member, f"{method.upper()} {path} -> {resp.status}")
    assert {"scope", "currentStatus", "errors"} <= set(seen), seen  # the walk reached the members at all
    assert not {m: where for m, where in seen.items() if m not in documented}
