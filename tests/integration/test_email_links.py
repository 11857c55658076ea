"""Issue #16: deciding from email, through the real surface.

One real ``escalated serve`` per backend (SQLite, PostgreSQL) with a real
SMTP server (aiosmtpd): the test reads each message the server sent, parses
its links and follows them over real HTTP; a real receiver checks the
signed callback a link decision sends.
"""

from __future__ import annotations

import asyncio
import email
import email.policy
import hashlib
import re
import socket
import sqlite3
import time

import aiohttp
import attrs
import orjson
import pytest
from aiosmtpd.controller import Controller

from escalated.agent.signing import verify
from escalated.core.admin import PolicyRequest
from escalated.domain.mailserver import parse_mail_server
from escalated.timeutil import parse_timestamp_ms
from tests.integration.conftest import LiveServer
from tests.support import setup
from tests.support.api import Api, escalation_body, unique
from tests.support.receiver import Receiver
from tests.support.server import ServerProcess

RESUME_SECRET = "resume-secret-for-link-tests-0123456789"
LINK = re.compile(r"https?://[^\s\"<>]+/app/d/[A-Za-z0-9_-]+")
PAGE = re.compile(r"https?://[^\s\"<>]+/app/escalations/esc_[0-9A-Z]+")


class Inbox:
    """An SMTP server's received messages. A message holding a text in
    ``refuse_once`` is answered 451 (after reading it), once."""

    def __init__(self) -> None:
        self.messages: list[email.message.EmailMessage] = []
        self.refused: list[email.message.EmailMessage] = []
        self.refuse_once: set[str] = set()

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd names the hook
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        message["X-Test-Rcpt"] = ",".join(envelope.rcpt_tos)
        if marker := next((m for m in self.refuse_once if m in text_part(message)), None):
            self.refuse_once.discard(marker)
            self.refused.append(message)
            return "451 try again later"
        self.messages.append(message)
        return "250 OK"

    # A deadline, not a speed figure: under a fully loaded 2-core machine the first
    # email of a freshly started server took more than 15 s once.
    async def message_about(self, escalation_id: str, to: str, *, timeout_s: float = 30.0) -> email.message.EmailMessage:
        async with asyncio.timeout(timeout_s):
            while True:
                for m in self.messages:
                    if m["X-Test-Rcpt"] == to and escalation_id in text_part(m):
                        return m
                await asyncio.sleep(0.05)


def text_part(message) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


def html_part(message) -> str:
    return message.get_body(preferencelist=("html",)).get_content()


def decision_links(message) -> list[str]:
    return LINK.findall(html_part(message))


@attrs.frozen
class World:
    server: ServerProcess | LiveServer
    inbox: Inbox
    backend: str
    key: str  # an all-scope API key of workspace default

    @property
    def url(self) -> str:
        return self.server.url


def smtp_server(inbox: Inbox) -> Controller:
    with socket.socket() as probe:  # aiosmtpd's readiness check needs a real port, not 0
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    return controller


def database_for(request, tmp_path_factory, backend: str):
    if backend == "sqlite":
        return tmp_path_factory.mktemp("links") / "escalated.db"
    pg = request.getfixturevalue("postgres_server")
    url = pg.create_database()
    request.addfinalizer(lambda: pg.drop_database(url))
    return url


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def world(request, tmp_path_factory) -> World:
    inbox = Inbox()
    controller = smtp_server(inbox)
    db = database_for(request, tmp_path_factory, request.param)
    # Every test of the module opens links from 127.0.0.1: the per-address
    # limit (tests/web/test_throttling.py) is off here.
    args = ("--smtp-url", f"smtp://127.0.0.1:{controller.port}", "--retry-schedule", "100ms", "--sign-in-rate-limit", "off")
    server = ServerProcess(db=db, args=args)
    server.start()
    try:
        server.cli("users", "add", "alice", "--group", "finance", "--email", "Alice@Example.com")
        server.cli("users", "add", "bob", "--email", "bob@example.com")
        notify = ("--notify", "email:alice@example.com", "--notify", "email:bob@example.com", "--notify", "email:ops@example.com")
        server.cli("policy", "set", "refunds", "--reviewer", "group:finance", *notify)
        server.cli("policy", "set", "solo", "--reviewer", "alice", "--notify", "email:alice@example.com")
        server.cli("policy", "set", "quick", "--reviewer", "alice", "--notify", "email:alice@example.com", "--sla", "2s", "--default-choice", "deny")
        yield World(server=server, inbox=inbox, backend=request.param, key=server.bootstrap_key)
    finally:
        server.stop()
        controller.stop()


