"""R2: the model's tool call moves money."""
import json

import stripe
from openai import OpenAI
from escalated.guard import guard

client = OpenAI()

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "issue_refund",
            "description": "Refund a charge",
            "parameters": {"type": "object", "properties": {"charge_id": {"type": "string"}}},
        },
    }
]


def issue_refund(charge_id: str) -> str:
    stripe.Refund.create(charge=charge_id)
    return "refunded"


def handle(ticket: str) -> None:
    response = guard("r02_money.handle", lambda: client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": ticket}], tools=TOOLS))
    for call in response.choices[0].message.tool_calls or []:
        issue_refund(**json.loads(call.function.arguments))
