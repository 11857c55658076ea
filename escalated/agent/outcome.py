"""How an escalation ended, as the agent sees it: a ``Callback`` (a decision
or a timeout) or a ``Cancelled``.

The receiver builds them from a verified callback; the client builds the
same values from ``/wait`` (``EscalatedClient.wait_for_outcome``), so agent
code handles one pair of types whichever way the outcome reached it. Both
carry ``body``: the callback's JSON as a dict (CONTRACT §5), which is what a
LangGraph ``Command(resume=...)`` gets in the example.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from escalated.domain.models import CANCELLED, RESOLVED

EVENT_CANCELLED = "escalation.cancelled"


@attrs.frozen
class Callback:
    """A verified callback body (CONTRACT §5), plus its headers and raw bytes."""

    escalation_id: str
    run_id: str
    agent_id: str
    policy: str
    choice: str
    resolved_by: str
    answered_by: str
    answered_at: str
    response: dict | None = None
    event: str | None = None
    delivery_id: str | None = None
    raw: bytes = attrs.field(default=b"", repr=False)

    cancelled = False

    @property
    def body(self) -> dict[str, Any]:
        return json.loads(self.raw)

    @classmethod
    def from_body(cls, raw: bytes, *, event: str | None, delivery_id: str | None) -> Callback:
        """Parse a decision/timeout body; ValueError when it is not one."""
        body = _object(raw)
        try:
            return cls(
                escalation_id=body["escalationId"],
                run_id=body["runId"],
                agent_id=body["agentId"],
                policy=body["policy"],
                choice=body["choice"],
                resolved_by=body["resolvedBy"],
                answered_by=body["answeredBy"],
                answered_at=body["answeredAt"],
                response=body.get("response"),
                event=event,
                delivery_id=delivery_id,
                raw=raw,
            )
        except KeyError as missing:
            raise ValueError(f"callback body lacks {missing}") from None


@attrs.frozen
class Cancelled:
    """An ``escalation.cancelled`` callback: nobody will decide; stop waiting."""

    escalation_id: str
    run_id: str
    agent_id: str
    policy: str
    reason: str | None
    cancelled_by: str
    cancelled_at: str
    event: str | None = EVENT_CANCELLED
    delivery_id: str | None = None
    raw: bytes = attrs.field(default=b"", repr=False)

    cancelled = True

    @property
    def body(self) -> dict[str, Any]:
        return json.loads(self.raw)

    @classmethod
    def from_body(cls, raw: bytes, *, event: str | None, delivery_id: str | None) -> Cancelled:
        body = _object(raw)
        try:
            return cls(
                escalation_id=body["escalationId"],
                run_id=body["runId"],
                agent_id=body["agentId"],
                policy=body["policy"],
                reason=body.get("reason"),
                cancelled_by=body["cancelledBy"],
                cancelled_at=body["cancelledAt"],
                event=event,
                delivery_id=delivery_id,
                raw=raw,
            )
        except KeyError as missing:
            raise ValueError(f"cancellation body lacks {missing}") from None


Outcome = Callback | Cancelled


def parse_callback(raw: bytes, *, event: str | None, delivery_id: str | None) -> Outcome:
    """A verified body as a ``Callback`` or, for ``escalation.cancelled``, a ``Cancelled``."""
    if event == EVENT_CANCELLED:
        return Cancelled.from_body(raw, event=event, delivery_id=delivery_id)
    return Callback.from_body(raw, event=event, delivery_id=delivery_id)


def outcome_of(escalation: dict[str, Any]) -> Outcome | None:
    """The outcome of an escalation resource (from ``get`` or ``wait``); None while it is still live.

    The body is the one the callback would carry, field for field.
    """
    common = {
        "escalationId": escalation["id"],
        "runId": escalation["runId"],
        "agentId": escalation["agentId"],
        "policy": escalation["policy"],
    }
    if escalation["status"] == CANCELLED:
        c = escalation["cancellation"]
        body = {**common, "reason": c["reason"], "cancelledBy": c["cancelledBy"], "cancelledAt": c["cancelledAt"]}
        return Cancelled.from_body(_dumps(body), event=EVENT_CANCELLED, delivery_id=None)
    if escalation["status"] == RESOLVED:
        r = escalation["resolution"]
        body = {**common, "choice": r["choice"]}
        if escalation.get("responseFields"):
            body["response"] = r.get("response")
        body.update(resolvedBy=r["resolvedBy"], answeredBy=r["answeredBy"], answeredAt=r["answeredAt"])
        event = "escalation.breached" if r["resolvedBy"] == "timeout" else "escalation.decided"
        return Callback.from_body(_dumps(body), event=event, delivery_id=None)
    return None


def _object(raw: bytes) -> dict[str, Any]:
    body = json.loads(raw)
    if not isinstance(body, dict):
        raise ValueError("callback body is not a JSON object")
    return body


def _dumps(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()
