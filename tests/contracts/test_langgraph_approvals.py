"""apply on a required LangGraph prebuilt agent: LangGraph's own interrupt (escalated.adapters.langgraph's
interrupt_for_approval on the tool, invoke_with_approvals around the run) where the graph is built beside
the run with a checkpointer and runs each tool call as a task of its own; guard_tool at the tool where
it cannot pause. scan counts such a run covered only while every risky tool it reaches is gated, and
never while some of its tools are out of its sight. The end-to-end runs are in
tests/integration/test_apply_langgraph.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.cli import main
from tests.contracts.langchain_shop import RISKY_TOOLS, apply_and_reapply, assert_guard_tool_on_both

APP = (
    '''\
import subprocess

import stripe
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.prebuilt import create_react_agent


'''
    + RISKY_TOOLS
    + '''

agent = create_react_agent(ChatOpenAI(), [issue_refund, run_shell]{builder})


{define} handle(request, thread_id):
    return {run}
'''
)
SYNC_RUN = 'agent.invoke({"messages": [("user", request)]}, {"configurable": {"thread_id": thread_id}})'


def _write(root: Path, *, builder: str = ", checkpointer=InMemorySaver()", run: str = SYNC_RUN, define: str = "def") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "shop.py").write_text(APP.format(builder=builder, run=run, define=define))
    assert CliRunner().invoke(main, ["contracts", "init", str(root), "--accept-all"]).exit_code == 0
    return root / "shop.py"


def _applied(root: Path, **shape: str) -> str:
    path = _write(root, **shape)
    apply_and_reapply(root)
    return path.read_text()


def test_a_run_of_a_graph_with_a_checkpointer_pauses_at_langgraphs_interrupt(tmp_path):
    source = _applied(tmp_path)
    assert "@tool\n@interrupt_for_approval\ndef issue_refund(" in source
    assert "@tool\n@interrupt_for_approval\ndef run_shell(" in source
    assert (
        'guard("shop.handle", lambda: invoke_with_approvals(agent, {"messages": [("user", request)]}, '
        '{"configurable": {"thread_id": thread_id}}, policy="agents.shop.handle"))'
    ) in source
    assert "from escalated.adapters.langgraph import invoke_with_approvals\n" in source
    assert "from escalated.adapters.langgraph import interrupt_for_approval\n" in source
    assert "guard_tool" not in source and "uuid" not in source  # the thread id is the run id


def test_an_awaited_run_goes_through_the_async_driver(tmp_path):
    run = 'await agent.ainvoke({"messages": [("user", request)]}, config={"configurable": {"thread_id": thread_id}})'
    source = _applied(tmp_path, run=run, define="async def")
    assert (
        'await guard("shop.handle", lambda: ainvoke_with_approvals(agent, {"messages": [("user", request)]}, '
        'config={"configurable": {"thread_id": thread_id}}, policy="agents.shop.handle"))'
    ) in source
    assert "@tool\n@interrupt_for_approval\ndef issue_refund(" in source


@pytest.mark.parametrize(
    ("builder", "run"),
    [
        ("", SYNC_RUN),  # no checkpointer: interrupt cannot pause anything
        (", checkpointer=None", SYNC_RUN),
        # v1's tool node runs all calls of a message in one task: a resume would run the approved ones again
        (', checkpointer=InMemorySaver(), version="v1"', SYNC_RUN),
        (", checkpointer=InMemorySaver()", 'agent.invoke({"messages": [("user", request)]})'),  # no thread to resume
    ],
    ids=["no-checkpointer", "checkpointer-none", "v1-tool-node", "no-config"],
)
def test_a_run_that_cannot_pause_at_the_tool_keeps_guard_tool(tmp_path, builder, run):
    source = _applied(tmp_path, builder=builder, run=run)
    assert_guard_tool_on_both(source)
    assert "interrupt_for_approval" not in source and "invoke_with_approvals" not in source


def test_scan_names_the_tool_the_interrupt_does_not_gate(tmp_path):
    _applied(tmp_path)
    path = tmp_path / "shop.py"
    path.write_text(path.read_text().replace("@tool\n@interrupt_for_approval\ndef run_shell(", "@tool\ndef run_shell("))
    result = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)])
    assert result.exit_code == 1
    assert "not guarded at the tool: run_shell (shop.py:" in result.output
    assert "issue_refund (shop.py" not in result.output  # gated by its interrupt


def test_a_run_gated_by_interrupts_with_tools_out_of_sight_is_not_covered(tmp_path):
    builder = ", checkpointer=InMemorySaver()"
    path = _write(tmp_path, builder=builder)
    path.write_text(path.read_text().replace("[issue_refund, run_shell]", "[issue_refund, run_shell, *more_tools()]").replace(
        "import subprocess\n", "import subprocess\n\nfrom registry import more_tools\n"))  # fmt: skip
    result = CliRunner().invoke(main, ["contracts", "apply", str(tmp_path), "--yes"])
    assert result.exit_code == 0, result.output
    assert "@tool\n@interrupt_for_approval\ndef issue_refund(" in path.read_text()
    scanned = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)])
    assert scanned.exit_code == 1
    assert "the scan could not see these tools: tools only known at run time: more_tools()" in scanned.output


def test_interrupts_on_every_risky_tool_are_the_runs_existing_gate_and_one_missing_is_not(tmp_path):
    gated = APP.format(builder=", checkpointer=InMemorySaver()", run=SYNC_RUN, define="def").replace(
        "@tool\n", "@tool\n@interrupt_for_approval\n"
    ).replace("import stripe\n", "import stripe\nfrom escalated.adapters.langgraph import interrupt_for_approval\n")
    (tmp_path / "shop.py").write_text(gated)
    scanned = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)])
    assert scanned.exit_code == 0 and "covered: yes, by existing gate langgraph.interrupt" in scanned.output
    (tmp_path / "shop.py").write_text(gated.replace("@tool\n@interrupt_for_approval\ndef run_shell(", "@tool\ndef run_shell("))
    scanned = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)])
    assert scanned.exit_code == 1 and "existing gate" not in scanned.output


HAND_BUILT = '''\
import stripe
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


@tool
def issue_refund(order_id: str) -> str:
    """Refund an order."""
    stripe.Refund.create(charge=order_id)
    return "refunded"


model = ChatOpenAI().bind_tools([issue_refund])


def agent(state):
    return {"messages": [model.invoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_node("tools", ToolNode([issue_refund]))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", tools_condition)
builder.add_edge("tools", "agent")
graph = builder.compile(checkpointer=InMemorySaver())


def handle(request, thread_id):
    return graph.invoke({"messages": [("user", request)]}, {"configurable": {"thread_id": thread_id}})
'''


def test_a_hand_built_tool_node_is_never_given_interrupts_the_model_call_before_it_is_guarded(tmp_path):
    # Its ToolNode runs a message's calls in one task: a second gated call would make the resume run
    # the approved first one again (docs/contracts-scan.md), so the reviewer decides on the model's answer.
    (tmp_path / "shop.py").write_text(HAND_BUILT)
    assert CliRunner().invoke(main, ["contracts", "init", str(tmp_path), "--accept-all"]).exit_code == 0
    result = CliRunner().invoke(main, ["contracts", "apply", str(tmp_path), "--yes"])
    assert result.exit_code == 0, result.output
    source = (tmp_path / "shop.py").read_text()
    assert 'return {"messages": [guard("shop.agent", lambda: model.invoke(state["messages"]))]}' in source
    assert "interrupt_for_approval" not in source and "invoke_with_approvals" not in source
    assert CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)]).exit_code == 0
