"""The tools a call offers the model, resolved to names and, where possible, bodies.

A tool list can be a literal, a name bound to one, a helper that returns
one, a comprehension over one, or something only known at run time (MCP
servers, toolkits). What cannot be followed becomes an R7 finding instead of
being dropped: the model then controls actions we cannot see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import attrs
import libcst as cst

from escalated.contracts import rules
from escalated.contracts.scan import apis
from escalated.contracts.scan.index import ModuleIndex, Scope, dotted_name
from escalated.contracts.calls import Finding, ToolSite
from escalated.contracts.scan.mcp_servers import known_server
from escalated.contracts.scan.params import enclosing_scope, extended, passed_to, unwrapped
from escalated.contracts.scan.syntax import MCP_WHY, McpServers, literal, string_text, tools_in_args
from escalated.contracts.scan.toolkits import library_tool, toolkit_of

# Tool "type" values of hosted tools, and what they can do.
_HOSTED_CODE = ("code_interpreter", "code_execution", "bash", "local_shell", "shell", "computer")
_HOSTED_WRITE = ("text_editor", "apply_patch")
_HOSTED_PUBLIC = ("web_search", "google_search")
# Search tools over public pages, and Agno's toolkits that only ask the user or think: no
# private data read, nothing written (not R9).
_PUBLIC_READ_TOOLS = frozenset({
    "WebSearchTool", "DuckDuckGoSearchRun", "DuckDuckGoSearchResults", "DuckDuckGoSearchTool", "TavilySearchResults",
    "TavilySearch", "WikipediaQueryRun", "google_search", "GoogleSearchTool", "WebSearchPreviewTool", "SerperDevTool",
    "ScrapeWebsiteTool", "WebsiteSearchTool", "DuckDuckGoTools", "VisitWebpageTool",
    "WebSearchTools", "WikipediaTools", "HackerNewsTools", "ArxivTools", "YFinanceTools", "CalculatorTools",
    "UserFeedbackTools", "UserControlFlowTools", "ReasoningTools", "ThinkingTools",
    # LlamaIndex tool specs over public data (their to_tool_list()).
    "YahooFinanceToolSpec", "TavilyToolSpec", "WikipediaToolSpec", "DuckDuckGoSearchToolSpec", "ArxivToolSpec",
    # CAMEL toolkits over public data (their get_tools()).
    "SearchToolkit", "ArxivToolkit", "MathToolkit", "WeatherToolkit", "ThinkingToolkit", "GoogleScholarToolkit",
    "SemanticScholarToolkit", "PubMedToolkit", "WolframAlphaToolkit", "SymPyToolkit",
})  # fmt: skip
_CODE_TOOL_CLASSES = frozenset({
    "PythonREPLTool", "PythonAstREPLTool", "ShellTool", "PythonREPL", "BashProcess", "E2BDataAnalysisTool",
    "CodeInterpreterTool", "LocalShellTool", "ComputerTool", "CodeExecutionTool",
    "HyperlightExecuteCodeTool", "MontyExecuteCodeTool", "DockerShellTool",
    # crewai_tools' E2B sandbox tools: shell commands, Python in a code interpreter (network on by default).
    "E2BExecTool", "E2BPythonTool",
})  # fmt: skip
# Microsoft Agent Framework clients' hosted tools that run what the model writes: client.get_shell_tool(
# func=shell.as_function()) runs a LocalShellTool's commands, get_code_interpreter_tool() the model's code.
_CODE_TOOL_FACTORIES = frozenset({"get_shell_tool", "get_code_interpreter_tool"})
_LOADABLE_CODE_TOOLS = frozenset({"python_repl", "terminal", "shell", "bash", "llm-math"})
_MCP_HINTS = ("mcp", "MCP")
# LangGraph swarm and supervisor hand-offs: no tool of their own (the graph lists the agents).
_HANDOFF_TOOLS = frozenset({
    f"{package}{module}.create_handoff_tool" for package in ("langgraph_swarm", "langgraph_supervisor") for module in ("", ".handoff")
})
# The key under which another module's agent's tools are exported (crossref.tool_exports).
AGENT_TOOLS_SUFFIX = "@tools"
# ... and, when some of its risky tools are not gated there, the finding that says so.
UNGATED_SUFFIX = "@ungated"


@attrs.frozen
class ToolRef:
    name: str
    body: cst.CSTNode | None = attrs.field(eq=False)
    line: int
    where: str = ""  # "imported from x" when the body lives elsewhere
    # The framework asks a human before this tool runs (OpenAI Agents needs_approval=...).
    gated: bool = False
    # A tool function of another project module: classified there, and where it is.
    known: tuple[Finding, ...] | None = attrs.field(default=None, eq=False)
    site: ToolSite | None = attrs.field(default=None, eq=False)


@attrs.frozen
class AgentOf:
    """An agent whose run runs its tools: those of its ``tools=``, of every sub-agent (Google ADK
    ``sub_agents=``) and hand-off, and of the agents it calls as tools (``AgentTool(agent=…)``)."""

    node: cst.BaseExpression = attrs.field(eq=False)


# Tool wrappers around an agent: the model calls that agent, which runs its own tools.
_AGENT_TOOLS = frozenset({"AgentTool"})
# OpenAI Agents SDK sandbox agents: their capabilities hand the model tools, and with no capabilities=
# the default ones do (Capabilities.default(): Filesystem, Shell, Compaction).
_SANDBOX_AGENTS = frozenset({"SandboxAgent"})
# What an agent hands its run on to (Google ADK sub-agents, OpenAI Agents hand-offs, smolagents managed agents,
# Swarm's agents, Agno team members).
_AGENT_LISTS = ("sub_agents", "handoffs", "managed_agents", "agents", "members")
# What holds such a list: AG2's GroupChatManager(groupchat=GroupChat(agents=[...])), a chat's pattern=.
_AGENT_HOLDERS = ("groupchat", "pattern")


@attrs.define
class ToolResolver:
    index: ModuleIndex
    line_of: Callable[[cst.CSTNode], int]
    code_of: Callable[[cst.CSTNode], str]
    # Tools and tool lists of other project modules, already classified there.
    imported: Mapping[str, tuple[Finding, ...]] = attrs.Factory(dict)
    # Tool functions of other project modules: where each is (line 0: filled in later).
    imported_sites: Mapping[str, ToolSite] = attrs.Factory(dict)
    _depth: int = 0

    def _imported(self, node: cst.BaseExpression) -> tuple[Finding, ...] | None:
        target = self.index.qualified(node)
        return None if target is None else self.imported.get(target)

    def resolve(self, expr: cst.BaseExpression, scope: Scope) -> tuple[list[ToolRef], list[Finding]]:
        tools: list[ToolRef] = []
        findings: list[Finding] = []
        self._collect(expr, scope, tools, findings, depth=0)
        return tools, findings

    def resolve_agent(self, expr: cst.BaseExpression, scope: Scope) -> tuple[list[ToolRef], list[Finding]]:
        tools: list[ToolRef] = []
        findings: list[Finding] = []
        self._agent(expr, scope, tools, findings, depth=0, seen=set())
        return tools, findings

    def _agent(
        self, expr: cst.BaseExpression, scope: Scope, tools: list[ToolRef], findings: list[Finding], *, depth: int, seen: set[int]
    ) -> None:
        """The tools an agent's run can reach (``AgentOf``), through names, sub-agents, hand-offs and agents as tools."""
        if isinstance(expr, cst.Call) and expr.args and (dotted_name(expr.func) or "").endswith("handoff"):
            expr = expr.args[0].value  # handoff(billing_agent)
        built = expr if isinstance(expr, cst.Call) else self.value_of(expr, scope)
        if isinstance(expr, cst.Call) and (home_of := enclosing_scope(self.index, expr)) is not None:
            scope = home_of  # an agent built in a helper (a CAMEL worker): its arguments' names are the helper's
        if built is None and isinstance(expr, cst.Name):
            home = enclosing_scope(self.index, expr)
            if home is not None and home is not scope and (bound := self.value_of(expr, home)) is not None:
                # RoundRobinGroupChat([agent, yoda]) a helper built and returned: the names are the helper's.
                built, scope = bound, home
        if built is None and isinstance(expr, cst.Name):
            built = self.unpacked(expr, scope)  # triage, refund = create_agents(client)
        if isinstance(built, cst.Call):
            if id(built) in seen or depth > 4:
                return
            seen.add(id(built))
            if (dotted_name(built.func) or "").endswith("CodeExecutorAgent"):  # AutoGen: runs the code it is sent
                findings.append(rules.fact("runs-model-code", "AutoGen CodeExecutorAgent executes the code blocks it is sent", self.line_of(built)))
            findings.extend(self.sandbox_capabilities(built, scope))
            for found in tools_in_args(built.args):
                if isinstance(found, McpServers):
                    findings.extend(self.mcp_findings(found, scope))
                else:
                    self._collect(found, scope, tools, findings, depth=depth + 1)
            for arg in built.args:
                if arg.keyword is not None and arg.keyword.value in _AGENT_LISTS:
                    listed = self.value_of(arg.value, scope) if isinstance(arg.value, cst.Name) else arg.value
                    for element in listed.elements if isinstance(listed, cst.List | cst.Tuple) else ():
                        self._agent(element.value, scope, tools, findings, depth=depth + 1, seen=seen)
                if arg.keyword is not None and arg.keyword.value in _AGENT_HOLDERS:
                    self._agent(arg.value, scope, tools, findings, depth=depth + 1, seen=seen)
                if arg.keyword is not None and arg.keyword.value == "functions":
                    handoffs = list(self._handed_off(arg.value, scope))  # Swarm: a function returning an agent
                    # A hand-off (transfer_to_refunds) is no tool of its own: what it hands to is.
                    bodies = {id(function) for function, _agent in handoffs}
                    tools[:] = [tool for tool in tools if tool.body is None or id(tool.body) not in bodies]
                    for _function, handed in handoffs:
                        self._agent(handed, self.index.module_scope, tools, findings, depth=depth + 1, seen=seen)
            return
        target = self.index.qualified(expr)
        known = self.imported.get(f"{target}{AGENT_TOOLS_SUFFIX}") if target is not None else None
        written = _short(self.code_of(expr))
        if known is not None:  # an agent defined in another project module: its tools were classified there
            findings.extend(known)
            # Risky tools there that nothing shows gated: a guard at this run would decide after them.
            findings.extend(attrs.evolve(f, line=self.line_of(expr)) for f in self.imported.get(f"{target}{UNGATED_SUFFIX}", ()))
            return
        why = f"not analysed: the agent {written!r} is not defined where the scan can follow it, so its tools are unknown"
        findings.append(rules.fact("tools-unresolved", why, self.line_of(expr)))

    def sandbox_capabilities(self, built: cst.Call, scope: Scope) -> list[Finding]:
        """What an Agents SDK ``SandboxAgent``'s capabilities let the model do in its sandbox: a shell
        capability (``Shell()``, the default's, a project's ``WorkspaceShellCapability()``) runs the
        commands it writes, a filesystem or patch one edits files; with no ``capabilities=``, the default
        (``Capabilities.default()``: Filesystem, Shell, Compaction) does both."""
        if (dotted_name(built.func) or "").rpartition(".")[2] not in _SANDBOX_AGENTS:
            return []
        given = next((a.value for a in built.args if a.keyword is not None and a.keyword.value == "capabilities"), None)
        line = self.line_of(built)
        if given is None:
            why = "SandboxAgent's default capabilities (Filesystem, Shell): the model's shell commands run in the sandbox"
            return [rules.fact("code-tool", why, line)]
        listed = self.value_of(given, scope) if isinstance(given, cst.Name) else given
        if isinstance(listed, cst.Call) and (dotted_name(listed.func) or "").endswith("Capabilities.default"):
            listed = cst.List([cst.Element(listed)])  # capabilities=Capabilities.default(): Filesystem, Shell, Compaction
        if not isinstance(listed, cst.List | cst.Tuple):
            return [rules.fact("tools-unresolved", f"sandbox capabilities built at run time: {_short(self.code_of(given))}", line)]
        findings: list[Finding] = []
        for element in listed.elements:
            value = element.value
            callee = dotted_name(value.func if isinstance(value, cst.Call) else value) or ""
            said = rules.words(callee.rpartition(".")[2] if callee.rpartition(".")[2] != "default" else callee)
            at = self.line_of(value)
            if "shell" in said or "capabilities" in said:  # Shell(), Capabilities.default()
                findings.append(rules.fact("code-tool", f"sandbox capability {callee}: the model's shell commands run in the sandbox", at))
            elif "filesystem" in said or "patch" in said:
                findings.append(rules.fact("file-edit-tool", f"sandbox capability {callee} edits the sandbox's files", at))
        return findings

    def _built_by_helper(self, built: cst.Call, scope: Scope) -> tuple[cst.Call, Scope]:
        """``_build_lane_agent(...)``, a function of this module returning ``SandboxAgent(...)``: that call,
        in the helper's scope; any other call as it is."""
        helper = self.function(built.func.value, scope) if isinstance(built.func, cst.Name) else None
        if helper is not None and isinstance(helper.node, cst.FunctionDef):
            for node in self.index.subtree(helper.node):
                if isinstance(node, cst.Return) and isinstance(node.value, cst.Call):
                    return node.value, helper
        return built, scope

    def unpacked(self, name: cst.Name, scope: Scope) -> cst.BaseExpression | None:
        """``triage, refund = create_agents(client)`` with ``create_agents`` of this module returning a tuple
        of names (``return triage_agent, refund_agent``): what the name at the same place is bound to there."""
        for node in self.index.walk(scope.node):
            if not (isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Tuple)):
                continue
            names = [e.value.value if isinstance(e.value, cst.Name) else None for e in node.targets[0].target.elements]
            if name.value not in names or not (isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name)):
                continue
            helper = self.function(node.value.func.value, scope)
            if helper is None or not isinstance(helper.node, cst.FunctionDef):
                return None
            at = names.index(name.value)
            for returned in self.index.subtree(helper.node):
                if isinstance(returned, cst.Return) and isinstance(returned.value, cst.Tuple) and len(returned.value.elements) == len(names):
                    element = returned.value.elements[at].value
                    return self.value_of(element, helper) if isinstance(element, cst.Name) else element
            return None
        return None

    def _handed_off(self, functions: cst.BaseExpression, scope: Scope) -> Iterator[tuple[cst.FunctionDef, cst.Name]]:
        """Swarm hands off by a function returning the next agent (``def transfer_to_sales(): return sales_agent``):
        the agents its listed functions of this module return."""
        listed = self.value_of(functions, scope) if isinstance(functions, cst.Name) else functions
        for element in listed.elements if isinstance(listed, cst.List | cst.Tuple) else ():
            target = self.function(element.value.value, scope) if isinstance(element.value, cst.Name) else None
            if target is None or not isinstance(target.node, cst.FunctionDef):
                continue
            for node in self.index.subtree(target.node):
                if isinstance(node, cst.Return) and isinstance(node.value, cst.Name):
                    bound = self.value_of(node.value, self.index.module_scope)
                    if isinstance(bound, cst.Call) and (dotted_name(bound.func) or "").rpartition(".")[2].endswith("Agent"):
                        yield target.node, node.value

    def _collect(self, expr: cst.BaseExpression, scope: Scope, tools: list[ToolRef], findings: list[Finding], *, depth: int) -> None:
        line = self.line_of(expr)
        if depth > 4:
            findings.append(rules.fact("tools-unresolved", f"tools built too indirectly: {_short(self.code_of(expr))}", line))
            return
        if isinstance(expr, cst.Name) and expr.value == "None":
            return  # tools=None: no tools
        if isinstance(expr, cst.List | cst.Tuple | cst.Set):
            for element in expr.elements:
                value = element.value
                if isinstance(element, cst.StarredElement):
                    self._collect(value, scope, tools, findings, depth=depth + 1)
                else:
                    self._element(value, scope, tools, findings, depth=depth)
            return
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            self._collect(expr.left, scope, tools, findings, depth=depth + 1)
            self._collect(expr.right, scope, tools, findings, depth=depth + 1)
            return
        if isinstance(expr, cst.ListComp | cst.GeneratorExp):
            looked_up = self._table_of(expr.elt, scope)  # [all_tools[name] for name in names]: the table's tools
            self._collect(looked_up if looked_up is not None else expr.for_in.iter, scope, tools, findings, depth=depth + 1)
            return
        if isinstance(expr, cst.Dict):  # {"write_email": write_email, ...}: a table of tools by name
            for entry in expr.elements:
                if isinstance(entry, cst.DictElement):
                    self._element(entry.value, scope, tools, findings, depth=depth)
                else:
                    self._collect(entry.value, scope, tools, findings, depth=depth + 1)
            return
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "values" and not expr.args:
            table = self.value_of(expr.func.value, scope)  # all_tools.values()
            if isinstance(table, cst.Dict):
                self._collect(table, scope, tools, findings, depth=depth + 1)
                for added in extended(self.index, expr.func.value, scope):  # all_tools.update({...})
                    self._collect(added, scope, tools, findings, depth=depth + 1)
                return
        if self._public_spec(expr, scope):
            return  # YahooFinanceToolSpec().to_tool_list(): public pages and market data
        if isinstance(expr, cst.Call | cst.Await):
            # await client.get_tools(): a toolkit's tools handed out by a coroutine
            toolkit = self.toolkit(expr.expression, scope) if isinstance(expr, cst.Await) and isinstance(expr.expression, cst.Call) else (
                self.toolkit(expr, scope) if isinstance(expr, cst.Call) else None
            )  # fmt: skip
            if toolkit is not None:
                tools.append(toolkit)
                return
        if isinstance(expr, cst.Call) and self._helper_returns(expr, scope, tools, findings, depth=depth):
            return
        if isinstance(expr, cst.Call):
            target = self.index.qualified(expr.func)
            known = self.imported.get(f"{target}()") if target is not None else None
            if known is not None:  # make_tools() from another project module
                findings.extend(known)
                return
        if isinstance(expr, cst.Call) and (inner := unwrapped(expr)) is not None:  # list(tools or [])
            self._collect(inner, scope, tools, findings, depth=depth + 1)
            return
        home = enclosing_scope(self.index, expr) if isinstance(expr, cst.Name) else None
        if home is not None and isinstance(expr, cst.Name) and expr.value in home.params:  # the scope the name is written in, not the caller's
            passed = passed_to(self.index, expr.value, home)
            for value, caller in passed:  # build_agent([issue_refund]): what the module's callers pass
                self._collect(value, caller, tools, findings, depth=depth + 1)
            if passed:
                return
        if isinstance(expr, cst.Name | cst.Attribute):
            bound = self.value_of(expr, scope)
            if bound is None and home is not None and home is not scope:
                # tools=tools in the agent a helper built and returned: the name is the helper's.
                bound, scope = self.value_of(expr, home), home
            if bound is not None:
                self._collect(bound, scope, tools, findings, depth=depth + 1)
                for added in extended(self.index, expr, scope):  # tools = []; tools.extend(kit.get_tools())
                    self._collect(added, scope, tools, findings, depth=depth + 1)
                return
            known = self._imported(expr)
            if known is not None:
                findings.extend(known)
                return
        if _single_tool(expr) or (isinstance(expr, cst.Name) and self.function(expr.value, scope) is not None):
            # tools=add / tools=execute_code / tools=LocalShellTool(...): one tool, not a list (Microsoft Agent Framework)
            self._element(expr, scope, tools, findings, depth=depth)
            return
        text = _short(self.code_of(expr))
        what = "MCP tools" if any(h in text for h in _MCP_HINTS) else "tools only known at run time"
        findings.append(rules.fact("tools-unresolved", f"{what}: {text}", line))

    def _table_of(self, element: cst.BaseExpression, scope: Scope) -> cst.Dict | None:
        """``all_tools[name]`` with ``all_tools = {...}``: the table the element is looked up in."""
        if isinstance(element, cst.Subscript) and isinstance(element.value, cst.Name):
            table = self.value_of(element.value, scope)
            return table if isinstance(table, cst.Dict) else None
        return None

    def _helper_returns(self, call: cst.Call, scope: Scope, tools: list[ToolRef], findings: list[Finding], *, depth: int) -> bool:
        """``tools=get_tools()`` with get_tools defined here: read what it returns."""
        name = call.func.value if isinstance(call.func, cst.Name) else (
            call.func.attr.value if isinstance(call.func, cst.Attribute) else None
        )
        if name == "load_tools" and call.args:
            self._loaded(call.args[0].value, tools, findings)
            return True
        if isinstance(call.func, cst.Attribute):
            # collection.to_params() with collection = ToolCollection(BashTool(), EditTool()):
            # the tools are what the collection was built from.
            built = self.value_of(call.func.value, scope)
            if isinstance(built, cst.Call) and any(a.keyword is None for a in built.args):
                for arg in built.args:
                    if arg.keyword is None:
                        self._element(arg.value, scope, tools, findings, depth=depth + 1)
                return True
        target = self.function(name, scope) if name else None
        if target is None or not isinstance(target.node, cst.FunctionDef):
            return False
        returns = [n.value for n in self.index.subtree(target.node) if isinstance(n, cst.Return) and n.value is not None]
        if not returns:
            return False
        for value in returns:
            self._collect(value, target, tools, findings, depth=depth + 1)
        return True

    def collection(self, receiver: cst.BaseExpression, scope: Scope) -> list[ToolRef]:
        """``collection`` built from tools (``self.tool_collection = ToolCollection(ComputerTool(), BashTool())``):
        the tools it holds, when every positional argument it was built from is a tool whose body (or
        classification) is known; none otherwise (``Runner(agent)`` holds no tools)."""
        built = self.value_of(receiver, scope)
        if not isinstance(built, cst.Call) or any(a.keyword is not None or a.star for a in built.args) or not built.args:
            return []
        tools: list[ToolRef] = []
        for arg in built.args:
            found: list[ToolRef] = []
            self._element(arg.value, scope, found, [], depth=1)
            if len(found) != 1 or (found[0].body is None and found[0].known is None):
                return []
            tools += found
        return tools

    def _loaded(self, names: cst.BaseExpression, tools: list[ToolRef], findings: list[Finding]) -> None:
        for node in self.index.subtree(names):
            if isinstance(node, cst.SimpleString):
                value = literal(node) or ""
                if value in _LOADABLE_CODE_TOOLS:
                    findings.append(rules.fact("code-tool", f"load_tools {value!r}", self.line_of(node)))
                else:
                    tools.append(ToolRef(value, None, self.line_of(node), "langchain load_tools"))

    def _element(self, value: cst.BaseExpression, scope: Scope, tools: list[ToolRef], findings: list[Finding], *, depth: int) -> None:
        line = self.line_of(value)
        if isinstance(value, cst.Dict):
            self._dict_tool(value, tools, findings)
        elif isinstance(value, cst.Name | cst.Attribute) and (dotted_name(value) or "").rpartition(".")[2] in _PUBLIC_READ_TOOLS:
            return
        elif self._public_spec(value, scope):
            return  # tavily.to_tool_list()[0]
        elif isinstance(value, cst.Call):
            self._call_tool(value, scope, tools, findings, depth=depth)
        elif isinstance(value, cst.Name | cst.Attribute):
            name = value.value if isinstance(value, cst.Name) else value.attr.value
            if name in _CODE_TOOL_CLASSES:
                findings.append(rules.fact("code-tool", f"tool {name}", line))
                return
            bound = self.value_of(value, scope)
            if isinstance(bound, cst.Call | cst.Dict):
                self._element(bound, scope, tools, findings, depth=depth + 1)
                return
            target = self.function(name, scope)
            known = self._imported(value) if target is None else None
            site = self.imported_sites.get(self.index.qualified(value) or "") if known is not None else None
            if target is not None and self.runs_outside(target):
                return  # @tool(external_execution=True): the run pauses with the call; the code runs it (judged there)
            if target is not None:
                tools.append(ToolRef(self.tool_name(target) or name, target.node, line, gated=self.needs_approval(target)))
            elif site is not None:
                tools.append(ToolRef(site.name, None, line, f"in {site.path}", gated=site.approval, known=known, site=site))
            elif known is not None:
                findings.extend(known)
            elif name in self.index.imports and (library := library_tool(self.index.imports[name], line=line)) is not None:
                tools.append(ToolRef(name, None, line, "built-in", known=library))  # from strands_tools import shell
            elif name in self.index.imports:
                tools.append(ToolRef(name, None, line, f"imported from {self.index.imports[name]}"))
            elif name in self.index.class_nodes:
                tools.append(ToolRef(name, self.index.class_nodes[name], line))
            else:
                tools.append(ToolRef(name, None, line, "not resolved"))
        else:
            findings.append(rules.fact("tools-unresolved", f"tool built at run time: {_short(self.code_of(value))}", line))

    def _dict_tool(self, value: cst.Dict, tools: list[ToolRef], findings: list[Finding]) -> None:
        strings = _dict_strings(value)
        line = self.line_of(value)
        kind = strings.get("type", "")
        if kind.startswith(_HOSTED_CODE):
            findings.append(rules.fact("code-tool", f"hosted tool {kind!r}", line))
            return
        if kind.startswith(_HOSTED_PUBLIC):
            return  # hosted web search: public pages
        if kind.startswith(_HOSTED_WRITE):
            findings.append(rules.fact("file-edit-tool", f"hosted tool {kind!r} edits files", line))
            return
        if kind == "mcp":
            label = strings.get("server_label", strings.get("server_url", "?"))
            findings.append(rules.fact("tools-unresolved", f"remote MCP server {label!r}", line))
            return
        name = strings.get("name")
        if name is None:
            if kind and kind not in {"function", "custom"}:
                tools.append(ToolRef(kind, None, line, "hosted tool"))
            else:
                findings.append(rules.fact("tools-unresolved", "tool schema without a literal name", line))
            return
        target = self.function(name, self.index.module_scope) or self._dispatched(name)
        tools.append(ToolRef(name, target.node if target else None, line, "" if target else "schema only"))

    def _call_tool(self, call: cst.Call, scope: Scope, tools: list[ToolRef], findings: list[Finding], *, depth: int) -> None:
        if self.index.qualified(call.func) in _HANDOFF_TOOLS:
            return  # create_handoff_tool(agent_name="hotels"): a hand-off; the graph runs that agent's tools
        line = self.line_of(call)
        callee = dotted_name(call.func) or ""
        last = callee.rpartition(".")[2]
        for arg in call.args:
            if arg.keyword and arg.keyword.value == "allow_dangerous_code" and _truthy(arg.value):
                findings.append(rules.fact("runs-model-code", f"{callee}(allow_dangerous_code=True)", line))
        if last in _CODE_TOOL_CLASSES:
            # ShellTool(needs_approval=True): the framework asks a human before it runs.
            found = (rules.fact("code-tool", f"tool {last}", line),)
            tools.append(ToolRef(last, None, line, "built-in", gated=approval_asked(call), known=found))
            return
        if last in _CODE_TOOL_FACTORIES:
            # client.get_shell_tool(func=shell.as_function()): gated when the LocalShellTool it runs asks.
            shell = self._shell_of(call, scope)
            found = (rules.fact("code-tool", f"tool {callee}()", line),)
            tools.append(ToolRef(last, None, line, "built-in", gated=shell is not None and approval_asked(shell), known=found))
            return
        if callee.endswith("FunctionTool.from_dict"):
            injected = [(given, self.function(given.value, scope)) for given in _injected_functions(call)]
            for given, function in injected:
                if function is not None:
                    tools.append(ToolRef(self.tool_name(function) or given.value, function.node, line, gated=approval_asked(call)))
            if injected and all(function is not None for _given, function in injected):
                return
            findings.append(rules.fact("tools-unresolved", f"tools only known at run time: {_short(self.code_of(call))}", line))
            return
        if last == "FunctionTool" and not any(a.keyword is None or a.keyword.value == "func" for a in call.args):
            return  # FunctionTool(name=..., description=...) declares a tool with no body: the framework runs nothing
        if last in _PUBLIC_READ_TOOLS or (callee in _PUBLIC_READ_TOOLS):
            return  # a web search reads public pages: nothing private, nothing written
        toolkit = self.toolkit(call, scope)
        if toolkit is not None:
            tools.append(toolkit)
            return
        if last in _AGENT_TOOLS and call.args:
            # AgentTool(agent=planner): the model calls another agent, which runs its own tools.
            agent = next((a.value for a in call.args if a.keyword is None or a.keyword.value == "agent"), None)
            if agent is not None:
                self._agent(agent, scope, tools, findings, depth=depth + 1, seen=set())
                return
        if last == "as_tool" and isinstance(call.func, cst.Attribute):
            # agent.as_tool(...): the model calls another agent, which runs its own tools.
            built = self.value_of(call.func.value, scope)
            if isinstance(built, cst.Call):
                findings.extend(self.sandbox_capabilities(*self._built_by_helper(built, scope)))
                for expr in tools_in_args(built.args):
                    if not isinstance(expr, McpServers):
                        self._collect(expr, scope, tools, findings, depth=depth + 1)
                return
        name = _keyword_string(call, "name")
        function_args = [
            a.value for a in call.args
            if isinstance(a.value, cst.Name | cst.Attribute)
            and (a.keyword is None or a.keyword.value in {"func", "coroutine", "function", "fn", "async_fn"})
        ]
        for fn in function_args:
            if isinstance(fn, cst.Attribute):
                own = _own_method(self.index, fn, scope)
                if own is not None:
                    # StructuredTool(name="python", func=self._run_handler) in a method of the class: its own method
                    tools.append(ToolRef(name or fn.attr.value, own.node, line, gated=approval_asked(call)))
                    return
                # tool(description=...)(tools.add): a method of an object of a class of this module
                owner = self.value_of(fn.value, scope) if isinstance(fn.value, cst.Name) else None
                if isinstance(owner, cst.Call) and isinstance(owner.func, cst.Name):
                    method = self.function(fn.attr.value, scope)
                    if method is not None and method.class_name == owner.func.value:
                        tools.append(ToolRef(name or fn.attr.value, method.node, line, gated=approval_asked(call)))
                        return
                continue
            target = self.function(fn.value, scope)
            if target is not None:
                # tool(approval_mode="always_require")(f): the decorator called on the function.
                gated = approval_asked(call) or self.needs_approval(target) or (isinstance(call.func, cst.Call) and approval_asked(call.func))
                tools.append(ToolRef(name or self.tool_name(target) or fn.value, target.node, line, gated=gated))
                return
            if fn.value in self.index.class_nodes or fn.value in self.index.imports:
                # pydantic_function_tool(RefundRequest), convert_to_openai_tool(SendEmail)
                tools.append(ToolRef(name or fn.value, self.index.class_nodes.get(fn.value), line))
                return
        if any(h in callee for h in _MCP_HINTS):
            findings.append(rules.fact("tools-unresolved", f"MCP tools: {_short(self.code_of(call))}", line))
            return
        declarations = next((a.value for a in call.args if a.keyword and a.keyword.value == "function_declarations"), None)
        if declarations is not None:  # google.genai types.Tool(function_declarations=[...])
            self._collect(declarations, scope, tools, findings, depth=depth + 1)
            return
        if name is None and last.endswith(("Param", "Definition", "Declaration", "Schema")):
            findings.append(rules.fact("tools-unresolved", f"tool schema built at run time: {callee}(...)", line))
            return
        if last in self.index.class_nodes:
            node = self.index.class_nodes[last]
            tools.append(ToolRef(name or _class_tool_name(node) or last, node, line))
            return
        known = self._imported(call.func)
        if known is not None:  # SendEmailTool() of another project module: its class classified there
            tools.append(ToolRef(name or last, None, line, known=known))
            return
        if name is not None or last:
            tools.append(ToolRef(name or last, None, line, f"built by {callee or '?'}()"))
            return
        findings.append(rules.fact("tools-unresolved", f"tool built at run time: {_short(self.code_of(call))}", line))

    def _public_spec(self, expr: cst.BaseExpression, scope: Scope) -> bool:
        """``TavilyToolSpec(...).to_tool_list()`` (or one element of it, or a name bound to either) of a
        tool spec over public data."""
        if isinstance(expr, cst.Name):
            expr = self.value_of(expr, scope) or expr  # search_web = tavily.to_tool_list()[0]
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        if not (isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in {"to_tool_list", "get_tools"}):
            return False
        spec = expr.func.value
        built = self.value_of(spec, scope) if isinstance(spec, cst.Name) else spec
        return isinstance(built, cst.Call) and (dotted_name(built.func) or "").rpartition(".")[2] in _PUBLIC_READ_TOOLS

    def _shell_of(self, factory: cst.Call, scope: Scope) -> cst.Call | None:
        """The LocalShellTool(...) whose ``as_function()`` a client's get_shell_tool(func=...) runs."""
        given = next((a.value for a in factory.args if a.keyword is not None and a.keyword.value == "func"), None)
        if isinstance(given, cst.Call) and isinstance(given.func, cst.Attribute) and given.func.attr.value == "as_function":
            shell = self.value_of(given.func.value, scope)
            return shell if isinstance(shell, cst.Call) else None
        return None

    def toolkit(self, call: cst.Call, scope: Scope) -> ToolRef | None:
        """ShellTools() / toolkit.get_tools() / StripeAgentToolkit(...).get_tools(): a library's tool set.

        A tool, not only a finding: it runs inside an agent run like any other, and being no
        function of the project, apply cannot gate it, so the run says so instead of counting it covered.
        """
        found = toolkit_of(self.index, call, lambda node: self.value_of(node, scope), line=self.line_of(call))
        if found is None:
            return None
        return ToolRef(found.name, None, found.findings[0].line, f"built by {found.built_by}", gated=found.gated, known=found.findings)

    # -- lookups -----------------------------------------------------------
    def mcp_findings(self, servers: McpServers, scope: Scope) -> list[Finding]:
        """An agent's ``mcp_servers=[...]``: each server started from a known package (scan/mcp_servers.py)
        by what its tools do; one that acts stays unseen too (``R7``: its tools are the server's, where
        no guard of this code can sit), one that reads public pages adds nothing; any other is unseen."""
        unseen = rules.fact("tools-unresolved", servers.why, self.line_of(servers.node))
        if servers.why != MCP_WHY:
            return [unseen]  # an agent the scan could not follow: not MCP servers at all
        listed = self.value_of(servers.node, scope) if isinstance(servers.node, cst.Name) else servers.node
        if not isinstance(listed, cst.List | cst.Tuple) or not listed.elements:
            return [unseen]
        out: list[Finding] = []
        for element in listed.elements:
            built = element.value if isinstance(element.value, cst.Call) else self.value_of(element.value, scope)
            known = known_server(built) if isinstance(built, cst.Call) else None
            line = self.line_of(built if isinstance(built, cst.Call) else element.value)
            if known is None:
                out.append(attrs.evolve(unseen, line=line))
                continue
            package, kind, does = known
            if kind is not None:
                out.append(rules.fact(kind, f"MCP server {package}: {does}", line))
                out.append(rules.fact("tools-unresolved", f"MCP server {package}: tools are listed by the server at run time", line))
        return out

    def value_of(self, node: cst.BaseExpression, scope: Scope) -> cst.BaseExpression | None:
        if isinstance(node, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value in {"self", "cls"} and scope.class_name:
                return self.index.values.get((scope.class_name, f"self.{node.attr.value}"))
            return None
        if not isinstance(node, cst.Name):
            return None
        current: Scope | None = scope
        while current is not None:
            found = self.index.values.get((current.qualname, node.value))
            if found is not None:
                return found
            current = current.parent
        return None

    def function(self, name: str, scope: Scope) -> Scope | None:
        """A function or method of this module by its short name, nearest class first."""
        candidates = self.index.functions_by_name.get(name, [])
        for candidate in candidates:
            if scope.class_name and candidate.class_name == scope.class_name:
                return candidate
        for candidate in candidates:
            if candidate.class_name is None:
                return candidate
        return candidates[0] if candidates else None

    def _dispatched(self, name: str) -> Scope | None:
        """{"refund_order": refund_order, ...}: the dispatch table names the body."""
        for scope, table in self.index.dict_literals:
            for element in table.elements:
                if isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString):
                    if literal(element.key) == name and isinstance(element.value, cst.Name | cst.Attribute):
                        short = element.value.value if isinstance(element.value, cst.Name) else element.value.attr.value
                        return self.function(short, scope)
        return None

    def needs_approval(self, scope: Scope) -> bool:
        """@function_tool(needs_approval=True): the SDK asks a human before the tool runs (and
        @interrupt_for_approval and @approval_required(policy=...): escalated's LangGraph and CrewAI hooks)."""
        return any(
            (isinstance(d.decorator, cst.Call) and approval_asked(d.decorator))
            or self.index.qualified(d.decorator) == apis.LANGGRAPH_TOOL_GATE
            or (isinstance(d.decorator, cst.Call) and self.index.qualified(d.decorator.func) == apis.CREWAI_TOOL_GATE)
            for d in self.index.decorators.get(scope.qualname, ())
        )

    def runs_outside(self, scope: Scope) -> bool:
        """@tool(external_execution=True) (Agno): the framework never runs it; the run pauses with the
        model's call and the program executes it, so it is judged where the program does."""
        return any(
            isinstance(d.decorator, cst.Call)
            and any(a.keyword is not None and a.keyword.value == "external_execution" and _truthy(a.value) for a in d.decorator.args)
            for d in self.index.decorators.get(scope.qualname, ())
        )

    def guard_id(self, scope: Scope) -> str | None:
        """@guard_tool("billing.run") on the tool function: the contract that gates it."""
        for decorator in self.index.decorators.get(scope.qualname, ()):
            call = decorator.decorator
            if isinstance(call, cst.Call) and call.args and self._is_guard_tool(call):
                return literal(call.args[0].value) or "?"
        return None

    def _is_guard_tool(self, call: cst.Call) -> bool:
        qualified = self.index.qualified(call.func)
        return qualified in apis.GUARD_TOOL_NAMES if qualified else (dotted_name(call.func) or "").endswith("guard_tool")

    def tool_name(self, scope: Scope) -> str | None:
        """@tool("refund") names the tool differently from the function."""
        for decorator in self.index.decorators.get(scope.qualname, ()):
            if isinstance(decorator.decorator, cst.Call) and not self._is_guard_tool(decorator.decorator):
                args = decorator.decorator.args
                if args and isinstance(args[0].value, cst.SimpleString) and args[0].keyword is None:
                    return literal(args[0].value)
                named = _keyword_string(decorator.decorator, "name") or _keyword_string(decorator.decorator, "name_override")
                if named:
                    return named
        return None


