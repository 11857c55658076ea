"""Sign-in, sessions and CSRF through a real ``escalated serve`` (CONTRACT §11)."""

from __future__ import annotations

import hashlib
import hmac
import re

from click.testing import CliRunner

from escalated.cli import main

from tests.web.support import WebClient

LINK = re.compile(r"^http://127\.0\.0\.1:\d+/app/login/[A-Za-z0-9_-]{40,}$")


def test_root_redirects_to_the_web_app(world):
    page = WebClient(world.url).get("/")
    assert page.status in (301, 302, 303, 307, 308) and page.location == "/app/"


def test_a_signed_out_visitor_is_sent_to_sign_in(world):
    for path in ("/app/", "/app/escalations/esc_x", "/app/events", "/app/policies", "/app/users"):
        page = WebClient(world.url).get(path)
        assert (page.status, page.location) == (303, "/app/login"), path


def test_a_user_token_signs_in_with_a_strict_cookie(world):
    browser = WebClient(world.url)
    page = browser.sign_in(world.alice)
    assert (page.status, page.location) == (303, "/app/")
    cookie = page.set_cookies()["escalated_session"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/app" in cookie
    assert "Secure" not in cookie  # plain http here; see the https test
    home = browser.get("/app/")
    assert home.status == 200 and "<title>Inbox · escalated</title>" in home.text and "alice" in home.text


def test_an_api_key_cannot_sign_in(world):
    browser = WebClient(world.url)
    page = browser.sign_in(world.key)
    assert page.status == 401 and "API keys cannot sign in" in page.text
    assert "escalated_session" not in browser.cookies
    assert world.key not in page.text


def test_a_wrong_token_is_refused_in_words(world):
    page = WebClient(world.url).sign_in("ain_user_" + "x" * 38)
    assert page.status == 401 and "Sign-in failed" in page.text


def test_the_sign_in_form_without_its_csrf_field_is_refused(world):
    browser = WebClient(world.url)
    browser.get("/app/login")
    page = browser.post("/app/login", {"token": world.alice})
    assert page.status == 403 and "escalated_session" not in browser.cookies


def test_signing_in_issues_a_new_session_id_and_ends_the_old_one(world):
    browser = WebClient(world.url)
    browser.sign_in(world.alice)
    first = browser.cookies["escalated_session"]
    browser.sign_in(world.bob)
    second = browser.cookies["escalated_session"]
    assert second != first
    stale = WebClient(world.url)
    stale.cookies["escalated_session"] = first
    assert stale.get("/app/").status == 303


def test_a_session_id_planted_before_sign_in_is_never_adopted(world):
    browser = WebClient(world.url)
    browser.cookies["escalated_session"] = "attacker-chosen-value"
    browser.sign_in(world.alice)
    assert browser.cookies["escalated_session"] != "attacker-chosen-value"
    attacker = WebClient(world.url)
    attacker.cookies["escalated_session"] = "attacker-chosen-value"
    assert attacker.get("/app/").status == 303


def test_a_login_link_signs_in_once(world):
    link = world.server.cli("users", "login-link", "alice", "--url", world.url)
    assert LINK.match(link), link
    browser = WebClient(world.url)
    page = browser.follow_link(link)
    assert (page.status, page.location) == (303, "/app/")
    assert browser.get("/app/").status == 200
    again = WebClient(world.url).follow_link(link)
    assert again.status == 401 and "used, expired or unknown" in again.text


def test_opening_a_login_link_uses_nothing_up(world):
    """Mail scanners and link previews GET links: only the page's button signs in."""
    link = world.server.cli("users", "login-link", "alice", "--url", world.url)
    for _ in range(3):
        page = WebClient(world.url).get(link.removeprefix(world.url))
        assert page.status == 200 and "escalated_session" not in page.set_cookies()
    assert WebClient(world.url).follow_link(link).status == 303


def test_a_login_link_posted_without_csrf_is_refused(world):
    link = world.server.cli("users", "login-link", "alice", "--url", world.url)
    assert WebClient(world.url).post(link.removeprefix(world.url), {}).status == 403
    assert WebClient(world.url).follow_link(link).status == 303  # and it was not used up


def test_login_link_for_an_unknown_user_fails_in_words(world):
    result = CliRunner().invoke(main, ["users", "login-link", "nobody", "--db", str(world.server.db)])
    assert result.exit_code == 1 and "no user named 'nobody'" in result.output


def test_sign_out_ends_the_session(world):
    browser = WebClient(world.url)
    browser.sign_in(world.alice)
    cookie = browser.cookies["escalated_session"]
    page = browser.submit("/app/", "/app/logout", {})
    assert (page.status, page.location) == (303, "/app/login")
    replay = WebClient(world.url)
    replay.cookies["escalated_session"] = cookie
    assert replay.get("/app/").status == 303


def test_sign_out_without_csrf_is_refused(world):
    browser = WebClient(world.url)
    browser.sign_in(world.alice)
    assert browser.post("/app/logout", {}).status == 403
    assert browser.get("/app/").status == 200


def test_rotating_a_users_token_ends_their_sessions(tmp_path):
    from tests.support.server import start_server

    server = start_server(tmp_path)
    try:
        token = server.cli("users", "add", "carol")
        browser = WebClient(server.url)
        browser.sign_in(token)
        assert browser.get("/app/").status == 200
        link = server.cli("users", "login-link", "carol", "--url", server.url)
        server.cli("users", "token", "carol")
        assert browser.get("/app/").status == 303
        assert WebClient(server.url).follow_link(link).status == 401
    finally:
        server.stop()


def test_cookies_are_secure_when_the_public_url_is_https(tmp_path):
    from tests.support.server import start_server

    server = start_server(tmp_path, "--public-url", "https://escalated.example.com")
    try:
        token = server.cli("users", "add", "dora")
        page = WebClient(server.url).sign_in(token)
        assert "Secure" in page.set_cookies()["escalated_session"]
    finally:
        server.stop()


def _token_of_no_cookie() -> str:
    """What the sign-in form's token would be without a pre-login cookie: an
    HMAC with an empty key, which any site can compute."""
    return hmac.new(b"", b"escalated csrf", hashlib.sha256).hexdigest()


def test_a_sign_in_post_without_the_pre_login_cookie_is_refused(world):
    """Login CSRF: another site posts the attacker's token from the victim's
    browser, which never received the sign-in form and so has no cookie."""
    victim = WebClient(world.url)
    page = victim.post("/app/login", {"csrf": _token_of_no_cookie(), "token": world.alice})
    assert page.status == 403 and "escalated_session" not in victim.cookies
    stranger = WebClient(world.url)
    stranger.cookies["escalated_prelogin"] = ""  # an empty cookie is no cookie
    assert stranger.post("/app/login", {"csrf": _token_of_no_cookie(), "token": world.alice}).status == 403


def test_a_sign_in_link_post_without_the_pre_login_cookie_is_refused(world):
    link = world.server.cli("users", "login-link", "alice", "--url", world.url)
    victim = WebClient(world.url)
    page = victim.post(link.removeprefix(world.url), {"csrf": _token_of_no_cookie()})
    assert page.status == 403 and "escalated_session" not in victim.cookies
    assert WebClient(world.url).follow_link(link).status == 303  # not used up by the refused post


def test_the_token_of_another_browsers_cookie_is_refused(world):
    """The token is bound to this browser's cookie, not to any cookie."""
    attacker = WebClient(world.url)
    token = attacker.get("/app/login").csrf()
    victim = WebClient(world.url)
    victim.get("/app/login")  # the victim has a pre-login cookie of its own
    assert victim.post("/app/login", {"csrf": token, "token": world.alice}).status == 403


def test_a_form_body_that_is_not_utf8_or_not_decodable_is_refused_in_words_on_every_form(world):
    """No browser sends it, but whoever does gets 400 and a page saying so,
    not a 500 and a traceback in the log (a fuzzed POST found it)."""
    signed_in = WebClient(world.url)
    signed_in.sign_in(world.alice)
    link = world.server.cli("users", "login-link", "bob", "--url", world.url).strip()
    link_path = "/" + link.split("://", 1)[1].split("/", 1)[1]
    for browser, path in (
        (WebClient(world.url), "/app/login"),
        (WebClient(world.url), link_path),
        (WebClient(world.url), "/app/d/" + "x" * 43),
        (signed_in, "/app/logout"),
    ):
        browser.get("/app/login")  # the pre-login cookie, as a browser would have it
        page = browser.request("POST", path, raw=b"csrf=\xff\xfe&token=\xff")
        assert page.status == 400 and "could not be read" in page.text, (path, page.status, page.text[:300])
    browser = WebClient(world.url)
    browser.get("/app/login")
    page = browser.request("POST", "/app/login", raw=b"not gzip", headers={"Content-Encoding": "gzip"})
    assert page.status == 400 and "could not be read" in page.text, page.text[:300]
    assert "escalated_session" in signed_in.cookies  # the refused sign-out changed nothing
    assert "Traceback" not in "".join(world.server.output)
