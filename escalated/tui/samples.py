"""Realistic sample escalations: the demo posts them, the snapshots show them.

``REQUESTS`` are create requests (keyword arguments of
``EscalatedClient.create_escalation`` minus ``resume``); ``resources`` turns
them into fixed server-shaped escalations for ``MemoryBackend``.
"""

from __future__ import annotations

from escalated.timeutil import format_ms

# Every demo policy uses "deny" as its timeout default, so each sample offers it.
DEFAULT_CHOICE = "deny"

REFUND_FIELDS = [
    {"type": "number", "name": "amount", "label": "Refund (EUR)", "min": 0, "step": 0.01},
    {
        "type": "select",
        "name": "reasonCode",
        "label": "Reason code",
        "options": [
            {"value": "damaged", "label": "Arrived damaged"},
            {"value": "late", "label": "Late delivery"},
            {"value": "goodwill", "label": "Goodwill"},
        ],
    },
]

REQUESTS: list[dict] = [
    {
        "policy": "demo.refunds",
        "agent_id": "billing-agent",
        "run_id": "thread-981",
        "subject": {"type": "order", "id": "o-981", "label": "Order #981"},
        "question": "Refund 1,200 EUR to the customer for a damaged espresso machine?",
        "evidence": [
            "Customer since 2019, 42 orders, no previous refunds",
            "Photo of the dented machine attached to ticket T-5521",
            "Refunds above 500 EUR need a human decision",
        ],
        "choices": [{"id": "approve", "label": "Approve refund"}, {"id": "deny", "label": "Deny"}],
        "response_fields": REFUND_FIELDS,
    },
    {
        "policy": "demo.access",
        "agent_id": "it-helpdesk",
        "run_id": "thread-314",
        "subject": {"type": "user", "id": "u-jdoe", "label": "Contractor J. Doe"},
        "question": "Grant read access to the production orders database for 7 days?",
        "evidence": ["Ticket OPS-77 asks for it to debug slow reports", "Manager approval: none on file"],
        "choices": [{"id": "grant", "label": "Grant for 7 days"}, {"id": "deny", "label": "Deny"}],
    },
    {
        "policy": "demo.quick",
        "agent_id": "deploy-bot",
        "run_id": "thread-2026-11-3",
        "subject": {"type": "deploy", "id": "d-2026.11.3", "label": "Deploy 2026.11.3"},
        "question": "Error rate doubled after deploy 2026.11.3. Roll back now?",
        "evidence": ["5xx rate 0.4% -> 0.9% in 10 min", "No schema migration in this release"],
        "choices": [{"id": "rollback", "label": "Roll back"}, {"id": "deny", "label": "Keep it running"}],
    },
    {
        "policy": "demo.refunds",
        "agent_id": "support-agent",
        "run_id": "thread-1042",
        "subject": {"type": "ticket", "id": "t-1042", "label": "Ticket #1042"},
        "question": "Send an apology with a voucher for the late delivery?",
        "evidence": ["Parcel arrived 9 days late", "Customer wrote twice"],
        "choices": [{"id": "send", "label": "Send voucher"}, {"id": "deny", "label": "No voucher"}],
        "response_fields": [
            {
                "type": "select",
                "name": "voucher",
                "label": "Voucher",
                "options": [{"value": "10", "label": "10 %"}, {"value": "20", "label": "20 %"}],
            }
        ],
    },
]

# What the demo's automatic reviewer (``escalated demo --no-tui``) answers,
# by runId. The demo.quick sample is left alone so it times out.
SCRIPTED_ANSWERS: dict[str, dict] = {
    "thread-981": {
        "choice": "approve",
        "reason": "Long-standing customer, damage is documented",
        "response": {"amount": 1200, "reasonCode": "damaged"},
    },
    "thread-314": {"choice": "deny", "reason": "No manager approval on file"},
    "thread-1042": {"choice": "send", "reason": "Nine days late", "response": {"voucher": "20"}},
}

# SLA per demo policy, in seconds (None: no SLA). demo.quick is short so a
# newcomer sees a breach resolve itself with the default choice.
POLICY_SLA_S: dict[str, float | None] = {"demo.refunds": 15 * 60, "demo.access": None, "demo.quick": 60}


def resource(request: dict, *, index: int, created_ms: int, sla_s: float | None) -> dict:
    """The escalation the server would return for ``request``, with a fixed id."""
    created = format_ms(created_ms)
    return {
        "id": f"esc_sample{index:02d}",
        "status": "open",
        "policy": request["policy"],
        "agentId": request["agent_id"],
        "runId": request["run_id"],
        "subject": request["subject"],
        "question": request["question"],
        "evidence": request["evidence"],
        "choices": request["choices"],
        "responseFields": request.get("response_fields", []),
        "resume": {"mode": "webhook", "url": "http://127.0.0.1:9000/resume", "signed": True},
        "createdAt": created,
        "deadlineAt": None if sla_s is None else format_ms(created_ms + int(sla_s * 1000)),
        "acknowledgedBy": None,
        "acknowledgedAt": None,
        "resolution": None,
        "cancellation": None,
        "history": [{"event": "created", "by": f"key:{request['agent_id']}", "at": created}],
    }


def resources(now_ms: int) -> list[dict]:
    """The samples as if created 12, 7, 50 s and 3 min before ``now_ms``."""
    ages_ms = [12 * 60_000, 7 * 60_000, 50_000, 3 * 60_000]
    return [
        resource(r, index=i + 1, created_ms=now_ms - age, sla_s=POLICY_SLA_S[r["policy"]])
        for i, (r, age) in enumerate(zip(REQUESTS, ages_ms, strict=True))
    ]
