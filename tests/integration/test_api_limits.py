"""CONTRACT §7 rows 429 and 500: per-token rate limits (off by default) and internal errors."""

from __future__ import annotations

import sqlite3

import pytest

from tests.integration.conftest import LiveServer
from tests.support.api import escalation_body


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """A server limited to 1 request per minute per token."""
    server = LiveServer(tmp_path_factory.mktemp("limited") / "escalated.db", rate_limit_per_s=1 / 60).start()
    yield server
    server.stop()


def test_rate_limit_is_off_by_default(live, api, admin_key):
    assert {api.get("/escalations", token=admin_key, query={"limit": 1}).status for _ in range(60)} == {200}


def test_over_the_limit_is_429_with_retry_after(limited):
    key = limited.key()
    assert limited.api.get("/escalations", token=key).status == 200
    resp = limited.api.get("/escalations", token=key)
    problem = resp.problem(429, "rate_limited")
    assert problem["type"] == "urn:escalated:error:rate_limited"
    assert 1 <= int(resp.headers["Retry-After"]) <= 61


def test_rate_limit_is_per_token(limited):
    first, second = limited.key(), limited.key()
    limited.api.get("/escalations", token=first)
    limited.api.get("/escalations", token=first).problem(429, "rate_limited")
    assert limited.api.get("/escalations", token=second).status == 200


def test_unauthenticated_routes_are_not_rate_limited(limited):
    assert {limited.api.get("/healthz").status for _ in range(5)} == {200}


def test_internal_error_is_a_500_problem_without_a_stack_trace(tmp_path):
    server = LiveServer(tmp_path / "broken.db").start()
    try:
        key = server.key()
        server.policy("refunds.large")
        with sqlite3.connect(server.db) as conn:  # break the database under the running server
            conn.execute("DROP TABLE policies")
        resp = server.api.post("/escalations", token=key, json_body=escalation_body())
        problem = resp.problem(500, "internal")
        assert problem["type"] == "urn:escalated:error:internal" and problem["status"] == 500
        for leak in (b"Traceback", b'File "', b"sqlite", b"policies", b"OperationalError"):
            assert leak not in resp.body
    finally:
        server.stop()


def test_max_body_setting_lowers_the_413_limit(tmp_path):
    import json

    server = LiveServer(tmp_path / "small.db", max_body_bytes=2048).start()
    try:
        key = server.key()
        server.policy("refunds.large")
        small = json.dumps(escalation_body()).encode()
        big = json.dumps(escalation_body(evidence=["x" * 3000])).encode()
        headers = {"Content-Type": "application/json"}
        assert server.api.post("/escalations", token=key, body=small, headers=headers).status == 201
        server.api.post("/escalations", token=key, body=big, headers=headers).problem(413, "payload_too_large")
        chunks = iter([big[:1000], big[1000:]])
        server.api.post("/escalations", token=key, body=chunks, headers=headers, chunked=True).problem(413, "payload_too_large")
    finally:
        server.stop()
