"""Real mail (issue #24 point 9, CONTRACT §16): STARTTLS, SMTPS, logins,
``--smtp-from`` and ``--smtp-ca-file``, through a real ``escalated serve``
and a real aiosmtpd that requires a login, with a certificate from a CA made
in the test (tests/support/smtp.py).

Email is sent the same way on both backends (the outbox row is all the
store gives the sender), so these run on SQLite, like test_notifications.py.
"""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from tests.support.api import Api
from tests.support.server import ServerProcess, cli
from tests.support.smtp import make_ca, smtp_server
from tests.web.support import WebClient

PASSWORD = "s3cret:p@ss/word"  # percent-encoded in the URL below
IN_URL = "s3cret%3Ap%40ss%2Fword"
# aiosmtpd counts only STARTTLS as TLS, so a server that is TLS from the first
# byte and requires a login warns that it does not also demand STARTTLS.
SMTPS_LOGIN_WARNING = "ignore:Requiring AUTH while not requiring TLS:UserWarning"


async def email_delivery(api: Api, escalation_id: str, *, attempts: int = 1, status: str | None = None, timeout_s: float = 30.0) -> dict:
    """The escalation's email notification once it has ``attempts`` attempts (and ``status``)."""
    async with asyncio.timeout(timeout_s):
        while True:
            found = [d for d in await api.deliveries(escalation_id) if d["target"].startswith("email:")]
            if found and len(found[0]["attempts"]) >= attempts and status in (None, found[0]["status"]):
                return found[0]
            await asyncio.sleep(0.05)


def serve(tmp_path, smtp_url: str, *args: str) -> ServerProcess:
    """The SMTP URL in the environment, as the help advises when it holds a password."""
    server = ServerProcess(db=tmp_path / "mail.db", args=("--retry-schedule", "300ms", *args), env={"ESCALATED_SMTP_URL": smtp_url})
    server.start()
    try:
        server.cli("users", "add", "root", "--role", "admin")
        server.cli("policy", "set", "refunds.large", "--notify", "email:ops@example.com")
    except BaseException:
        server.stop()
        raise
    return server


async def test_starttls_login_refused_then_accepted_with_the_sender_from_smtp_from(tmp_path):
    """``smtp://`` takes the STARTTLS the server offers, verified against the
    test CA; a refused login is a failed attempt in the server's words,
    retried; once the password is right the email goes, from --smtp-from,
    and the page says the mail server accepted it. The password is never
    shown: not in the API, the page or the server's output."""
    ca = make_ca(tmp_path)
    with smtp_server(tls="starttls", context=ca.server_context, passwords={"mailer": "not-yet"}) as smtp:
        server = serve(tmp_path, smtp.url("smtp", login=f"mailer:{IN_URL}"), "--smtp-from", "alerts@example.com", "--smtp-ca-file", str(ca.ca_file))
        try:
            async with aiohttp.ClientSession() as session:
                api = Api(server.url, server.bootstrap_key, session)
                esc = await api.create()
                refused = await email_delivery(api, esc["id"])
                assert refused["attempts"][0]["error"] == "SMTP login refused: 535 5.7.8 Authentication credentials invalid", refused
                assert refused["status"] == "pending" and smtp.inbox.received == []
                smtp.inbox.passwords["mailer"] = PASSWORD
                delivered = await email_delivery(api, esc["id"], status="delivered")
            [got] = smtp.inbox.received
            assert got.tls and got.login == "mailer"
            assert got.mail_from == "alerts@example.com" and got.message["From"] == "alerts@example.com"
            assert got.rcpt_tos == ("ops@example.com",) and esc["id"] in got.message.get_body(preferencelist=("plain",)).get_content()
            page = await asyncio.to_thread(escalation_page, server, esc["id"])
            assert "accepted by the mail server" in page and "no answer" not in page
            assert "Authentication credentials invalid" in page  # the refused attempt, in the server's words
            shown = str(delivered) + page + "".join(server.output)
            assert PASSWORD not in shown and IN_URL not in shown
        finally:
            server.stop()
    assert PASSWORD not in "".join(server.output) and IN_URL not in "".join(server.output)


