"""How one delivery attempt is made: HTTP POST (callbacks, ``webhook:`` and
``slack:`` targets), SMTP, or notify-send.

Each function returns an ``Outcome``; none raises for a failed attempt.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import time

import aiohttp
import attrs
import orjson
from aiohttp.abc import AbstractResolver
from aiohttp.resolver import DefaultResolver

from escalated import __version__
from escalated.core.decisionlinks import EmailPlan
from escalated.domain.models import CALLBACK, Delivery
from escalated.domain.slack import unescape
from escalated.domain.mailserver import MailServer
from escalated.engine import mail, slackmessages, smtp
from escalated.engine.retry import parse_retry_after
from escalated.domain.urlsafety import CallbackRules, address_problem, client_url, host_allowed, literal_problem, normal_host
from escalated.agent.signing import sign


# A receiver's answer matters only for its status and headers; read at most
# this much of its body (a 1 GiB answer once took the server to 2.1 GB).
MAX_ANSWER_BYTES = 64 * 1024


@attrs.frozen
class Outcome:
    ok: bool
    duration_ms: int
    status_code: int | None = None
    error: str | None = None
    retry_after_s: float | None = None
    permanent: bool = False  # retrying cannot help (refused target, nothing configured)


class RefusedAddress(OSError):
    pass


class AddressGuard:
    """Vets every address a socket is about to connect to.

    aiohttp skips the resolver for a literal address, so the resolver alone
    never sees ``http://１６９.２５４.１６９.２５４/`` (yarl normalises it to
    the literal). The socket factory sees every address, literal or resolved.
    Addresses an allowed host resolved to are let through, so
    ``--allow-callback-host`` still works for names.
    """

    def __init__(self, rules: CallbackRules) -> None:
        self.rules = rules
        self._allowed_addresses = {normal_host(h) for h in rules.allowed}

    def allow_addresses(self, addresses: list[str]) -> None:
        self._allowed_addresses.update(addresses)

    def socket(self, addr_info) -> socket.socket:
        family, type_, proto, _, sockaddr = addr_info
        address = sockaddr[0]
        if address not in self._allowed_addresses and (problem := address_problem(address, deny_private=self.rules.deny_private)):
            raise RefusedAddress(f"refused to connect: {problem}")
        return socket.socket(family=family, type=type_, proto=proto)


class GuardedResolver(AbstractResolver):
    """Checks what a name resolves to, so DNS can not smuggle a callback to a
    metadata or link-local address after creation (and names the host in the
    error); ``AddressGuard`` checks the address again at connect."""

    def __init__(self, rules: CallbackRules, *, guard: AddressGuard | None = None) -> None:
        self._inner = DefaultResolver()
        self._rules = rules
        self._guard = guard

    async def resolve(self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET):
        infos = await self._inner.resolve(host, port, family)
        if host_allowed(host, self._rules):
            if self._guard is not None:
                self._guard.allow_addresses([info["host"] for info in infos])
            return infos
        for info in infos:
            if problem := address_problem(info["host"], deny_private=self._rules.deny_private):
                raise RefusedAddress(f"{host} resolves to {problem}")
        return infos

    async def close(self) -> None:
        await self._inner.close()


def open_session(*, rules: CallbackRules, limit: int) -> aiohttp.ClientSession:
    """The sender's HTTP client: every address it connects to is vetted."""
    guard = AddressGuard(rules)
    connector = aiohttp.TCPConnector(
        resolver=GuardedResolver(rules, guard=guard), limit=limit, socket_factory=guard.socket
    )
    return aiohttp.ClientSession(connector=connector)


async def read_capped(response: aiohttp.ClientResponse, *, limit_bytes: int = MAX_ANSWER_BYTES) -> int:
    """Read at most ``limit_bytes`` of a receiver's answer; the rest is dropped
    with the connection (only the status and headers count)."""
    read = 0
    while read < limit_bytes:
        chunk = await response.content.read(min(64 * 1024, limit_bytes - read))
        if not chunk:
            return read
        read += len(chunk)
    if not response.content.at_eof():
        response.close()  # do not drain a huge body to reuse the connection
    return read


