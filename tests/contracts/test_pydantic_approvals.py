"""apply on a required Pydantic AI run: Pydantic AI's own requires_approval where the run can go through
the adapter (its agent built beside it), guard_tool at the tool where it cannot. The end-to-end run is in
tests/integration/test_apply_pydantic_ai.py."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from escalated.cli import main

AGENT = '''\
import stripe
from pydantic_ai import Agent, RunContext

billing = Agent("openai:gpt-4o", deps_type=int)


@billing.tool
def issue_refund(ctx: RunContext[int], order_id: str) -> str:
    stripe.Refund.create(charge=order_id)
    return "refunded"


async def run(request, history):
    return (await billing.run(request, deps=7{extra})).output
'''


def _applied(root: Path, source: str) -> str:
    (root / "app").mkdir(parents=True)
    (root / "app" / "billing.py").write_text(source)
    assert CliRunner().invoke(main, ["contracts", "init", str(root), "--accept-all"]).exit_code == 0
    result = CliRunner().invoke(main, ["contracts", "apply", str(root), "--yes"])
    assert result.exit_code == 0, result.output
    assert CliRunner().invoke(main, ["contracts", "scan", str(root)]).exit_code == 0  # covered either way
    again = CliRunner().invoke(main, ["contracts", "apply", str(root), "--yes"])
    assert "Nothing to apply" in again.output
    return (root / "app" / "billing.py").read_text()


def test_a_run_beside_its_agent_asks_pydantic_ais_own_approval_through_the_adapter(tmp_path):
    source = _applied(tmp_path, AGENT.format(extra=""))
    assert '@billing.tool(requires_approval=True)\ndef issue_refund(' in source
    assert 'billing = Agent("openai:gpt-4o", deps_type=int, output_type=[str, DeferredToolRequests])' in source
    assert 'run_with_approvals(billing, request, deps=7, policy="agents.billing.run", run_id=f"billing.run:{uuid.uuid4()}")' in source
    assert "from escalated.adapters.pydantic_ai import run_with_approvals\n" in source
    assert "guard_tool" not in source


def test_a_run_resuming_its_own_history_keeps_guard_tool_and_no_deferral_nobody_answers(tmp_path):
    source = _applied(tmp_path, AGENT.format(extra=", message_history=history"))
    assert '@billing.tool\n@guard_tool("billing.run")\ndef issue_refund(' in source
    assert "requires_approval" not in source and "DeferredToolRequests" not in source
    assert "run_with_approvals" not in source
