"""``escalated mcp``: the MCP server over stdio, for hosts that start a
command. It talks to a running escalated server over HTTP (``ESCALATED_URL``)
as the token from the environment; stdout carries the protocol alone, so
anything said to a person goes to stderr (the host's log)."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

from mcp.server.stdio import stdio_server

from escalated.adapters.mcp.remote import RemoteBackend
from escalated.adapters.mcp.server import build_server
from escalated.agent.client import EscalatedClient


async def serve_stdio(client: EscalatedClient) -> None:
    """Serve one host over stdin/stdout until it closes them."""
    backend = RemoteBackend(client)

    async def backend_for(_ctx: Any) -> RemoteBackend:
        return backend

    server = build_server(backend_for, version=version("escalated"))
    async with client, stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