def origin(delivery: Delivery) -> str:
    """What the sender limits concurrency by: scheme, host and port of an HTTP
    target as the client will connect to it; the channel otherwise."""
    target = delivery.target if delivery.kind == CALLBACK else webhook_url(delivery.target) or delivery.target
    parsed = client_url(target)
    if parsed is None:
        return target.split(":", 1)[0]  # "email", "desktop", or a URL that is refused anyway
    return f"{parsed.scheme}://{parsed.raw_host}:{parsed.port}"


def webhook_url(target: str) -> str | None:
    """The URL a notification POSTs to: ``webhook:URL``, or ``slack:URL`` (a
    Slack incoming webhook; its body is a Block Kit message, engine/slackmessages.py)."""
    for prefix in ("webhook:", "slack:"):
        if target.startswith(prefix):
            return target.removeprefix(prefix)
    return None


def ends_within_timeout(delivery: Delivery) -> bool:
    """True when an attempt of ``delivery`` is one POST, which aiohttp ends
    within ``timeout_s`` whatever the receiver does. An email is bounded by
    its SMTP server's pace (10 s per operation), a desktop notification not
    at all."""
    return delivery.kind == CALLBACK or webhook_url(delivery.target) is not None


def slack_verdict(outcome: Outcome) -> Outcome:
    """Slack answers a webhook it will never take with a 4xx (``invalid_blocks``,
    ``no_service``, ``channel_is_archived``, ``action_prohibited``): retrying
    that for a day helps no one, so it fails at once, visibly. A 429 (rate
    limited, with ``Retry-After``) and a 408 are tried again."""
    if outcome.status_code is not None and 400 <= outcome.status_code < 500 and outcome.status_code not in (408, 429):
        return attrs.evolve(outcome, permanent=True)
    return outcome


def callback_headers(delivery: Delivery) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "User-Agent": f"escalated/{__version__}",
        "x-service-event": delivery.event,
        "x-service-delivery": delivery.id,
    }
    if delivery.secret:
        headers["x-service-signature"] = sign(delivery.body, delivery.secret)
    return headers


async def post(
    session: aiohttp.ClientSession,
    url: str,
    *,
    body: bytes,
    headers: dict[str, str],
    timeout_s: float,
    rules: CallbackRules,
) -> Outcome:
    """One POST by the sender's rules: the URL judged first, redirects not
    followed, at most ``MAX_ANSWER_BYTES`` of the answer read, errors in words."""
    started = time.perf_counter()

    def elapsed() -> int:
        return int((time.perf_counter() - started) * 1000)

    if problem := literal_problem(url, rules):
        return Outcome(ok=False, duration_ms=0, error=f"refused: {problem}", permanent=True)
    try:
        async with session.post(
            url,
            data=body,
            headers=headers,
            allow_redirects=False,
            timeout=aiohttp.ClientTimeout(total=timeout_s),
        ) as response:
            await read_capped(response)
            ok = 200 <= response.status < 300
            return Outcome(
                ok=ok,
                duration_ms=elapsed(),
                status_code=response.status,
                error=None if ok else f"HTTP {response.status}",
                retry_after_s=parse_retry_after(response.headers.get("Retry-After"), now_s=time.time()),
            )
    except aiohttp.ClientConnectorError as exc:
        if isinstance(exc.os_error, RefusedAddress):
            return Outcome(ok=False, duration_ms=elapsed(), error=f"refused: {exc.os_error}", permanent=True)
        return Outcome(ok=False, duration_ms=elapsed(), error=f"connection failed: {exc.os_error}")
    except TimeoutError:
        return Outcome(ok=False, duration_ms=elapsed(), error=f"timed out after {timeout_s:g}s")
    except aiohttp.ClientError as exc:
        return Outcome(ok=False, duration_ms=elapsed(), error=f"{type(exc).__name__}: {exc}")


