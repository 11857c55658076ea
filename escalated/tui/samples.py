"""Realistic sample escalations: the demo posts them, the snapshots show them.

``REQUESTS`` are create requests (keyword arguments of
``EscalatedClient.create_escalation`` minus ``resume``).
"""

from __future__ import annotations

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
