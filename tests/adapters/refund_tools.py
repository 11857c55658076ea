"""The shop both LangGraph-family gate tests run (LangChain's HumanInTheLoopMiddleware and the
adapter's ``@interrupt_for_approval``): a scripted chat model asking for two refunds and a look-up in
one message, the two tools, and the reviewer's decisions (the refund of o-2 rejected, o-1 approved)."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

CALLS = [
    {"name": "issue_refund", "args": {"order_id": "o-1", "amount_eur": 10.0}, "id": "call-1"},
    {"name": "issue_refund", "args": {"order_id": "o-2", "amount_eur": 20.0}, "id": "call-2"},
    {"name": "look_up", "args": {"order_id": "o-1"}, "id": "call-3"},
]


class Scripted(GenericFakeChatModel):
    """Three tool calls in one message, then an answer listing what each returned."""

    def bind_tools(self, tools, **kwargs):
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        answers = [m.content for m in messages if isinstance(m, ToolMessage)]
        self.messages = iter([AIMessage(content=" | ".join(answers))] if answers else [AIMessage(content="", tool_calls=CALLS)])
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)


def scripted() -> Scripted:
    return Scripted(messages=iter([]))


def refund_tools(ran: list[str], *, gate: Callable = lambda fn: fn) -> list[BaseTool]:
    """``issue_refund`` (its function wrapped in ``gate``) and ``look_up``; each appends what it did to ``ran``."""

    @tool
    @gate
    async def issue_refund(order_id: str, amount_eur: float) -> str:
        """Refund an order."""
        ran.append(f"refund {order_id}")
        return f"refunded {order_id}"

    @tool
    def look_up(order_id: str) -> str:
        """Look an order up."""
        ran.append(f"look up {order_id}")
        return f"found {order_id}"

    return [issue_refund, look_up]


async def reject_o2_and_approve_o1(reviewer, run_id: str, asked: list[dict]) -> None:
    """The two refund escalations are for each call, with its arguments, agent and run: o-2's is
    rejected (``already refunded``) first, then o-1's approved."""
    assert len(asked) == 2
    by_order = {e["evidence"][1]: e for e in asked}
    approve = by_order['Arguments (JSON): {"order_id": "o-1", "amount_eur": 10.0}']
    reject = by_order['Arguments (JSON): {"order_id": "o-2", "amount_eur": 20.0}']
    assert approve["subject"]["label"] == "issue_refund" and approve["agentId"] == "shop" and approve["runId"] == run_id
    await reviewer.decide(reject["id"], "reject", reason="already refunded")
    await reviewer.decide(approve["id"], "approve")
