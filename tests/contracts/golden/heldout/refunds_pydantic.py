"""Shaped like pydantic-ai's bank-support example: a typed agent whose tool moves money."""
from dataclasses import dataclass

import stripe
from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from escalated.guard import guard
import uuid
from escalated.adapters.pydantic_ai import run_with_approvals
from pydantic_ai import DeferredToolRequests


@dataclass
class Shop:
    customer_id: int


class Answer(BaseModel):
    text: str


support = Agent[Shop, Answer]("openai:gpt-4o", deps_type=Shop, output_type=[Answer, DeferredToolRequests])


@support.tool(requires_approval=True)
def issue_refund(ctx: RunContext[Shop], order_id: str, amount_eur: float) -> str:
    stripe.Refund.create(charge=order_id, amount=int(amount_eur * 100))
    return "refunded"


@support.tool_plain
def opening_hours() -> str:
    return "9-17"


async def answer(question: str, customer_id: int) -> Answer:
    result = await guard("refunds_pydantic.answer", lambda: run_with_approvals(support, question, deps=Shop(customer_id), policy="agents.refunds-pydantic.answer", run_id=f"refunds_pydantic.answer:{uuid.uuid4()}"))
    return result.output
