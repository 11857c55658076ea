"""Agno as its cookbook writes it: toolkits whose defaults send mail or run shell, include_tools=,
a project Toolkit subclass, @tool(requires_confirmation=True) and requires_confirmation_tools=
(Agno's own approval), a team running its members' tools, a paused run continued."""

import stripe
from agno.agent import Agent
from agno.models.anthropic import Claude
from agno.team import Team
from agno.tools import Toolkit, tool
from agno.tools.google.gmail import GmailTools
from agno.tools.shell import ShellTools


@tool(requires_confirmation=True)
def refund(charge_id: str) -> str:
    """Refund a charge."""
    return stripe.Refund.create(charge=charge_id).id


class NotifyTools(Toolkit):
    def __init__(self, **kwargs):
        super().__init__(name="notify", tools=[self.send_sms], **kwargs)

    def send_sms(self, phone: str, text: str) -> str:
        """Send a text message to the given phone number."""
        return f"sent to {phone}"


mailer = Agent(model=Claude(id="claude-sonnet-4-5"), tools=[GmailTools()])
reader = Agent(tools=[GmailTools(include_tools=["search_emails", "get_emails_by_thread"])])
ops = Agent(tools=[ShellTools(requires_confirmation_tools=["run_shell_command"]), refund])
notifier = Agent(tools=[NotifyTools()])
team = Team(members=[reader, notifier])


def triage(question: str) -> str:
    return reader.run(question).content


def digest() -> None:
    mailer.print_response("Send me a digest of today's mail")


def operate(task: str) -> str:
    response = ops.run(task)
    if response.is_paused:
        for requirement in response.active_requirements:
            if requirement.needs_confirmation:
                requirement.confirm()
        response = ops.continue_run(response, requirements=response.requirements)
    return response.content


def support(question: str) -> str:
    return team.run(question).content
