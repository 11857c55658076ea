"""CAMEL (camel-ai): ChatAgent.step, RolePlaying.step and Workforce.process_task run the model and the
tools the agents were given (toolkits' get_tools(), FunctionTool(toolkit.method)); the mode follows them."""

from __future__ import annotations

from escalated.contracts.scan.discovery import scan_source

_IMPORTS = (
    "from camel.agents import ChatAgent\n"
    "from camel.toolkits import CodeExecutionToolkit, FunctionTool, GmailToolkit, SearchToolkit, TerminalToolkit\n"
    "from camel.societies import RolePlaying\n"
    "from camel.societies.workforce import Workforce\n"
)


def _run(tools: str) -> tuple[str, tuple[str, ...]]:
    source = _IMPORTS + (
        "search = SearchToolkit()\ncode = CodeExecutionToolkit()\n"
        f"agent = ChatAgent('You help.', tools=[{tools}])\nreply = agent.step('go')\nprint(reply.msgs[0].content)\n"
    )
    (call,) = scan_source(source, "app.py")
    return call.recommendation.mode, call.recommendation.rules


def test_a_chat_agent_step_is_a_run_of_its_tools() -> None:
    assert _run("*code.get_tools()") == ("required", ("R1",))  # execute_code, execute_command
    assert _run("FunctionTool(code.execute_code)") == ("required", ("R1",))
    assert _run("*TerminalToolkit().get_tools()") == ("required", ("R1", "R6"))  # shell_exec; shell_write_content_to_file
    assert _run("*GmailToolkit().get_tools()")[0] == "required"  # gmail_send_email
    assert _run("FunctionTool(search.search_wiki)")[0] != "required"  # public pages only


def test_a_chat_agent_without_tools_is_a_model_call() -> None:
    source = _IMPORTS + "agent = ChatAgent('You help.')\nreply = agent.step('go')\nprint(reply.msgs[0].content)\n"
    (call,) = scan_source(source, "app.py")
    assert call.recommendation.mode == "autonomous"


def test_a_workforce_runs_the_tools_of_the_workers_added_to_it() -> None:
    source = _IMPORTS + (
        "coder = ChatAgent('You code.', tools=[*CodeExecutionToolkit().get_tools()])\n"
        "workforce = Workforce('team')\n"
        "workforce.add_single_agent_worker('a coder', worker=coder)\n"
        "done = workforce.process_task(task)\n"
        "print(done.result)\n"
    )
    (call,) = scan_source(source, "app.py")
    assert call.recommendation.mode == "required" and "R1" in call.recommendation.rules


def test_workers_built_in_helpers_and_handed_through_dictionaries_are_followed() -> None:
    # OWL's examples: the agents are built in one helper, listed as {"agent": ...} dictionaries, added to a
    # Workforce built in another helper; the worker taken from the dictionary is one of the module's
    # ChatAgents with tools, whose toolkits' names are the helper's own.
    source = _IMPORTS + (
        "def agents():\n"
        "    code = CodeExecutionToolkit(sandbox='subprocess')\n"
        "    coder = ChatAgent('You code.', tools=[FunctionTool(code.execute_code)])\n"
        "    return [{'description': 'a coder', 'agent': coder}]\n"
        "def team() -> Workforce:\n"
        "    workforce = Workforce('team')\n"
        "    for each in agents():\n"
        "        workforce.add_single_agent_worker(each['description'], worker=each['agent'])\n"
        "    return workforce\n"
        "def main(task):\n"
        "    workforce = team()\n"
        "    done = workforce.process_task(task)\n"
        "    print(done.result)\n"
    )
    (call,) = scan_source(source, "app.py")
    assert (call.recommendation.mode, call.recommendation.rules) == ("required", ("R1",))


def test_a_society_of_a_project_class_deriving_from_role_playing_is_a_run() -> None:
    source = _IMPORTS + (
        "class Society(RolePlaying):\n"
        "    pass\n"
        "def run_society(society: Society) -> str:\n"
        "    reply, _user = society.step('go')\n"
        "    return reply.msg.content\n"
    )
    (call,) = scan_source(source, "app.py")
    assert call.api.endswith("step") and call.recommendation.rules == ("R7",)  # its agents are built elsewhere: not analysed


def test_an_agent_a_base_class_of_the_module_keeps_is_the_subclass_agent() -> None:
    source = _IMPORTS + (
        "class Society:\n"
        "    def __init__(self):\n"
        "        self.user_agent = ChatAgent('You instruct.')\n"
        "class GAIASociety(Society):\n"
        "    def ask(self, msg):\n"
        "        reply = self.user_agent.step(msg)\n"
        "        return reply.msg.content\n"
    )
    (call,) = scan_source(source, "app.py")
    assert call.api.endswith("step") and call.function.endswith("ask")
