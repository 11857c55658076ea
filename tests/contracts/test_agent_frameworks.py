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


def _agno_run(tools: str) -> str:
    imports = "from agno.agent import Agent\nfrom agno.tools.google.gmail import GmailTools\nfrom agno.tools.shell import ShellTools\n"
    return imports + f"agent = Agent(tools=[{tools}])\nagent.run('go')\n"


def test_agno_toolkits_are_judged_by_the_tools_they_offer_as_configured() -> None:
    def rules_of(tools: str) -> tuple[str, ...]:
        (call,) = scan_source(_agno_run(tools), "app.py")
        return call.recommendation.rules

    assert rules_of("GmailTools()") == ("R3", "R5")  # defaults send mail and delete labels
    assert rules_of("GmailTools(send_email=False, send_email_reply=False, delete_custom_label=False)") == ("R9",)
    assert rules_of("GmailTools(exclude_tools=['send_email', 'send_email_reply'])") == ("R3",)
    assert rules_of("GmailTools(include_tools=['search_emails'])") == ("R9",)
    assert rules_of("GmailTools(include_tools=['search_emails', 'send_draft'])") == ("R5",)  # off by default, named
    assert rules_of("ShellTools(enable_run_shell_command=False)") == ("R9",)


def test_agno_requires_confirmation_tools_gate_a_toolkit_only_when_every_risky_tool_is_listed() -> None:
    (gated,) = scan_source(_agno_run("ShellTools(requires_confirmation_tools=['run_shell_command'])"), "app.py")
    assert gated.recommendation.mode == "required" and gated.existing_gate == "tool-approval"
    (partly,) = scan_source(_agno_run("GmailTools(requires_confirmation_tools=['send_email'])"), "app.py")
    assert partly.recommendation.mode == "required" and partly.existing_gate is None


def test_an_agno_toolkit_subclass_is_judged_by_its_methods_and_a_paused_run_chooses_nothing() -> None:
    source = (
        "from agno.agent import Agent\nfrom agno.tools import Toolkit\n"
        "class Notify(Toolkit):\n"
        "    def send_sms(self, phone: str, text: str) -> str:\n"
        "        '''Send a text message to the given phone number.'''\n"
        "        return f'sent to {phone}'\n"
        "    def lookup(self, phone: str) -> str:\n"
        "        '''Look up a contact.'''\n"
        "        return phone\n"
        "agent = Agent(tools=[Notify()])\n"
        "response = agent.run('tell Bob')\n"
        "if response.is_paused:\n"
        "    for requirement in response.active_requirements:\n"
        "        if requirement.needs_confirmation:\n"
        "            requirement.confirm()\n"
    )
    (call,) = scan_source(source, "app.py")
    assert (call.recommendation.mode, call.recommendation.rules) == ("required", ("R5",))
