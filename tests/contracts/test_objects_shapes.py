"""Held out, the objects round: an answer that reaches the code it becomes through an object, not a
return value.

Written from what real agents do (a code generator writing its answer into the post object its
caller passed in, which the caller then hands to a Jupyter kernel); the repositories themselves
stay out of this repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

KERNEL = """\
from jupyter_client.blocking.client import BlockingKernelClient


class Environment:
    def __init__(self):
        self.clients = {}

    def _get_client(self, session_id: str) -> BlockingKernelClient:
        return self.clients[session_id]

    def execute_code(self, session_id: str, code: str) -> str:
        return self._execute_code_on_kernel(session_id, code=code)

    def _execute_code_on_kernel(self, session_id: str, code: str) -> str:
        kc = self._get_client(session_id)
        return kc.execute(code=code, silent=False)
"""

POST = """\
class Post:
    def __init__(self):
        self.attachments = []
        self.message = ""


class PostProxy:
    def __init__(self):
        self.post = Post()

    def update_attachment(self, content, kind):
        self.post.attachments.append((kind, content))
"""

GENERATOR = """\
from openai import OpenAI

from app.post import PostProxy


class CodeGenerator:
    def __init__(self):
        self.client = OpenAI()

    def reply(self, task: str, post_proxy: PostProxy) -> None:
        response = self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
        code = response.choices[0].message.content
        post_proxy.update_attachment(code, "reply_content")
"""

INTERPRETER = """\
from app.env import Environment
from app.generator import CodeGenerator
from app.post import PostProxy


class CodeInterpreter:
    def __init__(self, generator: CodeGenerator, env: Environment):
        self.generator = generator
        self.env = env

    def reply(self, task: str) -> str:
        post_proxy = PostProxy()
        self.generator.reply(task, post_proxy)
        code = next(content for kind, content in post_proxy.post.attachments if kind == "reply_content")
        return self.env.execute_code("session", code)
"""

SHOWN = """\
from app.generator import CodeGenerator
from app.post import PostProxy


class Viewer:
    def __init__(self, generator: CodeGenerator):
        self.generator = generator

    def show(self, task: str) -> None:
        post_proxy = PostProxy()
        self.generator.reply(task, post_proxy)
        print(post_proxy.post.attachments)
"""


def test_code_run_in_a_jupyter_kernel_client_is_code_execution(tmp_path: Path) -> None:
    agent = """\
from openai import OpenAI

from app.env import Environment


def run(task: str) -> str:
    reply = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}])
    return Environment().execute_code("s1", reply.choices[0].message.content)
"""
    calls = scan_modes(tmp_path, {"app/__init__.py": "", "app/env.py": KERNEL, "app/agent.py": agent})
    assert calls[("app/agent.py", 7)] == ("chat.completions.create", "required")


def test_an_answer_written_into_the_object_the_caller_passed_is_judged_by_what_the_caller_does_with_it(tmp_path: Path) -> None:
    files = {"app/__init__.py": "", "app/env.py": KERNEL, "app/post.py": POST, "app/generator.py": GENERATOR}
    # Nothing but the generator: the post proxy is written and nothing in the project reads it.
    assert scan_modes(tmp_path / "alone", files)[("app/generator.py", 11)] == ("chat.completions.create", "autonomous")
    # The interpreter passes its own post proxy, then runs the code attachment in a Jupyter kernel.
    calls = scan_modes(tmp_path / "run", {**files, "app/interpreter.py": INTERPRETER})
    assert calls[("app/generator.py", 11)] == ("chat.completions.create", "required")


def test_an_object_the_caller_only_prints_after_the_call_stays_free_text(tmp_path: Path) -> None:
    files = {"app/__init__.py": "", "app/post.py": POST, "app/generator.py": GENERATOR, "app/viewer.py": SHOWN}
    assert scan_modes(tmp_path, files)[("app/generator.py", 11)] == ("chat.completions.create", "autonomous")


TRANSLATOR = """\
class PostTranslator:
    def raw_text_to_post(self, llm_output, post_proxy):
        for chunk in llm_output:
            post_proxy.update_attachment(chunk, "reply_content")
