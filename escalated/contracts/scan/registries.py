"""Tools looked up by name in a registry: the model's answer picks which one runs.

``TOOLS[name](**args)``, ``tools.get(name)(…)``, ``fn = registry[name]; fn(…)``,
``tool = tools[name]; tool.execute(args)``, ``getattr(self, f"do_{action}")(…)``:
when the answer reaches the name or the arguments of such a call, the run reaches
every tool the registry can hold, so it counts as the worst of them.

What the registry holds is what the code puts in it: the dict, list or tuple bound
to the name (in the module, the function or the class: ``self.tool_map = {…}``),
entries added by ``update``/``append``/``extend``/``setdefault``/``insert``/``add``
or ``registry[key] = fn``, and the functions a registering decorator adds
(``@tool`` or ``@register("shell")`` whose body does ``TOOLS[key] = fn`` or
``TOOLS.append(fn)``). ``getattr(obj, key)`` on ``self`` (or an instance of a
class of the module) reaches the class's methods, those named with the key's
literal prefix when it has one (``f"handle_{kind}"``). A look-up whose registry
holds nothing the module shows changes nothing.
"""

from __future__ import annotations


import attrs
import libcst as cst

from escalated.contracts.scan.index import ModuleIndex, Scope, target_key
from escalated.contracts.scan.syntax import annotated_class, literal, short_name, string_text
from escalated.contracts.scan.tools import ToolRef, ToolResolver

# Methods that run a tool object the look-up found (``tool.execute(args)``); any other method
# (``lines[i].strip()``) only reads what it found.
RUN_METHODS = frozenset({
    "execute", "aexecute", "_execute", "run", "arun", "_run", "invoke", "ainvoke", "call", "acall", "__call__",
    "forward", "apply", "handle", "perform", "dispatch",
})  # fmt: skip
# Methods that add entries to a dict, list or set, and the argument that holds them.
_ADDERS = {"update": 0, "append": 0, "extend": 0, "add": 0, "setdefault": 1, "insert": 1}
_MAX_MEMBERS = 200  # a registry bigger than this is read up to here


@attrs.frozen
class Lookup:
    """A value looked up by a key computed at run time: in ``container``, or on ``owner`` (getattr)."""

    container: cst.BaseExpression | None
    owner: cst.BaseExpression | None = None
    prefix: str = ""
    key: cst.BaseExpression | None = attrs.field(default=None, eq=False)  # what it is looked up by


def lookup_in(expr: cst.BaseExpression) -> Lookup | None:
    """``C[k]``, ``C.get(k[, d])`` or ``getattr(o, k[, d])`` with a key that is not a literal."""
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        key = expr.slice[0].slice.value
        return None if _constant(key) else Lookup(expr.value, key=key)
    if not isinstance(expr, cst.Call) or not expr.args:
        return None
    func = expr.func
    if isinstance(func, cst.Attribute) and func.attr.value == "get" and len(expr.args) <= 2 and expr.args[0].keyword is None:
        return None if _constant(expr.args[0].value) else Lookup(func.value, key=expr.args[0].value)
    if isinstance(func, cst.Name) and func.value == "getattr" and len(expr.args) in {2, 3}:
        key = expr.args[1].value
        if _constant(key):
            return None
        prefix = string_text(key) if isinstance(key, cst.FormattedString) and key.parts and isinstance(key.parts[0], cst.FormattedStringText) else ""
        return Lookup(None, owner=expr.args[0].value, prefix=prefix, key=key)
    return None


def _constant(node: cst.BaseExpression) -> bool:
    return literal(node) is not None or isinstance(node, cst.Integer | cst.ConcatenatedString)