def _class_tool_name(node: cst.ClassDef) -> str | None:
    for statement in node.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                value = small.value if isinstance(small, cst.Assign | cst.AnnAssign) else None
                target = (small.targets[0].target if isinstance(small, cst.Assign) else getattr(small, "target", None))
                if isinstance(target, cst.Name) and target.value == "name" and isinstance(value, cst.SimpleString):
                    return literal(value)
    return None


# The frameworks' own "ask a human before this tool runs": OpenAI Agents needs_approval,
# Pydantic AI requires_approval, Agno requires_confirmation, Google ADK require_confirmation.
APPROVAL_KEYWORDS = frozenset({"needs_approval", "requires_approval", "requires_confirmation", "require_confirmation"})


def approval_asked(call: cst.Call) -> bool:
    """needs_approval=True (or its kin), or a function deciding it: anything but False/None asks; the
    Microsoft Agent Framework's approval_mode="always_require" (its default, "never_require", does not)."""
    return any(
        a.keyword is not None
        and (
            (a.keyword.value in APPROVAL_KEYWORDS and _truthy(a.value))
            or (a.keyword.value == "approval_mode" and literal(a.value) == "always_require")
        )
        for a in call.args
    )


def _single_tool(expr: cst.BaseExpression) -> bool:
    """tools=LocalShellTool(...) rather than a list: a call building one tool (a class named ...Tool)."""
    callee = (dotted_name(expr.func) or "") if isinstance(expr, cst.Call) else ""
    last = callee.rpartition(".")[2]
    return last.endswith("Tool") or last in _CODE_TOOL_FACTORIES or callee.endswith("FunctionTool.from_dict")


