"""A ``required`` OpenAI Agents run gated by the SDK's own hook: ``needs_approval`` and the adapter.

``guard_tool`` blocks inside a tool the SDK awaits; the SDK has its own
approval instead: a tool declared ``needs_approval=True`` pauses the run,
and ``escalated.adapters.openai_agents.run_with_approvals`` files one
escalation per paused call (the tool's name and JSON arguments as evidence),
waits for the reviewer and applies the decision. So for such a run ``apply``
writes::

    @function_tool(needs_approval=True)
    def issue_refund(ctx: RunContextWrapper[Shop], order_id: str) -> str: ...

    result = await guard("billing.run", lambda: run_with_approvals(
        agent, request, policy="agents.billing.run", run_id=f"billing.run:{uuid.uuid4()}"))

(the call keeps its arguments; the guard around it still reviews the final
answer). Pydantic AI's hook is ``requires_approval``: a ``required``
``agent.run`` beside its agent and tools becomes::

    agent = Agent(model, deps_type=Shop, output_type=[str, DeferredToolRequests])

    @agent.tool(requires_approval=True)
    def issue_refund(ctx: RunContext[Shop], order_id: str) -> str: ...

    result = await guard("billing.run", lambda: run_with_approvals(
        agent, request, deps=Shop(), policy="agents.billing.run", run_id=f"billing.run:{uuid.uuid4()}"))

(a deferred call ends the run with ``DeferredToolRequests``, so the agent's
``output_type`` must admit it; the adapter resumes the run with the decisions,
and its final output is the agent's own type again). LangGraph's hook is
``interrupt``, which needs a checkpointer: a ``required`` ``invoke`` of a
prebuilt agent built beside it with one becomes::

    agent = create_react_agent(model, [issue_refund], checkpointer=InMemorySaver())

    @tool
    @interrupt_for_approval
    def issue_refund(order_id: str) -> str: ...

    result = guard("shop.handle", lambda: invoke_with_approvals(
        agent, {"messages": [...]}, {"configurable": {"thread_id": thread_id}}, policy="agents.shop.handle"))

(the thread id is the run id; ``ainvoke`` becomes ``ainvoke_with_approvals``).
LangChain's ``create_agent`` has ``HumanInTheLoopMiddleware``: its risky tools are named in the middleware
it gets (middleware.py) and its run goes through the same ``invoke_with_approvals``.
CrewAI's hook is ``before_tool_call``: a ``required`` crew's risky ``@tool``
functions get ``@approval_required(policy="agents.shop.handle")`` (the
adapter's hook holds each call for a reviewer) and the run is left as it is.
Agno's hook is ``requires_confirmation``: a ``required`` ``agent.run`` (``arun``) of an
Agno agent built beside its tools becomes::

    @tool(requires_confirmation=True)
    def issue_refund(order_id: str) -> str: ...

    result = guard("shop.handle", lambda: run_with_approvals(
        agent, request, policy="agents.shop.handle", run_id=f"shop.handle:{uuid.uuid4()}"))

(Agno pauses the run before the call; ``escalated.adapters.agno`` confirms or
rejects it with the reviewer's decision and continues the run).
Microsoft Agent Framework's hook is ``approval_mode``: a ``required`` ``agent.run`` of an
Agent Framework agent built beside its tools becomes::

    @tool(approval_mode="always_require")
    def issue_refund(order_id: str, amount_eur: float) -> str: ...

    result = await guard("shop.handle", lambda: run_with_approvals(
        agent, request, policy="agents.shop.handle", run_id=f"shop.handle:{uuid.uuid4()}"))

(the run returns the call as an approval request instead of running it;
``escalated.adapters.agent_framework`` answers it with the reviewer's decision).
A tool without a decorator to extend, a run apply cannot route through the
adapter (its agent built in another file, a graph without a checkpointer, the
prebuilt agent's ``version="v1"`` tool node, which re-runs every call of a
message on resume) keeps the ``guard_tool`` path (tool_guard.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import libcst as cst

from escalated.contracts.calls import LlmCall
from escalated.contracts.edit.middleware import BUILDER, can_hold, hold_tools
from escalated.contracts.edit.middleware import IMPORT as HITL_IMPORT
from escalated.contracts.edit.rewrite import import_position
from escalated.contracts.scan.syntax import literal
from escalated.contracts.scan.toolkits import agno_risky_tools

ADAPTER_IMPORT = "from escalated.adapters.openai_agents import run_with_approvals"
PYDANTIC_IMPORTS = ("from escalated.adapters.pydantic_ai import run_with_approvals", "from pydantic_ai import DeferredToolRequests")
UUID_IMPORT = "import uuid"
LANGGRAPH_MODULE = "escalated.adapters.langgraph"
LANGGRAPH_GATE = "interrupt_for_approval"
LANGGRAPH_RUNS = {"invoke": "invoke_with_approvals", "ainvoke": "ainvoke_with_approvals"}
AGNO_MODULE = "escalated.adapters.agno"
AGNO_RUNS = {"run": "run_with_approvals", "arun": "arun_with_approvals"}
MAF_IMPORT = "from escalated.adapters.agent_framework import run_with_approvals"
MAF_AGENTS = frozenset({"Agent", "ChatAgent"})  # ChatAgent: its name before 1.0
CREWAI_MODULE = "escalated.adapters.crewai"
CREWAI_GATE = "approval_required"
RUNNER = "Runner.run"
DEFERRED = "DeferredToolRequests"
# The framework's decorator, the keyword that asks its approval and the value that does.
_HOOKS = {
    "agents": ("function_tool", "needs_approval", "True"),
    "pydantic": ("tool", "requires_approval", "True"),
    "agno": ("tool", "requires_confirmation", "True"),
    "maf": ("tool", "approval_mode", '"always_require"'),
}


def approval_framework(call: LlmCall) -> str:
    """Which framework hook can gate ``call``'s tools: "agents", "pydantic", "langgraph", "crewai", "agno", "maf"
    (Microsoft Agent Framework), or ""."""
    if call.api == "agents.Runner.run":
        return "agents"
    if call.runner_kind == "agno-agent" and call.api in AGNO_RUNS:
        return "agno"
    if call.runner_kind == "maf-agent" and call.api == "run":
        return "maf"
    if call.provider == "langchain" and call.runner_kind == "agent" and call.api in LANGGRAPH_RUNS:
        return "langgraph"
    if call.runner_kind in {"crew", "crew-agent"}:
        return "crewai"  # CrewAI's tool hook: the tools are marked, the run stays as it is
    return "pydantic" if call.runner_kind == "pydantic-agent" and call.api == "run" else ""


def with_approvals(
    module: cst.Module, policies: Mapping[str, str], tools: Mapping[str, Sequence[str]] | None = None
) -> tuple[cst.Module, tuple[str, ...], tuple[str, ...], frozenset[str]]:
    """``guard(id, lambda: Runner.run(...))`` -> ``... run_with_approvals(..., policy=, run_id=)`` for each id in
    ``policies`` (contract id -> policy); ``tools`` (contract id -> tool names) are the LangGraph tools to gate.
    Returns the ids rewritten, those whose tools ``create_agent``'s middleware now holds (middleware.py):
    those need no decorator, and the Agno toolkits (``"ShellTools tools"``) now confirming their risky tools."""
    if not policies:
        return module, (), (), frozenset()
    agents = _built_agents(module)
    editor = _RunRewriter(
        policies,
        agents=agents,
        agno=agents if _imports_agent_from(module, "agno", {"Agent"}) else frozenset(),
        maf=agents if _imports_agent_from(module, "agent_framework", MAF_AGENTS) else frozenset(),
        graphs=_interrupting_graphs(module),
    )
    new = module.visit(editor)
    assert isinstance(new, cst.Module)
    if not editor.done:
        return module, (), (), frozenset()
    if editor.deferring:
        new = new.visit(_OutputTypes(editor.deferring))
        assert isinstance(new, cst.Module)
    confirmed: frozenset[str] = frozenset()
    if editor.agno_routed:
        toolkits = _ToolkitConfirmations(editor.agno_routed, _imported_names(module))
        new = new.visit(toolkits)
        assert isinstance(new, cst.Module)
        confirmed = frozenset(toolkits.confirmed)
    imports = [f"from {LANGGRAPH_MODULE} import {name}" for name in sorted(editor.graph_runs)]
    if editor.done - editor.graph_done:
        imports += [UUID_IMPORT, *sorted(editor.adapter_imports)]
    held: dict[str, list[str]] = {}
    for contract_id, graph in sorted(editor.held.items()):
        held.setdefault(graph, []).extend(n for n in (tools or {}).get(contract_id, ()) if n not in held.get(graph, []))
    if any(held.values()):
        new = hold_tools(new, {graph: names for graph, names in held.items() if names})
        imports.append(HITL_IMPORT)
    return _ensure_imports(new, tuple(imports)), tuple(sorted(editor.done)), tuple(sorted(editor.held)), confirmed


def ask_approval(decorator: cst.Decorator, *, framework: str = "agents") -> cst.Decorator | None:
    """``@function_tool`` with ``needs_approval=True`` (agents), ``@agent.tool`` with ``requires_approval=True``
    (pydantic), ``@tool`` with ``requires_confirmation=True`` (agno) or ``approval_mode="always_require"`` (maf);
    None if the decorator is not the framework's tool decorator."""
    target = decorator.decorator
    func = target.func if isinstance(target, cst.Call) else target
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    wanted, keyword, value = _HOOKS.get(framework, ("", "", ""))
    # Pydantic AI's is the agent's method (@agent.tool); Agno's and the Agent Framework's the imported function (@tool).
    imported = not isinstance(func, cst.Name)
    if name != wanted or {"pydantic": not isinstance(func, cst.Attribute), "agno": imported, "maf": imported}.get(framework):
        return None
    flag = cst.Arg(cst.parse_expression(value), keyword=cst.Name(keyword), equal=_tight_equal())
    if not isinstance(target, cst.Call):
        return decorator.with_changes(decorator=cst.Call(func=target, args=[flag]))
    given = next((a.value for a in target.args if a.keyword is not None and a.keyword.value == keyword), None)
    if given is not None:
        if framework == "maf" and literal(given) != "always_require":
            return None  # the author's "never_require" (or a value apply cannot read) does not gate: guard_tool does
        return decorator  # already decided there (a function deciding, or False: left to its author)
    return decorator.with_changes(decorator=target.with_changes(args=[*_commas(target.args), flag]))


