"""``escalated serve``: the API, the SLA clock and the sender in one process."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import signal
import ssl
from collections.abc import Iterator
from pathlib import Path

import click
from aiohttp import web

from escalated.commands.common import converts_errors, db_option, run_admin
from escalated.commands import logsetup
from escalated.commands.dbpath import db_path_problem
from escalated.commands.gctuning import tune_for_serving
from escalated.commands.routing import log_unroutable_policies
from escalated.domain.mailserver import DEFAULT_SENDER, MailServer, parse_mail_server
from escalated.domain.validation import url_problem
from escalated.engine import smtp
from escalated.errors import ConfigError
from escalated.core.settings import DEFAULT_PORT, LINK_TTL_S, PostgresUrl, Settings, default_db_path, http_url
from escalated.core.stores import ServerLock
from escalated.timeutil import parse_duration_s

log = logging.getLogger("escalated")


def parse_schedule(text: str) -> tuple[float, ...]:
    waits = tuple(parse_duration_s(part) for part in text.split(",") if part.strip())
    if not waits:
        raise ConfigError("--retry-schedule needs at least one duration, e.g. 5s,30s,2m")
    return waits


LINK_TTL_HOURS = f"{LINK_TTL_S / 3600:g}h"


def parse_link_ttl_s(text: str) -> float:
    """--link-ttl: positive and at most LINK_TTL_S (a decision link's longest life)."""
    try:
        ttl_s = parse_duration_s(text)
    except ConfigError:
        ttl_s = 0.0
    if not 0 < ttl_s <= LINK_TTL_S:
        raise ConfigError(f"--link-ttl {text!r}: use a duration above 0 and at most {LINK_TTL_HOURS}")
    return ttl_s


def parse_public_url(text: str) -> str:
    """--public-url: the http:// or https:// address people reach this server at (no trailing slash).
    Anything else would be sent out as broken links in every email, Slack message and sign-in link."""
    if url_problem(text.strip()) is not None or "?" in text or "#" in text:
        raise ConfigError(f"--public-url {text!r}: use the http:// or https:// address people reach this server at, like https://escalated.example.com")
    return text.strip().rstrip("/")


# Under this a create's own JSON, a web form or a Slack click would not fit.
MIN_BODY_LIMIT = 1024


def check_host(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    """--host (a click callback): an empty one binds every interface and prints http://:PORT, a link to nowhere."""
    if not value.strip():
        raise click.BadParameter("give an interface: 127.0.0.1 (this machine only) or 0.0.0.0 (every IPv4 interface)")
    return value


def parse_rate(text: str, *, flag: str = "--rate-limit") -> float:
    """``20`` or ``20/s`` per second, ``600/m`` per minute."""
    amount, _, unit = text.partition("/")
    try:
        value = float(amount)
    except ValueError:
        raise ConfigError(f"{flag} {text!r}: use N/s or N/m") from None
    per = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}.get(unit)
    if per is None or value <= 0:
        raise ConfigError(f"{flag} {text!r}: use N/s or N/m")
    return value / per


def parse_sign_in_limit(text: str) -> dict:
    """--sign-in-rate-limit: ``20/m`` lets an address 20 tries at once, then
    20 a minute; ``off`` turns it off. As Settings fields."""
    if text.strip().lower() == "off":
        return {"sign_in_per_s": None}
    per_s = parse_rate(text, flag="--sign-in-rate-limit")
    return {"sign_in_burst": max(1.0, float(text.partition("/")[0])), "sign_in_per_s": per_s}


@contextlib.contextmanager
def locked(db_path: Path) -> Iterator[ServerLock]:
    """The single-server lock, with a path problem named like any other (dbpath.py)."""
    lock = ServerLock(db_path)
    try:
        lock.acquire()
    except OSError as exc:
        raise ConfigError(db_path_problem(db_path, exc)) from None
    try:
        yield lock
    finally:
        lock.release()


def mail_server_from(smtp_url: str | None, *, sender: str | None, ca_file: str | None) -> MailServer | None:
    """--smtp-url and its companions, checked before anything starts (a CA
    file that is not one is named now, not at the first email)."""
    if not smtp_url:
        if sender or ca_file:
            raise ConfigError("--smtp-from and --smtp-ca-file need --smtp-url")
        return None
    server = parse_mail_server(smtp_url, sender=sender, ca_file=ca_file)
    try:
        smtp.tls_context(ca_file)
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"--smtp-ca-file {ca_file}: not a PEM file of CA certificates ({exc})") from None
    return server


def check_database(settings: Settings) -> None:
    """Open (and migrate) before binding, so a bad --db is named first (dbpath.py),
    and log the policies whose reviewers match no user (routing.py)."""
    if isinstance(settings.db_path, PostgresUrl):
        from escalated.commands.migrate import apply_migrations

        try:
            apply_migrations(settings.db_path)  # serialised across replicas starting together
        except click.ClickException as exc:
            raise ConfigError(f"cannot use database {settings.db_path}: {exc.message}") from None
        return
    run_admin(settings.db_path, lambda admin: log_unroutable_policies(admin, log))