async def post_delivery(
    session: aiohttp.ClientSession, delivery: Delivery, url: str, *, timeout_s: float, rules: CallbackRules, body: bytes | None = None
) -> Outcome:
    """POST ``delivery``'s stored body, or ``body`` rendered from it (a Slack message)."""
    return await post(
        session, url, body=delivery.body if body is None else body, headers=callback_headers(delivery), timeout_s=timeout_s, rules=rules
    )


async def post_to_slack(
    session: aiohttp.ClientSession, delivery: Delivery, url: str, *, timeout_s: float, rules: CallbackRules
) -> Outcome:
    """The notification rendered as Slack's Block Kit message, then POSTed;
    Slack's 4xx are final (``slack_verdict``)."""
    try:
        message = slackmessages.notification_body(delivery.body)
    except ValueError as exc:  # a row no version of escalated wrote
        return Outcome(ok=False, duration_ms=0, error=f"unusable Slack notification: {exc}", permanent=True)
    outcome = await post_delivery(session, delivery, url, timeout_s=timeout_s, rules=rules, body=message)
    return slack_verdict(outcome)


async def email(mail_server: MailServer | None, address: str, body: bytes, *, plan: EmailPlan | None = None) -> Outcome:
    """``plan``: the links minted for this attempt (engine/mail.py puts them in the message only)."""
    if mail_server is None:
        return Outcome(ok=False, duration_ms=0, error="no SMTP server configured (serve --smtp-url)", permanent=True)
    started = time.perf_counter()
    try:
        message = mail.compose(body, address=address, plan=plan, sender=mail_server.sender)
    except ValueError as exc:  # an address the email package refuses (stored before targets were checked)
        return Outcome(ok=False, duration_ms=0, error=f"unusable email: {exc}", permanent=True)
    try:
        await asyncio.to_thread(smtp.send, mail_server, message)
    except smtp.MailFailure as exc:
        return Outcome(ok=False, duration_ms=int((time.perf_counter() - started) * 1000), error=str(exc))
    return Outcome(ok=True, duration_ms=int((time.perf_counter() - started) * 1000))


async def desktop(body: bytes) -> Outcome:
    binary = shutil.which("notify-send")
    if binary is None:
        return Outcome(ok=False, duration_ms=0, error="skipped: notify-send is not installed", permanent=True)
    started = time.perf_counter()
    text = unescape(orjson.loads(body)["text"])  # the body's text is Slack-escaped (core/notifications.py)
    proc = await asyncio.create_subprocess_exec(binary, "escalated", text)
    code = await proc.wait()
    return Outcome(ok=code == 0, duration_ms=int((time.perf_counter() - started) * 1000), error=None if code == 0 else f"notify-send exited {code}")


async def attempt(
    delivery: Delivery,
    *,
    session: aiohttp.ClientSession,
    timeout_s: float,
    rules: CallbackRules,
    mail_server: MailServer | None,
    email_plan: EmailPlan | None = None,
) -> Outcome:
    if delivery.kind == CALLBACK:
        return await post_delivery(session, delivery, delivery.target, timeout_s=timeout_s, rules=rules)
    target = delivery.target
    if url := webhook_url(target):
        if target.startswith("slack:"):
            return await post_to_slack(session, delivery, url, timeout_s=timeout_s, rules=rules)
        return await post_delivery(session, delivery, url, timeout_s=timeout_s, rules=rules)
    if target.startswith("email:"):
        return await email(mail_server, target.removeprefix("email:"), delivery.body, plan=email_plan)
    if target == "desktop":
        return await desktop(delivery.body)
    return Outcome(ok=False, duration_ms=0, error=f"unknown target {target}", permanent=True)