class _RunRewriter(cst.CSTTransformer):
    def __init__(
        self,
        policies: Mapping[str, str],
        *,
        agents: frozenset[str],
        agno: frozenset[str] = frozenset(),
        maf: frozenset[str] = frozenset(),
        graphs: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__()
        self._policies = policies
        self._agents = agents
        self._agno = agno  # of the agents, those built with Agno's Agent
        self._maf = maf  # of the agents, those built with the Agent Framework's Agent
        self.agno_routed: set[str] = set()  # the Agno agents whose runs now go through the adapter
        self.adapter_imports: set[str] = set()
        self._graphs = graphs or {}
        self.done: set[str] = set()
        # LangGraph runs rewritten: their contract ids, and the adapter functions they now call.
        self.graph_done: set[str] = set()
        self.graph_runs: set[str] = set()
        # Contract ids whose run goes through a create_agent graph, and that graph's name: its middleware gates.
        self.held: dict[str, str] = {}
        # Pydantic AI agents (module-level names) whose runs now defer: their output_type must admit it.
        self.deferring: set[str] = set()

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if len(updated_node.args) < 2 or not isinstance(updated_node.args[1].value, cst.Lambda):
            return updated_node
        first = updated_node.args[0].value
        contract_id = first.evaluated_value if isinstance(first, cst.SimpleString) else None
        lam = updated_node.args[1].value
        run = lam.body
        if not isinstance(contract_id, str) or contract_id not in self._policies or not isinstance(run, cst.Call):
            return updated_node
        graph_run = self._graph_run(run, self._policies[contract_id])
        if graph_run is not None:
            self.done.add(contract_id)
            self.graph_done.add(contract_id)
            graph = cst.ensure_type(run.func, cst.Attribute).value
            if self._graphs[cst.ensure_type(graph, cst.Name).value] == BUILDER:
                self.held[contract_id] = cst.ensure_type(graph, cst.Name).value
            return updated_node.with_changes(args=[updated_node.args[0], updated_node.args[1].with_changes(value=lam.with_changes(body=graph_run))])
        adapted = self._adapter_args(run)
        if adapted is None:
            return updated_node
        adapter, new_args = adapted
        self.done.add(contract_id)
        policy = cst.Arg(cst.SimpleString(_quoted(self._policies[contract_id])), keyword=cst.Name("policy"), equal=_tight_equal())
        run_id = cst.Arg(
            cst.parse_expression(f'f"{contract_id}:{{uuid.uuid4()}}"'), keyword=cst.Name("run_id"), equal=_tight_equal()
        )
        new_run = run.with_changes(func=cst.Name(adapter), args=[*_commas(new_args), policy, run_id])
        return updated_node.with_changes(args=[updated_node.args[0], updated_node.args[1].with_changes(value=lam.with_changes(body=new_run))])


    def _graph_run(self, run: cst.Call, policy: str) -> cst.Call | None:
        """``graph.invoke(input, config, ...)`` of a graph that can interrupt -> ``invoke_with_approvals(graph, input,
        config, ..., policy=)``; None for any other call, or one without its config (the thread id is the run id)."""
        func = run.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in LANGGRAPH_RUNS and isinstance(func.value, cst.Name)):
            return None
        if func.value.value not in self._graphs or any(a.star for a in run.args):
            return None
        positional = [a for a in run.args if a.keyword is None]
        if len(positional) < 2 and not any(a.keyword is not None and a.keyword.value == "config" for a in run.args):
            return None
        adapter = LANGGRAPH_RUNS[func.attr.value]
        self.graph_runs.add(adapter)
        policy_arg = cst.Arg(cst.SimpleString(_quoted(policy)), keyword=cst.Name("policy"), equal=_tight_equal())
        return run.with_changes(func=cst.Name(adapter), args=[cst.Arg(func.value), *_commas(run.args), policy_arg])

    def _adapter_args(self, run: cst.Call) -> tuple[str, Sequence[cst.Arg]] | None:
        """The adapter function and its arguments before policy= and run_id=: Runner.run's own, or agent.run's
        (Agno's agent.arun's) after its agent."""
        if cst.Module([]).code_for_node(run.func) in {RUNNER, f"agents.{RUNNER}"}:
            self.adapter_imports.add(ADAPTER_IMPORT)
            return "run_with_approvals", run.args
        func = run.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) or func.value.value not in self._agents:
            return None
        if any(a.star for a in run.args):
            return None
        keywords = {a.keyword.value for a in run.args if a.keyword is not None}
        if func.value.value in self._agno:
            # agent.run(...) / agent.arun(...) of an Agno agent built in this module, not streamed.
            if func.attr.value not in AGNO_RUNS or keywords & {"stream", "stream_events"}:
                return None
            self.adapter_imports.add(f"from {AGNO_MODULE} import {AGNO_RUNS[func.attr.value]}")
            self.agno_routed.add(func.value.value)
            return AGNO_RUNS[func.attr.value], [cst.Arg(func.value), *run.args]
        if func.value.value in self._maf:
            # agent.run(...) of an Agent Framework agent built in this module, not streamed.
            if func.attr.value != "run" or "stream" in keywords:
                return None
            self.adapter_imports.add(MAF_IMPORT)
            return "run_with_approvals", [cst.Arg(func.value), *run.args]
        # agent.run(...) of a Pydantic AI agent built in this module, not passed its history or deferred results by hand.
        if func.attr.value != "run" or keywords & {"message_history", "deferred_tool_results"}:
            return None
        self.deferring.add(func.value.value)
        self.adapter_imports.update(PYDANTIC_IMPORTS)
        return "run_with_approvals", [cst.Arg(func.value), *run.args]


