"""Guard at the tool: ``@guard_tool("<contract id>")`` on the risky tools an agent runner runs.

``Runner.run(agent, …)``, a LangGraph prebuilt agent or a CrewAI crew runs its
tools inside the call, so a guard around the call decides after the refund or
the shell command already ran. For such a run under a ``required`` contract,
``apply`` also decorates each risky tool function the run reaches::

    @function_tool
    @guard_tool("billing.run_refunds")
    def issue_refund(charge_id: str) -> str: ...

The decorator goes last (nearest the ``def``), under the framework's own:
the framework then reads the guarded function, whose name, signature and
docstring are the tool's. A tool that already carries a ``guard_tool`` is
left as it is, whatever its id, so a second apply changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import attrs
import libcst as cst

from escalated.contracts.edit.approvals import CREWAI_GATE, CREWAI_MODULE, LANGGRAPH_GATE, LANGGRAPH_MODULE, _tight_equal, ask_approval
from escalated.contracts.edit.rewrite import import_position

GUARD_TOOL_NAME = "guard_tool"
GUARD_TOOL_IMPORT = f"from escalated.guard import {GUARD_TOOL_NAME}"
# Where guard_tool has lived: apply recognises an import from any of them as its own.
GUARD_TOOL_MODULES = frozenset({"escalated.guard", "escalated.guard.tools", "escalated.guard_tools"})


@attrs.frozen(order=True)
class ToolTarget:
    """One tool function to guard: where it is and which contract's mode it takes."""

    path: str
    function: str  # qualified in its module ("issue_refund", "Tools.run_shell")
    line: int
    name: str
    contract_id: str
    # @guard_tool(..., awaitable=True): the framework calls sync tools inside its event loop.
    awaitable: bool = False
    # The run goes through an adapter's run_with_approvals: ask the framework's own approval instead of
    # guard_tool (approvals.py): "agents" (@function_tool(needs_approval=True)), "pydantic"
    # (@agent.tool(requires_approval=True)), "langgraph" (@interrupt_for_approval under @tool), "crewai"
    # (@approval_required(policy=...) under @tool), "agno" (@tool(requires_confirmation=True)), "maf"
    # (@tool(approval_mode="always_require")); "" for guard_tool.
    approval: str = ""
    policy: str = ""  # the contract's policy, for a hook that files itself (crewai)


@attrs.frozen
class Decorated:
    module: cst.Module
    guarded: tuple[ToolTarget, ...]
    already: tuple[ToolTarget, ...]
    # (target, why it was not decorated)
    skipped: tuple[tuple[ToolTarget, str], ...]


def decorate_tools(module: cst.Module, targets: Sequence[ToolTarget]) -> Decorated:
    """Add ``@guard_tool(id)`` to each target function (and the import once)."""
    if not targets:
        return Decorated(module, (), (), ())
    if _binds_name(module, GUARD_TOOL_NAME):
        reason = f"the module already binds the name {GUARD_TOOL_NAME!r} to something else"
        return Decorated(module, (), (), tuple((t, reason) for t in targets))
    editor = _Decorator({t.function: t for t in targets})
    new = module.visit(editor)
    assert isinstance(new, cst.Module)
    missing = tuple((t, "tool function not found in the file") for t in targets if t.function not in editor.seen)
    if editor.used_guard_tool:
        new = _ensure_import(new, GUARD_TOOL_IMPORT)
    if editor.used_interrupt:
        new = _ensure_import(new, f"from {LANGGRAPH_MODULE} import {LANGGRAPH_GATE}")
    if editor.used_crewai:
        new = _ensure_import(new, f"from {CREWAI_MODULE} import {CREWAI_GATE}")
    return Decorated(new, tuple(editor.guarded), tuple(editor.already), missing)


