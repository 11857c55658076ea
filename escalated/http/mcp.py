"""``serve --mcp``: the MCP tools as Streamable HTTP at ``/mcp`` (CONTRACT §14).

The SDK's transport is an ASGI application; this mounts it on the aiohttp
app behind the same checks as every route, as problem+json before the SDK
reads a byte: the bearer token (401), the per-token rate limit (429), the
body limit (413), the media type (415) and JSON syntax (400). Tool calls
then go through the core (``CoreBackend``) as the token's principal, never
through HTTP to ourselves.

Stateless (each POST stands alone, answered as JSON): any replica answers
any request, and no session outlives its request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, MutableMapping
from importlib.metadata import version
from typing import Any

import attrs
import orjson
from aiohttp import web
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from escalated.adapters.mcp.server import build_server
from escalated.core.creation import Idempotency, Replayed
from escalated.core.service import Service
from escalated.core.waiting import until_done
from escalated.core.weblinks import escalation_url
from escalated.domain.models import Principal
from escalated.domain.records import ListQuery
from escalated.domain.resource import escalation_resource
from escalated.errors import InvalidJson, Unavailable, UnsupportedMediaType
from escalated.http.appkeys import SERVICE, SETTINGS
from escalated.http.auth import principal_of
from escalated.http.body import is_json, read_bytes
from escalated.http.escalations import created_answer
from escalated.http.statuses import status_of

log = logging.getLogger(__name__)
MCP_PATH = "/mcp"
_PRINCIPAL = "escalated.principal"  # the ASGI scope's key for the caller


@attrs.frozen
class CoreBackend:
    """The tools' operations as ``principal``, straight through the core."""

    service: Service
    principal: Principal

    async def scopes(self) -> frozenset[str]:
        return self.principal.scopes

    async def create(self, body: dict[str, Any], *, idempotency_key: str | None) -> dict[str, Any]:
        idempotency = Idempotency(idempotency_key, answer=created_answer) if idempotency_key is not None else None
        outcome = await self.service.create(self.principal, body, idempotency=idempotency)
        if isinstance(outcome, Replayed):  # perhaps first answered by the API: the same key, the same answer
            answer: dict[str, Any] = orjson.loads(outcome.answer.body)
            return answer
        return escalation_resource(outcome.escalation)

    async def wait(self, escalation_id: str, *, timeout_s: float) -> dict[str, Any]:
        return escalation_resource(await until_done(self.service, self.principal, escalation_id, timeout_s=lambda: timeout_s))

    async def list(self, *, status: str | None, policy: str | None, limit: int) -> list[dict[str, Any]]:
        query = ListQuery(
            workspace_id=self.principal.workspace_id, routes=self.principal.routes, status=status, policy=policy, limit=limit
        )
        page, _cursor = await self.service.list_escalations(query)
        return [escalation_resource(e) for e in page]

    async def decide(self, escalation_id: str, body: dict[str, Any]) -> dict[str, Any]:
        esc = await self.service.get(self.principal, escalation_id)
        return escalation_resource(await self.service.decide(self.principal, esc, body))

    async def cancel(self, escalation_id: str, body: dict[str, Any]) -> dict[str, Any]:
        esc = await self.service.get(self.principal, escalation_id)
        return escalation_resource(await self.service.cancel(self.principal, esc, body))

    def web_url(self, escalation_id: str) -> str:
        return escalation_url(self.service.web_url, escalation_id)


def add_routes(app: web.Application) -> None:
    """After the service's context: the MCP server acts through the service."""
    app.cleanup_ctx.append(_manager_ctx)
    app.router.add_post(MCP_PATH, handle)
    # The SDK logs every stateless request's start and end at INFO: the
    # server's log keeps its own lines, and the SDK's warnings and errors.
    logging.getLogger("mcp").setLevel(logging.WARNING)