class _ToolkitConfirmations(cst.CSTTransformer):
    """Each Agno toolkit built in the ``tools=[...]`` of a named agent asks before its risky tools:
    ``ShellTools()`` -> ``ShellTools(requires_confirmation_tools=["run_shell_command"])`` (a literal list it
    has is extended; one that is not literal is left to its author)."""

    def __init__(self, agents: set[str], imported: Mapping[str, str]) -> None:
        super().__init__()
        self._agents = agents
        self._imported = imported
        self.confirmed: set[str] = set()

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        target = updated_node.targets[0].target if len(updated_node.targets) == 1 else None
        value = updated_node.value
        if not (isinstance(target, cst.Name) and target.value in self._agents and isinstance(value, cst.Call)):
            return updated_node
        args = list(value.args)
        for i, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "tools" and isinstance(arg.value, cst.List):
                elements = [e.with_changes(value=self._confirming(e.value)) for e in arg.value.elements]
                args[i] = arg.with_changes(value=arg.value.with_changes(elements=elements))
        return updated_node.with_changes(value=value.with_changes(args=args))

    def _confirming(self, built: cst.BaseExpression) -> cst.BaseExpression:
        if not isinstance(built, cst.Call) or not isinstance(built.func, cst.Name) or built.func.value not in self._imported:
            return built
        risky = agno_risky_tools(self._imported[built.func.value], built)
        if not risky:
            return built
        args = list(built.args)
        for i, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "requires_confirmation_tools":
                if not isinstance(arg.value, cst.List) or any(literal(e.value) is None for e in arg.value.elements):
                    return built
                have = [literal(e.value) for e in arg.value.elements]
                names = [*have, *(n for n in risky if n not in have)]
                args[i] = arg.with_changes(value=cst.parse_expression(json.dumps(names)))
                self.confirmed.add(f"{built.func.value} tools")
                return built.with_changes(args=args)
        flag = cst.Arg(cst.parse_expression(json.dumps(list(risky))), keyword=cst.Name("requires_confirmation_tools"), equal=_tight_equal())
        self.confirmed.add(f"{built.func.value} tools")
        return built.with_changes(args=[*_commas(args), flag])


