"""The SMTP server email notifications go through (CONTRACT §16):
``serve --smtp-url``, ``--smtp-from`` and ``--smtp-ca-file``, read once.

- ``smtp://host[:25]``: STARTTLS when the server offers it, plain otherwise
  (a relay on the same machine often offers none);
- ``smtp+starttls://host[:587]``: STARTTLS required (submission);
- ``smtps://host[:465]``: TLS from the first byte.

``user:password@`` logs in (percent-encode ``@``, ``:`` or ``/`` in either).
TLS always verifies the server's certificate and name, against the system's
CAs plus ``--smtp-ca-file``: an encrypted channel to the wrong server would
still hand it the password. ``str()`` hides the password, so a
``MailServer`` can be printed or logged; ``repr()`` leaves it out.
"""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

import attrs

from escalated.errors import ConfigError

DEFAULT_PORTS = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}
DEFAULT_SENDER = "escalated@localhost"
# One address, nothing that could end or add a header line (it goes into
# From: and MAIL FROM). Looser than a reviewer's address: a relay's own
# single-label domain (escalated@localhost) is a fair sender.
_SENDER = re.compile(r"[^\s@<>,;:\"()\[\]\\]+@[^\s@<>,;:\"()\[\]\\]+")


@attrs.frozen
class MailServer:
    scheme: str  # a key of DEFAULT_PORTS
    host: str
    port: int
    username: str | None = None
    password: str | None = attrs.field(default=None, repr=False)
    sender: str = DEFAULT_SENDER  # From: and the envelope sender
    ca_file: str | None = None  # trusted besides the system's CAs

    @property
    def starttls_required(self) -> bool:
        return self.scheme == "smtp+starttls"

    @property
    def implicit_tls(self) -> bool:
        return self.scheme == "smtps"

    def __str__(self) -> str:
        login = f"{self.username}:***@" if self.username else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{login}{host}:{self.port}"


def parse_mail_server(url: str, *, sender: str | None = None, ca_file: str | None = None) -> MailServer:
    """``ConfigError`` naming the flag; never quoting the URL, which may hold a password."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise ConfigError("--smtp-url: use smtp://HOST[:PORT], smtp+starttls://HOST[:PORT] or smtps://HOST[:PORT]")
    if not parts.hostname:
        raise ConfigError(f"--smtp-url: no host after {scheme}://")
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError:
        raise ConfigError("--smtp-url: the port is not a number from 1 to 65535") from None
    if parts.path.strip("/") or parts.query or parts.fragment:
        raise ConfigError("--smtp-url: nothing may follow HOST:PORT (no path, query or fragment)")
    sender = DEFAULT_SENDER if sender is None else sender.strip()
    if not _SENDER.fullmatch(sender):
        raise ConfigError(f"--smtp-from {sender!r}: give one address, like escalated@example.com")
    return MailServer(
        scheme=scheme,
        host=parts.hostname,
        port=port,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password is not None else None,
        sender=sender,
        ca_file=ca_file,
    )
