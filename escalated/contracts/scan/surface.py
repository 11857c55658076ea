"""The decision surface of one LLM call: what its output controls.

Three sources of evidence, each turned into rule findings:

- the tools the call offers (found by ``offered.py``; classified here by
  names and bodies: a tool runs with arguments the model chose);
- where the output flows: a small flow-insensitive taint pass over the
  enclosing function, into module-local helpers it is passed to, and back
  to the module-local callers it is returned to;
- what the output decides: branches on it, and the side effects inside them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

import attrs
import libcst as cst

from escalated.contracts import rules
from escalated.contracts.scan.index import MODULE_SCOPE, ModuleIndex, Scope, dotted_name, target_key
from escalated.contracts.calls import Finding, ToolSite
from escalated.contracts.scan.kinds import Match
from escalated.contracts.scan.resolve import Resolver
from escalated.contracts.scan.syntax import (
    branch_bodies,
    dotted_tail,
    is_formatted,
    is_primary,
    param_for,
    short_name,
    short_name_or_none,
    string_text,
    trivial_test,
)
from escalated.contracts.scan.offered import OfferedTools
from escalated.contracts.scan.tools import ToolRef, ToolResolver

MAX_DEPTH = 3  # helper functions followed in or out of the enclosing function
MAX_STEPS = 4000  # bound on work per call, so one pathological file cannot stall a scan
_PURE_CALLS = frozenset({
    "str", "int", "float", "bool", "len", "abs", "round", "min", "max", "sum", "sorted", "range", "pow",
    "divmod", "format", "list", "dict", "tuple", "set", "enumerate", "zip", "isinstance", "ValueError",
})  # fmt: skip
_SQL_CALLS = frozenset({"execute", "executemany", "executescript", "raw", "read_sql", "read_sql_query", "exec_driver_sql"})


class ParamFlow(Protocol):
    """The project's functions followed by parameter (scan/flows.py)."""

    def param_findings(self, qualified: str, call: cst.Call, arg: cst.Arg) -> tuple[Finding, ...] | None: ...


@attrs.frozen
class Surface:
    """What the analysis of one call found: facts for the rule table, and how far it could follow."""

    findings: tuple[Finding, ...]
    escapes: bool
    # Every risky tool the call reaches asks a human first (needs_approval): an existing gate.
    tools_gated: bool
    # Scopes whose return value carries the output: wrappers other modules call.
    returned: frozenset[str] = frozenset()
    # The offered tools that carry a required or reviewed risk (path filled in by the caller).
    risky_tools: tuple[ToolSite, ...] = ()


@attrs.define
class _Flow:
    findings: list[Finding] = attrs.Factory(list)
    escapes: bool = False
    gated_tools: int = 0
    returned: set[str] = attrs.Factory(set)
    # Functions the output was passed into: returning it there is a pass-through (truncate), not a wrapper.
    passed_into: set[str] = attrs.Factory(set)
    # False when the output came in through a parameter from another module: returned, it goes back there.
    follow_returns: bool = True
    seen: set[tuple[str, str]] = attrs.Factory(set)
    seen_calls: set[int] = attrs.Factory(set)
    steps: int = 0
    # Names found to carry the output, still to follow. A worklist rather than
    # recursion: a long chain of assignments must not exhaust the stack.
    # The flag: the name holds something built from the output (a list of answers), not the output.
    pending: list[tuple[str, Scope, int, bool]] = attrs.Factory(list)


