"""Frozen settings. Only the CLI reads the environment and builds these."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import attrs

from escalated.domain.limits import MAX_BODY_BYTES
from escalated.domain.mailserver import MailServer
from escalated.domain.urlsafety import CallbackRules
from escalated.timeutil import Clock, now_ms

# An email decision link's longest life, and its default (serve --link-ttl).
LINK_TTL_S = 72 * 3600.0

DEFAULT_PORT = 8470
DEFAULT_RETRY_SCHEDULE_S = (5.0, 30.0, 120.0, 600.0, 1800.0, 3600.0, 10800.0)
DEFAULT_RETRY_FOR_S = 24 * 3600.0
# MAX_BODY_BYTES (--max-body's default) lives in domain/limits beside the
# other limits, where the agent side reads it too.


def default_db_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "escalated" / "escalated.db"


@attrs.frozen
class PostgresUrl:
    """A ``postgresql://`` URL given to --db / ESCALATED_DB.

    ``str()`` hides the password, so the URL can be printed or logged;
    only the store reads ``url``.
    """

    url: str = attrs.field(repr=False)

    def __str__(self) -> str:
        parts = urlsplit(self.url)
        if parts.password is None:
            return self.url
        netloc = parts.netloc.rpartition("@")
        user = parts.username or ""
        return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[2]}"))


POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def http_url(host: str, port: int) -> str:
    """The address a server on ``host``:``port`` answers at (an IPv6 host in brackets)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def parse_db(text: str | Path) -> Path | PostgresUrl:
    """--db / ESCALATED_DB: a SQLite file path or a PostgreSQL URL."""
    if isinstance(text, str) and text.startswith(POSTGRES_SCHEMES):
        return PostgresUrl(text)
    return Path(text)


@attrs.frozen(kw_only=True)
class Settings:
    db_path: Path | PostgresUrl  # a SQLite file, or a PostgreSQL database (several replicas)
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    durability: str = "full"  # "full": fsync each commit group; "normal": may lose the last commits on power loss
    retry_schedule_s: tuple[float, ...] = DEFAULT_RETRY_SCHEDULE_S
    retry_for_s: float = DEFAULT_RETRY_FOR_S
    delivery_timeout_s: float = 10.0
    mail_server: MailServer | None = None  # serve --smtp-url, --smtp-from, --smtp-ca-file; str() hides the password
    allow_callback_hosts: tuple[str, ...] = ()
    deny_private_callbacks: bool = False  # a shared deployment: loopback and private receivers refused too
    # The two above as the sender and the create check read them (domain/urlsafety.py).
    callback_rules: CallbackRules = attrs.field(
        init=False,
        default=attrs.Factory(
            lambda self: CallbackRules(allowed=self.allow_callback_hosts, deny_private=self.deny_private_callbacks),
            takes_self=True,
        ),
    )
    max_body_bytes: int = MAX_BODY_BYTES
    rate_limit_per_s: float | None = None  # per token; None = off
    max_connections: int | None = None  # None: the open-file limit less a reserve (http/connections.py)
    header_timeout_s: float = 30.0  # above aiohttp clients' 15 s keep-alive, so they close an idle connection first
    # HTTP attempts in flight overall, at most: a bound on the sender's
    # sockets, not a share receivers compete for. It was 8, a share that two
    # hung receivers filled (on two ports of one host: every other callback
    # waited for their timeouts, #24); 64 takes 16 receivers hung at once,
    # before their breakers pause them (docs/reliability.md).
    sender_concurrency: int = 64
    # At most this many attempts to one receiver (scheme, host, port) at a
    # time: a receiver that hangs holds at most this many sockets, its own.
    sender_per_host: int = 4
    # The address people reach the server at (links in sign-in links and
    # emails); an https one marks the web app's cookies Secure.
    public_url: str | None = None
    web_idle_s: float = 12 * 3600.0  # a web session ends after this long without a request
    web_lifetime_s: float = 24 * 3600.0  # ... and this long after sign-in, however active
    # Sign-in posts, sign-in links and decision links per client address: a
    # bucket of sign_in_burst tries refilled at sign_in_per_s (None: off).
    sign_in_burst: float = 20.0
    sign_in_per_s: float | None = 20.0 / 60
    # A Slack app's signing secret: with it, slack: messages carry decision
    # buttons and POST /integrations/slack/interactions is on (issue #16).
    slack_signing_secret: str | None = attrs.field(default=None, repr=False)
    # An email decision link works until the escalation's deadline or this long, whichever is first.
    link_ttl_s: float = LINK_TTL_S
    mcp: bool = False  # serve --mcp: the MCP tools at /mcp (escalated[mcp])
    # Where every part of the server reads the time (the core, the SLA clock,
    # the sender, the handlers): the wall clock; tests pass one they move.
    clock: Clock = attrs.field(default=now_ms, repr=False, eq=False)
