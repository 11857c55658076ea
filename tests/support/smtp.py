"""A real SMTP server for tests: aiosmtpd on a free loopback port, plain, with
STARTTLS or TLS from the start (SMTPS), optionally requiring a login, with a
certificate from a CA made in the test (trustme), so the server under test
verifies a real chain against ``--smtp-ca-file``.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path

import attrs
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword
from tests.support.wait import eventually


@attrs.frozen
class Received:
    mail_from: str
    rcpt_tos: tuple[str, ...]
    message: email.message.EmailMessage
    tls: bool  # the message came over an encrypted channel
    login: str | None  # who had logged in


@attrs.define
class Inbox:
    """What the server accepted, and the logins it was offered. ``passwords``
    (login -> password) may change while the server runs."""

    passwords: dict[str, str] = attrs.field(factory=dict)
    received: list[Received] = attrs.field(factory=list)
    logins_tried: list[str] = attrs.field(factory=list)
    implicit_tls: bool = False

    async def handle_DATA(self, server, session, envelope):  # aiosmtpd names the hook
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        login = session.auth_data if session.authenticated else None  # what authenticate() put there
        tls = self.implicit_tls or session.ssl is not None
        self.received.append(Received(envelope.mail_from, tuple(envelope.rcpt_tos), message, tls=tls, login=login))
        return "250 OK"

    def authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        if not isinstance(auth_data, LoginPassword):
            return AuthResult(success=False, handled=False)
        login = auth_data.login.decode()
        self.logins_tried.append(login)
        if self.passwords.get(login) != auth_data.password.decode():
            return AuthResult(success=False, handled=False)  # aiosmtpd answers 535
        return AuthResult(success=True, auth_data=login)

    async def wait_for(self, n: int = 1, *, timeout_s: float = 30.0) -> list[Received]:
        # A deadline, not a speed figure (a loaded machine is slow).
        await eventually(lambda: len(self.received) >= n, timeout_s=timeout_s, what=f"{n} message(s)")
        return self.received


@attrs.frozen
class TestCA:
    """A CA made for one test, and a server certificate it issued for 127.0.0.1."""

    __test__ = False  # not a pytest test class
    ca_file: Path  # what --smtp-ca-file is given
    server_context: ssl.SSLContext


def make_ca(directory: Path) -> TestCA:
    ca = trustme.CA()
    ca_file = directory / "test-ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    return TestCA(ca_file=ca_file, server_context=context)


@attrs.frozen
class SmtpServer:
    inbox: Inbox
    port: int

    def url(self, scheme: str = "smtp", *, login: str = "") -> str:
        """``login``: ``user:password`` as it goes in the URL (percent-encoded)."""
        return f"{scheme}://{login + '@' if login else ''}127.0.0.1:{self.port}"


@contextlib.contextmanager
def smtp_server(*, tls: str | None = None, context: ssl.SSLContext | None = None, passwords: dict[str, str] | None = None) -> Iterator[SmtpServer]:
    """``tls``: None (plain), ``"starttls"`` or ``"smtps"``. With ``passwords``
    every message needs a login first (after STARTTLS, when offered)."""
    inbox = Inbox(passwords=dict(passwords or {}), implicit_tls=tls == "smtps")
    with socket.socket() as probe:  # aiosmtpd's readiness check needs a real port, not 0
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    options: dict = {}
    if tls == "starttls":
        options.update(tls_context=context, require_starttls=True)
    elif tls == "smtps":
        options.update(ssl_context=context)
    if passwords is not None:
        # aiosmtpd counts only STARTTLS as TLS: a server that is TLS from the
        # first byte must not also demand it before AUTH.
        options.update(authenticator=inbox.authenticate, auth_required=True, auth_require_tls=tls == "starttls")
    controller = Controller(inbox, hostname="127.0.0.1", port=port, **options)
    controller.start()
    try:
        yield SmtpServer(inbox=inbox, port=port)
    finally:
        controller.stop()
