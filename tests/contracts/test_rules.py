"""The rule table: one test per rule on the corpus, plus the edges of the word rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from escalated.contracts import rules
from escalated.contracts.scan.discovery import scan_source, scan_tree

RULES_DIR = Path(__file__).parent / "corpus" / "rules"


@pytest.fixture(scope="module")
def by_function() -> dict:
    return {c.function: c for c in scan_tree(RULES_DIR).calls}


@pytest.mark.parametrize(
    ("function", "rule", "mode", "evidence"),
    [
        ("run_generated", "R1", "required", "exec()"),
        ("run_shell", "R1", "required", "subprocess.check_output()"),
        ("analyse", "R1", "required", "code_interpreter"),
        ("dataframe_agent", "R1", "required", "allow_dangerous_code"),
        ("handle", "R2", "required", "issue_refund"),
        ("clean_up", "R3", "required", "shutil.rmtree()"),
        ("admin_assistant", "R4", "required", "grant_role"),
        ("reply_to_customer", "R5", "required", "smtp.send_message()"),
        ("record_summary", "R6", "reviewed", "SQL INSERT"),
        ("run", "R7", "reviewed", "MCP"),
        ("text_to_sql", "R8", "reviewed", "SQL: cursor.execute()"),
        ("render_answer", "R8", "reviewed", "HTML: Markup()"),
        ("support", "R9", "sampled", "lookup_order"),
        ("route", "R10", "sampled", "branch"),
        ("haiku", "R11", "autonomous", "free text"),
    ],
)
def test_rule_fires_with_its_mode_and_reason(by_function: dict, function: str, rule: str, mode: str, evidence: str) -> None:
    call = by_function[function]
    assert call.recommendation.rules == (rule,)
    assert call.recommendation.mode == mode
    assert any(evidence in reason and reason.startswith(rule + " ") for reason in call.recommendation.reasons)


def test_highest_mode_wins_and_every_match_is_a_reason() -> None:
    findings = (
        rules.finding("R9", "tool lookup", 3),
        rules.finding("R6", "db.save()", 5),
        rules.finding("R2", "stripe.Charge.create()", 7),
    )
    rec = rules.recommend(findings, confidence="high")
    assert rec.mode == "required"
    assert rec.rules == ("R2", "R6", "R9")
    assert len(rec.reasons) == 3
    assert rules.deciding_rule(rec) == "R2"


def test_no_evidence_means_free_text() -> None:
    rec = rules.recommend((), confidence="medium")
    assert (rec.mode, rec.rules) == ("autonomous", ("R11",))


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("send_email", "R5"),
        ("slack_client.chat_postMessage", "R5"),
        ("stripe.PaymentIntent.create", "R2"),
        ("transfer_funds", "R2"),
        ("delete_user", "R3"),
        ("os.remove", "R3"),
        ("reset_password", "R4"),
        ("rotate_api_key", "R4"),
        ("update_ticket", "R6"),
        ("session.commit", "R6"),
        ("requests.post", "R6"),
        ("execute_python_code", "R1"),
        ("place_order", "R2"),
        ("create_ticket", "R6"),
        ("register_user", "R6"),
        ("close_ticket", "R6"),
        ("save_extracted_content", "R6"),
        ("book_flight", "R2"),
        ("order_pizza", "R2"),
    ],
)
def test_side_effect_names(name: str, expected: str) -> None:
    assert expected in {f.rule for f in rules.classify_name(name, line=1)}


@pytest.mark.parametrize(
    "name",
    [
        "message.set_content", "df.drop", "items.remove", "websocket.send_text", "settings.update",
        "get_payment_status", "print", "logger.info", "st.write", "self.memory.save_context", "cache.set",
        "SchemaOptimizer.create_optimized_json_schema", "asyncio.create_task", "self.register_new_step_callback",
        "_record_laminar_terminal_llm_spans", "self._broadcast_model_state", "client.close_session",
        "remove_reasoning_content", "update_state", "query.order_by", "Feed.query.order_by_desc",
    ],
)
def test_harmless_names_are_not_side_effects(name: str) -> None:
    assert rules.classify_callee(name, line=1, tainted=True) == []


@pytest.mark.parametrize("name", ["/", "_", "__", "-", ""])
def test_a_name_without_words_decides_nothing(name: str) -> None:
    # Tools registered under a name such as "/" (gptme's slash commands) have no words to judge.
    assert rules.classify_name(name, line=1, subject="tool") == []
    assert rules.classify_callee(name, line=1, tainted=True) == []


def test_sql_in_prose_is_not_sql() -> None:
    assert rules.classify_sql("Politely delete from the reply any greeting.", line=1) == []
    assert [f.rule for f in rules.classify_sql("DELETE FROM users WHERE id = ?", line=1)] == ["R3"]
    assert [f.rule for f in rules.classify_sql("update orders set status = ?", line=1)] == ["R6"]


def test_parameterised_sql_is_a_write_not_an_injection() -> None:
    source = (
        "import litellm\n"
        "def f(db):\n"
        "    out = litellm.completion(model='m', messages=[])\n"
        "    db.execute('SELECT * FROM t WHERE x = ?', (out,))\n"
    )
    (call,) = scan_source(source, "a.py")
    assert "R8" not in call.recommendation.rules


def test_output_returned_to_a_local_caller_is_followed() -> None:
    source = (
        "import os\n"
        "from openai import OpenAI\n"
        "client = OpenAI()\n"
        "def ask(q):\n"
        "    return client.chat.completions.create(model='m', messages=[]).choices[0].message.content\n"
        "def main():\n"
        "    command = ask('which command?')\n"
        "    os.system(command)\n"
    )
    inner, site = scan_source(source, "a.py")
    assert inner.recommendation.rules == ("R1",)
    assert "(a.py:8)" in inner.recommendation.reasons[0]
    # ask() returns the output: where main calls it is reported too, decided there.
    assert (site.function, site.api, site.recommendation.rules) == ("main", "ask", ("R1",))


def test_output_passed_to_a_local_helper_is_followed() -> None:
    source = (
        "from anthropic import Anthropic\n"
        "import stripe\n"
        "def settle(amount_text):\n"
        "    stripe.Payout.create(amount=int(amount_text))\n"
        "def decide():\n"
        "    m = Anthropic().messages.create(model='m', max_tokens=5, messages=[])\n"
        "    settle(m.content[0].text)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.mode == "required"
    assert "R2" in call.recommendation.rules


def test_a_trivial_emptiness_check_is_not_a_branch() -> None:
    source = (
        "from openai import OpenAI\n"
        "def f():\n"
        "    out = OpenAI().responses.create(model='m', input='x')\n"
        "    if not out:\n"
        "        return None\n"
        "    return out.output_text\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.rules == ("R11",)


def test_dynamic_tool_list_is_unresolved() -> None:
    source = (
        "from openai import OpenAI\n"
        "from registry import discover\n"
        "def f():\n"
        "    return OpenAI().chat.completions.create(model='m', messages=[], tools=discover())\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.rules == ("R7",)


def test_tool_schema_resolved_through_a_dispatch_table() -> None:
    source = (
        "import os\n"
        "from openai import OpenAI\n"
        "def wipe(path):\n"
        "    os.remove(path)\n"
        "HANDLERS = {'cleanup': wipe}\n"
        "TOOLS = [{'type': 'function', 'function': {'name': 'cleanup'}}]\n"
        "def f():\n"
        "    return OpenAI().chat.completions.create(model='m', messages=[], tools=TOOLS)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.rules == ("R3",)


@pytest.mark.parametrize(
    ("callee", "is_sink"),
    [("cursor.execute", True), ("self.db.execute", True), ("pd.read_sql", True), ("User.objects.raw", True),
     ("executor.execute", False), ("self.tool_runner.execute", False)],
)  # fmt: skip
def test_sql_sinks_need_a_database_receiver(callee: str, is_sink: bool) -> None:
    found = rules.classify_callee(callee, line=1, tainted=True)
    assert ("R8" in {f.rule for f in found}) is is_sink


def test_tool_use_loop_dispatching_to_a_shell_is_code_execution() -> None:
    source = '''
import subprocess
import anthropic

client = anthropic.Anthropic()
TOOLS = [{"name": "run_bash", "description": "Run a command", "input_schema": {"type": "object"}}]


def execute_tool(name, inputs):
    if name == "run_bash":
        result = subprocess.run(inputs["command"], shell=True, capture_output=True, text=True)
        return result.stdout
    raise ValueError(name)


def run_harness(task):
    messages = [{"role": "user", "content": task}]
    for _ in range(10):
        response = client.messages.create(model="m", max_tokens=1024, tools=TOOLS, messages=messages)
        if response.stop_reason != "tool_use":
            return response.content[0].text
        for block in response.content:
            if block.type == "tool_use":
                output = execute_tool(block.name, block.input)
                messages.append({"role": "user", "content": output})
'''
    (call,) = scan_source(source, "harness.py")
    assert call.recommendation.mode == "required"
    assert "R1" in call.recommendation.rules
    assert any("subprocess.run()" in r for r in call.recommendation.reasons)


def test_chat_ui_streaming_to_a_websocket_stays_free_text() -> None:
    source = '''
from openai import AsyncOpenAI

client = AsyncOpenAI()


async def chat(websocket, prompt):
    stream = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": prompt}], stream=True)
    async for chunk in stream:
        text = chunk.choices[0].delta.content
        await websocket.send_text(text)
        print(text)
'''
    (call,) = scan_source(source, "ui.py")
    assert call.recommendation.rules == ("R11",)


def test_a_long_chain_of_assignments_is_followed_without_recursion() -> None:
    chain = "".join(f"    x{i + 1} = x{i}\n" for i in range(1500))
    head = "import os\nfrom openai import OpenAI\ndef f():\n    x0 = OpenAI().responses.create(model='m', input='x')\n"
    source = head + chain + "    os.system(x1500)\n"
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.rules == ("R1",)


@pytest.mark.parametrize(
    ("test", "is_branch"),
    [("if verdict.approved:", True), ("if verdict['approve']:", True), ("if verdict.kind == 'refund':", True),
     ("if not verdict:", False), ("if verdict.choices[0].delta.content:", False), ("if verdict is None:", False),
     ("if len(verdict.choices) > 0:", False)],
)  # fmt: skip
def test_what_counts_as_a_branch_on_the_output(test: str, is_branch: bool) -> None:
    source = f"from openai import OpenAI\ndef f():\n    verdict = OpenAI().responses.create(model='m', input='x')\n    {test}\n        return 1\n"
    (call,) = scan_source(source, "a.py")
    assert ("R10" in call.recommendation.rules) is is_branch


def test_schema_tools_built_from_models_are_named_after_them() -> None:
    source = (
        "import openai\nfrom pydantic import BaseModel\n"
        "class RefundRequest(BaseModel):\n    order_id: str\n"
        "def f():\n    return openai.OpenAI().chat.completions.create(model='m', messages=[], tools=[openai.pydantic_function_tool(RefundRequest)])\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.rules == ("R2",)


def test_pure_computation_tools_are_not_data_access() -> None:
    source = (
        "from langchain_core.tools import tool\nfrom langchain_openai import ChatOpenAI\n"
        "@tool\ndef multiply(a: int, b: int) -> int:\n    '''Multiply.'''\n    return a * b\n"
        "@tool\ndef lookup_customer(cid: str) -> str:\n    '''Find a customer.'''\n    return CRM.find(cid)\n"
        "def pure(q):\n    return ChatOpenAI().bind_tools([multiply]).invoke(q)\n"
        "def reads(q):\n    return ChatOpenAI().bind_tools([multiply, lookup_customer]).invoke(q)\n"
    )
    pure, reads = scan_source(source, "a.py")
    assert pure.recommendation.rules == ("R11",)
    assert reads.recommendation.rules == ("R9",)


def test_tools_held_by_a_collection_are_the_collections_arguments() -> None:
    source = (
        "from anthropic import Anthropic\nfrom .tools import BashTool, EditTool, ToolCollection\n"
        "def loop(messages):\n"
        "    collection = ToolCollection(BashTool(), EditTool())\n"
        "    return Anthropic().beta.messages.create(model='m', max_tokens=9, messages=messages, tools=collection.to_params())\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.rules[0] == "R1"


def test_an_attribute_or_keyword_named_like_the_output_does_not_carry_it() -> None:
    # order.answer and lookup(answer=1) only share a name with the local holding the output.
    source = (
        "from langchain_openai import ChatOpenAI\nllm = ChatOpenAI()\n"
        "def f(order, db):\n"
        "    answer = llm.invoke('q')\n"
        "    print(answer)\n"
        "    if order.answer:\n"
        "        order.refund()\n"
        "    row = db.lookup(answer=1)\n"
        "    db.delete(row)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.rules == ("R11",)


def test_a_match_on_the_output_is_a_branch_and_its_cases_are_read() -> None:
    source = (
        "from langchain_openai import ChatOpenAI\nllm = ChatOpenAI()\n"
        "def f(order):\n"
        "    decision = llm.invoke('q').content\n"
        "    match decision:\n"
        "        case 'refund':\n"
        "            order.refund()\n"
        "        case _:\n"
        "            pass\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.rules == ("R2", "R10")


@pytest.mark.parametrize(
    ("test", "is_branch"),
    [("if (out := OpenAI().responses.create(model='m', input='x')):", False),
     ("while (out := OpenAI().responses.create(model='m', input='x')) is not None:", False),
     ("if (out := OpenAI().responses.create(model='m', input='x')) == 'refund':", True)],
)  # fmt: skip
def test_a_walrus_in_a_test_is_judged_like_the_name_it_binds(test: str, is_branch: bool) -> None:
    source = f"from openai import OpenAI\ndef f():\n    {test}\n        return 1\n"
    (call,) = scan_source(source, "a.py")
    assert ("R10" in call.recommendation.rules) is is_branch


def test_every_fact_of_the_analysis_maps_to_a_rule_of_the_table() -> None:
    assert set(rules.FACT_RULES.values()) <= set(rules.RULES_BY_ID)
    assert {rules.fact(kind, "x", 1).rule for kind in rules.FACT_RULES} == {"R1", "R2", "R3", "R5", "R6", "R7", "R8", "R9", "R10"}


def test_the_analysis_reports_facts_and_never_picks_a_rule_itself() -> None:
    # rules.py is the one table: no module of scan/ names a rule id.
    import re

    scan_dir = Path(rules.__file__).parent / "scan"
    named = {p.name for p in scan_dir.glob("*.py") if re.search(r'"R\d+"', p.read_text())}
    assert named == set()
