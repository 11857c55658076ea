"""R1: the model writes code that is executed."""
import subprocess

from openai import OpenAI

client = OpenAI()


def run_generated(task: str) -> None:
    response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    code = response.choices[0].message.content
    exec(code)


def run_shell(task: str) -> str:
    command = client.chat.completions.create(model="gpt-4o", messages=[]).choices[0].message.content
    return subprocess.check_output(command, shell=True, text=True)
