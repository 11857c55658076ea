"""Point 4 and point 5: the wrapper's output becomes a shell command in another module."""
import subprocess

from app.wrapper import LLM
from escalated.guard import guard


class CodingAgent:
    def __init__(self) -> None:
        self.llm = LLM()

    def step(self, task: str) -> str:
        command = guard("coder.step", lambda: self.llm.completion([{"role": "user", "content": task}]))
        return subprocess.run(command, shell=True, capture_output=True, text=True, check=False).stdout