def _imported_names(module: cst.Module) -> dict[str, str]:
    """``from agno.tools.shell import ShellTools`` -> ``{"ShellTools": "agno.tools.shell.ShellTools"}`` (no aliases)."""
    out: dict[str, str] = {}
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative and not isinstance(small.names, cst.ImportStar):
                dotted = cst.Module([]).code_for_node(small.module)
                out.update({a.name.value: f"{dotted}.{a.name.value}" for a in small.names if isinstance(a.name, cst.Name) and a.asname is None})
    return out


class _OutputTypes(cst.CSTTransformer):
    """``output_type=`` of each named agent admits ``DeferredToolRequests`` (``str`` where it had none)."""

    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self._names = names

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        target = updated_node.targets[0].target if len(updated_node.targets) == 1 else None
        value = updated_node.value
        if not (isinstance(target, cst.Name) and target.value in self._names and _is_agent(value)):
            return updated_node
        assert isinstance(value, cst.Call)
        args = list(value.args)
        for i, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == "output_type":
                written = cst.Module([]).code_for_node(arg.value)
                if DEFERRED not in written:
                    args[i] = arg.with_changes(value=cst.parse_expression(f"[{written}, {DEFERRED}]"))
                return updated_node.with_changes(value=value.with_changes(args=args))
        flag = cst.Arg(cst.parse_expression(f"[str, {DEFERRED}]"), keyword=cst.Name("output_type"), equal=_tight_equal())
        return updated_node.with_changes(value=value.with_changes(args=[*_commas(args), flag]))


