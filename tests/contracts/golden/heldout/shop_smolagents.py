"""smolagents as real code writes it: @tool functions and Tool classes, a manager with managed
agents, a run handed to a worker thread, a Gradio UI serving a CodeAgent, a model called directly."""

import smtplib

import stripe
from anyio import to_thread
from smolagents import GradioUI, InferenceClientModel, Tool, ToolCallingAgent, tool
from smolagents.agents import CodeAgent
from escalated.guard import guard
from escalated.guard import guard_tool


@tool
@guard_tool("shop_smolagents.answer")
def refund(charge_id: str) -> str:
    """Refund a charge.

    Args:
        charge_id: the charge to refund
    """
    return stripe.Refund.create(charge=charge_id).id


class MailTool(Tool):
    name = "mail_customer"
    description = "Mail a customer."
    inputs = {"to": {"type": "string", "description": "address"}, "body": {"type": "string", "description": "text"}}
    output_type = "string"

    @guard_tool("shop_smolagents.chat")
    def forward(self, to: str, body: str) -> str:
        with smtplib.SMTP("localhost") as smtp:
            smtp.sendmail("shop@example.com", [to], body)
        return "sent"


model = InferenceClientModel()
billing = ToolCallingAgent(tools=[refund], model=model, name="billing", description="refunds charges")
mailer = ToolCallingAgent(tools=[MailTool()], model=model)
manager = ToolCallingAgent(tools=[], model=model, managed_agents=[billing])
coder = CodeAgent(tools=[], model=model)


def answer(task: str) -> str:
    return str(guard("shop_smolagents.answer", lambda: manager.run(task)))


async def chat(task: str) -> str:
    return str(await guard("shop_smolagents.chat", lambda: to_thread.run_sync(mailer.run, task)))


def summarise(messages: list) -> str:
    return guard("shop_smolagents.summarise", lambda: model(messages)).content


if __name__ == "__main__":
    GradioUI(coder).launch()