@pytest.fixture
async def hook():
    receiver = await Receiver().start()
    yield receiver
    await receiver.stop()


@pytest.fixture
async def http():
    async with aiohttp.ClientSession() as session:
        yield session


def agent(world: World, http: aiohttp.ClientSession) -> Api:
    return Api(world.url, world.key, http)


async def create(world: World, http, hook: Receiver | None = None, policy: str = "refunds", **overrides) -> dict:
    resume = {"mode": "webhook", "url": hook.url if hook else "http://127.0.0.1:9/x", "secret": RESUME_SECRET}
    status, esc, _ = await agent(world, http).call("POST", "/escalations", json=escalation_body(policy, resume=resume, **overrides))
    assert status == 201, esc
    return esc


async def follow(http: aiohttp.ClientSession, link: str, method: str = "GET") -> tuple[int, str]:
    async with http.request(method, link, allow_redirects=False) as response:
        return response.status, await response.text()


# -- what the email holds ------------------------------------------------------------


async def test_a_routed_user_gets_one_link_per_choice_and_the_page_link(world, http):
    esc = await create(world, http)
    message = await world.inbox.message_about(esc["id"], "alice@example.com")
    assert message.get_content_type() == "multipart/alternative"
    assert [p.get_content_type() for p in message.iter_parts()] == ["text/plain", "text/html"]
    links = decision_links(message)
    assert len(links) == 2 and len(set(links)) == 2
    assert LINK.findall(text_part(message)) == links
    assert PAGE.findall(html_part(message)) == [f"{world.url}/app/escalations/{esc['id']}"]
    html = html_part(message)
    for words in ("Order #981", "Refund 1,200 EUR?", "customer since 2019", "Approve", "Deny", "Decide as <strong>alice</strong>"):
        assert words in html


async def test_an_address_of_no_routed_user_gets_only_the_page_link(world, http):
    esc = await create(world, http)
    for address in ("bob@example.com", "ops@example.com"):  # bob is a user, but not a reviewer of refunds
        message = await world.inbox.message_about(esc["id"], address)
        assert LINK.findall(message.as_string()) == []
        assert PAGE.findall(html_part(message)) == [f"{world.url}/app/escalations/{esc['id']}"]


async def test_with_response_fields_the_email_links_only_the_page(world, http):
    fields = [{"type": "number", "name": "amount", "label": "Amount to refund", "min": 0}]
    esc = await create(world, http, responseFields=fields)
    message = await world.inbox.message_about(esc["id"], "alice@example.com")
    assert LINK.findall(message.as_string()) == []
    assert "needs more than a click" in html_part(message)
    assert PAGE.findall(text_part(message)) == [f"{world.url}/app/escalations/{esc['id']}"]


async def test_hostile_content_is_escaped_in_the_html_and_kept_out_of_headers(world, http):
    hostile = {
        "subject": {"type": "order", "id": "o-1", "label": "Order <b>1</b>\r\nBcc: mallory@example.com"},
        "question": '<script>alert("x")</script> & <a href="https://evil.example">click</a>?',
        "evidence": ['<img src=x onerror="alert(1)">'],
    }
    esc = await create(world, http, **hostile)
    message = await world.inbox.message_about(esc["id"], "alice@example.com")
    html = html_part(message)
    assert "<script" not in html and "<img" not in html and "evil.example\">" not in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=" in html
    assert message["Bcc"] is None and message["X-Test-Rcpt"] == "alice@example.com"
    assert "\n" not in message["Subject"] and "Order <b>1</b> Bcc: mallory@example.com" in message["Subject"]
    status, page = await follow(http, decision_links(message)[0])  # the confirm page escapes it too
    assert status == 200 and "<script>alert" not in page and "&lt;script&gt;alert" in page


