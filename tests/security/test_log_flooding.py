"""A client sending requests aiohttp cannot parse does not flood the log (issue #24, point 5).

Each such request once logged a whole traceback quoting the raw header
(about 470 MB an hour from one client). Now: one line, without the bytes
(a header may carry a token), and the rest counted at most once a minute.
"""

from __future__ import annotations

import json
import socket
from urllib.parse import urlsplit

from tests.support.server import ServerProcess

SECRET = "ain_live_" + "S3cr3t" * 6
MALFORMED = (
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Nul: a\x00b\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + SECRET.encode() + b"\x00\r\n\r\n",
    b"GET /heal\x00thz HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\nBad Header Name: v\r\n\r\n",
)


def _answer(fresh_server: ServerProcess, raw: bytes) -> bytes:
    parts = urlsplit(fresh_server.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=30) as sock:
        sock.sendall(raw)
        answer = b""
        while chunk := sock.recv(65536):  # aiohttp closes the connection after a 400 it could not parse
            answer += chunk
    return answer


def test_a_flood_of_malformed_requests_is_one_log_line_without_a_traceback(fresh_server):
    for i in range(200):
        assert b" 400 " in _answer(fresh_server, MALFORMED[i % len(MALFORMED)]).split(b"\r\n", 1)[0]
    healthy = _answer(fresh_server, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert healthy.split(b"\r\n", 1)[0] == b"HTTP/1.1 200 OK"
    fresh_server.stop()  # all of its output is read once it has exited
    log = "".join(fresh_server.output)
    about = [line for line in log.splitlines() if "malformed request" in line]
    assert len(about) == 1, log[-3000:]
    assert "from 127.0.0.1 answered 400" in about[0] and "WARNING escalated.http" in about[0]
    assert "Traceback" not in log and "Error handling request" not in log
    assert SECRET not in log and "\\x00" not in log


def test_an_over_long_header_and_an_undecodable_body_log_one_line_without_the_bytes(fresh_server):
    """aiohttp quotes an over-long line on the first line of its reason (a
    header line may be the token's), and meets a body it cannot decode (gzip
    that is not) again when it drains it after the handler answered, which
    it logged as an unhandled exception with three tracebacks."""
    too_long = b"GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + SECRET.encode() + b"x" * 9000 + b"\r\n\r\n"
    assert b" 400 " in _answer(fresh_server, too_long).split(b"\r\n", 1)[0]
    body = b"not gzip at all"
    undecodable = (
        b"POST /escalations HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer "
        + fresh_server.bootstrap_key.encode()
        + b"\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(body)
        + body
    )
    head, _, answer = _answer(fresh_server, undecodable).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400 ") and b"application/problem+json" in head, head
    assert b'"code":"invalid_json"' in answer
    fresh_server.stop()
    log = "".join(fresh_server.output)
    assert "Got more than 8190 bytes when reading;" in log or "Got more than 8190 bytes when reading " in log, log[-3000:]
    assert SECRET not in log and "Bearer" not in log and "Traceback" not in log and "Unhandled exception" not in log, log[-3000:]


def test_a_request_aiohttp_cannot_parse_is_answered_as_problem_json_without_its_bytes(fresh_server):
    """CONTRACT §7: every error is problem+json. aiohttp's own answer was a
    text/plain page quoting the raw bytes back (a header line may be a token)."""
    too_long = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: " + b"y" * 9000 + b"\r\n\r\n"
    bad_chunk = b"POST /escalations HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n"
    for raw in (*MALFORMED, too_long, bad_chunk, b"NOT AN HTTP REQUEST\r\n\r\n"):
        head, _, body = _answer(fresh_server, raw).partition(b"\r\n\r\n")
        assert b" 400 " in head.split(b"\r\n", 1)[0], head
        assert b"Content-Type: application/problem+json" in head, head
        problem = json.loads(body)
        assert problem["status"] == 400 and problem["code"] == "invalid_json", problem
        assert problem["detail"].startswith("not a well-formed HTTP request: "), problem
        assert SECRET not in problem["detail"] and "b'" not in problem["detail"] and "yyy" not in problem["detail"]
