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
answer). A tool without a ``function_tool`` decorator to extend keeps the
``guard_tool`` path (tool_guard.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from escalated.contracts.edit.rewrite import import_position

ADAPTER_IMPORT = "from escalated.adapters.openai_agents import run_with_approvals"
UUID_IMPORT = "import uuid"
RUNNER = "Runner.run"


def with_approvals(module: cst.Module, policies: Mapping[str, str]) -> tuple[cst.Module, tuple[str, ...]]:
    """``guard(id, lambda: Runner.run(...))`` -> ``... run_with_approvals(..., policy=, run_id=)`` for each id in
    ``policies`` (contract id -> policy); the ids rewritten."""
    if not policies:
        return module, ()
    editor = _RunRewriter(policies)
    new = module.visit(editor)
    assert isinstance(new, cst.Module)
    if not editor.done:
        return module, ()
    return _ensure_imports(new, (UUID_IMPORT, ADAPTER_IMPORT)), tuple(sorted(editor.done))


def ask_approval(decorator: cst.Decorator) -> cst.Decorator | None:
    """``@function_tool`` / ``@function_tool(...)`` with ``needs_approval=True``; None if it is not one."""
    target = decorator.decorator
    func = target.func if isinstance(target, cst.Call) else target
    name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    if name != "function_tool":
        return None
    flag = cst.Arg(cst.Name("True"), keyword=cst.Name("needs_approval"), equal=_tight_equal())
    if not isinstance(target, cst.Call):
        return decorator.with_changes(decorator=cst.Call(func=target, args=[flag]))
    if any(a.keyword is not None and a.keyword.value == "needs_approval" for a in target.args):
        return decorator  # already decided there (a function deciding, or False: left to its author)
    return decorator.with_changes(decorator=target.with_changes(args=[*_commas(target.args), flag]))


class _RunRewriter(cst.CSTTransformer):
    def __init__(self, policies: Mapping[str, str]) -> None:
        super().__init__()
        self._policies = policies
        self.done: set[str] = set()

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.Call:
        if len(updated_node.args) < 2 or not isinstance(updated_node.args[1].value, cst.Lambda):
            return updated_node
        first = updated_node.args[0].value
        contract_id = first.evaluated_value if isinstance(first, cst.SimpleString) else None
        lam = updated_node.args[1].value
        run = lam.body
        if not isinstance(contract_id, str) or contract_id not in self._policies or not isinstance(run, cst.Call):
            return updated_node
        if cst.Module([]).code_for_node(run.func) not in {RUNNER, f"agents.{RUNNER}"}:
            return updated_node
        self.done.add(contract_id)
        policy = cst.Arg(cst.SimpleString(_quoted(self._policies[contract_id])), keyword=cst.Name("policy"), equal=_tight_equal())
        run_id = cst.Arg(
            cst.parse_expression(f'f"{contract_id}:{{uuid.uuid4()}}"'), keyword=cst.Name("run_id"), equal=_tight_equal()
        )
        new_run = run.with_changes(func=cst.Name("run_with_approvals"), args=[*_commas(run.args), policy, run_id])
        return updated_node.with_changes(args=[updated_node.args[0], updated_node.args[1].with_changes(value=lam.with_changes(body=new_run))])


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