class McpManager:
    """The SDK's session manager, run in a task of its own; if that task
    ends while the server runs (an error escaped the SDK's task group, or it
    was cancelled), the next request starts a new manager (the SDK's runs
    once per instance) rather than failing every request until a restart;
    if that fails too, the request is refused with 503 ``unavailable``."""

    def __init__(self, make: Callable[[], StreamableHTTPSessionManager]) -> None:
        self._make = make
        self._stop = asyncio.Event()
        self._restarting = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._manager: StreamableHTTPSessionManager | None = None

    async def start(self) -> None:
        """Run a new manager; raises if it cannot start."""
        manager, started = self._make(), asyncio.Event()

        # The manager's task group must be entered and left by one task, and
        # aiohttp may run start-up and clean-up in different ones.
        async def run() -> None:
            async with manager.run():
                started.set()
                await self._stop.wait()

        task = asyncio.create_task(run(), name="mcp-manager")
        ready = asyncio.create_task(started.wait())
        try:
            await asyncio.wait([task, ready], return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
        if task.done():
            task.result()  # it failed to start: say why
            raise RuntimeError("the MCP session manager stopped as it started")
        self._manager, self._task = manager, task

    async def running(self) -> StreamableHTTPSessionManager:
        """The manager, started again first if its task has ended."""
        task, manager = self._task, self._manager
        if task is not None and not task.done() and manager is not None:
            return manager
        async with self._restarting:  # one restart for the requests that found it ended
            if self._task is None or self._task.done():
                _log_end(self._task)
                try:
                    await self.start()
                except Exception as exc:
                    log.exception("the MCP session manager could not be started again")
                    raise Unavailable("the MCP server is not running; try again", retry_after_s=1) from exc
            assert self._manager is not None
            return self._manager

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)  # ended already, perhaps: logged when found


MANAGER = web.AppKey("mcp_manager", McpManager)


def _log_end(task: asyncio.Task[None] | None) -> None:
    if task is None:
        return
    if task.cancelled():
        log.error("the MCP session manager's task was cancelled; starting a new one")
    else:
        exc = task.exception()
        log.error("the MCP session manager's task ended; starting a new one", exc_info=exc)


async def _manager_ctx(app: web.Application) -> AsyncIterator[None]:
    service = app[SERVICE]

    async def backend_for(ctx: Any) -> CoreBackend:
        return CoreBackend(service=service, principal=ctx.request.scope[_PRINCIPAL])

    def make() -> StreamableHTTPSessionManager:
        return StreamableHTTPSessionManager(
            app=build_server(backend_for, status_of=status_of, version=version("escalated")),
            stateless=True,
            json_response=True,
            max_request_body_size=app[SETTINGS].max_body_bytes,
        )

    manager = McpManager(make)
    await manager.start()
    app[MANAGER] = manager
    try:
        yield
    finally:
        await manager.stop()


async def handle(request: web.Request) -> web.StreamResponse:
    principal = await principal_of(request)  # 401, then the rate limit
    body = await read_bytes(request)  # 413
    if not is_json(request.content_type):
        raise UnsupportedMediaType("send MCP messages as application/json")
    try:  # body syntax is ours to refuse (400), as on every route; JSON-RPC's shape is the SDK's
        orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise InvalidJson(f"body is not valid JSON: {exc.msg}") from None
    bridge = _AsgiBridge(request, body)
    manager = await request.app[MANAGER].running()  # 503 when it is down for good
    await manager.handle_request(_scope(request, principal), bridge.receive, bridge.send)
    return await bridge.finish()


def _scope(request: web.Request, principal: Principal) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.raw_path.encode(),
        "query_string": request.query_string.encode(),
        "root_path": "",
        "headers": [(name.lower(), value) for name, value in request.raw_headers],
        "client": None,
        "server": None,
        "state": {},
        _PRINCIPAL: principal,
    }


class _AsgiBridge:
    """One ASGI request/response over one aiohttp request: the body read
    already (within our limit), the answer streamed as the SDK sends it."""

    def __init__(self, request: web.Request, body: bytes) -> None:
        self.request = request
        self._body: bytes | None = body
        self._done = asyncio.Event()
        self.response: web.StreamResponse | None = None

    async def receive(self) -> dict[str, Any]:
        if self._body is not None:
            body, self._body = self._body, None
            return {"type": "http.request", "body": body, "more_body": False}
        await self._done.wait()  # the answer is complete: the exchange is over
        return {"type": "http.disconnect"}

    async def send(self, message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.response = web.StreamResponse(status=message["status"])
            for name, value in message.get("headers", ()):
                self.response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            await self.response.prepare(self.request)
        elif message["type"] == "http.response.body" and self.response is not None:
            await self.response.write(message.get("body", b""))
            if not message.get("more_body", False):
                await self.response.write_eof()
                self._done.set()

    async def finish(self) -> web.StreamResponse:
        self._done.set()
        if self.response is None:
            raise RuntimeError("the MCP transport sent no response")
        return self.response


