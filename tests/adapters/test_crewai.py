"""The CrewAI adapter: a real ``@human_feedback`` flow on CrewAI's SQLite flow persistence,
a real server on both backends, a reviewer deciding over HTTP, the signed callback resuming the
flow through a real receiver.

CrewAI cannot be installed beside the test extra (it pins openai<3, which the
Agents SDK's current releases need, mcp<2 and aiosqlite~=0.21), so this
module runs where ``escalated[crewai]`` is installed and is skipped elsewhere.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
from pathlib import Path

import pytest

if importlib.util.find_spec("crewai") is None:
    pytest.skip("CrewAI is not in the test extra: this module runs in .venv-crewai (the README's test command)", allow_module_level=True)
# CrewAI reports telemetry and traces to its own servers unless told not to: nothing leaves the machine.
os.environ.update({"CREWAI_DISABLE_TELEMETRY": "true", "CREWAI_TRACING_ENABLED": "false", "OTEL_SDK_DISABLED": "true"})
# Imported here, not below: crewai's lazy submodules raise ImportWarning on first import,
# which filterwarnings = error would turn into a collection error; importorskip imports it quietly.
pytest.importorskip("crewai")

from crewai.flow.async_feedback import HumanFeedbackPending
from crewai.flow.persistence import SQLiteFlowPersistence

from escalated.adapters.approvals import ApprovalUnavailable
from escalated.adapters.crewai import EscalatedFeedbackProvider, FlowResumer, choices_for
from escalated.agent.receiver import make_receiver_app, start_receiver
from examples.crewai_refund.flow import refund_flow

SECRET = "whsec_crewai_adapter"


@pytest.fixture
def ledger(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "refunds.log"
    monkeypatch.setenv("REFUND_LEDGER", str(path))
    return path


def refunds(ledger: Path) -> list[str]:
    return ledger.read_text().splitlines() if ledger.exists() else []


class Flows:
    """The refund flow behind a real callback receiver, on CrewAI's SQLite persistence."""

    def __init__(self, adapter_server, client, tmp_path: Path, policy: str) -> None:
        self.server, self.client, self.policy = adapter_server, client, policy
        self.persistence = SQLiteFlowPersistence(str(tmp_path / "flows.db"))
        self.finished: asyncio.Future = asyncio.get_running_loop().create_future()
        self.resumer = FlowResumer(None, self.persistence, client, on_finished=lambda _id, out: self.finished.set_result(out))

    async def __aenter__(self) -> Flows:
        self._receiver = await start_receiver(make_receiver_app(self.resumer, secret=SECRET))
        provider = EscalatedFeedbackProvider(
            policy=self.policy, url=self.server.url, api_key=self.server.bootstrap_key,
            resume_url=self._receiver.url + "/resume", resume_secret=SECRET,
        )
        self.resumer.flow_class = refund_flow(provider)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._receiver.close()

    async def start(self, order: str, amount: float) -> HumanFeedbackPending:
        flow = self.resumer.flow_class(persistence=self.persistence)
        paused = await flow.kickoff_async(inputs={"order_id": order, "amount_eur": amount})
        assert isinstance(paused, HumanFeedbackPending), paused
        return paused

    async def answer(self) -> str:
        return await asyncio.wait_for(self.finished, timeout=30)


async def test_an_approved_refund_runs_after_the_callback_resumes_the_flow(adapter_server, client, reviewer, ledger, tmp_path):
    async with Flows(adapter_server, client, tmp_path, "tools.refund") as flows:
        paused = await flows.start("o-1", 1200)
        flow_id = paused.context.flow_id
        [asked] = await reviewer.open_for(flow_id)
        assert asked["id"] == paused.callback_info["escalationId"] and refunds(ledger) == []
        assert asked["subject"] == {"type": "crewai_flow", "id": flow_id, "label": "RefundFlow.propose"}
        assert asked["question"] == "Refund this order?"
        assert asked["evidence"] == ["Flow: RefundFlow", "Step: propose", 'Output (JSON): {"order_id": "o-1", "amount_eur": 1200.0}']
        assert asked["choices"] == [{"id": "approve", "label": "approve"}, {"id": "reject", "label": "reject"}]
        await reviewer.decide(asked["id"], "approve")
        assert await flows.answer() == "refunded 1200.00 EUR for order o-1"
        # The same callback again (a receiver that restarted): the flow waits on nothing, nothing runs.
        assert await flows.resumer.resume(await client.get_escalation(asked["id"])) is None
    assert refunds(ledger) == ["o-1 1200.00"]


async def test_a_rejected_refund_never_runs_and_the_reason_reaches_the_flow(adapter_server, client, reviewer, ledger, tmp_path):
    async with Flows(adapter_server, client, tmp_path, "tools.refund") as flows:
        paused = await flows.start("o-2", 80)
        await reviewer.decide(paused.callback_info["escalationId"], "reject", reason="the parcel came back empty")
        assert await flows.answer() == "refund denied: the parcel came back empty"
    assert refunds(ledger) == []


async def test_a_timeout_applies_the_policy_default(adapter_server, client, ledger, tmp_path):
    async with Flows(adapter_server, client, tmp_path, "tools.late-no") as flows:  # 1 s SLA, default reject
        await flows.start("o-3", 10)
        assert await flows.answer() == "refund denied"
    assert refunds(ledger) == []


@pytest.mark.parametrize("cause", ["unknown policy", "server down", "read-only key"])
async def test_bad_input_is_one_clear_exception_and_nothing_runs(adapter_server, client, ledger, tmp_path, unused_tcp_port, cause):
    policy, url, key = "tools.refund", adapter_server.url, adapter_server.bootstrap_key
    if cause == "unknown policy":
        policy, expected = "tools.nope", "unknown_policy"
    elif cause == "server down":
        url, expected = f"http://127.0.0.1:{unused_tcp_port}", "cannot be reached"
    else:
        key, expected = adapter_server.cli("keys", "create", "--scope", "escalations:read"), "escalations:write"
    flow_class = refund_flow(EscalatedFeedbackProvider(policy=policy, url=url, api_key=key))
    with pytest.raises(ApprovalUnavailable, match=expected):
        await flow_class(persistence=SQLiteFlowPersistence(str(tmp_path / "flows.db"))).kickoff_async(
            inputs={"order_id": "o-9", "amount_eur": 5}
        )
    assert refunds(ledger) == []


def test_emit_outcomes_become_choice_ids_the_server_accepts():
    assert choices_for(["needs revision", "ok!"]) == [
        {"id": "needs-revision", "label": "needs revision"},
        {"id": "ok", "label": "ok!"},
    ]
