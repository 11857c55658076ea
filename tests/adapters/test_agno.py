"""The Agno adapter: Agno's real agent loop with a scripted ``Model`` subclass (Agno's own extension
point for a model provider), a real server on both backends, a reviewer deciding over HTTP. Two refunds
in one model turn pause the run together; each is its own escalation with the tool's name, arguments and
description, only the approved one runs, once, and the model reads who rejected the other and why."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from escalated.agent.client import EscalatedClient

if TYPE_CHECKING:
    from agno.agent import Agent

# Agno, its scripted model and the adapter are imported where they are used: under --dist loadfile
# every worker imports every test module at collection, and only one of them runs this file.


@pytest.fixture(autouse=True)
def _no_telemetry(monkeypatch):
    # Agno reports telemetry to its own servers unless told not to: nothing leaves the machine.
    monkeypatch.setenv("AGNO_TELEMETRY", "false")


def shop(ran: list[str]) -> Agent:
    from agno.agent import Agent
    from agno.tools import tool

    from tests.adapters.agno_model import Scripted

    @tool(requires_confirmation=True)
    def issue_refund(order_id: str, amount_eur: float) -> str:
        """Refund an order to the customer's card."""
        ran.append(order_id)
        return f"refunded {order_id}"

    return Agent(model=Scripted(), tools=[issue_refund], name="shop", telemetry=False)


async def test_each_paused_call_is_its_own_escalation_and_only_the_approved_one_runs_once(client, reviewer, run_id):
    from escalated.adapters.agno import arun_with_approvals

    ran: list[str] = []
    running = asyncio.ensure_future(arun_with_approvals(shop(ran), "refund both", policy="tools.refund", run_id=run_id, client=client))
    asked = await reviewer.open_for(run_id, count=2)
    assert ran == []  # paused before either refund
    by_order = {e["evidence"][1]: e for e in asked}
    approve = by_order['Arguments (JSON): {"order_id": "o-1", "amount_eur": 10.0}']
    reject = by_order['Arguments (JSON): {"order_id": "o-2", "amount_eur": 20.0}']
    assert approve["subject"] == {"type": "tool_call", "id": "call-1", "label": "issue_refund"}
    assert approve["evidence"][2] == "What it does: Refund an order to the customer's card."
    assert approve["agentId"] == "shop" and approve["runId"] == run_id
    await reviewer.decide(reject["id"], "reject", reason="already refunded")
    await reviewer.decide(approve["id"], "approve")
    output = await asyncio.wait_for(running, timeout=30)
    assert ran == ["o-1"]  # once
    assert output.content == "refunded o-1 | The call was rejected by alice. Reason: already refunded"
    assert len(await reviewer.all_for(run_id)) == 2


async def test_a_server_out_of_reach_runs_no_tool(run_id, unused_tcp_port):
    from escalated.adapters.agno import ApprovalUnavailable, arun_with_approvals

    ran: list[str] = []
    async with EscalatedClient(f"http://127.0.0.1:{unused_tcp_port}", "ain_live_" + "x" * 32, retry_backoff_s=0.01) as down:
        with pytest.raises(ApprovalUnavailable, match="cannot be reached"):
            await arun_with_approvals(shop(ran), "refund both", policy="tools.refund", run_id=run_id, client=down)
    assert ran == []


@pytest.mark.parametrize(("choice", "touched"), [("approve", True), ("reject", False)])
async def test_a_toolkit_apply_made_confirm_its_risky_tool_runs_it_only_once_approved(client, reviewer, run_id, tmp_path, choice, touched):
    from agno.agent import Agent
    from agno.tools.shell import ShellTools

    from escalated.adapters.agno import arun_with_approvals
    from tests.adapters.agno_model import Scripted, tool_call

    # What apply writes for a toolkit in a routed agent's tools=[...]: requires_confirmation_tools= its risky tools.
    marker = tmp_path / "ran"
    model = Scripted(calls=(tool_call("call-sh", "run_shell_command", args=["touch", str(marker)]),))
    ops = Agent(model=model, tools=[ShellTools(requires_confirmation_tools=["run_shell_command"])], name="ops", telemetry=False)
    running = asyncio.ensure_future(arun_with_approvals(ops, "touch the marker", policy="tools.refund", run_id=run_id, client=client))
    [asked] = await reviewer.open_for(run_id)
    assert asked["subject"]["label"] == "run_shell_command" and not marker.exists()
    assert asked["evidence"][1] == f'Arguments (JSON): {{"args": ["touch", "{marker}"]}}'
    await reviewer.decide(asked["id"], choice)
    await asyncio.wait_for(running, timeout=30)
    assert marker.exists() is touched