"""

STREAMING_GENERATOR = """\
from openai import OpenAI

from app.post import PostProxy
from app.role import PostTranslator


class CodeGenerator:
    def __init__(self, post_translator: PostTranslator):
        self.client = OpenAI()
        self.post_translator = post_translator

    def reply(self, task: str, post_proxy: PostProxy) -> None:
        self.post_translator.raw_text_to_post(
            llm_output=self.client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": task}]),
            post_proxy=post_proxy,
        )
"""


def test_an_answer_a_function_of_a_re_exported_class_writes_into_the_caller_s_object_is_followed_out(tmp_path: Path) -> None:
    files = {
        "app/__init__.py": "", "app/env.py": KERNEL, "app/post.py": POST, "app/generator.py": STREAMING_GENERATOR,
        "app/role/__init__.py": "from .translator import PostTranslator\n", "app/role/translator.py": TRANSLATOR,
        "app/interpreter.py": INTERPRETER,
    }  # fmt: skip
    # raw_text_to_post (imported through the package that re-exports it) writes the answer into post_proxy,
    # the generator's parameter; the interpreter passes its own and runs the code attachment.
    calls = scan_modes(tmp_path, files)
    assert calls[("app/generator.py", 14)] == ("chat.completions.create", "required")


STORE = """\
from dataclasses import dataclass
from pathlib import Path


class DB:
    def __init__(self, path):
        self.path = Path(path)

    def __setitem__(self, key, val):
        (self.path / key).write_text(val)


@dataclass
class DBs:
    memory: DB
    workspace: DB
"""

FILES = """\
def to_files(chat, workspace):
    workspace["all_output.txt"] = chat
    for name, code in parse(chat):
        workspace[name] = code


def parse(chat):
    return [(line.split(" ", 1)[0], line) for line in chat.splitlines()]
"""

STEPS = """\
import subprocess

from openai import OpenAI

from app.files import to_files
from app.store import DBs


def ask(prompt):
    reply = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    return reply.choices[0].message.content


def gen_code(dbs: DBs):
    code = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "code"}])
    to_files(code.choices[0].message.content, dbs.workspace)


def gen_entrypoint(dbs: DBs):
    answer = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "run it"}])
    dbs.workspace["run.sh"] = answer.choices[0].message.content


def gen_notes(dbs: DBs):
    answer = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "notes"}])
    dbs.memory["notes.md"] = answer.choices[0].message.content
"""

RUN = """\

def execute_entrypoint(dbs: DBs):
    p = subprocess.Popen("bash run.sh", shell=True, cwd=dbs.workspace.path)
    p.wait()
"""


def test_an_answer_written_into_a_store_whose_folder_a_fixed_command_runs_a_file_of_runs(tmp_path: Path) -> None:
    files = {"app/__init__.py": "", "app/store.py": STORE, "app/files.py": FILES}
    calls = scan_modes(tmp_path / "run", {**files, "app/steps.py": STEPS + RUN})
    # bash run.sh runs in dbs.workspace's folder: the entry point written there, and the code to_files
    # writes there, run.
    assert calls[("app/steps.py", 20)] == ("chat.completions.create", "required")
    assert calls[("app/steps.py", 15)] == ("chat.completions.create", "required")
    # The notes go to dbs.memory, whose folder nothing runs.
    assert calls[("app/steps.py", 25)][1] != "required"
    # Nothing runs the workspace: the same writes are no code run.
    kept = scan_modes(tmp_path / "kept", {**files, "app/steps.py": STEPS})
    assert kept[("app/steps.py", 20)][1] != "required"
    assert kept[("app/steps.py", 15)][1] != "required"
