"""Tool lists the code builds in steps: passed as a parameter, extended, copied.

``def build_agent(tools): return Agent(tools=tools)`` called as
``build_agent([issue_refund])`` offers ``issue_refund``. Only call sites in
the same module are read (a parameter a caller elsewhere fills stays "tools
only known at run time", R7): ``fn(...)`` for a module-level function,
``Class(...)`` for ``__init__``, ``self.method(...)`` for a method. Also ``tools = []`` then
``tools.extend(kit.get_tools())``, and ``list(tools or [])``.
"""

from __future__ import annotations

import libcst as cst

from escalated.contracts.scan.index import ModuleIndex, Scope, target_key


def passed_to(index: ModuleIndex, name: str, scope: Scope) -> list[tuple[cst.BaseExpression, Scope]]:
    """(argument, the caller's scope) for every same-module call site that passes parameter ``name``."""
    if not isinstance(scope.node, cst.FunctionDef) or name not in scope.params:
        return []
    params = [p.name.value for p in (*scope.node.params.posonly_params, *scope.node.params.params)]
    if scope.class_name is not None and params and params[0] in {"self", "cls"}:
        params = params[1:]
    out: list[tuple[cst.BaseExpression, Scope]] = []
    for call, where in index.calls:
        if not _calls(call, scope, where):
            continue
        for position, arg in enumerate(a for a in call.args if not a.star):
            keyword = arg.keyword.value if arg.keyword is not None else None
            if keyword == name or (keyword is None and position < len(params) and params[position] == name):
                out.append((arg.value, where))
    return out


def enclosing_scope(index: ModuleIndex, node: cst.CSTNode) -> Scope | None:
    """The function ``node`` is written in (through the index's parent links)."""
    current = index.parents.get(id(node))
    while current is not None:
        if isinstance(current, cst.FunctionDef):
            return next((s for s in index.functions_by_name.get(current.name.value, ()) if s.node is current), None)
        current = index.parents.get(id(current))
    return None


def _calls(call: cst.Call, target: Scope, caller: Scope) -> bool:
    func, short = call.func, target.qualname.rpartition(".")[2]
    if target.class_name is None:
        return isinstance(func, cst.Name) and func.value == short and target.parent is not None and target.parent.parent is None
    if short == "__init__":
        return isinstance(func, cst.Name) and func.value == target.class_name
    return (
        isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self"
        and func.attr.value == short and caller.class_name == target.class_name
    )  # fmt: skip


def extended(index: ModuleIndex, name: cst.BaseExpression, scope: Scope) -> list[cst.BaseExpression]:
    """What ``name.extend(x)`` / ``name.append(x)`` / ``name += x`` add to a list, in the scope that binds it
    (``self.tools += [...]`` in any method of the class)."""
    key = target_key(name) if isinstance(name, cst.Attribute) else None
    if key is not None and key.startswith("self.") and scope.class_name is not None:
        return list(index.added.get((scope.class_name, key), ()))
    if not isinstance(name, cst.Name):
        return []
    binder: Scope | None = scope
    while binder is not None and (binder.qualname, name.value) not in index.values:
        binder = binder.parent
    if binder is None:
        return []
    out: list[cst.BaseExpression] = []
    for call, where in index.calls:
        func = call.func
        if (
            isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == name.value
            and func.attr.value in {"extend", "append", "update"} and call.args and where.qualname == binder.qualname
        ):  # fmt: skip
            value = call.args[0].value  # update: a table of tools by name gains entries
            looped = _loop_source(index, call, value) if func.attr.value == "append" else None
            # for tool in kit_tools: ...; tools.append(tool): the elements of kit_tools, whatever it holds.
            out.append(looped if looped is not None else cst.List([cst.Element(value)]) if func.attr.value == "append" else value)
    out.extend(index.added.get((binder.qualname, name.value), ()))
    return out


def _loop_source(index: ModuleIndex, call: cst.Call, value: cst.BaseExpression) -> cst.BaseExpression | None:
    """``for item in source: ... target.append(item)``: ``source``, when ``item`` is the loop's own name."""
    if not isinstance(value, cst.Name):
        return None
    node = index.parents.get(id(call))
    while node is not None and not isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Module):
        if isinstance(node, cst.For) and isinstance(node.target, cst.Name) and node.target.value == value.value:
            return node.iter
        node = index.parents.get(id(node))
    return None


def unwrapped(call: cst.Call) -> cst.BaseExpression | None:
    """``list(tools or [])`` / ``tuple(tools)``: the tools themselves."""
    if not (isinstance(call.func, cst.Name) and call.func.value in {"list", "tuple"} and len(call.args) == 1):
        return None
    value = call.args[0].value
    if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
        value = value.left
    return value
