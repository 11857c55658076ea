"""``escalated review``: the reviewer TUI against a running server."""

from __future__ import annotations

import asyncio

import click

from escalated.agent.client import DEFAULT_URL, EscalatedClient, InvalidServerUrl, InvalidToken


def client_for(url: str, token: str) -> EscalatedClient:
    """The client of ``--url`` and ``--token``; a bad one of either is a usage error naming the option
    (the CLI's escalations commands use it too)."""
    try:
        return EscalatedClient(url, token)
    except InvalidServerUrl as exc:
        raise click.BadParameter(str(exc), param_hint="--url / ESCALATED_URL") from None
    except InvalidToken as exc:
        raise click.BadParameter(str(exc), param_hint="--token / ESCALATED_TOKEN") from None


async def run_review(client: EscalatedClient) -> None:
    try:
        from escalated.tui.app import ReviewApp

        await ReviewApp(client).run_async()
    finally:
        await client.close()


@click.command()
@click.option("--url", envvar="ESCALATED_URL", default=DEFAULT_URL, show_default=True, help="Server base URL.")
@click.option(
    "--token",
    envvar="ESCALATED_TOKEN",
    required=True,
    help="Your user token (from `escalated users add NAME`). Env ESCALATED_TOKEN.",
)
def review(url: str, token: str) -> None:
    """The reviewer TUI: your escalations, live; acknowledge, decide, cancel.

    It talks to the server over HTTP like any client. Press ? inside for keys.
    """
    client = client_for(url, token)  # before the screen is taken over
    asyncio.run(run_review(client))
