"""Agent frameworks beyond the first ones, as held-out repositories write them: how a run is
called, where its tools come from, what a framework's default toolkits can do, and its own
approval hook (tests/contracts/corpus/heldout holds a whole module of each)."""

from __future__ import annotations

from escalated.contracts.scan.discovery import scan_source

SMOL_TOOLS = '''
import stripe
from smolagents import LiteLLMModel, ToolCallingAgent, tool

@tool
def refund(charge_id: str) -> str:
    """Refund a charge.

    Args:
        charge_id: the charge
    """
    return stripe.Refund.create(charge=charge_id).id

model = LiteLLMModel(model_id="gpt-4o")
billing = ToolCallingAgent(tools=[refund], model=model, name="billing", description="refunds")
'''


def test_a_smolagents_manager_runs_its_managed_agents_tools() -> None:
    source = SMOL_TOOLS + "manager = ToolCallingAgent(tools=[], model=model, managed_agents=[billing])\nmanager.run('refund ch_1')\n"
    (call,) = scan_source(source, "app.py")
    assert (call.api, call.recommendation.mode, call.recommendation.rules) == ("run", "required", ("R2",))
    assert [t.name for t in call.risky_tools] == ["refund"]


def test_a_smolagents_run_handed_to_a_worker_thread_is_the_call() -> None:
    source = SMOL_TOOLS + "from anyio import to_thread\nasync def chat(task):\n    return await to_thread.run_sync(billing.run, task)\n"
    (call,) = scan_source(source, "app.py")
    assert (call.function, call.api, call.recommendation.mode) == ("chat", "run", "required")


def test_a_gradio_ui_of_an_agent_the_scan_cannot_see_is_not_analysed() -> None:
    source = "from smolagents.gradio_ui import GradioUI\nfrom run import create_agent\nGradioUI(create_agent()).launch()\n"
    (call,) = scan_source(source, "app.py")
    assert call.api == "launch" and call.recommendation.rules == ("R7",)
    assert "not analysed: the scan could not see which agent" in call.recommendation.reasons[0]


def test_smolagents_classes_from_their_modules_and_a_model_called_directly() -> None:
    source = (
        "from smolagents.agents import CodeAgent\nfrom smolagents.models import InferenceClientModel\n"
        "model = InferenceClientModel()\nCodeAgent(tools=[], model=model).run('x')\nprint(model([{'role': 'user', 'content': 'hi'}]).content)\n"
    )
    calls = scan_source(source, "app.py")
    assert [(c.api, c.recommendation.mode) for c in calls] == [("run", "required"), ("__call__", "autonomous")]
