"""Shapes the example apps a first-time user copies showed the scan missing or misjudging.

Written from collections of small apps (a framework's cookbook, a course's agents), each
app in its own folder with its own helper modules of the same names; the repositories
themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_calls, scan_files


def _llm(sdk: str) -> str:
    return f"""\
from {sdk} import OpenAI

def ask(prompt):
    r = OpenAI().chat.completions.create(model="gpt-4o", messages=[{{"role": "user", "content": prompt}}])
    return r.choices[0].message.content
"""


SHELL_APP = """\
import subprocess
from shell_app.llm import ask

def step(task):
    command = ask(task)
    subprocess.run(command, shell=True)
"""

CHAT_APP = """\
from chat_app.llm import ask

def reply(question):
    print(ask(question))
"""


def test_a_wrappers_call_sites_count_only_for_the_wrapper_they_import(tmp_path: Path) -> None:
    # Two apps, each with its own llm.ask: the shell app's use of its answer is its wrapper's evidence,
    # not the chat app's, whose answer is only printed.
    calls = scan_calls(tmp_path, {
        "shell_app/llm.py": _llm("openai"), "shell_app/main.py": SHELL_APP,
        "chat_app/llm.py": _llm("openai"), "chat_app/main.py": CHAT_APP,
    })  # fmt: skip
    assert calls[("shell_app/llm.py", 4)][1] == "required"
    assert calls[("chat_app/llm.py", 4)][1] == "autonomous"


ANTHROPIC_LLM = """\
from anthropic import Anthropic

def call_llm(prompt):
    r = Anthropic().messages.create(model="claude-sonnet-4-5", max_tokens=1000, messages=[{"role": "user", "content": prompt}])
    return r.content[0].text
"""

OPENAI_LLM = """\
from openai import OpenAI

def call_llm(prompt):
    r = OpenAI().chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": prompt}])
    return r.choices[0].message.content
"""

SHELL_NODE = """\
import subprocess
from utils.call_llm import call_llm

class Decide:
    def exec(self, task):
        command = call_llm(task)
        subprocess.run(command, shell=True)
"""


def test_a_scripts_own_folder_comes_first_for_its_imports(tmp_path: Path) -> None:
    # A cookbook: each app's folder (no package) holds its own utils/call_llm.py, run as `python main.py`
    # from there, so the app's `from utils.call_llm import call_llm` is its own, not another app's.
    calls = scan_calls(tmp_path, {
        "coder/utils/call_llm.py": ANTHROPIC_LLM, "coder/main.py": SHELL_NODE,
        "chat/utils/call_llm.py": OPENAI_LLM, "chat/main.py": "from utils.call_llm import call_llm\n\nprint(call_llm('hi'))\n",
    })  # fmt: skip
    assert calls[("coder/main.py", 6)][:2] == ("call_llm", "required")
    assert calls[("coder/utils/call_llm.py", 4)][1] == "required"
    assert calls[("chat/main.py", 3)][:2] == ("call_llm", "autonomous")
    assert calls[("chat/utils/call_llm.py", 4)][1] == "autonomous"


POCKETFLOW_NODES = """\
import subprocess
import yaml
from pocketflow import Node, Flow
from utils.call_llm import call_llm

class Decide(Node):
    def prep(self, shared):
        return shared["task"]

    def exec(self, task):
        answer = call_llm(f"Pick one command for: {task}")
        return yaml.safe_load(answer)

    def post(self, shared, prep_res, exec_res):
        shared["command"] = exec_res["command"]
        return exec_res["action"]

class Summarise(Node):
    def exec(self, prep_res):
        return call_llm("Summarise the session")

    def post(self, shared, prep_res, exec_res):
        shared["summary"] = exec_res

class ToolNode(Node):
    def prep(self, shared):
        return shared.get("command"), shared["workdir"]

class RunCommand(ToolNode):
    def exec(self, inputs):
        command, workdir = inputs
        return subprocess.run(command, shell=True, cwd=workdir, capture_output=True).stdout

class Report(Node):
    def prep(self, shared):
        return shared["summary"]

    def exec(self, summary):
        print(summary)
"""


def test_a_pocketflow_nodes_output_goes_through_post_and_the_shared_store(tmp_path: Path) -> None:
    # The flow runs prep -> exec -> post: Decide's answer goes to its post, into shared["command"],
    # which ToolNode.prep (inherited by RunCommand) reads and hands to RunCommand.exec, a shell.
    calls = scan_calls(tmp_path, {"app/utils/call_llm.py": OPENAI_LLM, "app/nodes.py": POCKETFLOW_NODES})
    assert calls[("app/nodes.py", 11)][:2] == ("call_llm", "required")
    assert "R1" in calls[("app/nodes.py", 11)][2]
    assert calls[("app/nodes.py", 20)][:2] == ("call_llm", "autonomous")


HISTORY_NODES = """\
from pocketflow import Node
from utils.call_llm import call_llm

class Compact(Node):
    def exec(self, prep_res):
        return call_llm("Summarise these past actions")

    def post(self, shared, prep_res, exec_res):
        shared["history"] = exec_res

class Decide(Node):
    def post(self, shared, prep_res, exec_res):
        if shared.get("history"):
            print("saving")
        return "done"
"""


def test_a_node_asking_whether_the_store_holds_a_key_chooses_nothing_on_it(tmp_path: Path) -> None:
    calls = scan_calls(tmp_path, {"app/utils/call_llm.py": OPENAI_LLM, "app/nodes.py": HISTORY_NODES})
    assert calls[("app/nodes.py", 6)][:2] == ("call_llm", "autonomous")


MCP_ARMY = """\
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPServerStdio

slack_server = MCPServerStdio("npx", ["-y", "@modelcontextprotocol/server-slack"], env={"SLACK_BOT_TOKEN": "x"})
brave_server = MCPServerStdio("npx", ["-y", "@modelcontextprotocol/server-brave-search"])
custom_server = MCPServerStdio("python", args=["my_server.py"])

slack_agent = Agent("openai:gpt-4o", mcp_servers=[slack_server])
brave_agent = Agent("openai:gpt-4o", mcp_servers=[brave_server])
custom_agent = Agent("openai:gpt-4o", mcp_servers=[custom_server])

async def main(query):
    async with slack_agent.run_mcp_servers(), brave_agent.run_mcp_servers(), custom_agent.run_mcp_servers():
        print((await slack_agent.run(query)).output)
        print((await brave_agent.run(query)).output)
        print((await custom_agent.run(query)).output)
"""


def test_an_mcp_server_started_from_a_known_package_is_judged_by_its_tools(tmp_path: Path) -> None:
    # Slack's reference server posts messages: required, and its tools stay unseen (R7: no guard of this
    # code can sit at them); Brave Search reads public pages; a server of the project's own is unknown.
    result = scan_files(tmp_path, {"app.py": MCP_ARMY})
    calls = {(c.location.line): c for c in result.calls}
    assert (calls[14].recommendation.mode, calls[14].recommendation.rules) == ("required", ("R5", "R7"))
    assert calls[14].unseen_tools
    assert calls[15].recommendation.mode == "autonomous"
    assert (calls[16].recommendation.mode, calls[16].recommendation.rules) == ("reviewed", ("R7",))
