"""``escalated mcp``: the MCP server over stdio (CONTRACT §14)."""

from __future__ import annotations

import asyncio
import logging

import click

from escalated.errors import EscalatedError


@click.command("mcp")
def mcp() -> None:
    """The MCP server over stdio, for MCP hosts that start a command.

    \b
    Configured by the environment:
      ESCALATED_URL        the escalated server (default http://127.0.0.1:8470)
      ESCALATED_API_KEY    an API key (or ESCALATED_TOKEN, a reviewer's token)
    The tools a host is offered are those the token's scopes allow.
    """
    from escalated.agent.client import EscalatedClient

    try:  # before the SDK's imports (a second or more): a wrong variable is said at once
        client = EscalatedClient.from_env()
    except EscalatedError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        from escalated.adapters.mcp.stdio import serve_stdio
    except ImportError as exc:
        raise click.ClickException(str(exc)) from None
    from escalated.http.statuses import status_of

    # stdout is the protocol's: every log line goes to stderr, the host's log.
    logging.basicConfig(level=logging.WARNING, format="escalated mcp: %(message)s")
    asyncio.run(serve_stdio(client, status_of=status_of))