# -- following the links ---------------------------------------------------------------


async def test_opening_a_link_never_decides(world, http):
    esc = await create(world, http)
    approve, _ = decision_links(await world.inbox.message_about(esc["id"], "alice@example.com"))
    for _ in range(2):  # a mail scanner, then a link preview
        status, page = await follow(http, approve)
        assert status == 200 and "Confirm your decision" in page and "Approve" in page and 'method="post"' in page
    assert (await agent(world, http).get(esc["id"]))["status"] == "open"


async def test_posting_a_link_decides_as_its_user_with_the_signed_callback(world, http, hook):
    esc = await create(world, http, hook)
    approve, _ = decision_links(await world.inbox.message_about(esc["id"], "alice@example.com"))
    status, page = await follow(http, approve, "POST")
    assert status == 200 and "Decided: Approve" in page
    [callback] = await hook.wait_for(1)
    assert verify(callback.body, callback.headers["x-service-signature"], RESUME_SECRET)
    decided = await agent(world, http).get(esc["id"])
    assert decided["resolution"]["choice"] == "approve"
    assert decided["resolution"]["answeredBy"] == "alice" and decided["resolution"]["resolvedBy"] == "human"
    assert callback.headers["x-service-event"] == "escalation.decided" and b'"answeredBy":"alice"' in callback.body


async def test_a_link_works_once(world, http, hook):
    esc = await create(world, http, hook)
    approve, deny = decision_links(await world.inbox.message_about(esc["id"], "alice@example.com"))
    assert (await follow(http, approve, "POST"))[0] == 200
    status, page = await follow(http, approve, "POST")
    assert status == 410 and "already used" in page
    status, page = await follow(http, deny, "POST")  # the other choice's link: the escalation is decided
    assert status == 410 and "already decided" in page and "approve, by alice" in page
    await hook.wait_for(1)
    assert (await agent(world, http).get(esc["id"]))["resolution"]["choice"] == "approve"
    assert len(hook.received) == 1


async def test_a_link_posted_many_times_at_once_decides_once(world, http, hook):
    esc = await create(world, http, hook)
    approve, _ = decision_links(await world.inbox.message_about(esc["id"], "alice@example.com"))
    answers = await asyncio.gather(*(follow(http, approve, "POST") for _ in range(6)))
    assert sorted(status for status, _ in answers) == [200] + [410] * 5
    await hook.wait_for(1)
    await asyncio.sleep(0.3)  # a second callback would have come by now
    assert len(hook.received) == 1


async def test_a_link_of_an_escalation_decided_elsewhere_is_gone(world, http):
    esc = await create(world, http)
    approve, _ = decision_links(await world.inbox.message_about(esc["id"], "alice@example.com"))
    assert (await agent(world, http).decide(esc["id"], "deny"))[0] == 200
    for method in ("GET", "POST"):
        status, page = await follow(http, approve, method)
        assert status == 410 and "already decided: deny" in page
    assert (await agent(world, http).get(esc["id"]))["resolution"]["choice"] == "deny"


async def test_a_link_of_a_cancelled_escalation_is_gone(world, http):
    esc = await create(world, http)
    approve, _ = decision_links(await world.inbox.message_about(esc["id"], "alice@example.com"))
    status, _, _ = await agent(world, http).call("POST", f"/escalations/{esc['id']}/cancel", json={"reason": "agent moved on"})
    assert status == 200
    status, page = await follow(http, approve, "POST")
    assert status == 410 and "cancelled" in page
    assert (await agent(world, http).get(esc["id"]))["status"] == "cancelled"


