"""Point 4: a project's own model wrapper, with a name no SDK uses."""
from openai import OpenAI
from escalated.guard import guard


class Brain:
    def __init__(self) -> None:
        self.client = OpenAI()

    def think(self, prompt: str) -> str:
        return guard("brain.think", lambda: self.client.responses.create(model="gpt-4o", input=prompt)).output_text
