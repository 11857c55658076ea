"""One email handed to the operator's SMTP server (domain/mailserver.py says
which URL means what).

Blocking (``smtplib``), so the sender runs it in a thread. Every failure
becomes ``MailFailure`` with the server's own words (its reply code and
text, or the TLS library's reason), which the sender records as a failed
attempt and retries like any notification. Nothing here ever puts the
password into a message: ``smtplib`` sends it only inside AUTH, and no
error below quotes the URL.
"""

from __future__ import annotations

import functools
import smtplib
import ssl
from email.message import EmailMessage

from escalated.domain.mailserver import MailServer

TIMEOUT_S = 10.0  # per socket operation, as before: an email is bounded by its server's pace


class MailFailure(Exception):
    """One attempt failed; ``str()`` is what the escalation's page shows."""


@functools.lru_cache(maxsize=4)
def tls_context(ca_file: str | None) -> ssl.SSLContext:
    """The system's CAs plus ``--smtp-ca-file``; names and certificates always
    checked. Built once per file (loading the CA store costs milliseconds).
    Raises ``OSError`` or ``ssl.SSLError`` for a file that is not a CA."""
    context = ssl.create_default_context()
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    return context


def send(server: MailServer, message: EmailMessage) -> None:
    """Hand ``message`` to ``server``; ``MailFailure`` if it was not accepted."""
    try:
        _send(server, message)
    except smtplib.SMTPAuthenticationError as exc:
        raise MailFailure(f"SMTP login refused: {_reply(exc.smtp_code, exc.smtp_error)}") from None
    except smtplib.SMTPRecipientsRefused as exc:
        refused = "; ".join(f"{rcpt}: {_reply(code, text)}" for rcpt, (code, text) in exc.recipients.items())
        raise MailFailure(f"SMTP refused the recipient: {refused}") from None
    except smtplib.SMTPResponseException as exc:
        raise MailFailure(f"SMTP: {_reply(exc.smtp_code, exc.smtp_error)}") from None
    except ssl.SSLCertVerificationError as exc:
        raise MailFailure(f"TLS: the server's certificate was not trusted: {exc.verify_message} (--smtp-ca-file trusts a private CA)") from None
    except ssl.SSLError as exc:
        raise MailFailure(f"TLS failed: {exc.reason or exc}") from None
    except (smtplib.SMTPException, OSError) as exc:  # refused connection, timeout, no AUTH offered, closed mid-way
        raise MailFailure(f"SMTP: {exc}") from None


def _send(server: MailServer, message: EmailMessage) -> None:
    context = tls_context(server.ca_file)
    if server.implicit_tls:
        client: smtplib.SMTP = smtplib.SMTP_SSL(server.host, server.port, timeout=TIMEOUT_S, context=context)
    else:
        client = smtplib.SMTP(server.host, server.port, timeout=TIMEOUT_S)
    with client:
        client.ehlo()
        if not server.implicit_tls:
            if client.has_extn("starttls"):
                client.starttls(context=context)
                client.ehlo()  # RFC 3207: what the server offers is asked again inside TLS
            elif server.starttls_required:
                raise MailFailure("SMTP: the server does not offer STARTTLS, which smtp+starttls:// requires")
        if server.username:
            client.login(server.username, server.password or "")
        client.send_message(message, from_addr=server.sender)


def _reply(code: int, text: bytes | str) -> str:
    words = text.decode(errors="replace") if isinstance(text, bytes) else str(text)
    return f"{code} {' '.join(words.split())}"
