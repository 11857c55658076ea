"""The tools a model call offers: where to look for them (the decision surface's first source).

``tools=`` and ``functions=`` (also spread from ``**params``), what a runner's
agent and every agent it hands off to carry, a crew's agents, a RealtimeRunner's
agent, ``bind_tools`` and agent builders along the receiver chain, Pydantic AI's
``@agent.tool``, and flags that let the model's output run as code. A mixin of
``SurfaceAnalyzer`` (surface.py), whose ``classify_tool`` (effects.py) judges what is found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import attrs
import libcst as cst

from escalated.contracts import rules
from escalated.contracts.calls import Finding, ToolSite
from escalated.contracts.scan.crews import agents_of
from escalated.contracts.scan.index import MODULE_SCOPE, ModuleIndex, Scope, dotted_name
from escalated.contracts.scan.kinds import Match
from escalated.contracts.scan.params import enclosing_scope
from escalated.contracts.scan.resolve import Resolver
from escalated.contracts.scan.syntax import McpServers, literal, short_name, tools_in_args
from escalated.contracts.scan.tools import AGENT_TOOLS_SUFFIX, AgentOf, ToolRef, ToolResolver, approval_asked

# Agent builders whose second positional argument is the tool list.
_TOOLS_SECOND = frozenset({
    "create_react_agent", "create_agent", "create_tool_calling_agent", "create_openai_tools_agent",
    "create_openai_functions_agent", "create_structured_chat_agent", "create_json_chat_agent", "create_xml_agent",
    "create_function_calling_executor", "create_tool_calling_executor",
})  # fmt: skip
# Google ADK: what runs an agent (the root agent the ADK runner serves, a Runner, a deployed app).
_ADK_RUNS = frozenset({"adk-agent", "adk-runner", "adk-app"})
# smolagents agents, whose managed_agents= run as tools of the manager.
_SMOL_AGENTS = frozenset({"smol-agent", "smol-code-agent"})
# aider's terminal I/O, which answers its confirmations (yes=True: every one, shell commands included).
_AIDER_IO = frozenset({"aider.io.InputOutput"})
# Flags that let the model's output run as code (LangChain, CrewAI).
_CODE_FLAGS = frozenset({"allow_dangerous_code", "allow_code_execution"})


class OfferedTools:
    """Finds the tools of a call; ``SurfaceAnalyzer`` provides the state and the classifier."""

    index: ModuleIndex
    resolver: Resolver
    tools: ToolResolver
    line_of: Callable[[cst.CSTNode], int]
    _scope_of: dict[int, Scope] | None

    if TYPE_CHECKING:

        def classify_tool(self, tool: ToolRef) -> list[Finding]: ...

    def _site(self, tool: ToolRef) -> ToolSite:
        """Where a risky tool's function is, and what already gates it."""
        if tool.site is not None:
            return tool.site
        if self._scope_of is None:
            self._scope_of = {id(s.node): s for s in self.index.scopes.values()}
        body = self._run_method(tool.body) if isinstance(tool.body, cst.ClassDef) else tool.body
        scope = self._scope_of.get(id(body)) if isinstance(body, cst.FunctionDef) else None
        if scope is None:
            return ToolSite(tool.name, "", None, tool.line, approval=tool.gated)
        line = self.line_of(body) if body is not None else tool.line
        return ToolSite(tool.name, "", scope.qualname, line, self.tools.guard_id(scope), tool.gated)

    def _run_method(self, node: cst.ClassDef) -> cst.FunctionDef | None:
        """The method a smolagents ``Tool`` subclass of the project runs for each call (``forward``): the
        function to guard at the tool, since smolagents has no approval hook of its own."""
        bases = {self.index.imports.get(dotted_name(b.value) or "", "") for b in node.bases}
        if not bases & {"smolagents.Tool", "smolagents.tools.Tool"}:
            return None
        for statement in node.body.body:
            if isinstance(statement, cst.FunctionDef) and statement.name.value == "forward":
                return statement
        return None

    # -- tools -------------------------------------------------------------
    def _tool_findings(self, call: cst.Call, scope: Scope, match: Match) -> Iterator[tuple[Finding, ToolRef | None]]:
        for finding in self._dangerous_code(call, scope, match):
            yield finding, None
        hitl = self._hitl_gated(match, scope)
        for expr in self._tool_exprs(call, scope, match):
            if isinstance(expr, McpServers):
                for finding in self.tools.mcp_findings(expr, scope):
                    yield finding, None
                continue
            if isinstance(expr, AgentOf):
                tools, findings = self.tools.resolve_agent(expr.node, scope)
            else:
                tools, findings = self.tools.resolve(expr, scope)
            for finding in findings:
                yield finding, None
            for tool in tools:
                if tool.name in hitl and not tool.gated:
                    site = attrs.evolve(tool.site, approval=True) if tool.site is not None else None
                    tool = attrs.evolve(tool, gated=True, site=site)
                for finding in self.classify_tool(tool):
                    yield finding, tool
        for tool in self._decorated_tools(match):
            for finding in self.classify_tool(tool):
                yield finding, tool
        kind = match.receiver
        if kind is not None and kind.tools_key is not None:
            # SomeCrew().crew() from another module: its agents' tools were classified there.
            for finding in self.tools.imported.get(kind.tools_key, ()):
                yield finding, None

    def _hitl_gated(self, match: Match, scope: Scope) -> frozenset[str]:
        """The tools LangChain's ``HumanInTheLoopMiddleware(interrupt_on={...})`` holds for a human in
        the agent builder's ``middleware=``: each name mapped to ``True`` or to a config without a
        ``when`` (a predicate may let a call through); ``False`` and names not listed run unasked."""
        names: set[str] = set()
        kind = match.receiver
        while kind is not None:
            if kind.kind == "agent" and isinstance(kind.origin, cst.Call):
                for middleware in self._listed(kind.origin, "middleware", scope):
                    if isinstance(middleware, cst.Call) and (dotted_name(middleware.func) or "").endswith("HumanInTheLoopMiddleware"):
                        names.update(self._interrupted(middleware, scope))
            if kind.kind in {"ag2-agent", "ag2-chat"}:
                # register_function(f, caller=..., executor=human_proxy) with the executor asking the person first.
                for registered, executor in self._ag2_registered():
                    if isinstance(registered, cst.Name) and executor is not None and self._ag2_asks_human(executor):
                        names.add(registered.value)
            kind = kind.base
        return frozenset(names)

    def _interrupted(self, middleware: cst.Call, scope: Scope) -> Iterator[str]:
        given = next((a.value for a in middleware.args if a.keyword is None or a.keyword.value == "interrupt_on"), None)
        table = self.tools.value_of(given, scope) if isinstance(given, cst.Name) else given
        for element in table.elements if isinstance(table, cst.Dict) else ():
            name = literal(element.key) if isinstance(element, cst.DictElement) else None
            if not isinstance(name, str):
                continue
            value = element.value
            if isinstance(value, cst.Name):
                asked = value.value == "True"
            elif isinstance(value, cst.Dict):
                asked = "when" not in {literal(e.key) for e in value.elements if isinstance(e, cst.DictElement)}
            elif isinstance(value, cst.Call):  # InterruptOnConfig(allowed_decisions=[...])
                asked = all(a.keyword is None or a.keyword.value != "when" for a in value.args)
            else:
                asked = False
            if asked:
                yield name

    def _decorated_tools(self, match: Match) -> Iterator[ToolRef]:
        """Pydantic AI registers tools with @agent.tool / @agent.tool_plain."""
        agent = match.receiver
        if agent is not None and agent.kind in {"ag2-agent", "ag2-chat"}:
            yield from self._ag2_decorated()
        if agent is None or agent.kind != "pydantic-agent":
            return
        for qualname, decorators in self.index.decorators.items():
            for decorator in decorators:
                target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
                if isinstance(target, cst.Attribute) and target.attr.value in {"tool", "tool_plain"}:
                    owner = self.resolver.kind_of(target.value, self.index.module_scope)
                    if owner is not None and owner.origin is agent.origin:
                        scope = self.index.scopes[qualname]
                        # @agent.tool(requires_approval=True): Pydantic AI defers the call to a human.
                        gated = isinstance(decorator.decorator, cst.Call) and approval_asked(decorator.decorator)
                        yield ToolRef(qualname.rpartition(".")[2], scope.node, self.line_of(scope.node), gated=gated)

    def _ag2_decorated(self) -> Iterator[ToolRef]:
        """AG2's ``@assistant.register_for_llm(...)`` (with ``@user_proxy.register_for_execution()``): a tool
        of this module's agents; gated when the executing agent asks the person first (``human_input_mode="ALWAYS"``)."""
        for qualname, decorators in self.index.decorators.items():
            offered, executors = False, []
            for decorator in decorators:
                target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
                if isinstance(target, cst.Attribute) and target.attr.value in {"register_for_llm", "register_for_execution"}:
                    owner = self.resolver.kind_of(target.value, self.index.module_scope)
                    if owner is None or owner.kind != "ag2-agent":
                        continue
                    if target.attr.value == "register_for_llm":
                        offered = True
                    else:
                        executors.append(target.value)
            if offered:
                scope = self.index.scopes[qualname]
                gated = bool(executors) and all(self._ag2_asks_human(executor) for executor in executors)
                yield ToolRef(qualname.rpartition(".")[2], scope.node, self.line_of(scope.node), gated=gated)

    def _dangerous_code(self, call: cst.Call, scope: Scope, match: Match) -> Iterator[Finding]:
        """allow_dangerous_code=True where the model or its agent is built: it runs model-written code."""
        roots: list[cst.CSTNode] = [scope.node] if scope.qualname != MODULE_SCOPE else [call]
        kind = match.receiver
        while kind is not None:
            if kind.kind == "smol-code-agent":
                yield rules.fact("runs-model-code", "smolagents CodeAgent executes the Python the model writes", self.line_of(call))
            if kind.kind == "aider-coder" and isinstance(kind.origin, cst.Call):
                yield from self._aider_coder(kind.origin, self.line_of(call))
            if kind.kind == "autogen-agent" and isinstance(kind.origin, cst.Call) and _executes_code(kind.origin):
                yield rules.fact("runs-model-code", "AutoGen CodeExecutorAgent executes the code blocks it is sent", self.line_of(call))
            if kind.origin is not None:
                roots.append(kind.origin)
            kind = kind.base
        for root in roots:
            for node in self.index.walk(root):
                if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value in _CODE_FLAGS:
                    if not (isinstance(node.value, cst.Name) and node.value.value in {"False", "None"}):
                        yield rules.fact("runs-model-code", f"{node.keyword.value}=True", self.line_of(node.value))

    def _aider_coder(self, built: cst.Call, line: int) -> Iterator[Finding]:
        """aider's ``Coder.create(...)``: its run applies the edits the model answers to the files it was given,
        then offers the shell commands the model suggests, which run unasked when its ``io`` answers yes
        (``InputOutput(yes=True)``) unless ``suggest_shell_commands=False``."""
        yield rules.fact("file-edit-tool", "aider's Coder applies the model's edits to its files", line)
        given = {arg.keyword.value: arg.value for arg in built.args if arg.keyword is not None}
        suggests = given.get("suggest_shell_commands")
        if isinstance(suggests, cst.Name) and suggests.value in {"False", "None"}:
            return
        io = given.get("io")
        candidates: list[cst.BaseExpression] = [io] if io is not None else []
        if isinstance(io, cst.Name):
            candidates = [value for _scope, key, value in self.index.assignments if key == io.value]
        for value in candidates:
            if not (isinstance(value, cst.Call) and self.resolver.qualified(value.func) in _AIDER_IO):
                continue
            yes = next((arg.value for arg in value.args if arg.keyword is not None and arg.keyword.value == "yes"), None)
            if isinstance(yes, cst.Name) and yes.value == "True":
                why = "aider's Coder runs the shell commands the model suggests: its InputOutput(yes=True) confirms them"
                yield rules.fact("runs-model-code", why, line)
                return

    def _picked_agents(self, agent: cst.BaseExpression, scope: Scope) -> list[cst.BaseExpression] | None:
        """``_get_agent_by_name(name)``, a helper of this module returning ``agents.get(name, triage_agent)``
        (or ``agents[name]``) from a table of agents: every agent of the table, and the default."""
        if not (isinstance(agent, cst.Call) and isinstance(agent.func, cst.Name)):
            return None
        helper = self.tools.function(agent.func.value, scope)
        if helper is None or not isinstance(helper.node, cst.FunctionDef):
            return None
        picked: list[cst.BaseExpression] = []
        for node in self.index.subtree(helper.node):
            if not (isinstance(node, cst.Return) and node.value is not None):
                continue
            returned = node.value
            default: cst.BaseExpression | None = None
            if isinstance(returned, cst.Call) and isinstance(returned.func, cst.Attribute) and returned.func.attr.value == "get" and returned.args:
                value, default = returned.func.value, (returned.args[1].value if len(returned.args) > 1 else None)
            elif isinstance(returned, cst.Subscript):
                value = returned.value
            else:
                return None
            table = self.tools.value_of(value, helper) if isinstance(value, cst.Name) else None
            if not isinstance(table, cst.Dict):
                return None
            picked += [entry.value for entry in table.elements if isinstance(entry, cst.DictElement)]
            picked += [default] if default is not None else []
        return picked or None

    def _tool_exprs(self, call: cst.Call, scope: Scope, match: Match) -> Iterator[cst.BaseExpression | McpServers | AgentOf]:
        yield from tools_in_args(call.args)
        yield from self._spread_tools(call, scope)
        picked = self._picked_agents(call.args[0].value, scope) if match.api.startswith("agents.Runner") and call.args else None
        if picked is not None:
            # Runner.run(_get_agent_by_name(name), ...): whichever agent of the helper's table is named.
            yield from (AgentOf(each) for each in picked)
        elif match.api.startswith("agents.Runner") and call.args:
            agent = call.args[0].value
            kind = self.resolver.kind_of(agent, scope)
            exported = f"{self.index.qualified(agent)}{AGENT_TOOLS_SUFFIX}" in self.tools.imported
            if kind is not None and kind.origin is None and kind.kind == "agents-agent" and exported:
                yield AgentOf(agent)  # an agent of another module: its tools (hand-offs included) were classified there
            elif kind is not None and kind.origin is None and kind.kind == "agents-agent":
                # An agent imported from another module that the scan could not read there: unknown.
                written = _short_code(self.tools.code_of(agent))
                where = self.index.qualified(agent) or written
                what = f"not analysed: the agent {written!r} is defined in another module ({where}); its tools are not followed there"
                yield McpServers(agent, what)
            if kind is None and self.tools.value_of(agent, scope) is None:
                # Runner.run(agent) with an agent built elsewhere: its tools are unknown, not absent.
                written = _short_code(self.tools.code_of(agent))
                what = f"not analysed: the agent {written!r} is not defined where the scan can follow it, so its tools are unknown"
                yield McpServers(call.args[0].value, what)
            yield from self._agent_tools(agent, scope, seen=set())
        kind = match.receiver
        if match.api == "run_demo_loop" or (kind is not None and kind.kind == "swarm"):
            # Swarm: run(agent=...) / run_demo_loop(agent): the agent's functions, hand-offs included.
            run_agent = next((a.value for a in call.args if a.keyword is None or a.keyword.value in {"agent", "starting_agent"}), None)
            if run_agent is not None:
                yield AgentOf(run_agent)
        if kind is not None and kind.kind == "crew" and isinstance(kind.origin, cst.Call):
            yield from self._crew_tools(kind.origin, scope)
        if kind is not None and kind.kind == "agents-realtime" and isinstance(kind.origin, cst.Call) and kind.origin.args:
            yield from self._agent_tools(kind.origin.args[0].value, scope, seen=set())  # RealtimeRunner(agent)
        if kind is not None and kind.kind == "autogen-team" and isinstance(kind.origin, cst.Call):
            # RoundRobinGroupChat([writer, reviewer]): the team runs every participant's tools.
            participants = [a.value for a in kind.origin.args if a.keyword is None or a.keyword.value == "participants"][:1]
            for given in participants:
                listed = self.tools.value_of(given, scope) if isinstance(given, cst.Name) else given
                for element in listed.elements if isinstance(listed, cst.List | cst.Tuple) else ():
                    yield AgentOf(element.value)
        if kind is not None and kind.kind == "camel-workforce":
            yield from self._camel_workers(kind.origin, call, scope)
        if kind is not None and kind.kind == "camel-society":
            yield from self._camel_society(kind.origin, scope)
        if kind is not None and kind.kind == "ag2-chat" and isinstance(kind.origin, cst.Call):
            # initiate_group_chat(pattern=DefaultPattern(agents=[...])), initiate_swarm_chat(agent, agents=[...]).
            for arg in kind.origin.args:
                if arg.keyword is None or arg.keyword.value in {"pattern", "initial_agent", "agents"}:
                    yield AgentOf(self._assigned_before(arg.value, call, scope))
        if kind is not None and kind.kind == "ag2-agent" and match.api in {"initiate_chat", "a_initiate_chat", "run", "a_run"}:
            # user_proxy.initiate_chat(assistant, ...): the recipient answers with the model and its tools.
            recipient = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "recipient"), None)
            if recipient is not None and not isinstance(recipient, cst.SimpleString | cst.FormattedString):
                yield AgentOf(recipient)
        if kind is not None and kind.kind in {"ag2-agent", "ag2-chat"}:
            yield from (registered for registered, _executor in self._ag2_registered())
        if kind is not None and kind.kind == "lg-served" and isinstance(kind.origin, cst.Call):
            yield from self._served_graph(kind.origin, scope)
        if kind is not None and kind.kind in _ADK_RUNS and isinstance(kind.origin, cst.Call):
            yield AgentOf(kind.origin) if kind.kind == "adk-agent" else self._adk_agent(kind.origin, scope)
        if kind is not None and kind.kind == "smol-ui" and kind.base is None and kind.origin is not None:
            written = _short_code(self.tools.code_of(kind.origin))
            yield McpServers(kind.origin, f"not analysed: the scan could not see which agent {written!r} serves, so its tools are unknown")
        while kind is not None:
            origin = kind.origin
            if isinstance(origin, cst.Call):
                method = origin.func.attr.value if isinstance(origin.func, cst.Attribute) else ""
                if method == "bind_tools" and origin.args and origin.args[0].keyword is None:
                    yield origin.args[0].value
                elif kind.kind == "agent":
                    positional = [a.value for a in origin.args if a.keyword is None]
                    callee = (dotted_name(origin.func) or "").rpartition(".")[2]
                    if callee == "initialize_agent" and positional:
                        yield positional[0]
                    elif len(positional) > 1 and callee in _TOOLS_SECOND:
                        yield positional[1]
                if kind.kind not in _ADK_RUNS:  # an ADK agent's tools: AgentOf above, with its sub-agents
                    yield from tools_in_args(origin.args)
                if kind.kind == "agents-agent":
                    yield from self._handoff_tools(origin, scope, seen={id(origin)})
                if kind.kind in _SMOL_AGENTS:  # managed_agents=[billing]: the manager calls them as tools
                    yield from (AgentOf(agent) for agent in self._listed(origin, "managed_agents", scope))
                if kind.kind == "agno-team":  # Team(members=[writer, mailer]): the team runs its members' tools
                    yield from (AgentOf(agent) for agent in self._listed(origin, "members", scope))
                if kind.kind == "maf-builder":
                    yield from self._maf_participants(origin, scope)
                if kind.kind == "llamaindex-agent":
                    # AgentWorkflow.from_tools_or_functions([multiply, add]), ReActAgent.from_tools(tools): the tools
                    # first; AgentWorkflow(agents=[research, writer]): each agent's tools, hand-offs among them.
                    callee = (dotted_name(origin.func) or "").rpartition(".")[2]
                    positional = [a.value for a in origin.args if a.keyword is None]
                    if callee in {"from_tools_or_functions", "from_tools"} and positional:
                        yield positional[0]
                    yield from (AgentOf(agent) for agent in self._listed(origin, "agents", scope))
            kind = kind.base

    def _served_graph(self, built: cst.Call, scope: Scope, *, depth: int = 0) -> Iterator[cst.BaseExpression | McpServers | AgentOf]:
        """What a served graph runs: ``create_swarm([flights, hotels]).compile()`` its agents, a
        ``create_agent(model, tools=[...])`` its tools; a graph built some other way, unknown."""
        if isinstance(built.func, cst.Attribute) and built.func.attr.value == "compile" and depth < 3:
            inner = self.tools.value_of(built.func.value, scope) if isinstance(built.func.value, cst.Name) else built.func.value
            if isinstance(inner, cst.Call):
                yield from self._served_graph(inner, scope, depth=depth + 1)
                return
        kind = self.resolver.kind_of(built, scope)
        if kind is not None and kind.kind == "lg-multi":
            agents = [a.value for a in built.args if a.keyword is None or a.keyword.value == "agents"][:1]
            for given in agents:
                listed = self.tools.value_of(given, scope) if isinstance(given, cst.Name) else given
                for element in listed.elements if isinstance(listed, cst.List | cst.Tuple) else ():
                    yield AgentOf(element.value)
            yield from tools_in_args(built.args)  # a supervisor's own tools
            return
        if kind is not None and kind.kind == "agent":
            yield AgentOf(built)
            return
        written = _short_code(self.tools.code_of(built))
        yield McpServers(built, f"not analysed: the scan could not see which agents the served graph {written!r} runs")

    def _maf_participants(self, builder: cst.Call, scope: Scope) -> Iterator[AgentOf]:
        """SequentialBuilder(participants=[triage, refunds]), HandoffBuilder(...).with_start_agent(triage),
        WorkflowBuilder(...).add_edge(writer, reviewer): the agents a Microsoft Agent Framework workflow runs."""
        # The builder may be written in a helper (build_workflow()) the run's scope only calls: its names are there.
        home = enclosing_scope(self.index, builder) or scope
        for arg in builder.args:
            given = self.tools.value_of(arg.value, home) if isinstance(arg.value, cst.Name) else arg.value
            listed = [e.value for e in given.elements] if isinstance(given, cst.List | cst.Tuple) else [arg.value]
            for value in listed:
                agent = self.resolver.kind_of(value, home)
                named = arg.keyword is not None and arg.keyword.value in {"participants", "manager_agent"}
                if (agent is not None and agent.kind == "maf-agent") or named:
                    built = self.tools.value_of(value, home) if isinstance(value, cst.Name) and home is not scope else None
                    if built is None and isinstance(value, cst.Name) and home is not scope:
                        built = self.tools.unpacked(value, home)  # triage, refund = create_agents(client) in the helper
                    yield AgentOf(built if isinstance(built, cst.Call) else value)

    def _adk_agent(self, runner: cst.CSTNode, scope: Scope, *, depth: int = 0) -> AgentOf | McpServers:
        """The agent a Google ADK Runner(agent=…), AdkApp(agent=…) or agent_engines.create(app) runs."""
        if isinstance(runner, cst.Call) and depth < 3:
            given = next((a.value for a in runner.args if a.keyword is None or a.keyword.value in {"agent", "agent_engine"}), None)
            if given is not None:
                inner = self.resolver.kind_of(given, scope)
                if inner is not None and inner.kind == "adk-app" and inner.origin is not None:
                    return self._adk_agent(inner.origin, scope, depth=depth + 1)  # agent_engines.create(AdkApp(agent=…))
                return AgentOf(given)
        return McpServers(runner, "not analysed: the scan could not see which agent this ADK runner or deployed app runs")

    def _agent_tools(self, expr: cst.BaseExpression, scope: Scope, *, seen: set[int]) -> Iterator[cst.BaseExpression | McpServers | AgentOf]:
        """The tools an OpenAI Agents agent offers, and those of every agent it can hand off to."""
        agent = self.resolver.kind_of(expr, scope)
        if agent is None or not isinstance(agent.origin, cst.Call) or id(agent.origin) in seen:
            return
        seen.add(id(agent.origin))
        if agent.origin.func is not None and (dotted_name(agent.origin.func) or "").endswith("SandboxAgent"):
            yield AgentOf(agent.origin)  # its capabilities' tools too, besides tools= and hand-offs
            return
        yield from tools_in_args(agent.origin.args)
        yield from self._handoff_tools(agent.origin, scope, seen=seen)

    def _handoff_tools(self, agent: cst.Call, scope: Scope, *, seen: set[int]) -> Iterator[cst.BaseExpression | McpServers | AgentOf]:
        """Agent(handoffs=[refunds, handoff(billing)]): running this agent can run theirs."""
        for value in self._listed(agent, "handoffs", scope):
            if isinstance(value, cst.Call) and value.args and (dotted_name(value.func) or "").endswith("handoff"):
                value = value.args[0].value
            yield from self._agent_tools(value, scope, seen=seen)

    def _spread_tools(self, call: cst.Call, scope: Scope, *, seen: frozenset[int] = frozenset()) -> Iterator[cst.BaseExpression]:
        """create(**params) with params = {"tools": TOOLS, ...} or params = build_params(...). ``seen``: the
        dicts on the way, so ``kwargs = {**self.kwargs, **kwargs}`` (a name spread into its own new value)
        ends instead of recursing without end."""
        for arg in call.args:
            if arg.star != "**":
                continue
            for table in self._dicts_of(arg.value, scope):
                if id(table) in seen:
                    continue
                for element in table.elements:
                    if isinstance(element, cst.DictElement) and literal(element.key) in {"tools", "functions"}:
                        yield element.value
                    elif isinstance(element, cst.StarredDictElement):
                        spread = cst.Call(func=call.func, args=[cst.Arg(element.value, star="**")])
                        yield from self._spread_tools(spread, scope, seen=seen | {id(table)})

    def _dicts_of(self, expr: cst.BaseExpression, scope: Scope, *, seen: frozenset[int] = frozenset()) -> list[cst.Dict]:
        """The dict literals ``expr`` can be, through names and helpers that
        return one; ``seen`` holds the helpers on the way, so helpers that
        return each other's call end instead of recursing without end."""
        if isinstance(expr, cst.Dict):
            return [expr]
        if isinstance(expr, cst.Name | cst.Attribute):
            value = self.tools.value_of(expr, scope)
            # params = self._prepare_params(): a name bound to a helper's result is that result.
            return self._dicts_of(value, scope, seen=seen) if isinstance(value, cst.Dict | cst.Call) else []
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name | cst.Attribute):
            helper = self.tools.function(short_name(expr.func), scope)
            if helper is None or not isinstance(helper.node, cst.FunctionDef) or id(helper.node) in seen:
                return []
            inner = seen | {id(helper.node)}
            returns = [n.value for n in self.index.subtree(helper.node) if isinstance(n, cst.Return) and n.value is not None]
            return [d for value in returns for d in self._dicts_of(value, helper, seen=inner)]
        return []

    def _crew_tools(self, crew: cst.Call, scope: Scope) -> Iterator[cst.BaseExpression | McpServers]:
        """Crew(agents=[...]): the crew runs every agent's tools."""
        for value in self._listed(crew, "agents", scope):
            agent = self.resolver.kind_of(value, scope)
            if agent is not None and isinstance(agent.origin, cst.Call):
                yield from tools_in_args(agent.origin.args)
        for agent_call in agents_of(self.index, crew):  # Crew(agents=self.agents) in a @CrewBase class
            yield from tools_in_args(agent_call.args)

    def _camel_workers(self, built: cst.CSTNode | None, call: cst.Call, scope: Scope) -> Iterator[AgentOf | McpServers]:
        """A CAMEL Workforce's workers: ``workforce.add_single_agent_worker(description, worker=agent)`` on the
        name the ``Workforce(...)`` was bound to, in the scope that binds it (a helper building and returning
        it included); each worker's run runs its tools. A worker the scan cannot follow (``worker=d["agent"]``
        from a list of dictionaries) is taken to be one of the ``ChatAgent``s the module builds with ``tools=``;
        a role-playing worker's agents come from keyword dictionaries: not analysed."""
        bound = [(where, key) for where, key, value in self.index.assignments if value is built]
        if not bound and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name):
            bound = [(scope, call.func.value.value)]
        workers = 0
        for binder, name in bound:
            for added, where in self.index.calls:
                func = added.func
                if not (
                    isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name
                    and where.qualname == binder.qualname
                ):  # fmt: skip
                    continue
                if func.attr.value == "add_single_agent_worker":
                    worker = next((a.value for a in added.args if a.keyword is not None and a.keyword.value == "worker"), None)
                    positional = [a.value for a in added.args if a.keyword is None]
                    worker = worker if worker is not None else (positional[1] if len(positional) > 1 else None)
                    workers += 1
                    followed = self.resolver.kind_of(worker, where) if worker is not None else None
                    if followed is not None and followed.kind == "camel-agent":
                        yield AgentOf(worker)  # type: ignore[arg-type]
                    else:
                        yield from self._camel_agents_with_tools(added)
                elif func.attr.value == "add_role_playing_worker":
                    workers += 1
                    written = _short_code(self.tools.code_of(added))
                    yield McpServers(added, f"not analysed: a role-playing worker ({written!r}) whose agents' tools the scan does not follow")
        if not workers:
            written = _short_code(self.tools.code_of(call))
            yield McpServers(call, f"not analysed: the scan could not see which workers {written!r} runs, so their tools are unknown")

    def _camel_agents_with_tools(self, added: cst.Call) -> Iterator[AgentOf | McpServers]:
        """The ``ChatAgent(..., tools=...)`` this module builds: the workers a worker the scan cannot follow can be."""
        agents = [
            node for node in self.index.walk(self.index.module_scope.node)
            if isinstance(node, cst.Call) and (self.index.qualified(node.func) or "").startswith("camel.agents.")
            and any(a.keyword is not None and a.keyword.value == "tools" for a in node.args)
        ]  # fmt: skip
        if not agents:
            written = _short_code(self.tools.code_of(added))
            yield McpServers(added, f"not analysed: the worker of {written!r} is not followed, so its tools are unknown")
        yield from (AgentOf(agent) for agent in agents)

    def _camel_society(self, built: cst.CSTNode | None, scope: Scope) -> Iterator[cst.BaseExpression | AgentOf | McpServers]:
        """A CAMEL RolePlaying society: the tools of its assistant and user agents (``assistant_agent_kwargs=
        {"tools": [...]}``, or agents given whole); a society given from elsewhere: not analysed."""
        if not isinstance(built, cst.Call):
            written = _short_code(self.tools.code_of(built)) if built is not None else "the society"
            why = f"not analysed: the society ({written!r}) is built elsewhere, so its agents' tools are unknown"
            yield McpServers(built or cst.Name("society"), why)
            return
        for arg in built.args:
            if arg.keyword is None:
                continue
            if arg.keyword.value in {"assistant_agent_kwargs", "user_agent_kwargs"}:
                dicts = self._dicts_of(arg.value, scope)
                if not dicts:
                    written = _short_code(self.tools.code_of(arg.value))
                    yield McpServers(arg.value, f"not analysed: the agents' keywords ({written!r}) are not followed, so their tools are unknown")
                for found in dicts:
                    for element in found.elements:
                        if isinstance(element, cst.DictElement) and literal(element.key) == "tools":
                            yield element.value
            elif arg.keyword.value in {"assistant_agent", "user_agent"}:
                yield AgentOf(arg.value)

    def _ag2_registered(self) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression | None]]:
        """AG2's ``register_function(f, caller=assistant, executor=user_proxy, ...)`` in this module: the
        function, offered to the caller's model and run by the executor (when it is an AG2 agent)."""
        for node in self.index.walk(self.index.module_scope.node):
            if not (isinstance(node, cst.Call) and self.index.qualified(node.func) in _AG2_REGISTER and node.args):
                continue
            caller = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "caller"), None)
            owner = self.resolver.kind_of(caller, self.index.module_scope) if caller is not None else None
            if owner is None or owner.kind != "ag2-agent":
                continue
            executor = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "executor"), None)
            yield node.args[0].value, executor

    def _assigned_before(self, expr: cst.BaseExpression, call: cst.Call, scope: Scope) -> cst.BaseExpression:
        """The value a name was last given before ``call`` in its own scope (a script that builds
        ``agent_pattern`` twice, one chat after the other, runs the first with the first)."""
        if not isinstance(expr, cst.Name):
            return expr
        line = self.line_of(call)
        given = [
            (self.line_of(value), value)
            for where, key, value in self.index.assignments
            if where is scope and key == expr.value and self.line_of(value) <= line
        ]
        return max(given, key=lambda pair: pair[0])[1] if given else expr

    def _ag2_asks_human(self, agent: cst.BaseExpression) -> bool:
        """An AG2 agent built with ``human_input_mode="ALWAYS"``: it asks the person before each reply,
        the execution of a tool call included."""
        built = self.tools.value_of(agent, self.index.module_scope) if isinstance(agent, cst.Name) else agent
        if not isinstance(built, cst.Call):
            return False
        return any(a.keyword is not None and a.keyword.value == "human_input_mode" and literal(a.value) == "ALWAYS" for a in built.args)

    def _listed(self, call: cst.Call, keyword: str, scope: Scope) -> Iterator[cst.BaseExpression]:
        """The elements of ``keyword=[...]`` in ``call``, the list written there or bound to a name."""
        for arg in call.args:
            if arg.keyword is None or arg.keyword.value != keyword:
                continue
            listed = self.tools.value_of(arg.value, scope) if isinstance(arg.value, cst.Name) else arg.value
            if isinstance(listed, cst.List | cst.Tuple):
                for element in listed.elements:
                    yield element.value


# AG2's register_function under the names it is exported by.
_AG2_REGISTER = frozenset({
    "autogen.register_function", "autogen.agentchat.register_function", "autogen.agentchat.conversable_agent.register_function",
})  # fmt: skip


def _executes_code(agent: cst.Call) -> bool:
    """AutoGen's CodeExecutorAgent runs the code in the messages it gets (a team's model writes it)."""
    return (dotted_name(agent.func) or "").endswith("CodeExecutorAgent")


def _short_code(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 40 else text[:37] + "..."