def show_bootstrap_key(secret: str) -> None:
    click.echo(f"Bootstrap API key for workspace 'default' (shown once, keep it): {secret}")


def cannot_listen(settings: Settings, exc: OSError) -> click.ClickException:
    """One line for a bind that failed: which address, why, and what to do."""
    address = f"{settings.host}:{settings.port}"
    if exc.errno == errno.EADDRINUSE:
        hint = "another process (another escalated serve?) is listening there: stop it, or pick a free port with --port"
    elif exc.errno in (errno.EACCES, errno.EPERM):
        hint = "permission denied: ports below 1024 need privileges, pick another with --port"
    elif exc.errno == errno.EADDRNOTAVAIL:
        hint = "this machine has no such address: check --host"
    else:
        hint = exc.strerror or str(exc)
    return click.ClickException(f"cannot listen on {address}: {hint}")


async def run_server(settings: Settings, *, ready=None) -> None:
    from escalated.server import create_app
    from escalated.http.appkeys import ADMIN, SERVICE
    from escalated.http.connections import GatedSite, default_max_connections, runner_options

    # Stops are caught before anything starts: a supervisor may send SIGTERM the moment it reads
    # "Listening on", and that is an operator's stop (exit 0), not death by signal.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    app = create_app(settings)
    # Long polls (wait, /events) would otherwise hold a shutdown for a minute;
    # nothing is lost by cutting them: clients reconnect and state is in SQLite.
    runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=2.0, **runner_options(settings))
    try:
        await runner.setup()
    except BaseException:
        # A start-up step failed: undo the ones that ran (the store above all),
        # so the process exits instead of hanging on the store's threads.
        await runner.cleanup()
        raise
    site = GatedSite(runner, settings.host, settings.port, max_connections=settings.max_connections or default_max_connections())
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        raise cannot_listen(settings, exc) from None
    try:
        # Only now that the socket is bound: a key printed before a failed bind
        # would be recorded as shown and never printed again.
        # Shown inside the transaction that stores it (AdminService.bootstrap_key).
        await runner.app[ADMIN].bootstrap_key(show=show_bootstrap_key)
        listening = http_url(settings.host, site.bound_port)  # the real port when --port 0
        service = app[SERVICE]
        service.listening_at(listening)  # links in emails and Slack messages lead here unless --public-url
        click.echo(f"Listening on {listening}")
        click.echo(f"Web app: {service.web_url}/app/")
        if settings.slack_signing_secret:  # where the Slack app's Interactivity Request URL points (never the secret)
            click.echo(f"Slack interactions: {service.web_url}/integrations/slack/interactions")
        tune_for_serving()
        if ready is not None:
            ready(listening)
        await stop.wait()
    finally:
        await runner.cleanup()
    stopped_by_engine(app)


def require_mcp_sdk() -> None:
    """--mcp without the SDK is one line naming the extra, before anything starts."""
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise click.ClickException("--mcp needs the MCP SDK: pip install 'escalated[mcp]'") from None


def stopped_by_engine(app: web.Application) -> None:
    """Exit 1 when a background task's death stopped the server (it signalled
    SIGTERM to stop like any other stop): a supervisor must see a failure."""
    from escalated.http.lifecycle import ENGINE_HEALTH

    health = app.get(ENGINE_HEALTH)
    if health is not None and health.died:
        raise click.ClickException(f"the server stopped because {health.died}")


@click.command()
@db_option
@click.option("--host", default="127.0.0.1", show_default=True, callback=check_host,
              help="Interface to listen on (0.0.0.0: every IPv4 interface).")
@click.option("--port", default=DEFAULT_PORT, show_default=True, type=click.IntRange(0, 65535), help="Port; 0 picks a free one.")
@click.option(
    "--durability",
    type=click.Choice(["full", "normal"]),
    default="full",
    show_default=True,
    help="full: every commit group is fsynced (survives power loss). normal: survives a process crash, "
    "may lose the last commits on power loss.",
)
@click.option("--retry-schedule", default="5s,30s,2m,10m,30m,1h,3h", show_default=True,
              help="Waits between callback attempts; the last repeats until --retry-for is spent.")
