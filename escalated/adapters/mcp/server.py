"""The MCP server itself, on the official SDK's low-level ``Server``: the
same tools for both transports, each handed a ``Backend`` per request.

Every failed call answers a tool result with ``isError`` and the problem's
words (CONTRACT §14), never a protocol error: the agent reads it and can
correct itself, and the session goes on.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.types import CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, TextContent

from escalated.adapters.mcp import calls, tools
from escalated.domain import scopes
from escalated.errors import EscalatedError

log = logging.getLogger("escalated.mcp")

SERVER_NAME = "escalated"
INSTRUCTIONS = (
    "escalated hands decisions to humans. To ask: call request_decision (give an idempotencyKey), then call "
    "get_decision with the escalationId it returned until status is 'resolved' (act on choice) or 'cancelled'. "
    "Each get_decision waits up to 25 seconds for the decision, so calling it again at once is fine."
)

BackendFor = Callable[[ServerRequestContext[Any, Any]], Awaitable[calls.Backend]]
# The HTTP status an error's problem names (escalated.http.statuses, handed in
# from above: the tools know no HTTP of their own).
StatusOf = Callable[[EscalatedError], int]


def client_name(ctx: ServerRequestContext[Any, Any]) -> str | None:
    """The MCP client's own name, from its initialize (or, on 2026-07-28,
    from each request's envelope); None when it gave none."""
    params = ctx.session.client_params
    name = params.client_info.name if params is not None and params.client_info is not None else None
    return name or None


def build_server(backend_for: BackendFor, *, status_of: StatusOf, version: str = "") -> Server[Any]:
    """``backend_for(ctx)`` gives the backend that acts for this request's caller;
    ``status_of`` the status a failed call's problem names."""

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None) -> ListToolsResult:
        try:
            granted = await (await backend_for(ctx)).scopes()
        except EscalatedError as error:
            # Unknown yet (the server is down, the token refused): list them
            # all, so that calling one says what is wrong in the problem's words.
            log.warning("listing every tool: could not learn the token's scopes: %s", calls.error_text(error))
            granted = frozenset(scopes.ALL_SCOPES)
        return ListToolsResult(tools=tools.tools_for(granted))

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams) -> CallToolResult:
        try:
            backend = await backend_for(ctx)
            result = await calls.call_tool(backend, params.name, params.arguments or {}, client_name=client_name(ctx))
        except EscalatedError as error:
            return _error_result(error, status_of(error))
        except Exception:  # a bug of ours must not end the agent's session
            log.exception("tool %s failed", params.name)
            internal = EscalatedError("an internal error occurred; it has been logged")
            return _error_result(internal, status_of(internal))
        return CallToolResult(content=[TextContent(type="text", text=_json(result))], structured_content=result)

    return Server(
        SERVER_NAME,
        version=version,
        title="escalated",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def _error_result(error: EscalatedError, status: int) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=calls.error_text(error))],
        structured_content=calls.error_content(error, status),
        is_error=True,
    )


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()
