"""What the TUI needs from the server, as a Protocol.

``escalated.agent.client.EscalatedClient`` satisfies it (that is what ``escalated
review`` injects, and what the tests drive against a real server).
Errors are ``escalated.agent.client.ApiError``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any, Protocol

from escalated.agent.client import NOT_ESCALATED, ApiError, Event, ServerUnreachable

__all__ = ["ApiError", "Backend", "Event", "ServerUnreachable", "describe_error"]


class Backend(Protocol):
    base_url: str

    async def list_escalations(self, *, limit: int | None = None, cursor: str | None = None) -> dict: ...

    async def get_escalation(self, escalation_id: str) -> dict: ...

    async def acknowledge(self, escalation_id: str) -> dict: ...

    async def decide(
        self, escalation_id: str, *, choice: str, reason: str | None = None, response: dict | None = None
    ) -> dict: ...

    async def cancel(self, escalation_id: str, *, reason: str | None = None) -> dict: ...

    async def claim(self, escalation_id: str) -> dict: ...

    async def create_rule(
        self, *, policy: str, choice: str, reason: str, match: dict | None = None, expires_in: str | None = None
    ) -> dict: ...

    async def deliveries(self, escalation_id: str) -> list[dict]: ...

    async def retry_delivery(self, escalation_id: str) -> dict: ...

    # A generator: the app closes it (contextlib.aclosing) to close the stream's response.
    def events(self, *, on_connect: Callable[[], Any] | None = None) -> AsyncGenerator[Event, None]: ...


def describe_error(error: ApiError, *, doing: str) -> str:
    """One plain sentence for the status line; never a traceback, never a token."""
    if isinstance(error, ServerUnreachable) or error.status == 0:
        return f"Connection lost while {doing}: the server does not answer. Retrying…"
    if error.code == NOT_ESCALATED:
        return f"No escalated server at that URL ({doing}). Check --url."
    if error.status == 401:
        return f"Not signed in ({doing}): the server rejected the token (401). Check ESCALATED_TOKEN."
    if error.status == 403:
        return f"Not allowed ({doing}): {error.detail}"
    if error.status == 404:
        return f"Not found ({doing}): the escalation is gone or no longer routed to you."
    if error.status == 409:
        return f"Too late ({doing}): {error.detail}"
    problems = "; ".join(f"{e.get('field')}: {e.get('message')}" for e in error.errors or [])
    return f"Refused ({doing}): {error.detail}" + (f" — {problems}" if problems else "")
