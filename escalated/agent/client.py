"""The async HTTP client an agent (or the TUI, or the guard) uses.

One method per route of CONTRACT §3. Every non-2xx answer becomes an
``ApiError`` parsed from the problem+json body; a server that cannot be
reached becomes ``ServerUnreachable``. Creates are retried only when the
caller gave an ``idempotency_key``: the server replays the original answer
for a repeated key, so a retry can never make a second escalation.
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any
from urllib.parse import quote

import aiohttp

from escalated.domain.models import TERMINAL_STATUSES
from escalated.domain.validation import url_problem
from escalated.errors import EscalatedError
from escalated.agent.outcome import Outcome, outcome_of
from escalated.agent.sse import Event, SseParser

DEFAULT_URL = "http://127.0.0.1:8470"
DONE_STATUSES = frozenset(TERMINAL_STATUSES)
# The server caps one wait at 60 s (CONTRACT §3); longer waits are loops.
MAX_WAIT_S = 60.0
# How long a Retry-After may hold a create retry back: an agent would rather
# see the error than hang for an hour.
MAX_RETRY_AFTER_S = 30.0
# The server sends ": ping" every 15 s; three missed pings mean a dead link.
EVENTS_READ_TIMEOUT_S = 45.0


class ApiError(EscalatedError):
    """A non-2xx answer from the server, as its problem+json body told it."""

    def __init__(
        self,
        status: int,
        *,
        code: str,
        title: str,
        detail: str = "",
        errors: list[dict] | None = None,
        retry_after_s: float | None = None,
    ):
        super().__init__(detail or title, errors=errors)
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail or title
        self.retry_after_s = retry_after_s

    def __str__(self) -> str:
        return f"{self.status} {self.code}: {self.detail}"


class InvalidServerUrl(EscalatedError, ValueError):
    """The server's address is not an http:// or https:// URL with a host."""

    code, title = "invalid_server_url", "Invalid server URL"


def server_url(value: str) -> str:
    """``value`` as the client's base URL (no trailing slash), or ``InvalidServerUrl``.

    Checked when a client is made, not at its first request: a typo (no scheme,
    ``localhost:8470``) is one sentence, not an aiohttp traceback. The value is
    not repeated back: an address may carry a password."""
    if url_problem(value.strip()) is not None:  # the check a create's resume URL gets
        raise InvalidServerUrl("the escalated server's address must be an http:// or https:// URL with a host, like http://127.0.0.1:8470")
    return value.strip().rstrip("/")


class InvalidToken(EscalatedError, ValueError):
    """The token has whitespace or a control character inside it (no token of ours does)."""

    code, title = "invalid_token", "Invalid token"


def bearer_token(value: str) -> str:
    """``value`` without the whitespace around it, or ``InvalidToken``.

    A token read from a file edited on Windows ends in a carriage return,
    which aiohttp refuses as header injection at the first request, with a
    traceback whose locals show the token. The surrounding whitespace is
    dropped; any inside is refused here, in a sentence without the token."""
    token = value.strip()
    if not token or any(ch.isspace() or not ch.isprintable() for ch in token):
        raise InvalidToken("the token is empty or has a space or a control character inside it; check --token / ESCALATED_TOKEN / ESCALATED_API_KEY")
    return token


class ServerUnreachable(ApiError):
    """Connection refused, name resolution failed or the request timed out."""

    def __init__(self, detail: str):
        super().__init__(0, code="unreachable", title="Server unreachable", detail=detail)


def _retry_after_s(value: str | None) -> float | None:
    """Retry-After is either delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _error_from(status: int, reason: str, body: bytes, headers: Any) -> ApiError:
    try:
        problem = json.loads(body) if body else {}
    except ValueError:
        problem = {}
    if not isinstance(problem, dict):
        problem = {}
    errors = problem.get("errors")
    return ApiError(
        status,
        # A body that is not ours (a proxy, an unknown route) still gets a code.
        code=str(problem.get("code") or f"http_{status}"),
        title=str(problem.get("title") or reason or f"HTTP {status}"),
        detail=str(problem.get("detail") or ""),
        errors=errors if isinstance(errors, list) else None,
        retry_after_s=_retry_after_s(headers.get("Retry-After")),
    )


def _answer(status: int, body: bytes, content_type: str, *, method: str, url: str) -> Any:
    """A success's JSON. Anything else means the URL leads to some other server (a web
    page, a proxy's sign-in): ``not_escalated``, in words, instead of a JSONDecodeError."""
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        raise _not_escalated(f"{method} {url} answered {status} with {content_type or 'a body'} that is not JSON") from None


NOT_ESCALATED = "not_escalated"  # the code of an answer that is not an escalated server's