class Registries:
    """The module's registries, asked for the tools a look-up in one can run."""

    def __init__(self, index: ModuleIndex, tools: ToolResolver) -> None:
        self.index = index
        self.tools = tools
        self._registering: dict[str, set[str]] | None = None  # container key -> decorators adding to it
        self._stored_at: list[tuple[cst.Subscript, Scope]] | None = None  # registry[key] = value, once read

    def dispatched(self, call: cst.Call, scope: Scope) -> Lookup | None:
        """The look-up ``call`` calls what it found in: the called thing itself (``TOOLS[name](…)``), a
        name bound to it (``fn = TOOLS[name]; fn(…)``), or a method of either (``tool.execute(args)``)."""
        func = call.func
        candidates: list[cst.BaseExpression] = [func]
        if isinstance(func, cst.Attribute) and func.attr.value in RUN_METHODS:
            candidates.append(func.value)
        for candidate in candidates:
            value: cst.BaseExpression | None = candidate
            if isinstance(candidate, cst.Name):
                value = self.tools.value_of(candidate, scope)
            elif isinstance(candidate, cst.Await):
                value = candidate.expression
            if isinstance(value, cst.IfExp):
                # getattr(self, name) if name in tools else None: the look-up, when the name is known
                value = value.body if lookup_in(value.body) is not None else value.orelse
            if value is None:
                continue
            found = lookup_in(value) or self._getter(value, scope)
            if found is not None:
                return found
        return None

    def _getter(self, value: cst.BaseExpression, scope: Scope) -> Lookup | None:
        """``self.get_tool(name)`` (awaited or not), a function or method of the module whose body returns
        a look-up keyed by one of its parameters (``return self._tools.get(name)``): that look-up."""
        if isinstance(value, cst.Await):
            value = value.expression
        if not (isinstance(value, cst.Call) and value.args and not _constant(value.args[0].value)):
            return None
        func = value.func
        if isinstance(func, cst.Attribute) and not (isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"}):
            return None
        if not isinstance(func, cst.Name | cst.Attribute):
            return None
        target = self.tools.function(short_name(func), scope)
        if target is None or not isinstance(target.node, cst.FunctionDef):
            return None
        if target.class_name != (scope.class_name if isinstance(func, cst.Attribute) else None):
            return None  # self.get_tool(…) is the class's own method; get_tool(…) a function of the module
        params = set(target.params)
        for node in self.index.walk(target.node, skip_defs=True):
            if isinstance(node, cst.Return) and node.value is not None:
                found = lookup_in(node.value)
                if found is not None and found.container is not None and isinstance(found.key, cst.Name) and found.key.value in params:
                    return found
        return None

    def members(self, lookup: Lookup, scope: Scope) -> tuple[list[ToolRef], list[cst.BaseExpression], Scope, set[str]]:
        """What the registry holds: tools to classify, entry expressions for ``ToolResolver.resolve``, and
        the classes the objects handed in to it are annotated with (``register(self, tool: Tool)``; "" for
        an object handed in without one)."""
        if lookup.container is None:
            return self._methods(lookup, scope), [], scope, set()
        key = target_key(lookup.container)
        if key is None:
            return [], [], scope, set()
        handed: set[str] = set()
        binder = self._binder(key, scope)
        entries: list[cst.BaseExpression] = []
        bound = self.tools.value_of(lookup.container, scope) if binder is not None else None
        if isinstance(bound, cst.DictComp | cst.ListComp | cst.SetComp | cst.GeneratorExp):
            bound = bound.for_in.iter  # {tool.name: tool for tool in TOOLS}: what TOOLS holds
        if isinstance(bound, cst.Dict | cst.List | cst.Tuple | cst.Set | cst.Name) or (
            isinstance(bound, cst.Attribute) and target_key(bound) is not None
        ):
            entries.append(bound)
        elif bound is None and isinstance(lookup.container, cst.Name) and lookup.container.value in self.index.imports:
            entries.append(lookup.container)  # from .config import TOOLS: the list is classified where it is written
        owners = self._owners(key, scope, binder)
        for call, where in self.index.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value in _ADDERS and target_key(func.value) == key):
                continue
            if not self._same(key, where, owners):
                continue
            position = _ADDERS[func.attr.value]
            if len(call.args) > position:
                value = call.args[position].value
                if _handed_in(value, where):
                    handed.add(_annotated(value, where, self.index))
                    continue
                entries.append(value if func.attr.value in {"update", "extend"} else cst.List([cst.Element(value)]))
        for node, where in self._stores():
            if target_key(node.value) == key and self._same(key, where, owners):
                # register(self, tool): self._tools[tool.name] = tool holds whatever is handed in, not what
                # the name is bound to where the registry is read
                stored = []
                for value in self._stored(node):
                    if _handed_in(value, where):
                        handed.add(_annotated(value, where, self.index))
                    else:
                        stored.append(value)
                if stored:
                    entries.append(cst.List([cst.Element(value) for value in stored]))
        refs = self._decorated(key) if not key.startswith("self.") else []
        return refs, entries[:_MAX_MEMBERS], binder or scope, handed

    def _binder(self, key: str, scope: Scope) -> Scope | None:
        if key.startswith("self."):
            return scope if scope.class_name is not None else None
        current: Scope | None = scope
        while current is not None and (current.qualname, key) not in self.index.values:
            current = current.parent
        return current if current is not None else self.index.module_scope

    def _owners(self, key: str, scope: Scope, binder: Scope | None) -> set[str]:
        """Where entries may be added: for ``self.x`` the class and its subclasses in the module."""
        if not key.startswith("self.") or scope.class_name is None:
            return {binder.qualname if binder is not None else scope.qualname}
        owners = {scope.class_name}
        grew = True
        while grew:
            grew = False
            for name, bases in self.index.class_bases.items():
                if name not in owners and any(_base_name(base.value) in owners for base in bases):
                    owners.add(name)
                    grew = True
        return owners

    @staticmethod
    def _same(key: str, where: Scope, owners: set[str]) -> bool:
        if key.startswith("self."):
            return where.class_name in owners
        current: Scope | None = where
        while current is not None:
            if current.qualname in owners:
                return True
            current = current.parent
        return False

    def _stores(self) -> list[tuple[cst.Subscript, Scope]]:
        """``registry[key] = value`` anywhere in the module, with the scope it is written in. Read once a
        module: every registry look-up the output reaches asks (each walked the whole module, swarms'
        5,500-line agent.py a few times a call)."""
        if self._stored_at is None:
            self._stored_at = [
                (target.target, scope)
                for scope in self.index.scopes.values()
                for node in self.index.walk(scope.node, skip_defs=True) if isinstance(node, cst.Assign)
                for target in node.targets if isinstance(target.target, cst.Subscript)
            ]  # fmt: skip
        return self._stored_at

    def _stored(self, target: cst.Subscript) -> list[cst.BaseExpression]:
        parent = self.index.parents.get(id(target))
        while parent is not None and not isinstance(parent, cst.Assign):
            parent = self.index.parents.get(id(parent))
        return [parent.value] if isinstance(parent, cst.Assign) else []

    def _decorated(self, key: str) -> list[ToolRef]:
        """Functions a decorator of the module registers in the module-level ``key``."""
        registering = self._registering_decorators().get(key, set())
        if not registering:
            return []
        out: list[ToolRef] = []
        for qualname, decorators in self.index.decorators.items():
            scope = self.index.scopes.get(qualname)
            if scope is None or not isinstance(scope.node, cst.FunctionDef):
                continue
            for decorator in decorators:
                used = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
                if isinstance(used, cst.Name) and used.value in registering:
                    out.append(ToolRef(scope.node.name.value, scope.node, 0))
                    break
        return out

    def _registering_decorators(self) -> dict[str, set[str]]:
        """Module functions that store a parameter (theirs or a nested function's) in a module-level
        name: ``def tool(fn): TOOLS[fn.__name__] = fn; return fn``, ``def register(name): def add(fn): …``."""
        if self._registering is not None:
            return self._registering
        found: dict[str, set[str]] = {}
        for name, scopes in self.index.functions_by_name.items():
            for scope in scopes:
                if scope.parent is not self.index.module_scope or scope.class_name is not None:
                    continue
                params = {p for s in self._nested(scope) for p in s.params}
                for node in self.index.walk(scope.node):
                    key = _stores_param(node, params)
                    if key is not None and (self.index.module_scope.qualname, key) in self.index.values:
                        found.setdefault(key, set()).add(name)
        self._registering = found
        return found

    def _nested(self, scope: Scope) -> list[Scope]:
        return [s for s in self.index.scopes.values() if s is scope or _inside(s, scope)]

    def _methods(self, lookup: Lookup, scope: Scope) -> list[ToolRef]:
        owner = lookup.owner
        class_name: str | None = None
        if isinstance(owner, cst.Name) and owner.value in {"self", "cls"}:
            class_name = scope.class_name
        elif isinstance(owner, cst.Name):
            bound = self.tools.value_of(owner, scope)
            if isinstance(bound, cst.Call) and isinstance(bound.func, cst.Name) and bound.func.value in self.index.class_nodes:
                class_name = bound.func.value
        if class_name is None:
            return []
        out = []
        for scopes in self.index.functions_by_name.values():
            for method in scopes:
                name = method.qualname.rpartition(".")[2]
                private = "__" if lookup.prefix.startswith("_") else "_"
                if method.class_name != class_name or not name.startswith(lookup.prefix) or name.startswith(private):
                    continue
                if method.node is not scope.node and isinstance(method.node, cst.FunctionDef):
                    out.append(ToolRef(name, method.node, 0))
        return out