class SurfaceAnalyzer(OfferedTools):
    def __init__(
        self,
        index: ModuleIndex,
        resolver: Resolver,
        *,
        line_of: Callable[[cst.CSTNode], int],
        code_of: Callable[[cst.CSTNode], str],
        llm_calls: set[int],
        imported_tools: Mapping[str, tuple[Finding, ...]] | None = None,
        tool_sites: Mapping[str, ToolSite] | None = None,
        wrapper_sites: Mapping[str, list[tuple[cst.Call, Scope]]] | None = None,
        project: ParamFlow | None = None,
    ) -> None:
        self.index = index
        # The module's own wrappers (qualname) -> their call sites here: where a returned output goes.
        self.wrapper_sites = wrapper_sites or {}
        # Other modules' functions, followed from the parameter the output is passed as.
        self.project = project
        self.resolver = resolver
        self.line_of = line_of
        self.llm_calls = llm_calls
        self.tools = ToolResolver(index, line_of, code_of, imported_tools or {}, tool_sites or {})
        self._parents = index.parents
        self._names: dict[int, dict[str, list[cst.CSTNode]]] = {}
        self._open_bodies: set[int] = set()
        self._constructed: dict[str, str] | None = None
        self._scope_of: dict[int, Scope] | None = None

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
    def analyze(self, call: cst.Call, scope: Scope, match: Match, *, origin: cst.CSTNode) -> Surface:
        """What one call's output controls, whether it escaped the analysis, and which tools are gated."""
        flow = _Flow()
        gated: set[Finding] = set()
        sites: set[ToolSite] = set()
        for finding, tool in self._tool_findings(call, scope, match):
            flow.findings.append(finding)
            if tool is not None and tool.gated:
                gated.add(finding)
                flow.gated_tools += 1
            if tool is not None and rules.effective_mode(finding) in {"required", "reviewed"}:
                sites.add(self._site(tool))
        self._follow(origin, scope, flow, depth=0)
        self._drain(flow)
        findings = tuple(sorted(set(flow.findings)))
        # A tool gate covers the call only when every risky thing the call reaches sits behind it.
        risky = [f for f in findings if rules.RULES_BY_ID[f.rule].mode in {"required", "reviewed"}]
        tools_gated = flow.gated_tools > 0 and all(f in gated for f in risky)
        return Surface(
            findings, escapes=flow.escapes, tools_gated=tools_gated, returned=flow.returned, risky_tools=tuple(sorted(sites))
        )  # fmt: skip

    def _drain(self, flow: _Flow) -> None:
        while flow.pending and flow.steps <= MAX_STEPS:
            key, current, depth, derived = flow.pending.pop(0)
            for reference in self._references(current).get(key, ()):
                if not self._is_binding(reference):
                    self._follow(reference, current, flow, depth=depth, derived=derived)

    def param_findings(self, scope: Scope, param: str) -> tuple[Finding, ...]:
        """What this function does with parameter ``param`` when it holds a model's output.

        A caller in another module passes the output in: its return goes back to that
        caller (who follows it there), so the module's own callers are not followed.
        """
        flow = _Flow(follow_returns=False)
        self._taint_key(param, scope, flow, depth=1, derived=True)
        self._drain(flow)
        return tuple(sorted(set(flow.findings)))

    def classify_tool(self, tool: ToolRef) -> list[Finding]:
        if tool.known is not None:
            return list(tool.known)  # a tool function of another module, classified there
        named = rules.classify_name(tool.name, line=tool.line, subject="tool")
        if tool.body is None:
            return named or [rules.fact("tool-body-unseen", f"tool {tool.name} (read-only as far as its name tells; {tool.where})", tool.line)]
        body = self._body_findings(tool.body, via=f"tool {tool.name}")
        if any(f.basis == "code" and f.rule not in rules.NOT_SIDE_EFFECTS for f in body):
            # What the body does confirms what the name says: refund_order calling stripe.
            named = [attrs.evolve(f, basis="code") for f in named]
        out = named + body
        if any(rules.RULES_BY_ID[f.rule].mode != "sampled" for f in out):
            return out
        if isinstance(tool.body, cst.FunctionDef) and self._is_pure(tool.body):
            return out  # add(a, b): computes from its arguments, reads no data
        out.append(rules.fact("tool-reads-only", f"tool {tool.name} (no side effect found in its body)", tool.line))
        return out

    def _body_findings(self, body: cst.CSTNode, *, via: str) -> list[Finding]:
        """What a function body does: its calls (project functions followed) and its SQL text."""
        if id(body) in self._open_bodies or len(self._open_bodies) > 2:
            return []
        self._open_bodies.add(id(body))
        try:
            out: list[Finding] = []
            for node in self._walk(body):
                if isinstance(node, cst.Call):
                    out.extend(self._classify_call(node, tainted=False, via=via))
                elif isinstance(node, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString):
                    out.extend(attrs.evolve(f, detail=f"{via} -> {f.detail}") for f in rules.classify_sql(string_text(node), line=self.line_of(node)))
            return out
        finally:
            self._open_bodies.discard(id(body))

    def _built_by(self, func: cst.BaseExpression) -> str | None:
        """smtp.send_message with smtp = smtplib.SMTP(...): ``smtplib.SMTP.send_message``.

        Flow-insensitive: the first binding of the receiver's name in the module to a call
        of an imported name. What built the receiver is evidence; its name is not.
        """
        if self._constructed is None:
            self._constructed = {}
            for _scope, key, value in self.index.assignments:
                if isinstance(value, cst.Call) and key not in self._constructed:
                    built = self.index.qualified(value.func)
                    if built is not None:
                        self._constructed[key] = built
        dotted = dotted_name(func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        built = self._constructed.get(head)
        return f"{built}.{rest}" if built is not None and rest else None

    def _project_function(self, call: cst.Call) -> cst.FunctionDef | None:
        """f(...) or self.f(...) on a function of this module: its body is the evidence, not its name."""
        func = call.func
        if isinstance(func, cst.Attribute) and not (isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"}):
            return None
        if not isinstance(func, cst.Name | cst.Attribute):
            return None
        target = self.tools.function(short_name(func), self.index.module_scope)
        return target.node if target is not None and isinstance(target.node, cst.FunctionDef) else None

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
        line = self.line_of(call)
        label = f"{via} -> {dotted}()" if via else f"{dotted}()"
        local = self._project_function(call)
        if local is not None:
            return self._body_findings(local, via=label)
        qualified = self.resolver.qualified(call.func) or self._built_by(call.func)
        imported = self.tools.imported.get(qualified) if qualified is not None else None
        if imported is not None:  # a project function of another module, classified there
            return [attrs.evolve(f, detail=f"{label} -> {f.detail}", line=line) for f in imported]
        found = rules.classify_callee(dotted, line=line, tainted=tainted, qualified=qualified)
        if not tainted and dotted.rpartition(".")[2] in _SQL_CALLS and call.args and is_formatted(call.args[0].value):
            found.append(rules.fact("sql-from-output", f"SQL built from model-chosen values: {dotted}()", line))
        for arg in call.args:
            if isinstance(arg.value, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
                found.extend(rules.classify_sql(string_text(arg.value), line=line))
            if arg.keyword and arg.keyword.value == "unsafe_allow_html" and tainted:
                found.append(rules.fact("html-from-output", f"HTML: {dotted}(unsafe_allow_html=True)", line))
        if via:
            found = [attrs.evolve(f, detail=f"{via} -> {f.detail}") for f in found]
        return found

    # -- data flow ---------------------------------------------------------
    def _follow(self, node: cst.CSTNode, scope: Scope, flow: _Flow, *, depth: int, derived: bool = False) -> None:
        """Walk up from an expression carrying the output to the statement using it.

        ``derived``: what is carried was built from the output (passed through a call or
        into a list, a string, a loop) rather than being the output or a field of it; a
        function returning such a thing is not a wrapper of the model.
        """
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
                    self._taint_target(target.target, scope, flow, depth=depth, derived=derived)
                return
            elif isinstance(parent, cst.AnnAssign | cst.AugAssign) and parent.value is child:
                self._taint_target(parent.target, scope, flow, depth=depth, derived=derived or isinstance(parent, cst.AugAssign))
                return
            elif isinstance(parent, cst.NamedExpr) and parent.value is child:
                self._taint_target(parent.target, scope, flow, depth=depth, derived=derived)
            elif isinstance(parent, cst.For | cst.CompFor) and parent.iter is child:
                self._taint_target(parent.target, scope, flow, depth=depth, derived=True)
                if isinstance(parent, cst.For):
                    return
            elif isinstance(parent, cst.WithItem) and parent.item is child:
                if parent.asname is not None:
                    self._taint_target(parent.asname.name, scope, flow, depth=depth, derived=derived)
                return
            elif isinstance(parent, cst.Return | cst.Yield):
                self._returned(scope, flow, depth=depth, derived=derived)
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
            derived = derived or not _projects(parent, child)
            child, parent = parent, self._parents.get(id(parent))

    def _consume(self, call: cst.Call, arg: cst.Arg, scope: Scope, flow: _Flow, *, depth: int) -> None:
        passed = self._passed_on(call, arg, scope)
        flow.findings.extend(passed if passed is not None else self._classify_call(call, tainted=is_primary(call, arg)))
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if receiver is not None and id(call) not in self.llm_calls and self._is_local_object(receiver):
            # message.set_content(output), payload.update(output): the receiver now carries it.
            self._taint_target(receiver, scope, flow, depth=depth, derived=True)
        if depth >= MAX_DEPTH or not isinstance(call.func, cst.Name | cst.Attribute):
            return
        if isinstance(call.func, cst.Attribute) and not (isinstance(call.func.value, cst.Name) and call.func.value.value in {"self", "cls"}):
            return
        target = self.tools.function(short_name(call.func), scope)
        if target is None or not isinstance(target.node, cst.FunctionDef):
            return
        param = param_for(target.node, call, arg)
        if param is not None:
            flow.passed_into.add(target.qualname)
            self._taint_key(param, target, flow, depth=depth + 1, derived=True)

    def _passed_on(self, call: cst.Call, arg: cst.Arg, scope: Scope) -> list[Finding] | None:
        """The output passed to a function (or a method of a class) of another project module:
        what that function does with it."""
        if self.project is None or id(call) in self.llm_calls:
            return None
        qualified = self.resolver.qualified(call.func)
        if qualified is None and isinstance(call.func, cst.Attribute):
            # PlanRunner().run(reply), self.runner.run(reply): a class of another module.
            owner = self.resolver.kind_of(call.func.value, scope)
            cls = owner.kind.partition(":")[2] if owner is not None and owner.kind.startswith("object:") else ""
            qualified = f"{cls}.{call.func.attr.value}" if "." in cls else None
        found = self.project.param_findings(qualified, call, arg) if qualified is not None else None
        if found is None:
            return None
        label, line = f"{dotted_name(call.func) or '.'.join(qualified.split('.')[-2:])}()", self.line_of(call)
        return [attrs.evolve(f, detail=f"{label} -> {f.detail}", line=line) for f in found]

    def _is_local_object(self, node: cst.BaseExpression) -> bool:
        # Only local variables: self.io.tool_output(text) must not taint every use of self.io.
        return isinstance(node, cst.Name) and node.value not in self.index.imports and node.value not in {"self", "cls"}

    def _taint_target(self, target: cst.BaseExpression, scope: Scope, flow: _Flow, *, depth: int, derived: bool = False) -> None:
        if isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._taint_target(element.value, scope, flow, depth=depth, derived=derived)
            return
        if isinstance(target, cst.Subscript | cst.Attribute) and target_key(target) is None:
            # out["x"] = output / obj.field = output: the container now carries it.
            self._taint_target(target.value, scope, flow, depth=depth, derived=True)
            return
        key = target_key(target)
        if key is not None:
            self._taint_key(key, scope, flow, depth=depth, derived=derived)

    def _taint_key(self, key: str, scope: Scope, flow: _Flow, *, depth: int, derived: bool = False) -> None:
        scopes = self._class_scopes(scope) if key.startswith("self.") else [scope]
        for current in scopes:
            if (current.qualname, key) in flow.seen:
                continue
            flow.seen.add((current.qualname, key))
            flow.pending.append((key, current, depth, derived))

    def _returned(self, scope: Scope, flow: _Flow, *, depth: int, derived: bool) -> None:
        if scope.qualname != MODULE_SCOPE and scope.qualname not in flow.passed_into and not derived:
            flow.returned.add(scope.qualname)
        if not flow.follow_returns:
            return  # the output came in as an argument: where it returns to, the caller follows
        if scope.qualname == MODULE_SCOPE or depth >= MAX_DEPTH:
            flow.escapes = True
            return
        name = scope.qualname.rpartition(".")[2]
        callers = [
            (call, caller)
            for call, caller in self.index.calls
            if short_name_or_none(call.func) == name and caller is not scope and id(call) not in flow.seen_calls
        ]
        named = {id(call) for call, _caller in callers}
        callers += [
            (call, caller)
            for call, caller in self.wrapper_sites.get(scope.qualname, ())
            if id(call) not in named and caller is not scope and id(call) not in flow.seen_calls
        ]  # fmt: skip
        if not callers:
            flow.escapes = True
        for call, caller in callers:
            flow.seen_calls.add(id(call))
            parent = self._parents.get(id(call))
            origin = parent if isinstance(parent, cst.Await) else call
            self._follow(origin, caller, flow, depth=depth + 1, derived=derived)

    def _branch(self, statement: cst.CSTNode, test: cst.CSTNode, flow: _Flow) -> None:
        # A match compares its subject with every case: always a choice, even on a bare name.
        if not isinstance(statement, cst.Match) and trivial_test(test):
            return
        line = self.line_of(statement)
        flow.findings.append(rules.fact("output-drives-branch", f"branch on the model's output ({type(statement).__name__.lower()})", line))
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


def _projects(parent: cst.CSTNode, child: cst.CSTNode) -> bool:
    """``parent`` is still the output (or a field of it): ``out.text``, ``out[0]``, ``await out``, ``out.strip()``."""
    if isinstance(parent, cst.Attribute | cst.Subscript):
        return parent.value is child
    if isinstance(parent, cst.Call):
        return parent.func is child
    if isinstance(parent, cst.IfExp):
        return parent.test is not child
    return isinstance(parent, cst.Await | cst.BooleanOperation)