def _injected_functions(call: cst.Call) -> list[cst.Name]:
    """``FunctionTool.from_dict(definition, dependencies={"function_tool": {"name:add": {"func": add}}})``
    (Microsoft Agent Framework): the functions injected as a tool's ``func``, which run when the model calls it."""
    given = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "dependencies"), None)
    out: list[cst.Name] = []
    stack = [given] if isinstance(given, cst.Dict) else []
    while stack:
        for element in stack.pop(0).elements:
            if not isinstance(element, cst.DictElement):
                continue
            if isinstance(element.value, cst.Dict):
                stack.append(element.value)
            elif isinstance(element.key, cst.SimpleString) and literal(element.key) == "func" and isinstance(element.value, cst.Name):
                out.append(element.value)
    return out


def _dict_strings(node: cst.Dict) -> dict[str, str]:
    """Flattened string keys -> string values of a (nested) tool schema dict; first one wins."""
    out: dict[str, str] = {}
    stack: list[cst.Dict] = [node]
    while stack:
        current = stack.pop(0)
        for element in current.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                continue
            key = literal(element.key) or ""
            if isinstance(element.value, cst.SimpleString):
                out.setdefault(key, literal(element.value) or "")
            elif isinstance(element.value, cst.Dict) and key in {"function", "tool"}:
                stack.append(element.value)
    return out