def escalation_page(server: ServerProcess, escalation_id: str) -> str:
    web = WebClient(server.url)
    web.sign_in(cli(server.db, "users", "token", "root"))
    page = web.get(f"/app/escalations/{escalation_id}")
    assert page.status == 200, page.status
    return page.text


@pytest.mark.filterwarnings(SMTPS_LOGIN_WARNING)
async def test_smtps_with_a_private_ca_and_a_login(tmp_path):
    """``smtps://``: TLS from the first byte (it used to be sent as plain SMTP)."""
    ca = make_ca(tmp_path)
    with smtp_server(tls="smtps", context=ca.server_context, passwords={"mailer": PASSWORD}) as smtp:
        server = serve(tmp_path, smtp.url("smtps", login=f"mailer:{IN_URL}"), "--smtp-ca-file", str(ca.ca_file))
        try:
            async with aiohttp.ClientSession() as session:
                api = Api(server.url, server.bootstrap_key, session)
                esc = await api.create()
                await email_delivery(api, esc["id"], status="delivered")
            [got] = smtp.inbox.received
            assert got.tls and got.login == "mailer"
            assert got.mail_from == "escalated@localhost"  # no --smtp-from: the default sender
        finally:
            server.stop()


@pytest.mark.filterwarnings(SMTPS_LOGIN_WARNING)
async def test_a_certificate_from_an_unknown_ca_is_a_failed_attempt_and_nothing_is_sent(tmp_path):
    """Without --smtp-ca-file the test CA is not trusted: the login is never
    sent over a channel to a server that could not prove who it is."""
    ca = make_ca(tmp_path)
    with smtp_server(tls="smtps", context=ca.server_context, passwords={"mailer": PASSWORD}) as smtp:
        server = serve(tmp_path, smtp.url("smtps", login=f"mailer:{IN_URL}"))
        try:
            async with aiohttp.ClientSession() as session:
                api = Api(server.url, server.bootstrap_key, session)
                esc = await api.create()
                failed = await email_delivery(api, esc["id"], attempts=2)
            error = failed["attempts"][0]["error"]
            assert error.startswith("TLS: the server's certificate was not trusted"), error
            assert failed["status"] == "pending"  # retried like any notification
            assert smtp.inbox.logins_tried == [] and smtp.inbox.received == []
        finally:
            server.stop()


async def test_smtp_starttls_refuses_a_server_that_offers_no_starttls(tmp_path):
    with smtp_server() as smtp:
        server = serve(tmp_path, smtp.url("smtp+starttls"))
        try:
            async with aiohttp.ClientSession() as session:
                api = Api(server.url, server.bootstrap_key, session)
                esc = await api.create()
                failed = await email_delivery(api, esc["id"])
            assert failed["attempts"][0]["error"] == "SMTP: the server does not offer STARTTLS, which smtp+starttls:// requires"
            assert smtp.inbox.received == []
        finally:
            server.stop()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--smtp-url", f"smtpx://mailer:{IN_URL}@127.0.0.1:25"), "--smtp-url: use smtp://"),
        (("--smtp-url", f"smtp://mailer:{IN_URL}@127.0.0.1:99999"), "--smtp-url: the port"),
        (("--smtp-url", "smtp://127.0.0.1", "--smtp-from", "Ops <ops@example.com>"), "--smtp-from"),
        (("--smtp-from", "ops@example.com"), "need --smtp-url"),
    ],
)
def test_a_bad_smtp_setting_stops_serve_with_one_line_that_never_shows_the_password(tmp_path, args, words):
    proc = ServerProcess(db=tmp_path / "bad.db", args=args)
    with pytest.raises(AssertionError, match="server exited early") as exited:
        proc.start()
    said = str(exited.value)
    assert words in said and "Traceback" not in said, said
    assert IN_URL not in said and PASSWORD not in said


def test_a_ca_file_that_is_not_one_stops_serve(tmp_path):
    bogus = tmp_path / "ca.pem"
    bogus.write_text("not a certificate\n")
    proc = ServerProcess(db=tmp_path / "bad.db", args=("--smtp-url", "smtp://127.0.0.1", "--smtp-ca-file", str(bogus)))
    with pytest.raises(AssertionError, match="server exited early") as exited:
        proc.start()
    assert f"--smtp-ca-file {bogus}: not a PEM file of CA certificates" in str(exited.value)
