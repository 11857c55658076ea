"""A CrewAI refund flow whose refund waits for a reviewer (escalated.adapters.crewai).

``propose`` works out the refund (plain code here: no model, no network);
its ``@human_feedback`` asks a reviewer through ``EscalatedFeedbackProvider``,
with the decorator's ``emit`` outcomes as the reviewer's choices. The flow
pauses (CrewAI keeps it in its SQLite persistence) and is resumed from the
reviewer's decision: ``approve`` runs ``refund``, ``reject`` runs ``deny``.

``refund`` appends one line to the ledger file (``REFUND_LEDGER``, default
``refunds.log``).
"""

from __future__ import annotations

import os
from typing import Any

from crewai.flow import Flow, human_feedback, listen, start
from pydantic import BaseModel

from escalated.adapters.crewai import EscalatedFeedbackProvider


class Refund(BaseModel):
    order_id: str = ""
    amount_eur: float = 0.0


def refund_flow(provider: EscalatedFeedbackProvider) -> type[Flow[Refund]]:
    """The flow class, asking reviewers through ``provider`` (its policy, its receiver)."""

    class RefundFlow(Flow[Refund]):
        @start()
        @human_feedback(
            message="Refund this order?",
            emit=["approve", "reject"],
            default_outcome="reject",
            llm="gpt-4o-mini",  # never called: the reviewer picks the outcome itself
            provider=provider,
        )
        def propose(self) -> dict[str, Any]:
            return {"order_id": self.state.order_id, "amount_eur": self.state.amount_eur}

        @listen("approve")
        def refund(self) -> str:
            with open(os.environ.get("REFUND_LEDGER", "refunds.log"), "a", encoding="utf-8") as ledger:
                ledger.write(f"{self.state.order_id} {self.state.amount_eur:.2f}\n")
            return f"refunded {self.state.amount_eur:.2f} EUR for order {self.state.order_id}"

        @listen("reject")
        def deny(self) -> str:
            said = self.last_human_feedback.feedback.partition("\n\n")[2]
            return f"refund denied{': ' + said if said else ''}"

    return RefundFlow
