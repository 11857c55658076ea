"""Sign-in, sign-in links and decision links are throttled per client address,
and a web session ends a fixed time after sign-in (issue #24, point 8).

Through a real ``escalated serve`` on both backends, started with a small
bucket (``--sign-in-rate-limit 3/h``: three tries, then one every 20
minutes) so the test never waits for a refill. The session's lifetime on
the real app in process, on a clock the test moves an hour on.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import fresh_db
from tests.integration.conftest import LiveServer
from tests.support.server import ServerProcess
from tests.web.support import WebClient


@pytest.fixture
def limited(request, fn_backend, tmp_path):
    with fresh_db(request, fn_backend, tmp_path) as db:
        server = ServerProcess(db=db, args=("--sign-in-rate-limit", "3/h")).start()
        try:
            yield server
        finally:
            server.stop()


def _refused_as_a_page(page) -> None:
    assert page.status == 429, page.text[:300]
    assert page.headers["Content-Type"].startswith("text/html") and "Rate limited" in page.text
    assert int(page.headers["Retry-After"]) >= 1


def test_an_address_gets_three_tries_then_429_on_every_sign_in_route(limited):
    token = limited.cli("users", "add", "alice")
    link = limited.cli("users", "login-link", "alice", "--url", limited.url)
    browser = WebClient(limited.url)
    for _ in range(3):
        assert browser.sign_in("ain_user_" + "x" * 38).status == 401  # a wrong token, three times
    _refused_as_a_page(browser.sign_in(token))  # now even the right one waits
    assert "escalated_session" not in browser.cookies
    _refused_as_a_page(WebClient(limited.url).get(link.removeprefix(limited.url)))  # a sign-in link
    _refused_as_a_page(WebClient(limited.url).get("/app/d/" + "s" * 43))  # a decision link
    _refused_as_a_page(WebClient(limited.url).post("/app/d/" + "s" * 43, {}))
    # A script asking for JSON gets the contract's problem shape.
    scripted = WebClient(limited.url).request("POST", "/app/login", form={}, headers={"Accept": "application/json"})
    assert scripted.status == 429 and scripted.headers["Content-Type"].startswith("application/problem+json")
    assert json.loads(scripted.text)["code"] == "rate_limited" and int(scripted.headers["Retry-After"]) >= 1
    # Nothing else is limited: the API and the sign-in form itself.
    assert WebClient(limited.url).get("/healthz").status == 200
    assert WebClient(limited.url).get("/app/login").status == 200


def test_a_session_ends_its_lifetime_after_sign_in_however_active(request, fn_backend, tmp_path):
    """The real app in process, on a clock the test moves: a session of an
    hour's lifetime, active every six minutes, ends when the hour is up."""
    with fresh_db(request, fn_backend, tmp_path) as db:
        server = LiveServer(db, web_lifetime_s=3600.0).start()
        try:
            browser = WebClient(server.url)
            assert browser.sign_in(server.user("alice")).status == 303
            for _ in range(10):  # active all along, far inside the idle time
                server.advance(359)
                assert browser.get("/app/").status == 200
            server.advance(11)  # the hour since sign-in is up
            assert browser.get("/app/").status == 303
        finally:
            server.stop()
