"""``escalated review``: the reviewer TUI against a running server."""

from __future__ import annotations

import asyncio

import click

from escalated.agent.client import DEFAULT_URL, EscalatedClient, InvalidServerUrl, InvalidToken, bearer_token, server_url


async def run_review(url: str, token: str) -> None:
    client = EscalatedClient(url, token)
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
    try:  # before the screen is taken over
        server_url(url)
    except InvalidServerUrl as exc:
        raise click.BadParameter(str(exc), param_hint="--url / ESCALATED_URL") from None
    try:
        bearer_token(token)
    except InvalidToken as exc:
        raise click.BadParameter(str(exc), param_hint="--token / ESCALATED_TOKEN") from None
    asyncio.run(run_review(url, token))