async def test_an_unknown_link_is_not_found(world, http):
    for secret in ("A" * 43, "not-a-secret", "%3Cscript%3E"):
        status, page = await follow(http, f"{world.url}/app/d/{secret}", "POST")
        assert status == 404 and "not one this server made" in page


async def test_another_users_session_does_not_change_who_decides(world, http):
    esc = await create(world, http)
    approve, _ = decision_links(await world.inbox.message_about(esc["id"], "alice@example.com"))
    bob = world.server.cli("users", "add", unique("bob"), "--group", "finance")
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:  # bob signed in, holding alice's link
        async with browser.get(f"{world.url}/app/login") as login:
            csrf = re.search(r'name="csrf" value="([^"]+)"', await login.text()).group(1)
        async with browser.post(f"{world.url}/app/login", data={"csrf": csrf, "token": bob}, allow_redirects=False) as r:
            assert r.status == 303
        assert (await follow(browser, approve, "POST"))[0] == 200
    assert (await agent(world, http).get(esc["id"]))["resolution"]["answeredBy"] == "alice"


async def test_a_link_racing_the_sla_breach_resolves_once(world, http, hook):
    """Links posted from just before to just after the deadline of a 2 s SLA:
    each escalation resolves exactly once, by the link or by the clock, and
    the link's page says which."""
    created = [await create(world, http, hook, policy="quick") for _ in range(4)]
    links = [decision_links(await world.inbox.message_about(e["id"], "alice@example.com"))[0] for e in created]
    api = agent(world, http)
    outcomes = []
    for esc, link, offset_s in zip(created, links, (-0.15, -0.03, 0.0, 0.05), strict=True):
        await asyncio.sleep(max(0.0, parse_timestamp_ms(esc["deadlineAt"]) / 1000 + offset_s - time.time()))
        outcomes.append((esc, await follow(http, link, "POST")))
    await hook.wait_for(len(created), timeout_s=20)
    for esc, (status, page) in outcomes:
        got = await api.get(esc["id"])
        assert [h["event"] for h in got["history"] if h["event"] in ("decided", "breached")] in (["decided"], ["breached"])
        if status == 200:
            assert (got["resolution"]["answeredBy"], got["resolution"]["choice"]) == ("alice", "approve"), page
        else:
            assert status == 410 and got["resolution"]["resolvedBy"] == "timeout", page
            assert "deadline passed first" in page or "expired" in page
    await asyncio.sleep(0.3)  # a second resolution's callback would have come by now
    assert sorted(orjson.loads(r.body)["escalationId"] for r in hook.received) == sorted(e["id"] for e in created)


async def test_a_retried_email_replaces_the_links_of_the_failed_attempt(world, http, hook):
    question = unique("Refund, asked twice?")
    world.inbox.refuse_once.add(question)
    esc = await create(world, http, hook, policy="solo", question=question)
    retried = await world.inbox.message_about(esc["id"], "alice@example.com")
    [refused] = [m for m in world.inbox.refused if question in text_part(m)]
    old_approve, _ = decision_links(refused)
    new_approve, _ = decision_links(retried)
    assert old_approve != new_approve
    status, page = await follow(http, old_approve, "POST")
    assert status == 410 and "newer email" in page
    assert (await follow(http, new_approve, "POST"))[0] == 200
    await hook.wait_for(1)
    attempts = (await agent(world, http).deliveries(esc["id"]))[-1]["attempts"]
    assert [a["error"] is None for a in attempts] == [False, True]


async def test_link_secrets_are_stored_only_as_hashes_and_never_logged(world, http):
    esc = await create(world, http, policy="solo")
    links = decision_links(await world.inbox.message_about(esc["id"], "alice@example.com"))
    secrets = [link.rsplit("/", 1)[1] for link in links]
    stored = await database_text(world)
    assert esc["id"] in stored  # the dump does hold the outbox
    for secret in secrets:
        assert secret not in stored
        assert hashlib.sha256(secret.encode()).hexdigest() in stored
        assert secret not in "".join(world.server.output)


