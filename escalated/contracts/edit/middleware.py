"""A ``required`` LangChain ``create_agent`` run gated by LangChain's own hook: ``HumanInTheLoopMiddleware``.

``create_agent`` pauses for a human through its middleware: a tool named in
``HumanInTheLoopMiddleware(interrupt_on={...})`` interrupts after the
model's turn, before the call runs, and the run goes on with
``Command(resume=...)``. So for an agent built beside its ``required`` run
with a checkpointer, ``apply`` writes::

    agent = create_agent(model, [issue_refund, look_up], checkpointer=InMemorySaver(),
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"issue_refund": {"allowed_decisions": ["approve", "reject"]}})])

and routes the run through ``invoke_with_approvals`` (approvals.py), which
files each interrupted call and resumes with the reviewer's decision. The
tools themselves are left as they are. An agent whose ``middleware=`` is not
a list written there, or whose ``HumanInTheLoopMiddleware`` takes an
``interrupt_on`` that is not a dict written there, is not routed: its tools
keep ``guard_tool``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from escalated.contracts.scan.syntax import literal

BUILDER = "create_agent"
MIDDLEWARE = "HumanInTheLoopMiddleware"
IMPORT = f"from langchain.agents.middleware import {MIDDLEWARE}"
# The reviewer's choices in escalated: approve or reject (edit and respond are not offered).
_DECISIONS = '{"allowed_decisions": ["approve", "reject"]}'


def can_hold(builder: cst.Call) -> bool:
    """``create_agent(...)`` whose ``middleware=`` apply can extend: none, or a list or tuple written there
    whose ``HumanInTheLoopMiddleware`` (if any) takes a dict written there."""
    given = _keyword(builder, "middleware")
    if given is None:
        return True
    if not isinstance(given, cst.List | cst.Tuple):
        return False
    return all(isinstance(_interrupt_on(m), cst.Dict) for m in _hitl(given))


def hold_tools(module: cst.Module, graphs: Mapping[str, Sequence[str]]) -> cst.Module:
    """Each named agent's ``HumanInTheLoopMiddleware`` interrupts on its tools (added where it had none)."""
    if not graphs:
        return module
    new = module.visit(_Holder(graphs))
    assert isinstance(new, cst.Module)
    return new


class _Holder(cst.CSTTransformer):
    def __init__(self, graphs: Mapping[str, Sequence[str]]) -> None:
        super().__init__()
        self._graphs = graphs

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        target = updated_node.targets[0].target if len(updated_node.targets) == 1 else None
        builder = updated_node.value
        if not (isinstance(target, cst.Name) and target.value in self._graphs and isinstance(builder, cst.Call)):
            return updated_node
        names = self._graphs[target.value]
        given = _keyword(builder, "middleware")
        if given is None:
            arg = cst.Arg(cst.parse_expression(f"[{_new_middleware(names)}]"), keyword=cst.Name("middleware"), equal=_tight())
            return updated_node.with_changes(value=builder.with_changes(args=[*_commas(builder.args), arg]))
        assert isinstance(given, cst.List | cst.Tuple)  # can_hold chose this agent
        existing = _hitl(given)
        if existing:
            elements = [e.with_changes(value=_with_names(e.value, names)) if any(e.value is m for m in existing) else e for e in given.elements]
        else:
            elements = [*_commas(given.elements), cst.Element(cst.parse_expression(_new_middleware(names)))]
        new_list = given.with_changes(elements=elements)
        args = [a.with_changes(value=new_list) if a.keyword is not None and a.keyword.value == "middleware" else a for a in builder.args]
        return updated_node.with_changes(value=builder.with_changes(args=args))


def _with_names(middleware: cst.BaseExpression, names: Sequence[str]) -> cst.BaseExpression:
    """The middleware's ``interrupt_on`` dict with an entry for each name it lacked (one it has is left as it is)."""
    assert isinstance(middleware, cst.Call)
    table = _interrupt_on(middleware)
    assert isinstance(table, cst.Dict)
    have = {literal(e.key) for e in table.elements if isinstance(e, cst.DictElement)}
    added = [cst.parse_expression(f"{{{_quoted(n)}: {_DECISIONS}}}") for n in names if n not in have]
    elements = [*_commas(table.elements), *(e for d in added if isinstance(d, cst.Dict) for e in d.elements)]
    new_table = table.with_changes(elements=elements)
    args = [a.with_changes(value=new_table) if a.value is table else a for a in middleware.args]
    return middleware.with_changes(args=args)


def _new_middleware(names: Sequence[str]) -> str:
    return f"{MIDDLEWARE}(interrupt_on={{{', '.join(f'{_quoted(n)}: {_DECISIONS}' for n in names)}}})"


def _hitl(listed: cst.List | cst.Tuple) -> list[cst.Call]:
    out = []
    for element in listed.elements:
        value = element.value
        if isinstance(value, cst.Call) and cst.Module([]).code_for_node(value.func).split(".")[-1] == MIDDLEWARE:
            out.append(value)
    return out


def _interrupt_on(middleware: cst.Call) -> cst.BaseExpression | None:
    return next((a.value for a in middleware.args if a.keyword is None or a.keyword.value == "interrupt_on"), None)


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)


def _commas(items: Sequence[cst.Arg | cst.BaseElement | cst.BaseDictElement]) -> list:
    """The items with a ", " after the last, so more can follow."""
    out = list(items)
    if out:
        out[-1] = out[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    return out


def _tight() -> cst.AssignEqual:
    return cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
