"""R1: the model writes code that is executed."""
import subprocess

from openai import OpenAI
from escalated.guard import guard

client = OpenAI()


def run_generated(task: str) -> None:
    response = guard("r01_code_execution.run_generated", lambda: client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}]))
    code = response.choices[0].message.content
    exec(code)


def run_shell(task: str) -> str:
    command = guard("r01_code_execution.run_shell", lambda: client.chat.completions.create(model="gpt-4o", messages=[])).choices[0].message.content
    return subprocess.check_output(command, shell=True, text=True)