@click.option("--retry-for", default="24h", show_default=True, help="How long to keep retrying a delivery.")
@click.option("--delivery-timeout", default="10s", show_default=True, help="Per-attempt timeout of a callback.")
@click.option(
    "--smtp-url",
    envvar="ESCALATED_SMTP_URL",
    show_envvar=True,
    help="SMTP server for email: notify targets: smtp://HOST[:25] (STARTTLS when offered), smtp+starttls://HOST[:587] "
    "(STARTTLS required) or smtps://HOST[:465] (TLS); USER:PASSWORD@ before the host logs in. "
    "Prefer the environment variable when it holds a password (a flag shows in ps).",
)
@click.option("--smtp-from", metavar="ADDRESS", help=f"The sender of email notifications  [default: {DEFAULT_SENDER}]")
@click.option(
    "--smtp-ca-file",
    type=click.Path(exists=True, dir_okay=False),
    help="A PEM file of CA certificates to trust for the SMTP server's TLS, besides the system's (a private CA).",
)
@click.option(
    "--allow-callback-host",
    "allow_hosts",
    multiple=True,
    help="Allow callbacks and webhooks to this host even if link-local, metadata or (with --deny-private-callbacks) "
    "loopback or private (repeatable).",
)
@click.option(
    "--deny-private-callbacks",
    is_flag=True,
    help="For a shared deployment: refuse callbacks and webhooks to loopback and private addresses too "
    "(name exceptions with --allow-callback-host).",
)
@click.option("--rate-limit", help="Per-token request limit, e.g. 50/s or 600/m (off by default).")
@click.option("--public-url",
              help="The address people reach this server at, for links in emails and sign-in links (https:// marks web cookies Secure).")
@click.option("--link-ttl", default=LINK_TTL_HOURS, show_default=True,
              help="How long an email decision link works, at most (it also ends at the escalation's deadline); no longer than the default.")
@click.option("--sign-in-rate-limit", default="20/m", show_default=True,
              help="Web sign-in posts, sign-in links and email decision links per client address: "
              "N tries at once, then N per minute (N/m), second or hour; off to turn it off.")
@click.option("--session-lifetime", default="24h", show_default=True,
              help="A web session ends this long after sign-in however active (besides 12 h without a request).")
@click.option(
    "--slack-signing-secret",
    envvar="ESCALATED_SLACK_SIGNING_SECRET",
    show_envvar=True,
    help="Your Slack app's signing secret: slack: messages get decision buttons, and Slack's clicks are "
    "verified with it at /integrations/slack/interactions. Prefer the environment variable (a flag shows in ps).",
)
@click.option("--max-body", default=256 * 1024, show_default=True, type=click.IntRange(min=MIN_BODY_LIMIT),
              help="Request body limit in bytes.")
@click.option("--header-timeout", default="30s", show_default=True,
              help="Close a connection that has not sent a whole request's headers within this long.")
@click.option("--max-connections", type=click.IntRange(min=1), help="Open connections at most  [default: the open-file limit less 256].")
@click.option("--mcp", "mcp", is_flag=True, help="Also serve the MCP tools as Streamable HTTP at /mcp (needs escalated[mcp]).")
@click.option("--log-level", default="info", type=click.Choice(["debug", "info", "warning", "error"]),
              show_default=True, help="Log verbosity on stderr.")
@converts_errors
# One parameter a line: each flag added is a line of its own.
def serve(
    db_path,
    host,
    port,
    durability,
    retry_schedule,
    retry_for,
    delivery_timeout,
    smtp_url,
    smtp_from,
    smtp_ca_file,
    allow_hosts,
    deny_private_callbacks,
    rate_limit,
    public_url,
    link_ttl,
    sign_in_rate_limit,
    session_lifetime,
    slack_signing_secret,
    max_body,
    header_timeout,
    max_connections,
    mcp,
    log_level,
) -> None:
    """Run the API, the SLA clock and the callback/notification sender.

    Prints the URL it listens on. On a brand-new database it also prints a
    bootstrap API key, once.
    """
    logsetup.configure(log_level)
    if mcp:
        require_mcp_sdk()
    settings = Settings(
        db_path=db_path or default_db_path(),
        host=host,
        port=port,
        durability=durability,
        retry_schedule_s=parse_schedule(retry_schedule),
        retry_for_s=parse_duration_s(retry_for),
        delivery_timeout_s=parse_duration_s(delivery_timeout),
        mail_server=mail_server_from(smtp_url, sender=smtp_from, ca_file=smtp_ca_file),
        allow_callback_hosts=tuple(allow_hosts),
        deny_private_callbacks=deny_private_callbacks,
        rate_limit_per_s=parse_rate(rate_limit) if rate_limit else None,
        max_body_bytes=max_body,
        public_url=parse_public_url(public_url) if public_url else None,
        slack_signing_secret=slack_signing_secret or None,  # an empty variable is no secret
        link_ttl_s=parse_link_ttl_s(link_ttl),
        web_lifetime_s=parse_duration_s(session_lifetime),
        **parse_sign_in_limit(sign_in_rate_limit),
        header_timeout_s=parse_duration_s(header_timeout),
        max_connections=max_connections,
        mcp=mcp,
    )
    if isinstance(settings.db_path, PostgresUrl):  # any number of replicas share it
        check_database(settings)
        asyncio.run(run_server(settings))
        return
    # Before anything touches the database: a second server must not even
    # migrate or mint a bootstrap key on a database another one serves.
    with locked(settings.db_path) as lock:
        check_database(settings)
        asyncio.run(run_server(settings, ready=lock.announce))
