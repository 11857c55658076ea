"""A state graph's routing: the model's answer returned into the graph state and read by a router.

LangGraph nodes do not call each other: a node returns an update of the graph
state (``return {"email_category": result.category}``) and a routing function
given to ``add_conditional_edges`` reads that key (``state["email_category"]``)
to choose the next node. The answer's fate is then the router's choice, though
no call passes it there. A router is known by its shape, wherever the graph is
built: a function of the graph's ``state`` whose every ``return`` is a route
name written in the code (a string, or ``END``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from contextvars import ContextVar

import attrs
import libcst as cst

from escalated.contracts.scan.index import ModuleIndex, Scope
from escalated.contracts.scan.syntax import literal

STATE = "state"
# Route names that are not strings: the graph's end and start markers.
_MARKERS = frozenset({"END", "START"})


# LangGraph's own routing objects: Send(node, state) runs a node, Command(goto=...) chooses the next.
_SENDS = frozenset({"langgraph.types.Send", "langgraph.constants.Send"})
_COMMANDS = frozenset({"langgraph.types.Command"})


def routes_to(qualified: str | None, arg: cst.Arg) -> str | None:
    """Why the answer, passed as ``arg``, chooses what the graph runs next (None when it does not):
    any argument of ``Send(...)``, the ``goto`` of ``Command(...)`` (its ``update`` is a state update)."""
    if qualified in _SENDS:
        return "the graph runs a node the model's output chose: Send()"
    if qualified in _COMMANDS and arg.keyword is not None and arg.keyword.value == "goto":
        return "the graph goes where the model's output says: Command(goto=…)"
    return None


def takes_state(scope: Scope) -> bool:
    """A function with a parameter named ``state``: a graph node or router."""
    node = scope.node
    if not isinstance(node, cst.FunctionDef):
        return False
    return any(p.name.value == STATE for p in (*node.params.params, *node.params.kwonly_params, *node.params.posonly_params))


def update_key(element: cst.DictElement) -> str | None:
    """The state key a returned ``{"key": value}`` updates."""
    return literal(element.key) if isinstance(element.key, cst.SimpleString) else None


def _returns(index: ModuleIndex, function: cst.FunctionDef) -> Iterator[cst.Return]:
    for node in index.walk(function.body, skip_defs=True):
        if isinstance(node, cst.Return):
            yield node


def _route_name(value: cst.BaseExpression | None) -> bool:
    if isinstance(value, cst.SimpleString | cst.ConcatenatedString):
        return True
    return isinstance(value, cst.Name) and value.value in _MARKERS


def is_router(index: ModuleIndex, scope: Scope) -> bool:
    """A function of the state returning only route names, at least two of them."""
    node = scope.node
    if not isinstance(node, cst.FunctionDef) or not takes_state(scope):
        return False
    routes: set[str] = set()
    for returned in _returns(index, node):
        if not _route_name(returned.value):
            return False
        assert returned.value is not None
        routes.add(cst.Module([]).code_for_node(returned.value))
    return len(routes) >= 2


def state_reads(index: ModuleIndex, scope: Scope, key: str) -> Iterator[cst.BaseExpression]:
    """``state["key"]``, ``state.key`` and ``state.get("key")`` inside a function of the state (not
    ``state["key"] = …``)."""
    if not isinstance(scope.node, cst.FunctionDef):
        return
    for node in index.walk(scope.node.body, skip_defs=True):
        if _written(index, node):
            continue  # state["messages"] = []: the router resets the key, it does not read it
        if isinstance(node, cst.Subscript) and _is_state(node.value) and len(node.slice) == 1:
            index_ = node.slice[0].slice
            if isinstance(index_, cst.Index) and isinstance(index_.value, cst.SimpleString) and literal(index_.value) == key:
                yield node
        elif isinstance(node, cst.Attribute) and _is_state(node.value) and node.attr.value == key:
            yield node
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _is_state(node.func.value):
            first = node.args[0].value if node.func.attr.value == "get" and node.args else None
            if isinstance(first, cst.SimpleString) and literal(first) == key:
                yield node


def _written(index: ModuleIndex, node: cst.CSTNode) -> bool:
    parent = index.parents.get(id(node))
    if isinstance(parent, cst.AssignTarget):
        return True
    return isinstance(parent, cst.AugAssign | cst.AnnAssign) and parent.target is node


def _is_state(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == STATE


# -- the project's graphs: which functions are nodes and routers of one graph ----------------------
@attrs.frozen
class Graph:
    """A module building a state graph: the functions it adds as nodes and routers (by name, as its
    ``add_node``/``add_conditional_edges`` calls name them), and the state keys its own routers read."""

    rel: str
    nodes: frozenset[str]
    routers: frozenset[str]
    reads: tuple[tuple[str, str, int], ...]  # (router, key, line) for routers defined in this module


# The graphs of the project being scanned (set by the scan of a tree, read by the output's flow).
GRAPHS: ContextVar[tuple[Graph, ...]] = ContextVar("escalated_scanned_graphs", default=())


def graphs_of(sources: Iterable[tuple[str, str]]) -> tuple[Graph, ...]:
    """Every module that adds nodes to a graph, read off Python's tree (text-checked first: cheap)."""
    found: list[Graph] = []
    for rel, source in sources:
        if "add_conditional_edges" not in source:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            continue
        nodes: set[str] = set()
        routers: set[str] = set()
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr == "add_node" and node.args:
                name = _last_name(node.args[-1] if len(node.args) < 3 else node.args[1])
                if name is not None:
                    nodes.add(name)
            elif node.func.attr == "add_conditional_edges":
                path = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "path"), None)
                name = _last_name(path) if path is not None else None
                if name is not None:
                    routers.add(name)
        reads = tuple(
            (function.name, key, line)
            for function in tree.body
            if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef) and function.name in routers
            for key, line in _ast_state_reads(function)
        )
        found.append(Graph(rel, frozenset(nodes), frozenset(routers), reads))
    return tuple(found)


def _last_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _ast_state_reads(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[str, int]]:
    params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    if STATE not in params:
        return
    for node in ast.walk(function):
        if isinstance(node, ast.Subscript) and _ast_state(node.value) and isinstance(node.ctx, ast.Load):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                yield node.slice.value, node.lineno
        elif isinstance(node, ast.Attribute) and _ast_state(node.value) and isinstance(node.ctx, ast.Load) and node.attr != "get":
            yield node.attr, node.lineno
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" and _ast_state(node.func.value):
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield first.value, node.lineno


def _ast_state(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == STATE
