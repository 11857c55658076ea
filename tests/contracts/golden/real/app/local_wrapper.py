"""Point 4 within one module: the wrapper's call sites are calls, and the call inside is judged by them."""
import subprocess

from openai import OpenAI
from escalated.guard import guard


class LLM:
    def __init__(self) -> None:
        self.client = OpenAI()

    def completion(self, messages: list) -> str:
        response = guard("local_wrapper.completion", lambda: self.client.chat.completions.create(model="gpt-4o", messages=messages))
        return response.choices[0].message.content


def ask(prompt: str) -> str:
    return guard("local_wrapper.ask", lambda: LLM().completion([{"role": "user", "content": prompt}]))


def shorten(text: str) -> str:
    return text[:200]


class CodingAgent:
    def __init__(self) -> None:
        self.llm = LLM()

    def step(self, task: str) -> str:
        command = guard("local_wrapper.step", lambda: self.llm.completion([{"role": "user", "content": task}]))
        return subprocess.run(command, shell=True, capture_output=True, text=True, check=False).stdout

    def summarise(self, text: str) -> None:
        print(shorten(guard("local_wrapper.summarise", lambda: ask(text))))
