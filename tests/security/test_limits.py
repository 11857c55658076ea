"""Cheap refusals: bodies over the limit (413), deeply nested JSON (400), and
the per-token rate limit (429 ``rate_limited`` with ``Retry-After``)."""

from __future__ import annotations

import json
import socket
import time
from urllib.parse import urlsplit

import pytest

from tests.support.http import Http
from tests.support.wait import eventually
from tests.support.api import escalation_body
from tests.support.server import start_server

LIMIT = 256 * 1024
QUICK_S = 1.0


def raw_request(url: str, head: str, body: bytes = b"", *, timeout_s: float = 5.0) -> tuple[bytes, float]:
    """Send exactly these bytes; return the status line and the time to it."""
    parts = urlsplit(url)
    started = time.monotonic()
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout_s) as sock:
        try:
            sock.sendall(head.encode() + body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before reading it all: that is the point
        data = b""
        while b"\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                break
            data += chunk
    return data.split(b"\r\n", 1)[0], time.monotonic() - started


def test_a_declared_oversize_body_is_refused_before_it_is_sent(served):
    head = (
        "POST /escalations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {served.key}\r\nContent-Length: {1024 * 1024 * 1024}\r\n\r\n"
    )
    status, took_s = raw_request(served.proc.url, head, b"{")  # a gigabyte announced, one byte sent
    assert status.startswith(b"HTTP/1.1 413"), status
    assert took_s < QUICK_S


def test_a_body_one_byte_over_the_limit_is_413_and_one_at_the_limit_is_read(served):
    body = escalation_body("sec.open", unknownField=True)  # read in full, then refused as content: 422
    for size, expected in ((LIMIT + 1, 413), (LIMIT, 422)):
        raw = _json_of_size(body, size)
        resp = served.http.post("/escalations", token=served.key, body=raw, headers={"Content-Type": "application/json"})
        assert resp.status == expected, (size, resp.body[:200])
        if expected == 413:
            resp.problem(413, "payload_too_large")


def _json_of_size(body: dict, size: int) -> bytes:
    body = {**body, "question": ""}
    raw = json.dumps(body).encode()
    body["question"] = "q" * (size - len(raw))
    raw = json.dumps(body).encode()
    assert len(raw) == size
    return raw


def test_a_chunked_body_over_the_limit_is_413(served):
    parts = [b'{"question": "', b"x" * (LIMIT + 10), b'"}']
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in parts) + b"0\r\n\r\n"
    head = (
        "POST /escalations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Authorization: Bearer {served.key}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    status, took_s = raw_request(served.proc.url, head, chunked)
    assert status.startswith(b"HTTP/1.1 413"), status
    assert took_s < QUICK_S


def test_an_unauthenticated_oversize_request_is_401_without_reading_it(served):
    head = f"POST /escalations HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {10**9}\r\n\r\n"
    status, took_s = raw_request(served.proc.url, head)
    assert status.startswith(b"HTTP/1.1 401"), status
    assert took_s < QUICK_S


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 120_000 + b"]" * 120_000,
        b'{"a":' * 40_000 + b"1" + b"}" * 40_000,
        b'{"policy": "sec.open", "subject": ' + b'{"x":' * 20_000 + b"1" + b"}" * 20_000 + b"}",
    ],
    ids=["arrays", "objects", "inside-a-create"],
)
@pytest.mark.parametrize("path", ["/escalations", "/escalations/{id}/decide", "/api-keys"])
def test_deeply_nested_json_is_refused_quickly_as_invalid_json(served, raw, path):
    assert len(raw) <= LIMIT
    esc = served.http.post("/escalations", token=served.key, json_body=escalation_body("sec.open")).json()
    started = time.monotonic()
    resp = served.http.post(path.format(id=esc["id"]), token=served.key, body=raw, headers={"Content-Type": "application/json"})
    took_s = time.monotonic() - started
    resp.problem(400, "invalid_json")
    assert took_s < QUICK_S
    assert served.http.get("/healthz").status == 200


def test_nesting_below_the_parser_limit_is_a_validation_error_not_a_crash(served):
    deep = {"x": 1}
    for _ in range(500):
        deep = {"x": deep}
    resp = served.http.post("/escalations", token=served.key, json_body=escalation_body("sec.open", subject=deep))
    assert resp.problem(422, "validation_failed")["errors"][0]["field"].startswith("subject")


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    proc = start_server(tmp_path_factory.mktemp("rate"), "--rate-limit", "2/s")
    yield proc
    proc.stop()


def test_the_rate_limit_is_429_rate_limited_with_retry_after_per_token(limited):
    http = Http(limited.url)
    other = limited.cli("keys", "create")
    statuses = []
    for _ in range(30):  # far beyond 2/s with a burst of 2, even on a slow machine
        resp = http.get("/escalations", token=limited.bootstrap_key)
        statuses.append(resp.status)
        if resp.status == 429:
            break
    assert statuses[0] == 200 and statuses[-1] == 429, statuses
    problem = resp.problem(429, "rate_limited")
    assert problem["status"] == 429
    retry_after = int(resp.headers["retry-after"])
    assert 1 <= retry_after <= 2
    assert http.get("/escalations", token=other).status == 200  # another token has its own bucket
    eventually(
        lambda: http.get("/escalations", token=limited.bootstrap_key).status == 200,
        timeout_s=retry_after + 3, interval_s=0.25, what="the bucket to refill",
    )


def test_the_rate_limit_applies_to_user_tokens_and_writes_too(limited):
    http = Http(limited.url)
    limited.cli("policy", "set", "sec.open")
    user = limited.cli("users", "add", "hammer", "--role", "admin")
    statuses = [http.post("/escalations", token=user, json_body=escalation_body("sec.open")).status for _ in range(12)]
    assert statuses.count(201) >= 2 and 429 in statuses, statuses
    total = http.get("/escalations?limit=200", token=limited.cli("keys", "create")).json()["data"]
    assert len([e for e in total if e["createdAt"]]) == statuses.count(201)  # a 429 created nothing


def test_fifteen_thousand_unknown_fields_give_a_short_error_that_counts_the_rest(served):
    body = escalation_body("sec.open", **{f"u{i}": 1 for i in range(15_000)})  # 150 KB, under the body limit
    resp = served.http.post("/escalations", token=served.key, json_body=body)
    problem = resp.problem(422, "validation_failed")
    assert len(problem["errors"]) == 50 and problem["errors"][0] == {"field": "u0", "message": "unknown field"}
    assert "14950 more" in problem["detail"], problem["detail"]
    assert len(resp.body) < 8 * 1024  # before: 664 KB


def test_a_long_unknown_field_name_is_cut_in_the_error(served):
    resp = served.http.post("/escalations", token=served.key, json_body=escalation_body("sec.open", **{"x" * 100_000: 1}))
    problem = resp.problem(422, "validation_failed")
    assert len(problem["errors"][0]["field"]) <= 200 and len(resp.body) < 2 * 1024, len(resp.body)
