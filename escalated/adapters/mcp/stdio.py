"""``escalated mcp``: the MCP server over stdio, for hosts that start a
command. It talks to a running escalated server over HTTP (``ESCALATED_URL``)
as the token from the environment; stdout carries the protocol alone, so
anything said to a person goes to stderr (the host's log)."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from mcp.server.stdio import stdio_server

from escalated.adapters.mcp.remote import RemoteBackend
from escalated.adapters.mcp.server import build_server
from escalated.agent.client import ApiError, EscalatedClient
from escalated.errors import EscalatedError


async def serve_stdio(client: EscalatedClient, *, status_of: Callable[[EscalatedError], int]) -> None:
    """Serve one host over stdin/stdout until it closes them. A failed call's
    problem names the server's status when the server answered it, else the
    one ``status_of`` gives (the tools' own checks: scope, arguments)."""
    backend = RemoteBackend(client)

    def answered_status(error: EscalatedError) -> int:
        return error.status if isinstance(error, ApiError) else status_of(error)

    async def backend_for(_ctx: Any) -> RemoteBackend:
        return backend

    server = build_server(backend_for, status_of=answered_status, version=version("escalated"))
    async with client, stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
