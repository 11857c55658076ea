"""Point 4: agents call the model through their own wrapper; the decision is at the caller."""
from openai import OpenAI
from escalated.guard import guard


class LLM:
    def __init__(self) -> None:
        self.client = OpenAI()

    def completion(self, messages: list) -> str:
        response = guard("wrapper.completion", lambda: self.client.chat.completions.create(model="gpt-4o", messages=messages))
        return response.choices[0].message.content
