"""init -> apply -> run the rewritten agent: its guard blocks on a real server until a human decides."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from escalated.contracts.edit.cli import apply, init
from escalated.guard.contracts import load_contracts
from tests.support.applied import decide, wait_for_open_escalation

# A stand-in for the OpenAI SDK (a third-party part, not ours): same import
# path and call shape, a canned answer instead of a network call.
FAKE_OPENAI = '''
class _Completions:
    def create(self, **kwargs):
        return "refund 1200 EUR to order 981"


class _Chat:
    completions = _Completions()


class OpenAI:
    chat = _Chat()
'''

AGENT = '''\
from openai import OpenAI

client = OpenAI()


def decide(ticket):
    answer = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": ticket}])
    return f"using: {answer}"


if __name__ == "__main__":
    print(decide("order 981"))
'''


def test_an_applied_required_guard_waits_for_the_reviewer_then_returns(tmp_path, fresh_server, monkeypatch):
    monkeypatch.delenv("EDITOR", raising=False)
    monkeypatch.delenv("VISUAL", raising=False)
    project = tmp_path / "project"
    (project / "openai").mkdir(parents=True)
    (project / "openai" / "__init__.py").write_text(FAKE_OPENAI)
    (project / "agent.py").write_text(AGENT)

    # init: edit the draft inline to mode "required", then accept it.
    answers = ["e", "required", "", "", "", "", "", "a"]  # the choices follow the new mode
    result = CliRunner().invoke(init, [str(project)], input="".join(a + "\n" for a in answers))
    assert "1 accepted" in result.output, result.output
    contract = load_contracts(project).contracts["agent.decide"]
    assert contract.mode == "required"
    result = CliRunner().invoke(apply, [str(project), "--yes"])
    assert result.exit_code == 0, result.output
    assert 'guard("agent.decide", lambda: client.chat.completions.create(' in (project / "agent.py").read_text()

    fresh_server.cli("policy", "set", contract.policy)
    env = {
        **os.environ,
        "ESCALATED_URL": fresh_server.url,
        "ESCALATED_API_KEY": fresh_server.bootstrap_key,
        "ESCALATED_RUN_ID": "ticket-981",
        "PYTHONPATH": os.pathsep.join([str(project), str(Path.cwd())]),
    }
    env.pop("ESCALATED_CONTRACTS", None)  # found above agent.py, as in a real project
    agent = subprocess.Popen(
        [sys.executable, "agent.py"], cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        escalation = wait_for_open_escalation(fresh_server)
        assert escalation["runId"] == "ticket-981" and escalation["agentId"] == "agent"
        assert escalation["evidence"][0] == "Model output:\nrefund 1200 EUR to order 981"
        assert agent.poll() is None  # blocked on the human
        decide(fresh_server, escalation["id"], "approve")
        out, err = agent.communicate(timeout=30)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.communicate()
    assert agent.returncode == 0, err
    assert out.strip() == "using: refund 1200 EUR to order 981"


# Stand-ins for the OpenAI Agents SDK and Stripe (third-party parts, not ours): the same
# import paths and call shapes. The "model" of this Runner always chooses the agent's first
# tool with the request as its argument, and runs it inside the call as the real one does:
# in its event loop, awaiting a coroutine tool and calling a sync one directly.
FAKE_AGENTS = '''
import asyncio
import inspect


class FunctionTool:
    def __init__(self, fn):
        self.name = fn.__name__
        self._fn = fn

    async def on_invoke_tool(self, request):
        if inspect.iscoroutinefunction(self._fn):
            return await self._fn(request)
        return self._fn(request)


def function_tool(fn=None, **options):
    return FunctionTool(fn) if fn is not None else FunctionTool


class Agent:
    def __init__(self, name, tools=(), handoffs=()):
        self.name, self.tools, self.handoffs = name, list(tools), list(handoffs)


class RunResult:
    def __init__(self, final_output):
        self.final_output = final_output


class Runner:
    @staticmethod
    async def run(agent, request):
        tool = agent.tools[0]
        return RunResult(f"{tool.name}: {await tool.on_invoke_tool(request)}")

    @staticmethod
    def run_sync(agent, request):
        return asyncio.run(Runner.run(agent, request))
'''

FAKE_STRIPE = '''
class Refund:
    @staticmethod
    def create(charge):
        with open("refunds.log", "a") as ledger:
            ledger.write(charge + "\\n")
        return {"id": "re_1", "charge": charge}
'''

BILLING = '''\
import stripe
from agents import Agent, Runner, function_tool


@function_tool
def issue_refund(charge_id: str) -> str:
    stripe.Refund.create(charge=charge_id)
    return f"refunded {charge_id}"


billing = Agent(name="billing", tools=[issue_refund])


def handle(request):
    return Runner.run_sync(billing, request).final_output


if __name__ == "__main__":
    print(handle("ch_981"))
'''


def _applied_agent_run(tmp_path, fresh_server) -> tuple[Path, subprocess.Popen]:
    """init --accept-all and apply on the billing agent, then start it against the server."""
    project = tmp_path / "project"
    for name, source in {"agents": FAKE_AGENTS, "stripe": FAKE_STRIPE}.items():
        (project / name).mkdir(parents=True)
        (project / name / "__init__.py").write_text(source)
    (project / "billing.py").write_text(BILLING)
    assert CliRunner().invoke(init, [str(project), "--accept-all"]).exit_code == 0
    contract = load_contracts(project).contracts["billing.handle"]
    assert contract.mode == "required"
    result = CliRunner().invoke(apply, [str(project), "--yes"])
    assert result.exit_code == 0, result.output
    assert '@function_tool\n@guard_tool("billing.handle", awaitable=True)\ndef issue_refund(' in (project / "billing.py").read_text()
    fresh_server.cli("policy", "set", contract.policy)
    env = {
        **os.environ,
        "ESCALATED_URL": fresh_server.url,
        "ESCALATED_API_KEY": fresh_server.bootstrap_key,
        "ESCALATED_RUN_ID": "refund-981",
        "PYTHONPATH": os.pathsep.join([str(project), str(Path.cwd())]),
    }
    env.pop("ESCALATED_CONTRACTS", None)
    agent = subprocess.Popen(
        [sys.executable, "billing.py"], cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    return project, agent


def test_an_applied_agent_run_refunds_only_after_the_reviewer_approves_the_tool_call(tmp_path, fresh_server):
    project, agent = _applied_agent_run(tmp_path, fresh_server)
    try:
        asked = wait_for_open_escalation(fresh_server)
        assert asked["evidence"][:2] == ["Tool: issue_refund", 'Arguments (JSON): {"charge_id": "ch_981"}']
        assert agent.poll() is None and not (project / "refunds.log").exists()  # nothing refunded yet
        decide(fresh_server, asked["id"], "approve")
        final = wait_for_open_escalation(fresh_server)  # the guard around the run: its final output
        assert final["evidence"][0] == "Model output:\nissue_refund: refunded ch_981"
        assert (project / "refunds.log").read_text() == "ch_981\n"
        decide(fresh_server, final["id"], "approve")
        out, err = agent.communicate(timeout=30)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.communicate()
    assert agent.returncode == 0, err
    assert out.strip() == "issue_refund: refunded ch_981"


def test_an_applied_agent_run_whose_tool_call_is_rejected_never_refunds(tmp_path, fresh_server):
    project, agent = _applied_agent_run(tmp_path, fresh_server)
    try:
        asked = wait_for_open_escalation(fresh_server)
        decide(fresh_server, asked["id"], "reject")
        _out, err = agent.communicate(timeout=30)
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.communicate()
    assert agent.returncode != 0 and "EscalationRejected" in err
    assert not (project / "refunds.log").exists()
