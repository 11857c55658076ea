"""Clients built elsewhere: resolved only by the shape of the call (lower confidence)."""
from .llm_setup import client, llm


class Planner:
    def __init__(self, model) -> None:
        self.llm = model

    def plan(self, goal: str) -> str:
        return self.llm.invoke(goal).content


def complete(prompt: str) -> str:
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    return response.choices[0].message.content


def reuse(prompt: str) -> str:
    return llm.invoke(prompt).content
