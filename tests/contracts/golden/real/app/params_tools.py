"""Point 5: the same shell tool passed through a **params dict is still offered to the model."""
import subprocess

from openai import OpenAI
from escalated.guard import guard

client = OpenAI()

TOOLS = [{"type": "function", "function": {"name": "run_shell", "parameters": {"type": "object"}}}]


def run_shell(command: str) -> str:
    return subprocess.run(command, shell=True, capture_output=True, text=True, check=False).stdout


def build_params(goal: str) -> dict:
    return {"model": "gpt-4o", "messages": [{"role": "user", "content": goal}], "tools": TOOLS}


def ask_direct(goal: str) -> object:
    params = {"model": "gpt-4o", "messages": [{"role": "user", "content": goal}], "tools": TOOLS}
    return guard("params_tools.ask_direct", lambda: client.chat.completions.create(**params))


def ask_built(goal: str) -> object:
    return guard("params_tools.ask_built", lambda: client.chat.completions.create(**build_params(goal)))