# What the framework tells the model a tool does, where the decorator says it: the Agents SDK's
# @function_tool(description_override=...), @tool(description=...) (LangChain, Agno, Strands, the
# Agent Framework), FastMCP's @mcp.tool(description=...). Without one, the docstring is the description.
_DESCRIPTION_KEYWORDS = ("description_override", "description")


def declared_description(function: cst.FunctionDef) -> str:
    """The description a tool function declares to the model: its decorator's, else its docstring."""
    for decorator in function.decorators:
        if isinstance(decorator.decorator, cst.Call):
            for arg in decorator.decorator.args:
                if (
                    arg.keyword is not None and arg.keyword.value in _DESCRIPTION_KEYWORDS
                    and isinstance(arg.value, cst.SimpleString | cst.ConcatenatedString)
                ):
                    return string_text(arg.value)
    return function.get_docstring() or ""


def _keyword_string(call: cst.Call, keyword: str) -> str | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword and isinstance(arg.value, cst.SimpleString):
            return literal(arg.value)
    return None


def _truthy(node: cst.BaseExpression) -> bool:
    return not (isinstance(node, cst.Name) and node.value in {"False", "None"})


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= 60 else text[:57] + "..."


def _own_method(index: ModuleIndex, fn: cst.Attribute, scope: Scope) -> Scope | None:
    """``self._run_handler`` handed to a tool in a method of the class defining ``_run_handler``: that method."""
    if not (isinstance(fn.value, cst.Name) and fn.value.value == "self") or scope.class_name is None:
        return None
    method = index.scopes.get(f"{scope.class_name}.{fn.attr.value}")
    return method if method is not None and isinstance(method.node, cst.FunctionDef) else None
