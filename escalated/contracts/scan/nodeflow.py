"""PocketFlow's nodes: the flow, not the project, calls their methods.

A node class (deriving from ``pocketflow.Node``, ``BatchNode``, ``AsyncNode``…) has ``prep(shared)``,
``exec(prep_res)`` and ``post(shared, prep_res, exec_res)``; running the flow, the framework hands
what ``prep`` returns to ``exec``, what ``exec`` returns to ``post``, and a later node reads in its
``prep`` (or ``post``) what an earlier one wrote into the shared store (``shared["sql"] = exec_res``).
No call of the project connects them, so the output's flow would stop at ``exec``'s return. These are
the hops, within one module (a cookbook app's ``nodes.py``); the async methods alike.
"""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from escalated.contracts.scan.index import ModuleIndex, Scope, dotted_name
from escalated.contracts.scan.syntax import literal

_FRAMEWORK = "pocketflow"
_NODE_BASES = frozenset({
    "BaseNode", "Node", "BatchNode", "AsyncNode", "AsyncBatchNode", "AsyncParallelBatchNode",
    "Flow", "BatchFlow", "AsyncFlow", "AsyncBatchFlow", "AsyncParallelBatchFlow",
})  # fmt: skip
PREP = ("prep", "prep_async")
EXEC = ("exec", "exec_async")
POST = ("post", "post_async")
_MAX_BASES = 4


class NodeClasses:
    """The module's node classes, their effective methods (own, or a module base's), once per module."""

    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.classes = [name for name in index.class_nodes if self._is_node(name, depth=0)]

    def _bases(self, name: str) -> Iterator[str]:
        for arg in self.index.class_bases.get(name, ()):
            written = dotted_name(arg.value)
            qualified = written if written in self.index.class_nodes else self.index.qualified(arg.value)
            if qualified is not None:
                yield qualified

    def _is_node(self, name: str, *, depth: int) -> bool:
        if depth > _MAX_BASES:
            return False
        for base in self._bases(name):
            module, _, last = base.rpartition(".")
            if module.partition(".")[0] == _FRAMEWORK and last in _NODE_BASES:
                return True
            if base in self.index.class_nodes and base != name and self._is_node(base, depth=depth + 1):
                return True
        return False

    def method(self, name: str, methods: tuple[str, ...], *, depth: int = 0) -> Scope | None:
        """``name``'s own method of one of ``methods``' names, else its nearest module base's."""
        for method in methods:
            scope = self.index.scopes.get(f"{name}.{method}")
            if scope is not None:
                return scope
        if depth >= _MAX_BASES:
            return None
        for base in self._bases(name):
            if base in self.index.class_nodes and base != name:
                found = self.method(base, methods, depth=depth + 1)
                if found is not None:
                    return found
        return None

    def handed_to(self, scope: Scope) -> Iterator[tuple[Scope, str]]:
        """Where the framework hands what method ``scope`` returns: ``prep``'s to ``exec``'s first
        parameter, ``exec``'s to ``post``'s third, for every node class whose method ``scope`` is."""
        name = scope.qualname.rpartition(".")[2]
        if name in PREP:
            then, position = EXEC, 0
        elif name in EXEC:
            then, position = POST, 2
        else:
            return
        seen: set[str] = set()
        for cls in self.classes:
            if self.method(cls, PREP if name in PREP else EXEC) is not scope:
                continue
            receiver = self.method(cls, then)
            param = _positional(receiver, position) if receiver is not None else None
            if receiver is not None and param is not None and receiver.qualname not in seen:
                seen.add(receiver.qualname)
                yield receiver, param

    def store_key(self, scope: Scope, target: cst.BaseExpression) -> str | None:
        """``shared["key"]`` written in a node's ``prep`` or ``post``, ``shared`` being its store parameter."""
        name = scope.qualname.rpartition(".")[2]
        if name not in PREP + POST or scope.class_name not in self.classes or not isinstance(target, cst.Subscript):
            return None
        store = _positional(scope, 0)
        if store is None or not (isinstance(target.value, cst.Name) and target.value.value == store) or len(target.slice) != 1:
            return None
        index = target.slice[0].slice
        return literal(index.value) if isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) else None

    def store_reads(self, key: str) -> Iterator[tuple[cst.BaseExpression, Scope]]:
        """``shared["key"]`` and ``shared.get("key")`` read in a node class's ``prep`` or ``post``."""
        seen: set[str] = set()
        for cls in self.classes:
            for methods in (PREP, POST):
                scope = self.method(cls, methods)
                if scope is None or scope.qualname in seen or not isinstance(scope.node, cst.FunctionDef):
                    continue
                seen.add(scope.qualname)
                store = _positional(scope, 0)
                if store is not None:
                    yield from ((read, scope) for read in _reads(self.index, scope.node, store, key))


def _tested(index: ModuleIndex, node: cst.CSTNode) -> bool:
    parent = index.parents.get(id(node))
    if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
        node, parent = parent, index.parents.get(id(parent))
    return isinstance(parent, cst.If | cst.While) and parent.test is node


def _positional(scope: Scope, position: int) -> str | None:
    """The name of the method's parameter at ``position`` after ``self``."""
    if not isinstance(scope.node, cst.FunctionDef):
        return None
    params = [p.name.value for p in (*scope.node.params.posonly_params, *scope.node.params.params)]
    if params and params[0] in {"self", "cls"}:
        params = params[1:]
    return params[position] if position < len(params) else None


def _reads(index: ModuleIndex, function: cst.FunctionDef, store: str, key: str) -> Iterator[cst.BaseExpression]:
    """The reads of ``store[key]``; not one that is a test by itself (``if shared.get("history"):``
    asks whether the store holds anything yet, of the node's own bookkeeping)."""
    for node in (n for n in index.walk(function.body, skip_defs=True) if not _tested(index, n)):
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value == store and len(node.slice) == 1:
            index_ = node.slice[0].slice
            parent = index.parents.get(id(node))
            written = isinstance(parent, cst.AssignTarget) and parent.target is node
            if not written and isinstance(index_, cst.Index) and isinstance(index_.value, cst.SimpleString) and literal(index_.value) == key:
                yield node
        elif (
            isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get"
            and isinstance(node.func.value, cst.Name) and node.func.value.value == store and node.args
            and isinstance(node.args[0].value, cst.SimpleString) and literal(node.args[0].value) == key
        ):  # fmt: skip
            yield node