def _built_agents(module: cst.Module) -> frozenset[str]:
    """Module-level names bound to ``Agent(...)`` / ``Agent[Deps](...)`` (Pydantic AI's agent)."""
    names: set[str] = set()
    for statement in module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            if _is_agent(small.value):
                names.add(small.targets[0].target.value)
    return frozenset(names)


def _imports_agent_from(module: cst.Module, package: str, names: frozenset[str] | set[str]) -> bool:
    """The module's agent class comes from ``package`` (``from agno.agent import Agent``,
    ``from agent_framework import ChatAgent``), not aliased."""
    for statement in module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if not isinstance(small, cst.ImportFrom) or small.module is None or isinstance(small.names, cst.ImportStar):
                continue
            if cst.Module([]).code_for_node(small.module).split(".")[0] == package:
                if any(isinstance(a.name, cst.Name) and a.name.value in names and a.asname is None for a in small.names):
                    return True
    return False


def _interrupting_graphs(module: cst.Module) -> dict[str, str]:
    """Module-level names bound to a graph that can pause before a tool call runs, and the builder: a
    ``create_react_agent(..., checkpointer=<not None>)`` whose tool node runs each call as a task of its own
    (not ``version="v1"``: a tool there can ``interrupt`` and be resumed alone), or a ``create_agent(...,
    checkpointer=<not None>)`` whose ``middleware=`` apply can extend (middleware.py)."""
    names: dict[str, str] = {}
    for statement in module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
            continue
        value = small.value
        builder = cst.Module([]).code_for_node(value.func).split(".")[-1] if isinstance(value, cst.Call) else ""
        if builder not in {"create_react_agent", BUILDER}:
            continue
        assert isinstance(value, cst.Call)
        keywords = {a.keyword.value: a.value for a in value.args if a.keyword is not None}
        saver = keywords.get("checkpointer")
        version = keywords.get("version")
        if saver is None or (isinstance(saver, cst.Name) and saver.value in {"None", "False"}):
            continue
        if builder == BUILDER and not can_hold(value):
            continue
        if version is not None and not (isinstance(version, cst.SimpleString) and version.evaluated_value == "v2"):
            continue
        names[small.targets[0].target.value] = builder
    return names


def _is_agent(value: cst.BaseExpression) -> bool:
    if not isinstance(value, cst.Call):
        return False
    func = value.func.value if isinstance(value.func, cst.Subscript) else value.func
    return cst.Module([]).code_for_node(func) in {"Agent", "pydantic_ai.Agent", "ChatAgent"}


def _commas(args: Sequence[cst.Arg]) -> list[cst.Arg]:
    """The arguments with a trailing ", " on the last, so more can follow."""
    out = list(args)
    if out:
        out[-1] = out[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return out


def _tight_equal() -> cst.AssignEqual:
    return cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ensure_imports(module: cst.Module, lines: tuple[str, ...]) -> cst.Module:
    present = {
        cst.Module([]).code_for_node(small)
        for statement in module.body
        if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body
        if isinstance(small, cst.Import | cst.ImportFrom)
    }
    body = list(module.body)
    at = import_position(body)
    new = [cst.parse_statement(line + module.default_newline, config=module.config_for_parsing) for line in lines if line not in present]
    return module.with_changes(body=[*body[:at], *new, *body[at:]])
