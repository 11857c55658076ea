"""The decision surface of one LLM call: what its output controls.

Three sources of evidence, each turned into rule findings:

- the tools the call offers (names and bodies: a tool runs with arguments
  the model chose);
- where the output flows: a small flow-insensitive taint pass over the
  enclosing function, into module-local helpers it is passed to, and back
  to the module-local callers it is returned to;
- what the output decides: branches on it, and the side effects inside them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping

import attrs
import libcst as cst

from escalated.contracts import rules
from escalated.contracts.scan.index import MODULE_SCOPE, ModuleIndex, Scope, dotted_name, target_key
from escalated.contracts.calls import Finding
from escalated.contracts.scan.resolve import Match, Resolver, dotted_tail
from escalated.contracts.scan.syntax import (
    McpServers,
    branch_bodies,
    is_formatted,
    is_primary,
    param_for,
    short_name,
    short_name_or_none,
    string_text,
    tools_in_args,
    trivial_test,
)
from escalated.contracts.scan.tools import ToolRef, ToolResolver

MAX_DEPTH = 3  # helper functions followed in or out of the enclosing function
MAX_STEPS = 4000  # bound on work per call, so one pathological file cannot stall a scan
# Agent builders whose second positional argument is the tool list.
_TOOLS_SECOND = frozenset({
    "create_react_agent", "create_agent", "create_tool_calling_agent", "create_openai_tools_agent",
    "create_openai_functions_agent", "create_structured_chat_agent", "create_json_chat_agent", "create_xml_agent",
    "create_function_calling_executor", "create_tool_calling_executor",
})  # fmt: skip
_PURE_CALLS = frozenset({
    "str", "int", "float", "bool", "len", "abs", "round", "min", "max", "sum", "sorted", "range", "pow",
    "divmod", "format", "list", "dict", "tuple", "set", "enumerate", "zip", "isinstance", "ValueError",
})  # fmt: skip
# Flags that let the model's output run as code (LangChain, CrewAI).
_CODE_FLAGS = frozenset({"allow_dangerous_code", "allow_code_execution"})
_SQL_CALLS = frozenset({"execute", "executemany", "executescript", "raw", "read_sql", "read_sql_query", "exec_driver_sql"})


@attrs.define
class _Flow:
    findings: list[Finding] = attrs.Factory(list)
    escapes: bool = False
    seen: set[tuple[str, str]] = attrs.Factory(set)
    seen_calls: set[int] = attrs.Factory(set)
    steps: int = 0
    # Names found to carry the output, still to follow. A worklist rather than
    # recursion: a long chain of assignments must not exhaust the stack.
    pending: list[tuple[str, Scope, int]] = attrs.Factory(list)


class SurfaceAnalyzer:
    def __init__(
        self,
        index: ModuleIndex,
        resolver: Resolver,
        *,
        line_of: Callable[[cst.CSTNode], int],
        code_of: Callable[[cst.CSTNode], str],
        llm_calls: set[int],
        imported_tools: Mapping[str, tuple[Finding, ...]] | None = None,
    ) -> None:
        self.index = index
        self.resolver = resolver
        self.line_of = line_of
        self.llm_calls = llm_calls
        self.tools = ToolResolver(index, line_of, code_of, imported_tools or {})
        self._parents = index.parents
        self._names: dict[int, dict[str, list[cst.CSTNode]]] = {}

    def _walk(self, node: cst.CSTNode | None, *, skip_defs: bool = False) -> Iterator[cst.CSTNode]:
        if node is None:
            return
        if not skip_defs:
            yield from self.index.subtree(node)
            return
        nodes = self.index.subtree(node)
        i = 0
        while i < len(nodes):
            current = nodes[i]
            yield current
            if current is not node and isinstance(current, cst.FunctionDef | cst.ClassDef):
                i += len(self.index.subtree(current))
            else:
                i += 1

    # -- entry -------------------------------------------------------------
    def analyze(self, call: cst.Call, scope: Scope, match: Match, *, origin: cst.CSTNode) -> tuple[tuple[Finding, ...], bool]:
        """Findings for one call, and whether its output escaped the analysis."""
        flow = _Flow()
        flow.findings.extend(self._tool_findings(call, scope, match))
        self._follow(origin, scope, flow, depth=0)
        while flow.pending and flow.steps <= MAX_STEPS:
            key, current, depth = flow.pending.pop(0)
            for reference in self._references(current).get(key, ()):
                if not self._is_binding(reference):
                    self._follow(reference, current, flow, depth=depth)
        return tuple(sorted(set(flow.findings))), flow.escapes

    # -- tools -------------------------------------------------------------
    def _tool_findings(self, call: cst.Call, scope: Scope, match: Match) -> Iterator[Finding]:
        yield from self._dangerous_code(call, scope, match)
        for expr in self._tool_exprs(call, scope, match):
            if isinstance(expr, McpServers):
                yield rules.finding("R7", "MCP servers: tools are listed by the server at run time", self.line_of(expr.node))
                continue
            tools, findings = self.tools.resolve(expr, scope)
            yield from findings
            for tool in tools:
                yield from self.classify_tool(tool)
        for tool in self._decorated_tools(match):
            yield from self.classify_tool(tool)

    def _decorated_tools(self, match: Match) -> Iterator[ToolRef]:
        """Pydantic AI registers tools with @agent.tool / @agent.tool_plain."""
        agent = match.receiver
        if agent is None or agent.kind != "pydantic-agent":
            return
        for qualname, decorators in self.index.decorators.items():
            for decorator in decorators:
                target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
                if isinstance(target, cst.Attribute) and target.attr.value in {"tool", "tool_plain"}:
                    owner = self.resolver.kind_of(target.value, self.index.module_scope)
                    if owner is not None and owner.origin is agent.origin:
                        scope = self.index.scopes[qualname]
                        yield ToolRef(qualname.rpartition(".")[2], scope.node, self.line_of(scope.node))

    def _dangerous_code(self, call: cst.Call, scope: Scope, match: Match) -> Iterator[Finding]:
        """allow_dangerous_code=True where the model or its agent is built: it runs model-written code."""
        roots: list[cst.CSTNode] = [scope.node] if scope.qualname != MODULE_SCOPE else [call]
        kind = match.receiver
        while kind is not None:
            if kind.kind == "smol-code-agent":
                yield rules.finding("R1", "smolagents CodeAgent executes the Python the model writes", self.line_of(call))
            if kind.origin is not None:
                roots.append(kind.origin)
            kind = kind.base
        for root in roots:
            for node in self._walk(root):
                if isinstance(node, cst.Arg) and node.keyword is not None and node.keyword.value in _CODE_FLAGS:
                    if not (isinstance(node.value, cst.Name) and node.value.value in {"False", "None"}):
                        yield rules.finding("R1", f"{node.keyword.value}=True", self.line_of(node.value))

    def _tool_exprs(self, call: cst.Call, scope: Scope, match: Match) -> Iterator[cst.BaseExpression | McpServers]:
        yield from tools_in_args(call.args)
        if match.api.startswith("agents.Runner") and call.args:
            agent = self.resolver.kind_of(call.args[0].value, scope)
            if agent is not None and isinstance(agent.origin, cst.Call):
                yield from tools_in_args(agent.origin.args)
        kind = match.receiver
        if kind is not None and kind.kind == "crew" and isinstance(kind.origin, cst.Call):
            yield from self._crew_tools(kind.origin, scope)
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
                yield from tools_in_args(origin.args)
            kind = kind.base

    def _crew_tools(self, crew: cst.Call, scope: Scope) -> Iterator[cst.BaseExpression | McpServers]:
        """Crew(agents=[...]): the crew runs every agent's tools."""
        for arg in crew.args:
            if arg.keyword is None or arg.keyword.value != "agents":
                continue
            agents = self.tools.value_of(arg.value, scope) if isinstance(arg.value, cst.Name) else arg.value
            if not isinstance(agents, cst.List | cst.Tuple):
                continue
            for element in agents.elements:
                agent = self.resolver.kind_of(element.value, scope)
                if agent is not None and isinstance(agent.origin, cst.Call):
                    yield from tools_in_args(agent.origin.args)

    def classify_tool(self, tool: ToolRef, *, depth: int = 0) -> list[Finding]:
        out = rules.classify_name(tool.name, line=tool.line, subject="tool")
        if tool.body is None:
            return out or [rules.finding("R9", f"tool {tool.name} (read-only as far as its name tells; {tool.where})", tool.line)]
        for node in self._walk(tool.body):
            if isinstance(node, cst.Call):
                out.extend(self._classify_call(node, tainted=False, via=f"tool {tool.name}"))
                if depth == 0 and isinstance(node.func, cst.Name | cst.Attribute):
                    helper = self.tools.function(short_name(node.func), self.index.module_scope)
                    if helper is not None and helper.node is not tool.body and isinstance(helper.node, cst.FunctionDef):
                        inner = ToolRef(tool.name, helper.node, tool.line, tool.where)
                        out.extend(f for f in self.classify_tool(inner, depth=1) if f.rule != "R9")
            elif isinstance(node, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
                out.extend(rules.classify_sql(string_text(node), line=self.line_of(node)))
        if any(rules.RULES_BY_ID[f.rule].mode != "sampled" for f in out):
            return out
        if isinstance(tool.body, cst.FunctionDef) and self._is_pure(tool.body):
            return out  # add(a, b): computes from its arguments, reads no data
        out.append(rules.finding("R9", f"tool {tool.name} (no side effect found in its body)", tool.line))
        return out

    def _is_pure(self, function: cst.FunctionDef) -> bool:
        """A tool body that only computes: no calls beyond pure builtins and math."""
        for node in self._walk(function.body):
            if isinstance(node, cst.Call):
                callee = dotted_name(node.func) or ""
                if callee not in _PURE_CALLS and not callee.startswith("math."):
                    return False
        return True

    def _classify_call(self, call: cst.Call, *, tainted: bool, via: str = "") -> list[Finding]:
        if id(call) in self.llm_calls:
            return []
        dotted = dotted_name(call.func) or dotted_tail(call.func)
        if not dotted:
            return []
        qualified = self.resolver.qualified(call.func)
        line = self.line_of(call)
        found = rules.classify_callee(dotted, line=line, tainted=tainted, qualified=qualified)
        if not tainted and dotted.rpartition(".")[2] in _SQL_CALLS and call.args and is_formatted(call.args[0].value):
            found.append(rules.finding("R8", f"SQL built from model-chosen values: {dotted}()", line))
        for arg in call.args:
            if isinstance(arg.value, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
                found.extend(rules.classify_sql(string_text(arg.value), line=line))
            if arg.keyword and arg.keyword.value == "unsafe_allow_html" and tainted:
                found.append(rules.finding("R8", f"HTML: {dotted}(unsafe_allow_html=True)", line))
        if via:
            found = [attrs.evolve(f, detail=f"{via} -> {f.detail}") for f in found]
        return found

    # -- data flow ---------------------------------------------------------
    def _follow(self, node: cst.CSTNode, scope: Scope, flow: _Flow, *, depth: int) -> None:
        """Walk up from an expression carrying the output to the statement using it."""
        child, parent = node, self._parents.get(id(node))
        while parent is not None:
            flow.steps += 1
            if flow.steps > MAX_STEPS:
                flow.escapes = True
                return
            if isinstance(parent, cst.Arg) and parent.value is child:
                consumer = self._parents.get(id(parent))
                if isinstance(consumer, cst.Call):
                    self._consume(consumer, parent, scope, flow, depth=depth)
            elif isinstance(parent, cst.Assign) and parent.value is child:
                for target in parent.targets:
                    self._taint_target(target.target, scope, flow, depth=depth)
                return
            elif isinstance(parent, cst.AnnAssign | cst.AugAssign) and parent.value is child:
                self._taint_target(parent.target, scope, flow, depth=depth)
                return
            elif isinstance(parent, cst.NamedExpr) and parent.value is child:
                self._taint_target(parent.target, scope, flow, depth=depth)
            elif isinstance(parent, cst.For | cst.CompFor) and parent.iter is child:
                self._taint_target(parent.target, scope, flow, depth=depth)
                if isinstance(parent, cst.For):
                    return
            elif isinstance(parent, cst.WithItem) and parent.item is child:
                if parent.asname is not None:
                    self._taint_target(parent.asname.name, scope, flow, depth=depth)
                return
            elif isinstance(parent, cst.Return | cst.Yield):
                self._returned(scope, flow, depth=depth)
                return
            elif isinstance(parent, cst.If | cst.While | cst.IfExp) and parent.test is child:
                self._branch(parent, child, flow)
                if not isinstance(parent, cst.IfExp):
                    return
            elif isinstance(parent, cst.Match) and parent.subject is child:
                self._branch(parent, child, flow)
                return
            elif isinstance(parent, cst.BaseSmallStatement | cst.BaseCompoundStatement | cst.Lambda):
                return
            child, parent = parent, self._parents.get(id(parent))

    def _consume(self, call: cst.Call, arg: cst.Arg, scope: Scope, flow: _Flow, *, depth: int) -> None:
        flow.findings.extend(self._classify_call(call, tainted=is_primary(call, arg)))
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if receiver is not None and id(call) not in self.llm_calls and self._is_local_object(receiver):
            # message.set_content(output), payload.update(output): the receiver now carries it.
            self._taint_target(receiver, scope, flow, depth=depth)
        if depth >= MAX_DEPTH or not isinstance(call.func, cst.Name | cst.Attribute):
            return
        if isinstance(call.func, cst.Attribute) and not (isinstance(call.func.value, cst.Name) and call.func.value.value in {"self", "cls"}):
            return
        target = self.tools.function(short_name(call.func), scope)
        if target is None or not isinstance(target.node, cst.FunctionDef):
            return
        param = param_for(target.node, call, arg)
        if param is not None:
            self._taint_key(param, target, flow, depth=depth + 1)

    def _is_local_object(self, node: cst.BaseExpression) -> bool:
        # Only local variables: self.io.tool_output(text) must not taint every use of self.io.
        return isinstance(node, cst.Name) and node.value not in self.index.imports and node.value not in {"self", "cls"}

    def _taint_target(self, target: cst.BaseExpression, scope: Scope, flow: _Flow, *, depth: int) -> None:
        if isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._taint_target(element.value, scope, flow, depth=depth)
            return
        if isinstance(target, cst.Subscript | cst.Attribute) and target_key(target) is None:
            # out["x"] = output / obj.field = output: the container now carries it.
            self._taint_target(target.value, scope, flow, depth=depth)
            return
        key = target_key(target)
        if key is not None:
            self._taint_key(key, scope, flow, depth=depth)

    def _taint_key(self, key: str, scope: Scope, flow: _Flow, *, depth: int) -> None:
        scopes = self._class_scopes(scope) if key.startswith("self.") else [scope]
        for current in scopes:
            if (current.qualname, key) in flow.seen:
                continue
            flow.seen.add((current.qualname, key))
            flow.pending.append((key, current, depth))

    def _returned(self, scope: Scope, flow: _Flow, *, depth: int) -> None:
        if scope.qualname == MODULE_SCOPE or depth >= MAX_DEPTH:
            flow.escapes = True
            return
        name = scope.qualname.rpartition(".")[2]
        callers = [
            (call, caller)
            for call, caller in self.index.calls
            if short_name_or_none(call.func) == name and caller is not scope and id(call) not in flow.seen_calls
        ]
        if not callers:
            flow.escapes = True
        for call, caller in callers:
            flow.seen_calls.add(id(call))
            parent = self._parents.get(id(call))
            origin = parent if isinstance(parent, cst.Await) else call
            self._follow(origin, caller, flow, depth=depth + 1)

    def _branch(self, statement: cst.CSTNode, test: cst.CSTNode, flow: _Flow) -> None:
        # A match compares its subject with every case: always a choice, even on a bare name.
        if not isinstance(statement, cst.Match) and trivial_test(test):
            return
        line = self.line_of(statement)
        flow.findings.append(rules.finding("R10", f"branch on the model's output ({type(statement).__name__.lower()})", line))
        for part in branch_bodies(statement):
            for node in self._walk(part):
                if isinstance(node, cst.Call):
                    flow.findings.extend(self._classify_call(node, tainted=False, via="in a branch on the output"))

    # -- helpers -----------------------------------------------------------
    def _class_scopes(self, scope: Scope) -> list[Scope]:
        if scope.class_name is None:
            return [scope]
        return [s for s in self.index.scopes.values() if s.class_name == scope.class_name]

    def _references(self, scope: Scope) -> dict[str, list[cst.CSTNode]]:
        cached = self._names.get(id(scope))
        if cached is not None:
            return cached
        names: dict[str, list[cst.CSTNode]] = {}
        for node in self._walk(scope.node, skip_defs=scope.qualname == MODULE_SCOPE):
            key = target_key(node) if isinstance(node, cst.Name | cst.Attribute) else None
            if key is not None and not self._is_label(node):
                names.setdefault(key, []).append(node)
        self._names[id(scope)] = names
        return names

    def _is_label(self, node: cst.CSTNode) -> bool:
        """A name that is not a variable: the ``answer`` of ``order.answer`` or of ``f(answer=1)``."""
        parent = self._parents.get(id(node))
        if isinstance(parent, cst.Attribute):
            return parent.attr is node
        return isinstance(parent, cst.Arg) and parent.keyword is node

    def _is_binding(self, node: cst.CSTNode) -> bool:
        parent = self._parents.get(id(node))
        if isinstance(parent, cst.AssignTarget | cst.AsName | cst.Param):
            return True
        if isinstance(parent, cst.Attribute) and parent.value is node and target_key(parent) is not None:
            return True  # "self" inside self.x: the attribute is the reference
        if isinstance(parent, cst.AnnAssign | cst.AugAssign | cst.NamedExpr) and parent.target is node:
            return True
        return isinstance(parent, cst.For | cst.CompFor) and parent.target is node