def _handed_in(value: cst.BaseExpression, where: Scope) -> bool:
    """A parameter of the function adding it to the registry: any object its callers hand in."""
    return isinstance(value, cst.Name) and value.value in where.params and value.value not in {"self", "cls"}


def _annotated(value: cst.BaseExpression, where: Scope, index: ModuleIndex) -> str:
    """The class parameter ``value`` is annotated with (``tool: Tool[Any]``, ``tool: "tools.Tool"``: ``Tool``), or ""."""
    param = where.params.get(value.value) if isinstance(value, cst.Name) else None
    annotation = param.annotation.annotation if param is not None and param.annotation is not None else None
    if isinstance(annotation, cst.SimpleString):  # "tools.Tool": read by its text's last dotted word
        return (literal(annotation) or "").rpartition(".")[2]
    named = annotated_class(annotation, index.qualified, generic=True) if annotation is not None else None
    return _base_name(named) if named is not None else ""


def _inside(inner: Scope, outer: Scope) -> bool:
    current = inner.parent
    while current is not None:
        if current is outer:
            return True
        current = current.parent
    return False


def _stores_param(node: cst.CSTNode, params: set[str]) -> str | None:
    """``KEY[...] = p`` or ``KEY.append(p)`` (and the other adders) with ``p`` one of ``params``: ``KEY``."""
    if isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value in params:
        for target in node.targets:
            if isinstance(target.target, cst.Subscript) and isinstance(target.target.value, cst.Name):
                return target.target.value.value
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
        position = _ADDERS.get(node.func.attr.value)
        if position is not None and len(node.args) > position:
            value = node.args[position].value
            if isinstance(value, cst.Name) and value.value in params:
                return node.func.value.value
            if isinstance(value, cst.Dict) and any(
                isinstance(e, cst.DictElement) and isinstance(e.value, cst.Name) and e.value.value in params for e in value.elements
            ):
                return node.func.value.value
    return None


def _base_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    if isinstance(node, cst.Subscript):
        return _base_name(node.value)
    return ""
