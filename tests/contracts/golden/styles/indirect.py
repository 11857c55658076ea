"""Clients built elsewhere: resolved only by the shape of the call (lower confidence)."""
from .llm_setup import client, llm
from escalated.guard import guard


class Planner:
    def __init__(self, model) -> None:
        self.llm = model

    def plan(self, goal: str) -> str:
        return guard("indirect.plan", lambda: self.llm.invoke(goal)).content


def complete(prompt: str) -> str:
    response = guard("indirect.complete", lambda: client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}]))
    return response.choices[0].message.content


def reuse(prompt: str) -> str:
    return guard("indirect.reuse", lambda: llm.invoke(prompt)).content
