"""R10: a structured choice drives a branch, no side-effect tools."""
from openai import OpenAI
from escalated.guard import guard

client = OpenAI()


def route(ticket: str) -> str:
    response = guard("r10_branch.route", lambda: client.chat.completions.create(
        model="gpt-4o", messages=[{"role": "user", "content": ticket}], response_format={"type": "json_object"}
    ))
    label = response.choices[0].message.content
    if label == "urgent":
        return "pager"
    return "queue"
