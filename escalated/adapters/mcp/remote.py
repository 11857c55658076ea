"""The backend of ``escalated mcp``: the escalated HTTP API, through the
agent library's client, as the token in ``ESCALATED_API_KEY`` or
``ESCALATED_TOKEN`` (the same client any agent uses; never the server's code).
"""

from __future__ import annotations

from typing import Any

from escalated.agent.client import EscalatedClient
from escalated.errors import EscalatedError

# The web app's page of an escalation: a public URL like the API's routes.
WEB_PAGE = "/app/escalations/"


class RemoteBackend:
    def __init__(self, client: EscalatedClient) -> None:
        self.client = client
        self._scopes: frozenset[str] | None = None

    async def scopes(self) -> frozenset[str]:
        """From ``GET /me``, once it has answered (the token does not change);
        asked again while it fails, so a server started later is found."""
        if self._scopes is None:
            me = await self.client.me()
            granted = me.get("scopes") if isinstance(me, dict) else None
            if not isinstance(granted, list):
                raise EscalatedError(f"{self.client.base_url}/me did not answer an escalated token's scopes")
            self._scopes = frozenset(str(s) for s in granted)
        return self._scopes

    async def create(self, body: dict[str, Any], *, idempotency_key: str | None) -> dict[str, Any]:
        return await self.client.create_escalation(
            policy=body["policy"],
            agent_id=body["agentId"],
            run_id=body["runId"],
            subject=body["subject"],
            question=body["question"],
            evidence=body["evidence"],
            choices=body["choices"],
            response_fields=body.get("responseFields"),
            idempotency_key=idempotency_key,
        )

    async def wait(self, escalation_id: str, *, timeout_s: float) -> dict[str, Any]:
        return await self.client.wait(escalation_id, timeout_s=timeout_s)

    async def list(self, *, status: str | None, policy: str | None, limit: int) -> list[dict[str, Any]]:
        return (await self.client.list_escalations(status=status, policy=policy, limit=limit))["data"]

    async def decide(self, escalation_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.client.decide(
            escalation_id, choice=body["choice"], reason=body.get("reason"), response=body.get("response")
        )

    async def cancel(self, escalation_id: str, body: dict[str, Any]) -> dict[str, Any]:
        return await self.client.cancel(escalation_id, reason=body.get("reason"))

    def web_url(self, escalation_id: str) -> str:
        return self.client.base_url + WEB_PAGE + escalation_id
