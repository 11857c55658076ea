"""The decision surface of one LLM call: what its output controls.

Three sources of evidence, each turned into rule findings:

- the tools the call offers (found by ``offered.py``; classified by names and
  bodies in ``effects.py``: a tool runs with arguments the model chose);
- where the output flows (``output_flow.py``): through the enclosing function,
  into module-local helpers it is passed to, and back to the module-local
  callers it is returned to;
- what the output decides: branches on it, and the side effects inside them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs
import libcst as cst

from escalated.contracts import rules
from escalated.contracts.calls import Finding, ToolSite
from escalated.contracts.scan import apis
from escalated.contracts.scan.effects import CallEffects
from escalated.contracts.scan.index import ModuleIndex, Scope, dotted_name
from escalated.contracts.scan.kinds import Match
from escalated.contracts.scan.offered import OfferedTools
from escalated.contracts.scan.output_flow import FlowState, OutputFlow, ParamFlow
from escalated.contracts.scan.resolve import Resolver
from escalated.contracts.scan.syntax import param_at
from escalated.contracts.scan.tools import ToolRef, ToolResolver


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
    # (method, attribute): the methods keeping the output on their own object (self.tool_call = ...).
    kept: frozenset[tuple[str, str]] = frozenset()


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
        self.resolver = resolver
        self.line_of = line_of
        self.project = project
        self.tools = ToolResolver(index, line_of, code_of, imported_tools or {}, tool_sites or {})
        self.effects = CallEffects(index, resolver, self.tools, line_of=line_of, llm_calls=llm_calls)
        self.flow = OutputFlow(
            index, resolver, self.effects, self.tools, line_of=line_of, llm_calls=llm_calls,
            wrapper_sites=wrapper_sites or {}, project=project,
        )  # fmt: skip
        self._scope_of: dict[int, Scope] | None = None

    def analyze(self, call: cst.Call, scope: Scope, match: Match, *, origin: cst.CSTNode, kept: frozenset[str] = frozenset()) -> Surface:
        """What one call's output controls, whether it escaped the analysis, and which tools are gated.
        ``kept``: the call is of a method keeping the output in these attributes of its object and returning
        none of it (``adapter.invoke_llm(...)``): the answer is what the caller reads there after the call."""
        state = FlowState()
        gated: set[Finding] = set()
        sites: set[ToolSite] = set()
        for finding, tool in self._tool_findings(call, scope, match):
            state.findings.append(finding)
            if tool is not None and tool.gated:
                gated.add(finding)
                state.gated_tools += 1
            if tool is not None and rules.effective_mode(finding) in {"required", "reviewed"}:
                sites.add(self._site(tool))
        receiver = dotted_name(call.func.value) if kept and isinstance(call.func, cst.Attribute) else None
        if receiver is not None:
            state.origin = scope.qualname
            for attribute in sorted(kept):
                self.flow.follow_read(receiver, attribute, call, scope, state, depth=0)
        else:
            self.flow.follow_output(origin, scope, state)
        state.findings += self._filled(scope, state)
        state.findings += self._kept(state)
        findings = tuple(sorted(set(state.findings)))
        # A tool gate covers the call only when every risky thing the call reaches sits behind it.
        risky = [f for f in findings if rules.RULES_BY_ID[f.rule].mode in {"required", "reviewed"}]
        tools_gated = state.gated_tools > 0 and all(f in gated for f in risky)
        return Surface(
            findings, escapes=state.escapes, tools_gated=tools_gated, returned=frozenset(state.returned), risky_tools=tuple(sorted(sites)),
            kept=frozenset(state.kept),
        )  # fmt: skip

    def _filled(self, scope: Scope, state: FlowState) -> list[Finding]:
        """The output written into a parameter of its method (``post_proxy.update_attachment(code)`` in
        ``CodeGenerator.reply(memory, post_proxy)``): what the method's callers in other modules do with
        the object they passed, once the call returns (``execute_code(post_proxy.post...)``)."""
        node = scope.node
        if not state.filled or self.project is None or scope.class_name is None or not isinstance(node, cst.FunctionDef):
            return []
        positional = tuple(p.name.value for p in (*node.params.posonly_params, *node.params.params))
        found: list[Finding] = []
        for param in sorted(state.filled):
            found += self.project.filled_findings(scope.class_name, node.name.value, positional, param)
        return found

    def _kept(self, state: FlowState) -> list[Finding]:
        """The output kept on the method's own object (``self.tool_call = ...`` in ``RequestAdapter.invoke_llm``):
        what the method's callers in other modules do with that attribute of the object they called it on,
        once the call returns (``adapter.invoke_llm(request)`` then ``self._execute(adapter.tool_call)``)."""
        if not state.kept or self.project is None:
            return []
        found: list[Finding] = []
        for qualname, attribute in sorted(state.kept):
            scope = self.index.scopes.get(qualname)
            if scope is None or scope.class_name is None or not isinstance(scope.node, cst.FunctionDef):
                continue
            found += self.project.kept_findings(_lineage(scope.class_name.rpartition(".")[2]), scope.node.name.value, attribute)
        return found

    def kept_findings(self, owners: tuple[str, ...], method: str, attribute: str) -> tuple[Finding, ...]:
        """What this module does with ``attribute`` of an object of one of ``owners`` (a class keeping the
        output there, and the classes it derives from) after calling ``method`` on it: ``invocation =
        llm_adapter.invoke_llm(...)`` with ``llm_adapter: LettaLLMAdapter``, then ``llm_adapter.tool_call``
        handed to the step that executes it. The reads in the calling function are followed."""
        found: list[Finding] = []
        done: set[tuple[str, str]] = set()
        for call, scope in self.index.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == method):
                continue
            receiver = dotted_name(func.value)
            if receiver is None or receiver in {"self", "cls"} or (scope.qualname, receiver) in done:
                continue  # self.invoke_llm(...): the class's own methods read self.<attribute> in its module
            kind = self.resolver.kind_of(func.value, scope)
            named = kind.kind.partition(":")[2].rpartition(".")[2] if kind is not None and kind.kind.startswith("object:") else None
            if (named or self._declared(func.value, scope)) not in owners:
                continue
            done.add((scope.qualname, receiver))
            state = FlowState(follow_returns=False)
            self.flow.follow_read(receiver, attribute, call, scope, state, depth=1)
            label = f"{receiver}.{attribute} kept by {receiver}.{method}()"
            found += [attrs.evolve(f, detail=f"{label} -> {f.detail}") for f in state.findings]
        return tuple(sorted(set(found)))

    def filled_findings(self, owner: str, method: str, positional: tuple[str, ...], param: str) -> tuple[Finding, ...]:
        """What this module does with the object it passes as ``param`` to ``owner.method`` (a method of a
        class of another module, the receiver typed as that class), after the call: ``self.generator.reply(
        memory, post_proxy)`` then ``code = post_proxy.post.get_attachment(...)`` run in a kernel."""
        found: list[Finding] = []
        for call, scope in self.index.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == method):
                continue
            kind = self.resolver.kind_of(func.value, scope)
            typed = kind is not None and (kind.kind == f"object:{owner}" or kind.kind.endswith(f".{owner}"))
            if not typed and not (kind is None and self._declared(func.value, scope) == owner):
                continue
            for arg in call.args:
                if arg.star or not isinstance(arg.value, cst.Name) or param_at(positional, call, arg) != param:
                    continue
                state = FlowState(follow_returns=False)
                # The call filling it is where it came from, not a use of it (as a model request's argument).
                self.flow.llm_calls.add(id(call))
                try:
                    self.flow.follow_param(arg.value.value, scope, state)
                finally:
                    self.flow.llm_calls.discard(id(call))
                label = f"{param} filled, read after {dotted_name(func) or method}()"
                found += [attrs.evolve(f, detail=f"{label} -> {f.detail}") for f in state.findings]
        return tuple(sorted(set(found)))

    def _declared(self, receiver: cst.BaseExpression, scope: Scope) -> str | None:
        """The class a receiver the resolver cannot type is declared as here, by name: ``self.generator``
        set in ``__init__`` from ``generator: CodeGenerator`` or ``CodeGenerator(...)``; a parameter
        ``generator: CodeGenerator``."""
        if isinstance(receiver, cst.Name) and receiver.value in scope.params:
            return _class_named(scope.params[receiver.value].annotation)
        if not (isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value == "self"):
            return None
        init = self.index.scopes.get(f"{scope.class_name}.__init__") if scope.class_name is not None else None
        if init is None:
            return None
        for node in self.index.walk(init.node, skip_defs=True):
            if not (isinstance(node, cst.Assign) and len(node.targets) == 1):
                continue
            target = node.targets[0].target
            if not (isinstance(target, cst.Attribute) and target.attr.value == receiver.attr.value and dotted_name(target.value) == "self"):
                continue
            value = node.value
            if isinstance(value, cst.Name) and value.value in init.params:
                return _class_named(init.params[value.value].annotation)
            if isinstance(value, cst.Call):
                return (dotted_name(value.func) or "").rpartition(".")[2] or None
        return None

    def param_findings(self, scope: Scope, param: str) -> tuple[Finding, ...]:
        """What this function does with parameter ``param`` when it holds a model's output.

        A caller in another module passes the output in: its return goes back to that
        caller (who follows it there), so the module's own callers are not followed.
        """
        state = FlowState(follow_returns=False)
        self.flow.follow_param(param, scope, state)
        return tuple(sorted(set(state.findings)))

    def param_filled(self, scope: Scope, param: str) -> set[str]:
        """The other parameters this function writes what parameter ``param`` carries into."""
        return self.flow.param_filled(param, scope)

    def param_returns(self, scope: Scope, param: str) -> bool:
        """Whether this function returns what parameter ``param`` carries, or parts of it."""
        return self.flow.param_returned(param, scope)

    def callback_findings(self, scope: Scope, param: str) -> tuple[Finding, ...]:
        """What this function does with what its callback parameter ``param`` returns, when that is the output."""
        state = FlowState(follow_returns=False)
        self.flow.follow_callback(param, scope, state)
        return tuple(sorted(set(state.findings)))

    def classify_tool(self, tool: ToolRef) -> list[Finding]:
        """What a tool does, by its name and its body."""
        return self.effects.classify_tool(tool)


def _lineage(name: str) -> tuple[str, ...]:
    """The class and the classes it derives from (as written, every module's known so far; eight at most)."""
    bases = apis.CLASS_BASES.get()
    found, todo = [name], sorted(bases.get(name, ()))
    while todo and len(found) < 9:
        base = todo.pop(0)
        if base not in found:
            found.append(base)
            todo += sorted(bases.get(base, ()))
    return tuple(found)


def _class_named(annotation: cst.Annotation | None) -> str | None:
    """``CodeGenerator`` of ``generator: CodeGenerator`` (or ``module.CodeGenerator``, ``"CodeGenerator"``)."""
    if annotation is None:
        return None
    node = annotation.annotation
    if isinstance(node, cst.SimpleString):
        return node.value.strip("'\"").rpartition(".")[2] or None
    return (dotted_name(node) or "").rpartition(".")[2] or None