async def database_text(world: World) -> str:
    """Every row of every table, as text."""
    if world.backend == "sqlite":
        with sqlite3.connect(world.server.db) as conn:
            return "\n".join(conn.iterdump())
    import psycopg

    async with await psycopg.AsyncConnection.connect(str(world.server.db), autocommit=True) as conn:
        tables = await (await conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).fetchall()
        rows = [await (await conn.execute(f'SELECT * FROM "{name}"')).fetchall() for (name,) in tables]
    return repr(rows).replace("\\x", "")


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def short_links(request, tmp_path_factory):
    """The real app in process, on a clock the test moves (``advance``), whose
    links live a minute (``--link-ttl 1m``), far inside the escalation's hour."""
    inbox = Inbox()
    controller = smtp_server(inbox)
    db = database_for(request, tmp_path_factory, request.param)
    mail = parse_mail_server(f"smtp://127.0.0.1:{controller.port}")
    live = LiveServer(db, mail_server=mail, link_ttl_s=60.0).start()
    try:
        live._run(lambda: setup.add_user(live.app, "alice", email="alice@example.com"))
        policy = PolicyRequest(key="refunds", reviewers=("alice",), notify=("email:alice@example.com",), sla="1h", default_choice="deny")
        live._run(lambda: setup.set_policy(live.app, policy))
        yield World(server=live, inbox=inbox, backend=request.param, key=live.key())
    finally:
        live.stop()
        controller.stop()


async def test_the_email_names_what_happens_if_nobody_answers(short_links, http):
    esc = await create(short_links, http)
    message = await short_links.inbox.message_about(esc["id"], "alice@example.com")
    deadline = f"{esc['deadlineAt'][:10]} {esc['deadlineAt'][11:16]} UTC"
    assert f"If nobody answers by {deadline}, Deny applies." in text_part(message)
    assert f"If nobody answers by {deadline}</strong>, Deny applies." in html_part(message)


async def test_an_expired_link_is_gone_and_changes_nothing(short_links, http):
    esc = await create(short_links, http)
    approve, _ = decision_links(await short_links.inbox.message_about(esc["id"], "alice@example.com"))
    assert (await follow(http, approve))[0] == 200  # good for a minute
    short_links.server.advance(61)
    for method in ("GET", "POST"):
        status, page = await follow(http, approve, method)
        assert status == 410 and "expired" in page
    assert (await agent(short_links, http).get(esc["id"]))["status"] == "open"


@pytest.fixture(scope="module")
def default_links(tmp_path_factory):
    """As ``short_links``, with the link lifetime left at its default and a
    policy without an SLA (no deadline comes first): SQLite only, a clock."""
    inbox = Inbox()
    controller = smtp_server(inbox)
    mail = parse_mail_server(f"smtp://127.0.0.1:{controller.port}")
    live = LiveServer(tmp_path_factory.mktemp("default-links") / "escalated.db", mail_server=mail).start()
    try:
        live._run(lambda: setup.add_user(live.app, "alice", email="alice@example.com"))
        policy = PolicyRequest(key="refunds", reviewers=("alice",), notify=("email:alice@example.com",))
        live._run(lambda: setup.set_policy(live.app, policy))
        yield World(server=live, inbox=inbox, backend="sqlite", key=live.key())
    finally:
        live.stop()
        controller.stop()


async def test_a_link_lives_72_hours_by_default(default_links, http):
    esc = await create(default_links, http)
    approve, _ = decision_links(await default_links.inbox.message_about(esc["id"], "alice@example.com"))
    default_links.server.advance(72 * 3600 - 60)  # a minute before: still good
    assert (await follow(http, approve))[0] == 200
    default_links.server.advance(120)  # a minute after
    status, page = await follow(http, approve)
    assert status == 410 and "expired" in page
    assert (await agent(default_links, http).get(esc["id"]))["status"] == "open"
