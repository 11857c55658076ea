"""The OpenAI Agents SDK adapter: the SDK's real runner and its ``ScriptedModel``, a real
server on both backends, a reviewer deciding over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from escalated.adapters.runstore import RunStore, RunStoreError
from escalated.agent.client import EscalatedClient
from escalated.domain.limits import FILED_TEXT_BUDGET_CHARS, MAX_TEXT_CHARS
from tests.support import prefork
from tests.support.prefork import ForkedPython

if TYPE_CHECKING:
    from agents import Agent

# The Agents SDK, the adapter and the example agent are imported in the tests that use them: under
# --dist loadfile every worker imports every test module at collection (about 3 s of CPU for the
# SDK), and only one of them runs this file.

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "refunds.log"
    monkeypatch.setenv("REFUND_LEDGER", str(path))
    return path


def refunds(ledger: Path) -> list[str]:
    return ledger.read_text().splitlines() if ledger.exists() else []


def model_saw(agent: Agent) -> list:
    """What the scripted model was given on its last call."""
    return agent.model.last_call.input


async def run_in_background(coro) -> asyncio.Task:
    return asyncio.get_running_loop().create_task(coro)


async def test_an_approved_call_runs_the_tool_only_after_the_reviewer_decides(client, reviewer, run_id, ledger):
    from escalated.adapters.openai_agents import run_with_approvals
    from examples.openai_agents_refund.agent import Shop, build_agent, request_for

    agent = build_agent()
    task = await run_in_background(
        run_with_approvals(agent, request_for("o-1", 1200), policy="tools.refund", run_id=run_id, client=client, context=Shop())
    )
    [asked] = await reviewer.open_for(run_id)
    assert refunds(ledger) == []  # the run waits; nothing refunded yet
    assert asked["subject"] == {"type": "tool_call", "id": "call-refund-o-1", "label": "issue_refund"}
    assert asked["choices"] == [{"id": "approve", "label": "Approve"}, {"id": "reject", "label": "Reject"}]
    assert asked["evidence"][:2] == ["Tool: issue_refund", 'Arguments (JSON): {"order_id": "o-1", "amount_eur": 1200.0}']
    assert (asked["agentId"], asked["policy"]) == ("refund-agent", "tools.refund")
    await reviewer.decide(asked["id"], "approve")
    result = await asyncio.wait_for(task, timeout=30)
    assert result.final_output == "Refund step finished: refunded 1200.00 EUR for order o-1"
    assert refunds(ledger) == ["o-1 1200.00"]


async def test_a_rejected_call_never_runs_and_the_reason_reaches_the_model(client, reviewer, run_id, ledger):
    from escalated.adapters.openai_agents import run_with_approvals
    from examples.openai_agents_refund.agent import Shop, build_agent, request_for

    agent = build_agent()
    task = await run_in_background(
        run_with_approvals(agent, request_for("o-2", 80), policy="tools.refund", run_id=run_id, client=client, context=Shop())
    )
    [asked] = await reviewer.open_for(run_id)
    await reviewer.decide(asked["id"], "reject", reason="the parcel came back empty")
    result = await asyncio.wait_for(task, timeout=30)
    assert refunds(ledger) == []
    told = [i["output"] for i in model_saw(agent) if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert told == ["The call was rejected by alice. Reason: the parcel came back empty"]
    assert result.final_output == f"Refund step finished: {told[0]}"


async def test_a_cancelled_approval_never_runs_the_tool(client, reviewer, run_id, ledger):
    from escalated.adapters.openai_agents import run_with_approvals
    from examples.openai_agents_refund.agent import Shop, build_agent, request_for

    agent = build_agent()
    task = await run_in_background(
        run_with_approvals(agent, request_for("o-7", 70), policy="tools.refund", run_id=run_id, client=client, context=Shop())
    )
    [asked] = await reviewer.open_for(run_id)
    status, body, _ = await reviewer.api.call("POST", f"/escalations/{asked['id']}/cancel", json={"reason": "customer withdrew"})
    assert status == 200, body
    result = await asyncio.wait_for(task, timeout=30)
    assert refunds(ledger) == []
    assert result.final_output == "Refund step finished: The approval was cancelled by alice: customer withdrew."


async def test_a_timeout_applies_the_policy_default(client, run_id, ledger):
    from escalated.adapters.openai_agents import run_with_approvals
    from examples.openai_agents_refund.agent import Shop, build_agent, request_for

    # tools.late: 1 s SLA, default approve; nobody decides.
    agent = build_agent()
    result = await asyncio.wait_for(
        run_with_approvals(agent, request_for("o-3", 10), policy="tools.late", run_id=run_id, client=client, context=Shop()),
        timeout=60,
    )
    assert refunds(ledger) == ["o-3 10.00"]
    [filed] = (await client.list_escalations(run_id=run_id))["data"]
    assert filed["resolution"]["resolvedBy"] == "timeout" and filed["resolution"]["choice"] == "approve"
    assert result.final_output.endswith("refunded 10.00 EUR for order o-3")


# -- the durable pair ------------------------------------------------------------------


def resume_in_a_fresh_process(adapter_server, store: Path, run_id: str, ledger: Path) -> ForkedPython | subprocess.Popen:
    """``python -m examples.openai_agents_refund.run resume ...``: a process of its own that holds nothing of the
    run but the store (forked from a zygote that imported the Agents SDK and nothing of escalated's)."""
    env = {**os.environ, "ESCALATED_URL": adapter_server.url, "ESCALATED_API_KEY": adapter_server.bootstrap_key, "REFUND_LEDGER": str(ledger)}
    command = ["-m", "examples.openai_agents_refund.run", "resume", "--run-id", run_id, "--store", str(store)]
    return prefork.python(command, cwd=ROOT, env=env, preload=("agents", "agents.testing"))


def finished(proc: ForkedPython | subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out.strip()


async def test_the_durable_pair_resumes_in_a_fresh_process_and_never_runs_a_tool_twice(
    adapter_server, client, reviewer, run_id, ledger, tmp_path
):
    from escalated.adapters.approvals import Paused
    from escalated.adapters.openai_agents import resume_run, start_run
    from examples.openai_agents_refund.agent import Shop, build_agent, request_for

    store = tmp_path / "runs"
    paused = await start_run(build_agent(), request_for("o-4", 300), policy="tools.refund", run_id=run_id, store=store, client=client, context=Shop())
    assert isinstance(paused, Paused) and paused.run_id == run_id
    [asked] = await reviewer.open_for(run_id)
    assert paused.escalation_ids == (asked["id"],)

    early = await resume_run(build_agent(), run_id=run_id, store=store, client=client, context=Shop())
    assert early == paused and refunds(ledger) == []  # nobody decided yet: still paused, nothing ran

    await reviewer.decide(asked["id"], "approve")
    # Two fresh processes resume at once (a callback and a retry, say): one runs the tool, the other
    # waits for the run's lock and finds it finished.
    both = [resume_in_a_fresh_process(adapter_server, store, run_id, ledger) for _ in range(2)]
    outputs = await asyncio.gather(*(asyncio.to_thread(finished, p) for p in both))
    again = await resume_run(build_agent(), run_id=run_id, store=store, client=client, context=Shop())

    assert again.final_output == "Refund step finished: refunded 300.00 EUR for order o-4"
    assert outputs == [again.final_output] * 2
    assert refunds(ledger) == ["o-4 300.00"]
    assert [type(i).__name__ for i in again.new_items][-2:] == ["ToolCallOutputItem", "MessageOutputItem"]
    assert len(await reviewer.all_for(run_id)) == 1


async def test_a_resume_whose_process_died_midway_is_never_run_again(client, reviewer, run_id, ledger, tmp_path):
    from escalated.adapters.openai_agents import resume_run, start_run
    from examples.openai_agents_refund.agent import Shop, build_agent, request_for

    store = tmp_path / "runs"
    await start_run(build_agent(), request_for("o-6", 60), policy="tools.refund", run_id=run_id, store=store, client=client, context=Shop())
    [asked] = await reviewer.open_for(run_id)
    await reviewer.decide(asked["id"], "approve")
    # What a resume leaves behind when its process dies after marking the run, before saving the result.
    runs = RunStore(store)
    record = runs.read(run_id)
    runs.write(run_id, **{k: v for k, v in record.items() if k not in ("version", "runId")} | {"status": "resuming"})
    with pytest.raises(RunStoreError, match="its approved tools may have run, so it is not run again"):
        await resume_run(build_agent(), run_id=run_id, store=store, client=client, context=Shop())
    assert refunds(ledger) == []


async def test_a_retried_start_files_no_second_escalation(client, reviewer, run_id, ledger, tmp_path):
    from escalated.adapters.openai_agents import start_run
    from examples.openai_agents_refund.agent import build_agent, request_for

    store = tmp_path / "runs"
    first = await start_run(build_agent(), request_for("o-5", 40), policy="tools.refund", run_id=run_id, store=store, client=client)
    again = await start_run(build_agent(), request_for("o-5", 40), policy="tools.refund", run_id=run_id, store=store, client=client)
    assert first == again
    assert len(await reviewer.all_for(run_id)) == 1
    assert refunds(ledger) == []


# -- what the reviewer sees ------------------------------------------------------------


async def test_a_tool_whose_context_holds_50_kb_reaches_the_reviewer_as_a_short_readable_call(client, reviewer, run_id):
    from agents import Agent
    from agents.testing import ModelStep, ScriptedModel

    from escalated.adapters.openai_agents import run_with_approvals
    from tests.adapters.support_agent_approval import Booking, cancel_flight, cancel_model

    agent = Agent(name="support", model=ScriptedModel([ModelStep.respond(cancel_model)] * 2), tools=[cancel_flight])
    context = Booking(history="h" * 50_000, card_token="tok_secret_card")
    task = await run_in_background(run_with_approvals(agent, "cancel LH 123", policy="tools.refund", run_id=run_id, client=client, context=context))
    [asked] = await reviewer.open_for(run_id)
    await reviewer.decide(asked["id"], "reject")
    await asyncio.wait_for(task, timeout=30)

    shown = json.dumps([asked["question"], *asked["evidence"]])
    assert len(shown) < FILED_TEXT_BUDGET_CHARS and all(len(e) <= MAX_TEXT_CHARS for e in asked["evidence"])
    assert "hhhhhhhhhh" not in shown and "tok_secret_card" not in shown and "Booking" not in shown
    assert "sk-live-do-not-show" not in shown and '"api_key": "[redacted]"' in asked["evidence"][1]
    assert '"flight": "LH 123"' in asked["evidence"][1] and "(19600 more characters)" in asked["evidence"][1]
    assert "What it does: Cancel a booked flight and refund the fare." in asked["evidence"]


# -- bad input: one clear exception, and the tool never runs -------------------------------


async def refund_failing_with(client, run_id: str, ledger: Path, *, policy: str = "tools.refund") -> str:
    from escalated.adapters.approvals import ApprovalUnavailable
    from escalated.adapters.openai_agents import run_with_approvals
    from examples.openai_agents_refund.agent import Shop, build_agent, request_for

    with pytest.raises(ApprovalUnavailable) as caught:
        await run_with_approvals(build_agent(), request_for("o-9", 5), policy=policy, run_id=run_id, client=client, context=Shop())
    assert refunds(ledger) == []
    return str(caught.value)


async def test_an_unknown_policy_is_one_clear_exception_and_nothing_runs(client, run_id, ledger):
    said = await refund_failing_with(client, run_id, ledger, policy="tools.nope")
    assert "issue_refund" in said and "unknown_policy" in said


async def test_a_server_that_is_down_is_one_clear_exception_and_nothing_runs(run_id, ledger, unused_tcp_port):
    async with EscalatedClient(f"http://127.0.0.1:{unused_tcp_port}", "ain_live_x", retry_backoff_s=0.01) as down:
        said = await refund_failing_with(down, run_id, ledger)
    assert f"the escalated server at http://127.0.0.1:{unused_tcp_port} cannot be reached" in said


async def test_a_key_without_the_write_scope_is_one_clear_exception_and_nothing_runs(adapter_server, run_id, ledger):
    read_only = adapter_server.cli("keys", "create", "--scope", "escalations:read")
    async with EscalatedClient(adapter_server.url, read_only) as client:
        said = await refund_failing_with(client, run_id, ledger)
    assert "insufficient_scope" in said and "escalations:write" in said


async def test_no_key_in_the_environment_is_one_clear_exception_and_nothing_runs(run_id, ledger):
    from escalated.adapters.approvals import ApprovalUnavailable
    from escalated.adapters.openai_agents import run_with_approvals
    from examples.openai_agents_refund.agent import Shop, build_agent, request_for

    with pytest.raises(ApprovalUnavailable, match="ESCALATED_API_KEY"):
        await run_with_approvals(build_agent(), request_for("o-9", 5), policy="tools.refund", run_id=run_id, context=Shop())
    assert refunds(ledger) == []
