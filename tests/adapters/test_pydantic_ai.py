"""The Pydantic AI adapter: the real agent loop with Pydantic AI's ``FunctionModel``, a real
server on both backends, a reviewer deciding over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from escalated.agent.client import EscalatedClient
from escalated.domain.limits import FILED_TEXT_BUDGET_CHARS
from tests.support import prefork

if TYPE_CHECKING:
    from examples.pydantic_ai_refund.agent import Shop

# Pydantic AI, the adapter and the example agent are imported in the tests that use them: under
# --dist loadfile every worker imports every test module at collection, and only one runs this file.

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def shop(tmp_path) -> Shop:
    from examples.pydantic_ai_refund.agent import Shop

    # The deps hold 50 KB the reviewer must never see.
    return Shop(ledger=str(tmp_path / "refunds.log"), crm_notes="n" * 50_000)


def refunds(shop: Shop) -> list[str]:
    path = Path(shop.ledger)
    return path.read_text().splitlines() if path.exists() else []


async def test_an_approved_call_runs_the_tool_only_after_the_reviewer_decides(client, reviewer, run_id, shop):
    from escalated.adapters.pydantic_ai import run_with_approvals
    from examples.pydantic_ai_refund.agent import build_agent, request_for

    task = asyncio.ensure_future(
        run_with_approvals(build_agent(), request_for("o-1", 1200), policy="tools.refund", run_id=run_id, client=client, deps=shop)
    )
    [asked] = await reviewer.open_for(run_id)
    assert refunds(shop) == []
    assert asked["subject"] == {"type": "tool_call", "id": "call-refund-o-1", "label": "issue_refund"}
    assert asked["evidence"] == [
        "Tool: issue_refund",
        'Arguments (JSON): {"order_id": "o-1", "amount_eur": 1200.0}',
        "What it does: Refund an order to the customer's card.",
    ]
    assert len(json.dumps(asked)) < FILED_TEXT_BUDGET_CHARS and "nnnnnnnn" not in json.dumps(asked)
    await reviewer.decide(asked["id"], "approve")
    result = await asyncio.wait_for(task, timeout=30)
    assert result.output == "Refund step finished: refunded 1200.00 EUR for order o-1"
    assert refunds(shop) == ["o-1 1200.00"]


async def test_a_rejected_call_never_runs_and_the_reason_reaches_the_model(client, reviewer, run_id, shop):
    from pydantic_ai.messages import ToolReturnPart

    from escalated.adapters.pydantic_ai import run_with_approvals
    from examples.pydantic_ai_refund.agent import build_agent, request_for

    task = asyncio.ensure_future(
        run_with_approvals(build_agent(), request_for("o-2", 80), policy="tools.refund", run_id=run_id, client=client, deps=shop)
    )
    [asked] = await reviewer.open_for(run_id)
    await reviewer.decide(asked["id"], "reject", reason="the parcel came back empty")
    result = await asyncio.wait_for(task, timeout=30)
    told = [p.content for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert told == ["The call was rejected by alice. Reason: the parcel came back empty"]
    assert refunds(shop) == []


async def test_a_timeout_applies_the_policy_default(client, run_id, shop):
    from escalated.adapters.pydantic_ai import run_with_approvals
    from examples.pydantic_ai_refund.agent import build_agent, request_for

    # tools.late-no: 1 s SLA, default reject; nobody decides.
    result = await asyncio.wait_for(
        run_with_approvals(build_agent(), request_for("o-3", 10), policy="tools.late-no", run_id=run_id, client=client, deps=shop),
        timeout=60,
    )
    assert refunds(shop) == []
    assert result.output == "Refund step finished: No reviewer decided in time; the policy's default is to reject the call."


async def test_the_durable_pair_resumes_in_a_fresh_process_and_never_runs_a_tool_twice(adapter_server, client, reviewer, run_id, shop, tmp_path):
    from escalated.adapters.approvals import Paused
    from escalated.adapters.pydantic_ai import resume_run, start_run
    from examples.pydantic_ai_refund.agent import build_agent, request_for

    store = tmp_path / "runs"
    paused = await start_run(build_agent(), request_for("o-4", 300), policy="tools.refund", run_id=run_id, store=store, client=client, deps=shop)
    [asked] = await reviewer.open_for(run_id)
    assert paused == Paused(run_id, (asked["id"],))
    assert await resume_run(build_agent(), run_id=run_id, store=store, client=client, deps=shop) == paused

    await reviewer.decide(asked["id"], "approve")
    env = {**os.environ, "ESCALATED_URL": adapter_server.url, "ESCALATED_API_KEY": adapter_server.bootstrap_key, "REFUND_LEDGER": shop.ledger}
    # A process of its own that holds nothing of the run but the store (forked from a zygote that
    # imported Pydantic AI and nothing of escalated's: tests/support/prefork.py).
    command = ["-m", "examples.pydantic_ai_refund.run", "resume", "--run-id", run_id, "--store", str(store)]
    fresh = prefork.python(command, cwd=ROOT, env=env, preload=("pydantic_ai", "pydantic_ai.messages", "pydantic_ai.models.function"))
    out, err = await asyncio.to_thread(fresh.communicate, timeout=60)
    assert fresh.returncode == 0, err
    again = await resume_run(build_agent(), run_id=run_id, store=store, client=client, deps=shop)

    assert out.strip() == again.output == "Refund step finished: refunded 300.00 EUR for order o-4"
    assert refunds(shop) == ["o-4 300.00"]
    assert len(await reviewer.all_for(run_id)) == 1


@pytest.mark.parametrize("cause", ["unknown policy", "server down", "read-only key"])
async def test_bad_input_is_one_clear_exception_and_the_tool_never_runs(adapter_server, run_id, shop, unused_tcp_port, cause):
    from escalated.adapters.approvals import ApprovalUnavailable
    from escalated.adapters.pydantic_ai import run_with_approvals
    from examples.pydantic_ai_refund.agent import build_agent, request_for

    policy, url, key = "tools.refund", adapter_server.url, adapter_server.bootstrap_key
    if cause == "unknown policy":
        policy, expected = "tools.nope", "unknown_policy"
    elif cause == "server down":
        url, expected = f"http://127.0.0.1:{unused_tcp_port}", "cannot be reached"
    else:
        key, expected = adapter_server.cli("keys", "create", "--scope", "escalations:read"), "escalations:write"
    async with EscalatedClient(url, key, retry_backoff_s=0.01) as client:
        with pytest.raises(ApprovalUnavailable, match=expected):
            await run_with_approvals(build_agent(), request_for("o-9", 5), policy=policy, run_id=run_id, client=client, deps=shop)
    assert refunds(shop) == []