class _Decorator(cst.CSTTransformer):
    def __init__(self, wanted: dict[str, ToolTarget]) -> None:
        super().__init__()
        self._wanted = wanted
        self._names: list[str] = []
        self.seen: set[str] = set()
        self.guarded: list[ToolTarget] = []
        self.already: list[ToolTarget] = []
        self.used_guard_tool = False
        self.used_interrupt = False
        self.used_crewai = False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._names.append(node.name.value)
        return True

    def leave_ClassDef(self, original_node: cst.ClassDef, updated_node: cst.ClassDef) -> cst.ClassDef:
        self._names.pop()
        return updated_node

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._names.append(node.name.value)
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        qualname = ".".join(self._names)
        self._names.pop()
        target = self._wanted.get(qualname)
        if target is None or qualname in self.seen:
            return updated_node
        self.seen.add(qualname)
        if any(_is_guard_tool(d) or _decorator_name(d) in {LANGGRAPH_GATE, CREWAI_GATE} for d in updated_node.decorators):
            self.already.append(target)
            return updated_node
        self.guarded.append(target)
        if target.approval == "langgraph":  # the tool interrupts itself, under the framework's decorator
            self.used_interrupt = True
            return updated_node.with_changes(decorators=[*updated_node.decorators, cst.Decorator(decorator=cst.Name(LANGGRAPH_GATE))])
        if target.approval == "crewai":  # CrewAI's before_tool_call hook holds the marked tool's calls
            self.used_crewai = True
            policy = cst.Arg(cst.SimpleString(json.dumps(target.policy)), keyword=cst.Name("policy"), equal=_tight_equal())
            marked = cst.Decorator(decorator=cst.Call(cst.Name(CREWAI_GATE), [policy]))
            return updated_node.with_changes(decorators=[*updated_node.decorators, marked])
        if target.approval:
            asked = [ask_approval(d, framework=target.approval) for d in updated_node.decorators]
            if any(a is not None for a in asked):
                return updated_node.with_changes(decorators=[a or d for a, d in zip(asked, updated_node.decorators, strict=True)])
        self.used_guard_tool = True
        args = [cst.Arg(cst.SimpleString(json.dumps(target.contract_id)))]
        if target.awaitable:
            args = [
                cst.Arg(args[0].value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                cst.Arg(cst.Name("True"), keyword=cst.Name("awaitable"), equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))),
            ]  # fmt: skip
        decorator = cst.Decorator(decorator=cst.Call(func=cst.Name(GUARD_TOOL_NAME), args=args))
        return updated_node.with_changes(decorators=[*updated_node.decorators, decorator])


def _is_guard_tool(decorator: cst.Decorator) -> bool:
    return _decorator_name(decorator) == GUARD_TOOL_NAME


def _decorator_name(decorator: cst.Decorator) -> str:
    call = decorator.decorator
    func = call.func if isinstance(call, cst.Call) else call
    if isinstance(func, cst.Name):
        return func.value
    return func.attr.value if isinstance(func, cst.Attribute) else ""


def _binds_name(module: cst.Module, name: str) -> bool:
    """Something other than our import binds ``name`` at the top of the module."""
    for statement in module.body:
        if isinstance(statement, cst.FunctionDef | cst.ClassDef) and statement.name.value == name:
            return True
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                module_name = cst.Module([]).code_for_node(small.module) if small.module is not None else ""
                for alias in small.names:
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(local, cst.Name) and local.value == name:
                        ours = module_name in GUARD_TOOL_MODULES and not small.relative and alias.asname is None
                        if not ours:
                            return True
            elif isinstance(small, cst.Assign):
                if any(isinstance(t.target, cst.Name) and t.target.value == name for t in small.targets):
                    return True
    return False


def _ensure_import(module: cst.Module, wanted: str) -> cst.Module:
    """``wanted`` (``from escalated.guard import guard_tool``) once, after the leading imports."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.ImportFrom) and cst.Module([]).code_for_node(small) == wanted:
                    return module
    body = list(module.body)
    at = import_position(body)
    line = cst.parse_statement(wanted + module.default_newline, config=module.config_for_parsing)
    return module.with_changes(body=[*body[:at], line, *body[at:]])
