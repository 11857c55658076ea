"""The real-shaped corpus (corpus/real): one behaviour per test, each a pattern from real agent code."""

from __future__ import annotations

from pathlib import Path

import pytest

from escalated.contracts.scan.discovery import scan_source, scan_tree

REAL = Path(__file__).parent / "corpus" / "real"


@pytest.fixture(scope="module")
def calls() -> dict:
    return {(c.location.path.rpartition("/")[2], c.function): c for c in scan_tree(REAL).calls}


def test_a_gate_on_another_agents_tool_does_not_cover_a_run(calls) -> None:
    refunds, accounts = calls[("coverage_gate.py", "run_refunds")], calls[("coverage_gate.py", "run_accounts")]
    assert (refunds.existing_gate, refunds.recommendation.mode) == (None, "required")
    assert accounts.existing_gate == "needs_approval"


def test_a_project_class_shaped_like_an_sdk_is_not_a_model_call(calls) -> None:
    assert not [key for key in calls if key[0] == "lookalike.py"]


def test_a_partial_of_a_model_function_is_a_model_call(calls) -> None:
    assert (calls[("partials.py", "Model.query")].provider, calls[("partials.py", "Model.query")].api) == ("litellm", "completion")


def test_a_method_fetched_with_getattr_is_a_model_call(calls) -> None:
    assert calls[("partials.py", "stream_answer")].api == "responses.create"


def test_instructor_create_with_completion_is_a_model_call_and_its_command_is_r1(calls) -> None:
    call = calls[("partials.py", "plan_command")]
    assert call.api == "chat.completions.create_with_completion" and call.recommendation.rules == ("R1",)


def test_a_wrappers_call_site_in_another_module_is_a_call_decided_there(calls) -> None:
    call = calls[("coder.py", "CodingAgent.step")]
    assert (call.api, call.recommendation.mode) == ("LLM.completion", "required")
    assert any("subprocess.run" in r for r in call.recommendation.reasons)


def test_tools_passed_through_a_params_dict_or_a_helper_are_offered(calls) -> None:
    for function in ("ask_direct", "ask_built"):
        assert calls[("params_tools.py", function)].recommendation.rules == ("R1",)


def test_a_hand_off_reaches_the_other_agents_tools_and_their_helpers_elsewhere(calls) -> None:
    call = calls[("handoffs.py", "run_triage")]
    assert call.recommendation.mode == "required"
    assert any("stripe.Refund.create() (in app/payments.py)" in r for r in call.recommendation.reasons)


def test_a_tool_list_built_by_a_helper_in_another_module_is_classified(calls) -> None:
    assert calls[("uses_toolbox.py", "act")].recommendation.rules == ("R3",)


def test_a_local_function_is_judged_by_its_body_not_its_name(calls) -> None:
    assert calls[("words.py", "summary")].recommendation.rules == ("R11",)


def test_a_long_expression_does_not_hide_the_files_call(calls) -> None:
    assert ("long_expression.py", "explain") in calls


def test_a_tool_known_only_by_its_name_counts_as_reviewed_and_says_so() -> None:
    source = (
        "from langchain_openai import ChatOpenAI\nfrom vendor.tools import grant_admin_role\n"
        "def act(q):\n    return ChatOpenAI().bind_tools([grant_admin_role]).invoke(q)\n"
    )
    (call,) = scan_source(source, "a.py")
    assert (call.recommendation.mode, call.recommendation.confidence) == ("reviewed", "low")
    assert "[name only: a low-confidence signal, counted as reviewed]" in call.recommendation.reasons[0]


def test_building_credentials_to_read_a_calendar_is_not_a_permission_change() -> None:
    source = (
        "from openai import OpenAI\nfrom calendar_tools import build_calendar_credentials\n"
        "def plan(q):\n    return OpenAI().responses.create(model='m', input=q, tools=[build_calendar_credentials])\n"
    )
    (call,) = scan_source(source, "a.py")
    assert "R4" not in call.recommendation.rules


def test_params_helpers_that_return_each_others_call_do_not_hide_the_files_call() -> None:
    # Before: the helpers were followed without end and the file was "too deeply nested to analyse".
    source = (
        "from openai import OpenAI\n"
        "def f():\n    return g()\n"
        "def g():\n    return f()\n"
        "def run(q):\n    return OpenAI().chat.completions.create(model='m', messages=q, **f())\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.function == "run"


def test_a_patch_applying_tool_is_not_read_only() -> None:
    source = (
        "from openai import OpenAI\nfrom vendor.tools import apply_patch\n"
        "def act(q):\n    return OpenAI().responses.create(model='m', input=q, tools=[apply_patch])\n"
    )
    (call,) = scan_source(source, "a.py")
    assert call.recommendation.rules == ("R6",)


def test_a_wrapper_called_from_a_file_that_never_names_an_sdk_is_found_there(calls) -> None:
    call = calls[("worker.py", "work")]
    assert (call.api, call.recommendation.mode) == ("Brain.think", "required")


def test_a_realtime_runner_is_a_model_call_that_runs_the_agents_tools() -> None:
    source = (
        "import subprocess\nfrom agents import function_tool\nfrom agents.realtime import RealtimeAgent, RealtimeRunner\n"
        "@function_tool\ndef run_shell(command: str) -> str:\n    return subprocess.run(command, shell=True).stdout\n"
        "agent = RealtimeAgent(name='ops', tools=[run_shell])\n"
        "async def session():\n    runner = RealtimeRunner(agent)\n    return await runner.run()\n"
    )
    (call,) = scan_source(source, "a.py")
    assert (call.provider, call.api, call.recommendation.rules) == ("openai", "run", ("R1",))
