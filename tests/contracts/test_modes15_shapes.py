"""Held out, the modes 15 round: answers the scan under-rated (too low a mode).

Written from what real agents do with a model's code (a generated test spliced into the test file,
which the test command then runs); the repositories themselves stay out of this repository, only
their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls

RUNNER = """\
import subprocess


class Runner:
    @staticmethod
    def run_command(command, cwd=None):
        result = subprocess.run(command, shell=True, cwd=cwd, capture_output=True, text=True)
        return result.stdout, result.stderr, result.returncode
"""

VALIDATOR = """\
from runner import Runner


class Validator:
    def __init__(self, test_file_path, test_command):
        self.test_file_path = test_file_path
        self.test_command = test_command
        self.insert_after = 0

    def validate_test(self, generated_test):
        with open(self.test_file_path, "r") as test_file:
            original = test_file.read()
        test_code = generated_test.get("test_code", "").rstrip()
        lines = original.split("\\n")
        processed = "\\n".join(lines[: self.insert_after] + test_code.split("\\n") + lines[self.insert_after :])
        with open(self.test_file_path, "w") as test_file:
            test_file.write(processed)
        stdout, stderr, exit_code = Runner.run_command(command=self.test_command)
        return exit_code == 0
"""

AGENT = """\
import yaml
from openai import OpenAI

from validator import Validator

client = OpenAI()


def generate(source, validator: Validator):
    answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": source}])
    tests = yaml.safe_load(answer.choices[0].message.content)
    for test in tests["new_tests"]:
        validator.validate_test(test)
"""

ONE_MODULE = """\
import subprocess
from pathlib import Path

from openai import OpenAI

client = OpenAI()


def write_and_run(task):
    code = client.chat.completions.create(model="m", messages=[{"role": "user", "content": task}]).choices[0].message.content
    with open("generated_script.py", "w") as script:
        script.write(code)
    subprocess.run(["python", "generated_script.py"], check=False)


def write_text_and_run(task):
    code = client.chat.completions.create(model="m", messages=[{"role": "user", "content": task}]).choices[0].message.content
    path = Path("solution.py")
    path.write_text("import sys\\n" + code)
    subprocess.run(["python", str(path)], check=False)


def where_to_insert(source, test_code):
    line = int(client.chat.completions.create(model="m", messages=[{"role": "user", "content": source}]).choices[0].message.content)
    lines = source.split("\\n")
    width = 4
    spliced = lines[:line] + [width * " " + test_code] + lines[line:]
    with open("test_generated.py", "w") as test_file:
        test_file.write("\\n".join(spliced))
    subprocess.run(["pytest", "test_generated.py"], check=False)


def run_before_write(task):
    subprocess.run(["pytest"], check=False)
    code = client.chat.completions.create(model="m", messages=[{"role": "user", "content": task}]).choices[0].message.content
    with open("generated_script.py", "w") as script:
        script.write(code)
"""


def test_the_answer_written_to_a_file_the_function_then_runs_is_run(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"runner.py": RUNNER, "validator.py": VALIDATOR, "agent.py": AGENT})
    # the tests the model wrote are spliced into the test file, which Runner.run_command's shell runs
    assert calls[("agent.py", 10)][1] == "required"
    assert "R1" in calls[("agent.py", 10)][2]


def test_a_script_written_then_run_in_one_module(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app.py": ONE_MODULE})
    for line in (10, 17):  # open(..., "w").write(code), Path.write_text(header + code): then python runs it
        assert calls[("app.py", line)][1] == "required"
        assert "R1" in calls[("app.py", line)][2]
    # a line number and a width the model gave place and pad text from elsewhere: it runs none of its own
    assert "R1" not in calls[("app.py", 24)][2]
    # the run comes before the write: what ran was not the answer
    assert "R1" not in calls[("app.py", 35)][2]


SPREAD_INTO_ITSELF = """\
from openai import OpenAI


class Model:
    def __init__(self, model, **kwargs):
        self.client = OpenAI()
        self.kwargs = {"model": model, "temperature": 0.0, **kwargs}

    def basic_request(self, prompt, **kwargs):
        kwargs = {**self.kwargs, **kwargs}
        return self.client.chat.completions.create(messages=[{"role": "user", "content": prompt}], **kwargs)
"""


def test_a_name_spread_into_its_own_new_value_is_analysed(tmp_path: Path) -> None:
    # kwargs = {**self.kwargs, **kwargs}: the tools= search of create(**kwargs) followed kwargs into its own
    # value without end, and the whole module was left out as too deeply nested to analyse
    calls = scan_calls(tmp_path, {"lm.py": SPREAD_INTO_ITSELF})
    assert calls[("lm.py", 11)][1:] == ("autonomous", ("R11",))


PROVIDERS_BY_NAME = """\
import subprocess

import anthropic
from openai import OpenAI


class Provider:
    def __init__(self, provider_name):
        self.provider_name = provider_name
        self.available_providers = {
            "openai": self.openai_fn,
            "anthropic": self.anthropic_fn,
        }

    def respond(self, history):
        llm = self.available_providers[self.provider_name]
        thought = llm(history)
        return thought

    def openai_fn(self, history):
        response = OpenAI().chat.completions.create(model="m", messages=history)
        return response.choices[0].message.content

    def anthropic_fn(self, history):
        response = anthropic.Anthropic().messages.create(model="m", max_tokens=512, messages=history)
        return response.content[0].text


def run_task(task):
    command = Provider("openai").respond([{"role": "user", "content": task}])
    subprocess.run(command, shell=True)
"""


def test_a_dict_of_the_modules_wrappers_looked_up_by_name_is_called_through(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"provider.py": PROVIDERS_BY_NAME})
    # llm(history) with llm = self.available_providers[name]: a call site of each wrapper the dict holds
    assert ("provider.py", 17) in calls
    # so each provider's answer reaches respond's caller, which runs it as a shell command
    for line in (21, 25):
        assert calls[("provider.py", line)][1] == "required"
        assert "R1" in calls[("provider.py", line)][2]