def _not_escalated(what: str) -> ApiError:
    return ApiError(200, code=NOT_ESCALATED, title="Not an escalated server", detail=f"{what}: is that URL the escalated server?")


def _not_http(exc: aiohttp.ClientError, request: str) -> ApiError:
    """What aiohttp raises for an answer it cannot read as HTTP (another protocol's
    banner on the port, a broken header, a redirect off the web): ``not_escalated``
    in words. Its message quotes the raw bytes after the first colon; only the
    reason before it is kept."""
    text = str(getattr(exc, "message", "")).strip() or type(exc).__name__
    reason = text.splitlines()[0].split(":", 1)[0].strip()
    return _not_escalated(f"{request}: the answer is not HTTP this client can read ({reason})")


def _is_retryable(error: ApiError) -> bool:
    return error.status == 0 or error.status == 429 or error.status >= 500


def _path_id(escalation_id: str) -> str:
    return quote(escalation_id, safe="")


def _drop_none(**fields: Any) -> dict[str, Any]:
    return {k: v for k, v in fields.items() if v is not None}


class EscalatedClient:
    """``async with EscalatedClient(url, token) as client: ...``"""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout_s: float = 30.0,
        session: aiohttp.ClientSession | None = None,
        create_attempts: int = 4,
        retry_backoff_s: float = 0.5,
    ):
        self.base_url = server_url(base_url)
        self._token = bearer_token(token)
        self.timeout_s = timeout_s
        self._session = session
        # A session we were given belongs to the caller; we close only ours.
        self._owns_session = session is None
        self.create_attempts = max(1, create_attempts)
        self.retry_backoff_s = retry_backoff_s

    def __repr__(self) -> str:  # never show the token
        return f"EscalatedClient({self.base_url!r})"

    @classmethod
    def from_env(cls, **kw: Any) -> EscalatedClient:
        """ESCALATED_URL (default http://127.0.0.1:8470), ESCALATED_API_KEY or ESCALATED_TOKEN."""
        token = os.environ.get("ESCALATED_API_KEY") or os.environ.get("ESCALATED_TOKEN")
        if not token:
            raise EscalatedError("set ESCALATED_API_KEY (or ESCALATED_TOKEN) to talk to the escalated server")
        return cls(os.environ.get("ESCALATED_URL") or DEFAULT_URL, token, **kw)

    async def __aenter__(self) -> EscalatedClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._owns_session and self._session is not None:
            await self._session.close()
            self._session = None

    def _client_session(self) -> aiohttp.ClientSession:
        # Created lazily: aiohttp wants its session born inside a running loop,
        # and from_env() / __init__ may be called from sync code.
        if self._session is None:
            self._session = aiohttp.ClientSession()
            self._owns_session = True
        return self._session

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._token}", "Accept": "application/json", **(extra or {})}

    async def _request(
        self,
        method: str,
        path: str,
        *,
        body: dict | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        timeout_s: float | None = None,
    ) -> Any:
        timeout = aiohttp.ClientTimeout(total=timeout_s or self.timeout_s)
        url = self.base_url + path
        try:
            async with self._client_session().request(
                method,
                url,
                json=body,
                params=_drop_none(**(params or {})),
                headers=self._headers(headers),
                timeout=timeout,
            ) as resp:
                raw = await resp.read()
                if resp.status >= 400:
                    raise _error_from(resp.status, resp.reason or "", raw, resp.headers)
                return _answer(resp.status, raw, resp.content_type, method=method, url=url)
        except (TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise ServerUnreachable(f"{method} {url}: {type(exc).__name__} {exc}".strip()) from exc
        except aiohttp.ClientError as exc:
            raise _not_http(exc, f"{method} {url}") from None

    # -- escalations -----------------------------------------------------

    async def create_escalation(
        self,
        *,
        policy: str,
        agent_id: str,
        run_id: str,
        subject: dict,
        question: str,
        evidence: list[str],
        choices: list[dict],
        response_fields: list[dict] | None = None,
        resume: dict | None = None,
        idempotency_key: str | None = None,
    ) -> dict:
        body = {
            "policy": policy,
            "agentId": agent_id,
            "runId": run_id,
            "subject": subject,
            "question": question,
            "evidence": evidence,
            "choices": choices,
            **_drop_none(responseFields=response_fields, resume=resume),
        }
        if idempotency_key is None:
            return await self._request("POST", "/escalations", body=body)
        headers = {"Idempotency-Key": idempotency_key}
        return await self._with_retries(lambda: self._request("POST", "/escalations", body=body, headers=headers))

    async def _with_retries(self, call: Any) -> Any:
        for attempt in range(1, self.create_attempts + 1):
            try:
                return await call()
            except ApiError as error:
                if attempt == self.create_attempts or not _is_retryable(error):
                    raise
                wait_s = self.retry_backoff_s * 2 ** (attempt - 1)
                if error.retry_after_s is not None:  # the server knows better, "0" included
                    wait_s = error.retry_after_s
                await asyncio.sleep(min(MAX_RETRY_AFTER_S, wait_s))
        raise AssertionError("unreachable")  # pragma: no cover

    async def list_escalations(
        self,
        *,
        status: str | None = None,
        policy: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        assignee: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        order: str | None = None,
    ) -> dict:
        """``assignee``: a user's name, or ``"me"`` (the caller)."""
        params = {
            "status": status,
            "policy": policy,
            "agentId": agent_id,
            "runId": run_id,
            "assignee": assignee,
            "limit": limit,
            "cursor": cursor,
            "order": order,
        }
        page = await self._request("GET", "/escalations", params=params)
        if not isinstance(page, dict) or not isinstance(page.get("data"), list) or not all(isinstance(e, dict) for e in page["data"]):
            # JSON, but no page of escalations: the first thing a reviewer's TUI asks for, from another API.
            raise _not_escalated(f"GET {self.base_url}/escalations answered JSON that is not a page of escalations")
        return page

    async def me(self) -> dict:
        """Who this token is: ``{"kind", "name", "workspace", "scopes"}`` (any valid token)."""
        return await self._request("GET", "/me")

    async def get_escalation(self, escalation_id: str) -> dict:
        return await self._request("GET", f"/escalations/{_path_id(escalation_id)}")

    async def wait(self, escalation_id: str, *, timeout_s: float = 30) -> dict:
        """One long poll: the escalation once done, or as it is when ``timeout_s`` passes."""
        wait_s = min(max(timeout_s, 0), MAX_WAIT_S)
        return await self._request(
            "GET",
            f"/escalations/{_path_id(escalation_id)}/wait",
            params={"timeout": f"{wait_s:g}"},
            # The HTTP timeout must outlast the server's own wait.
            timeout_s=max(self.timeout_s, wait_s + 10),
        )

    async def wait_until_done(self, escalation_id: str, *, timeout_s: float | None = None) -> dict:
        """Loop ``wait`` until resolved or cancelled; on timeout return it as it is."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            remaining_s = MAX_WAIT_S if deadline is None else min(MAX_WAIT_S, deadline - time.monotonic())
            escalation = await self.wait(escalation_id, timeout_s=max(remaining_s, 0))
            if escalation["status"] in DONE_STATUSES or (deadline is not None and time.monotonic() >= deadline):
                return escalation

    async def wait_for_outcome(self, escalation_id: str, *, timeout_s: float | None = None) -> Outcome | None:
        """The ``/wait`` path to what a callback would say: a ``Callback``
        (decided or timed out) or a ``Cancelled``; None if ``timeout_s`` passes first.

        For agents without a receiver, and as the fallback beside one: a
        cancellation sends no callback unless the policy has
        ``cancel_callback``, and this sees it either way.
        """
        return outcome_of(await self.wait_until_done(escalation_id, timeout_s=timeout_s))

    async def acknowledge(self, escalation_id: str) -> dict:
        return await self._request("POST", f"/escalations/{_path_id(escalation_id)}/acknowledge", body={})

    async def decide(
        self, escalation_id: str, *, choice: str, reason: str | None = None, response: dict | None = None
    ) -> dict:
        body = _drop_none(choice=choice, reason=reason, response=response)
        return await self._request("POST", f"/escalations/{_path_id(escalation_id)}/decide", body=body)

    async def cancel(self, escalation_id: str, *, reason: str | None = None) -> dict:
        body = _drop_none(reason=reason)
        return await self._request("POST", f"/escalations/{_path_id(escalation_id)}/cancel", body=body)

    async def claim(self, escalation_id: str) -> dict:
        """Become its assignee (a user token) and acknowledge it (CONTRACT §15)."""
        return await self._request("POST", f"/escalations/{_path_id(escalation_id)}/claim", body={})

    async def assign(self, escalation_id: str, *, user: str | None) -> dict:
        """Assign it to a user it is routed to; ``None`` unassigns."""
        return await self._request("POST", f"/escalations/{_path_id(escalation_id)}/assign", body={"user": user})

    # -- remembered decisions (CONTRACT §15) -------------------------------

    async def create_rule(
        self, *, policy: str, choice: str, reason: str, match: dict | None = None, expires_in: str | None = None
    ) -> dict:
        body = {"policy": policy, "choice": choice, "reason": reason, **_drop_none(match=match, expiresIn=expires_in)}
        return await self._request("POST", "/rules", body=body)

    async def list_rules(self) -> list[dict]:
        return (await self._request("GET", "/rules"))["data"]

    async def revoke_rule(self, rule_id: str) -> None:
        await self._request("DELETE", f"/rules/{_path_id(rule_id)}")

    async def deliveries(self, escalation_id: str) -> list[dict]:
        answer = await self._request("GET", f"/escalations/{_path_id(escalation_id)}/deliveries")
        return answer["data"]

    async def retry_delivery(self, escalation_id: str) -> dict:
        return await self._request("POST", f"/escalations/{_path_id(escalation_id)}/deliveries/retry", body={})

    # -- events ----------------------------------------------------------

    async def events(
        self,
        *,
        reconnect_delay_s: float = 1.0,
        max_reconnects: int | None = None,
        on_connect: Callable[[], Any] | None = None,
    ) -> AsyncGenerator[Event, None]:
        """Live ``escalation.*`` events; reconnects with ``Last-Event-ID``.

        Auth and scope errors are raised (retrying cannot fix them); a dropped
        or refused connection is retried after ``reconnect_delay_s``, without
        end unless ``max_reconnects`` is given. ``on_connect`` is called each
        time the stream is (re)opened: the place to refresh a list so nothing
        that happened while disconnected is missed. Close the iterator with
        ``aclose()`` (or ``contextlib.aclosing``) when done.
        """
        last_id: str | None = None
        reconnects = 0
        while True:
            delay_s = reconnect_delay_s
            try:
                async for event in self._event_stream(last_id, on_connect=on_connect):
                    reconnects = 0
                    last_id = event.id or last_id
                    yield event
            except ApiError as error:
                if not _is_retryable(error) or (max_reconnects is not None and reconnects >= max_reconnects):
                    raise
                if error.retry_after_s is not None:
                    delay_s = min(MAX_RETRY_AFTER_S, error.retry_after_s)
            else:
                if max_reconnects is not None and reconnects >= max_reconnects:
                    return
            reconnects += 1
            await asyncio.sleep(delay_s)

    async def _event_stream(self, last_id: str | None, *, on_connect: Callable[[], Any] | None) -> AsyncIterator[Event]:
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if last_id is not None:
            headers["Last-Event-ID"] = last_id
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=self.timeout_s, sock_read=EVENTS_READ_TIMEOUT_S)
        try:
            async with self._client_session().get(
                self.base_url + "/events", headers=self._headers(headers), timeout=timeout
            ) as resp:
                if resp.status >= 400:
                    raise _error_from(resp.status, resp.reason or "", await resp.read(), resp.headers)
                if on_connect is not None and inspect.isawaitable(result := on_connect()):
                    await result
                parser = SseParser()
                async for line in resp.content:
                    if (event := parser.feed(line.decode("utf-8", "replace"))) is not None:
                        yield event
        except (TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
            raise ServerUnreachable(f"GET {self.base_url}/events: {type(exc).__name__} {exc}".strip()) from exc
        except aiohttp.ClientError as exc:
            raise _not_http(exc, f"GET {self.base_url}/events") from None

    # -- api keys --------------------------------------------------------

    async def create_api_key(
        self, *, name: str | None = None, scopes: list[str] | None = None, expires_in: str | None = None
    ) -> dict:
        return await self._request("POST", "/api-keys", body=_drop_none(name=name, scopes=scopes, expiresIn=expires_in))

    async def list_api_keys(self) -> list[dict]:
        answer = await self._request("GET", "/api-keys")
        return answer["data"] if isinstance(answer, dict) else answer

    async def revoke_api_key(self, key_id: str) -> None:
        await self._request("DELETE", f"/api-keys/{_path_id(key_id)}")


class SyncClient:
    """The same methods, blocking, on a private event loop (not for ``events``).

    For sync callers such as a guard inside plain functions. Must not be used
    from a thread that already runs an event loop.
    """

    def __init__(self, base_url: str, token: str, **kw: Any):
        self._runner = asyncio.Runner()
        self._client = EscalatedClient(base_url, token, **kw)

    @classmethod
    def from_env(cls, **kw: Any) -> SyncClient:
        async_client = EscalatedClient.from_env(**kw)
        return cls(async_client.base_url, async_client._token, **kw)

    def __getattr__(self, name: str) -> Any:
        if name == "events":
            raise AttributeError("events() is async only; use EscalatedClient")
        method = getattr(self._client, name)
        if not asyncio.iscoroutinefunction(method):
            return method
        return lambda *args, **kw: self._runner.run(method(*args, **kw))

    def close(self) -> None:
        self._runner.run(self._client.close())
        self._runner.close()

    def __enter__(self) -> SyncClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
