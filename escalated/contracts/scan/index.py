"""One pass over a parsed module: imports, scopes, assignments, calls.

Discovery and the decision-surface analysis both work from this index, so
the syntax tree is walked once per file.
"""

from __future__ import annotations

import ast
import dataclasses
import threading
from array import array
from collections.abc import Callable, Iterator

import libcst as cst
from libcst._nodes.base import CSTNode

MODULE_SCOPE = "<module>"

_PARSING = threading.Lock()


def parse_module(source: str) -> cst.Module:
    """``cst.parse_module`` without libcst's check of every node it builds.

    libcst validates each node as it is constructed (``CSTNode.__post_init__``: a name
    is an identifier, whitespace is whitespace), a fifth of its parse of a real file;
    what its own parser builds from valid source is valid by construction (libcst says
    as much beside that hook). The hook is switched off only while this parse runs,
    one parse at a time, so nodes built anywhere else are still checked.
    """
    with _PARSING:
        checked = CSTNode.__post_init__
        CSTNode.__post_init__ = _unchecked  # type: ignore[method-assign]
        try:
            return cst.parse_module(source)
        finally:
            CSTNode.__post_init__ = checked  # type: ignore[method-assign]


def _unchecked(self: CSTNode) -> None:
    return None


class Scope:
    """A function (or the module): where names are bound."""

    def __init__(self, qualname: str, *, node: cst.CSTNode, parent: Scope | None, class_name: str | None) -> None:
        self.qualname = qualname
        self.node = node
        self.parent = parent
        # The class a method belongs to, so ``self.x`` resolves to what __init__ set.
        self.class_name = class_name
        self.params: dict[str, cst.Param] = {}


class WorkMeter:
    """Analysis steps taken: syntax nodes visited, data-flow steps, module tables scanned.

    Counted, not timed: a limit in steps cuts a file's analysis at the same place on
    a fast machine and on a loaded one, so a scan is reproducible. Shared by the
    modules of one scan, so following the output into another module counts too.
    """

    def __init__(self) -> None:
        self.steps = 0


def _dots(name: str) -> Iterator[int]:
    """Where each ``.`` of a dotted name is."""
    at = name.find(".")
    while at >= 0:
        yield at
        at = name.find(".", at + 1)


# ``from configs.agents import *`` is kept as the import of the module under the local name
# ``*configs.agents`` (never a name the code writes): its target makes the module one other
# modules read, and once the tables are known each name it exports is imported by name.
STAR = "*"


class Imports:
    """What a module imports: local name -> dotted target, and the relative ones
    (``from .llm import client``) until ``crossref.absolutise`` knows the package."""

    def __init__(self) -> None:
        self.imports: dict[str, str] = {}
        self.relative_imports: dict[str, tuple[int, str]] = {}
        # Every package the imports come from (each dotted prefix of each target), for ``imports_from``,
        # and the table they were read from (which dict, how many names): asked of every call the
        # analysis classifies, the imports change only by names added (``absolutise``, star imports) or
        # by a new table, once ``ModuleIndex.build`` is done.
        self._packages: frozenset[str] = frozenset()
        self._packages_of: tuple[dict[str, str] | None, int] = (None, -1)
        # The script folder its own modules' imports were named from (``crossref.absolutise``), once.
        self.script_folder: str | None = None

    def forget_packages(self) -> None:
        """A target was renamed in place (``crossref.absolutise``): read the packages again."""
        self._packages_of = (None, -1)

    def imports_from(self, package: str) -> bool:
        """Whether anything the module imports comes from ``package`` (``ollama``, ``playwright.async_api``)."""
        table = self.imports
        read, size = self._packages_of
        if read is not table or size != len(table):
            self._packages = frozenset(
                target[:end] for target in table.values() for end in (*_dots(target), len(target))
            )  # fmt: skip
            self._packages_of = (table, len(table))
        return package in self._packages

    @classmethod
    def of(cls, tree: ast.Module) -> Imports:
        """The same table ``ModuleIndex.build`` makes, read off Python's own tree (ten times
        cheaper to parse than libcst's): the statements in source order, depth first, as
        the index visits them, so a name imported twice ends as it does there."""
        found = cls()
        stack: list[ast.AST] = list(reversed(tree.body))
        while stack:
            node = stack.pop()
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname is not None:
                        found.imports[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        found.imports.setdefault(root, root)
            elif isinstance(node, ast.ImportFrom):
                if any(alias.name == "*" for alias in node.names):
                    if node.module:  # from configs.agents import *: named after the module, see STAR
                        if node.level:
                            found.relative_imports[STAR + node.module] = (node.level, node.module)
                        else:
                            found.imports[STAR + node.module] = node.module
                    continue
                module = node.module or ""
                for alias in node.names:
                    local = alias.asname or alias.name
                    if node.level:
                        found.relative_imports[local] = (node.level, f"{module}.{alias.name}" if module else alias.name)
                    else:
                        found.imports[local] = f"{module}.{alias.name}"
            else:
                stack.extend(reversed(_statements_in(node)))
        return found


@dataclasses.dataclass(frozen=True, slots=True)
class Signature:
    """A function's place and parameters, as ``ModuleIndex`` has them in its scope."""

    class_name: str | None  # the class it is a method of, or whose method it is nested in
    positional: tuple[str, ...]  # positional-only and ordinary parameters, in order
    names: frozenset[str]  # those and the keyword-only ones (``Scope.params``)

    @classmethod
    def of(cls, scope: Scope) -> Signature:
        assert isinstance(scope.node, cst.FunctionDef)
        params = scope.node.params
        return cls(scope.class_name, tuple(p.name.value for p in (*params.posonly_params, *params.params)), frozenset(scope.params))


def functions_of(tree: ast.Module) -> dict[str, Signature]:
    """Qualified name (``run``, ``Runner.run``, ``run.inner``) -> signature for every function of the
    module, as ``ModuleIndex.build`` makes its scopes, read off Python's own tree: a name defined
    twice ends as the later definition, a method's class is the innermost class directly around it
    (a function nested in a method takes the method's)."""
    found: dict[str, Signature] = {}

    def visit(node: ast.AST, prefix: tuple[str, ...], classes: tuple[str, ...], class_name: str | None) -> None:
        for child in _statements_in(node):
            if isinstance(child, ast.ClassDef):
                qual = (*prefix, child.name)
                visit(child, qual, (*classes, ".".join(qual)), class_name)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qual = (*prefix, child.name)
                owner = classes[-1] if classes and classes[-1] == ".".join(prefix) else class_name
                args = child.args
                positional = tuple(a.arg for a in (*args.posonlyargs, *args.args))
                found[".".join(qual)] = Signature(owner, positional, frozenset((*positional, *(a.arg for a in args.kwonlyargs))))
                visit(child, qual, classes, owner)
            else:
                visit(child, prefix, classes, class_name)

    visit(tree, (), (), None)
    return found


def _statements_in(node: ast.AST) -> list[ast.AST]:
    """The statements (and except and case clauses) directly inside ``node``, in source order."""
    out: list[ast.AST] = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.stmt | ast.excepthandler | ast.match_case))
    return out


class ModuleIndex(Imports):
    def __init__(self) -> None:
        super().__init__()
        self.meter = WorkMeter()
        self.scopes: dict[str, Scope] = {}
        # (scope, target, value) in source order; target is a Name or self.attr string.
        self.assignments: list[tuple[Scope, str, cst.BaseExpression]] = []
        # ``(agent, wallet), config = build()``: (scope, target, the value unpacked, the target's place in it).
        self.unpacked: list[tuple[Scope, str, cst.BaseExpression, tuple[int, ...]]] = []
        self.calls: list[tuple[cst.Call, Scope]] = []
        self.awaited: set[int] = set()
        self.functions_by_name: dict[str, list[Scope]] = {}
        self.class_attrs: dict[tuple[str, str], cst.BaseExpression] = {}
        self.dict_literals: list[tuple[Scope, cst.Dict]] = []
        self.values: dict[tuple[str, str], cst.BaseExpression] = {}
        # What ``x += [...]`` / ``self.x += [...]`` add, keyed like ``values``.
        self.added: dict[tuple[str, str], list[cst.BaseExpression]] = {}
        self.decorators: dict[str, tuple[cst.Decorator, ...]] = {}
        self.class_bases: dict[str, tuple[cst.Arg, ...]] = {}
        self.class_nodes: dict[str, cst.ClassDef] = {}
        self._runs: dict[str, tuple[int, str] | None] = {}  # runs_callback's answers, by function
        # Module-level names a langgraph.json serves (the LangGraph server runs them).
        self.served: frozenset[str] = frozenset()
        module = cst.Module(body=())
        self._scope = Scope(MODULE_SCOPE, node=module, parent=None, class_name=None)
        self.scopes[MODULE_SCOPE] = self._scope
        self._classes: list[str] = []
        self._prefix: list[str] = []
        # Parent links and a pre-order list with subtree spans: libcst's
        # ``children`` re-visits a node every time, far too slow to walk with.
        # Kept for every module other modules import, so kept small: a node's id is
        # one int shared by both tables, and where its subtree ends is a machine word.
        self.parents: dict[int, cst.CSTNode] = {}
        self.order: list[cst.CSTNode] = []
        self._start: dict[int, int] = {}  # id(node) -> its place in ``order``
        self._end = array("l")  # by a node's place: where its subtree ends in ``order``
        # The module's text (for spans on demand, positions.py) and those spans once asked for:
        # kept here so every round of analysis of the module shares them.
        self.source: str | None = None
        self.outline: array[int] | None = None  # positions.outline of Python's tree of the module, when the scan kept it
        self.positions: object | None = None

    def build(self, module: cst.Module) -> ModuleIndex:
        """Walk ``module`` once. A plain walk over the node fields: libcst's
        visitor machinery rebuilds every node and costs several times more."""
        self.module_scope.node = module
        order, starts, ends, parents = self.order, self._start, self._end, self.parents
        hooks: dict[type, tuple[Callable[[CSTNode], None] | None, Callable[[CSTNode], None] | None]] = {}
        stack: list[tuple[cst.CSTNode, int, int]] = [(module, id(module), -1)]  # start >= 0: leaving the node
        pop, push = stack.pop, stack.append
        while stack:
            node, key, start = pop()
            kind = type(node)
            hook = hooks.get(kind)
            if hook is None:
                name = kind.__name__
                hook = hooks[kind] = (getattr(self, f"visit_{name}", None), getattr(self, f"leave_{name}", None))
            if start >= 0:
                if hook[1] is not None:
                    hook[1](node)
                ends[start] = len(order)
                continue
            start = len(order)
            starts[key] = start
            order.append(node)
            ends.append(-1)
            if hook[0] is not None:
                hook[0](node)
            push((node, key, start))
            for child in reversed(syntax_children(node)):
                child_key = id(child)
                parents[child_key] = node
                push((child, child_key, -1))
        return self

    def order_of(self, node: cst.CSTNode) -> int:
        """Where ``node`` comes in a pre-order walk: source order."""
        return self._start[id(node)]

    def subtree(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """``node`` and everything below it, in source order."""
        start = self._start.get(id(node))
        if start is None:
            self.meter.steps += 1
            return [node]
        end = self._end[start]
        self.meter.steps += end - start
        return self.order[start:end]

    def walk(self, node: cst.CSTNode | None, *, skip_defs: bool = False) -> Iterator[cst.CSTNode]:
        """``subtree``, or without the functions and classes nested in ``node`` (``skip_defs``)."""
        if node is None:
            return
        if not skip_defs:
            yield from self.subtree(node)
            return
        nodes = self.subtree(node)
        i = 0
        while i < len(nodes):
            current = nodes[i]
            yield current
            if current is not node and (type(current) is cst.FunctionDef or type(current) is cst.ClassDef):
                i += len(self.subtree(current))
            else:
                i += 1

    @property
    def module_scope(self) -> Scope:
        return self.scopes[MODULE_SCOPE]

    def runs_callback(self, scope: Scope) -> tuple[int, str] | None:
        """``async def retry(f, model_type=…): … return await f(model)``: the function hands back what one
        of its parameters, called, returns. That parameter's position (``self`` not counted) and name."""
        if scope.qualname not in self._runs:
            self._runs[scope.qualname] = self._runs_callback(scope)
        return self._runs[scope.qualname]

    def _runs_callback(self, scope: Scope) -> tuple[int, str] | None:
        node = scope.node
        if not isinstance(node, cst.FunctionDef):
            return None
        positional = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
        if positional and positional[0] in {"self", "cls"} and scope.class_name is not None:
            positional = positional[1:]
        kept: list[tuple[str, str]] = []  # response = await call(**kw): (the name, the parameter called)
        returned: set[str] = set()
        for found in self.walk(node.body, skip_defs=True):
            value = found.value if isinstance(found, cst.Return) else None
            if isinstance(value, cst.Name):
                returned.add(value.value)
            elif isinstance(found, cst.Assign) and len(found.targets) == 1 and isinstance(found.targets[0].target, cst.Name):
                answer = found.value.expression if isinstance(found.value, cst.Await) else found.value
                called = answer.func.value if isinstance(answer, cst.Call) and isinstance(answer.func, cst.Name) else None
                if called is not None and called in scope.params and called not in {"self", "cls"}:  # cls(...) builds
                    kept.append((found.targets[0].target.value, called))
            if isinstance(value, cst.Await):
                value = value.expression
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in scope.params:
                name = value.func.value
                return (positional.index(name) if name in positional else -1), name
            ran = _deferred_parameter(value, scope) if isinstance(value, cst.Call) else None
            if ran is not None:
                return (positional.index(ran) if ran in positional else -1), ran
        # A retry loop keeping the callback's answer under a name and returning it (``return response``).
        for target, name in kept:
            if target in returned:
                return (positional.index(name) if name in positional else -1), name
        return None

    def binds(self, name: str) -> bool:
        """Whether the module binds ``name`` at top level (an assignment, a def, a class)."""
        return (MODULE_SCOPE, name) in self.values or name in self.class_nodes or any(
            s.parent is self.module_scope and s.class_name is None for s in self.functions_by_name.get(name, ())
        )

    def qualified(self, node: cst.BaseExpression) -> str | None:
        """``oa.chat.completions`` → ``openai.chat.completions`` through this module's imports."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    # -- imports ---------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            dotted = _dotted(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.imports[alias.asname.name.value] = dotted
            else:
                # "import google.genai" binds "google"; lookups walk the attributes.
                root = dotted.split(".")[0]
                self.imports.setdefault(root, root)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if isinstance(node.names, cst.ImportStar):
            if node.module is not None:
                star = _dotted(node.module)
                if node.relative:
                    self.relative_imports[STAR + star] = (len(node.relative), star)
                else:
                    self.imports[STAR + star] = star
            return
        module = _dotted(node.module) if node.module is not None else ""
        for alias in node.names:
            name = _dotted(alias.name)
            local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
            if node.relative:
                # "from .llm import client": made absolute once the file's package is known.
                self.relative_imports[local] = (len(node.relative), f"{module}.{name}" if module else name)
            else:
                self.imports[local] = f"{module}.{name}"

    # -- scopes ----------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._prefix.append(node.name.value)
        qual = ".".join(self._prefix)
        self._classes.append(qual)
        self.class_bases[qual] = tuple(node.bases)
        self.class_nodes[qual] = node

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._prefix.pop()
        self._classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._prefix.append(node.name.value)
        qual = ".".join(self._prefix)
        in_class = self._classes and self._classes[-1] == ".".join(self._prefix[:-1])
        class_name = self._classes[-1] if in_class else self._scope.class_name
        scope = Scope(qual, node=node, parent=self._scope, class_name=class_name)
        for param in (*node.params.posonly_params, *node.params.params, *node.params.kwonly_params):
            scope.params[param.name.value] = param
        self.scopes[qual] = scope
        self.functions_by_name.setdefault(node.name.value, []).append(scope)
        self.decorators[qual] = tuple(node.decorators)
        self._scope = scope

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self._prefix.pop()
        assert self._scope.parent is not None
        self._scope = self._scope.parent

    # -- bindings --------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Tuple | cst.List):
                self._unpack(target.target, node.value, ())
            else:
                self._bind(target.target, node.value)

    def _unpack(self, target: cst.Tuple | cst.List, value: cst.BaseExpression, path: tuple[int, ...]) -> None:
        for position, element in enumerate(target.elements):
            if isinstance(element, cst.StarredElement):
                return  # the places after a starred target depend on the value's length
            if isinstance(element.value, cst.Tuple | cst.List):
                self._unpack(element.value, value, (*path, position))
                continue
            key = target_key(element.value)
            if key is not None:
                self.unpacked.append((self._scope, key, value, (*path, position)))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None and _declares_field(node.value) and isinstance(node.target, cst.Name):
            # "runner: NotebookRunner = Field(default_factory=NotebookRunner)": the value only declares the
            # field (pydantic, dataclasses, attrs); the annotation says what the attribute holds.
            self._bind(node.target, node.value)
            if self._classes and (self._classes[-1], f"self.{node.target.value}") in self.class_attrs:
                typed = cst.Annotation(annotation=node.annotation.annotation)
                self.class_attrs[(self._classes[-1], f"self.{node.target.value}")] = typed  # type: ignore[assignment]
            return
        if node.value is not None:
            self._bind(node.target, node.value)
            key = target_key(node.target)
            if key is not None and not self._in_class_body():
                # "self.service: CompletionService = self.injector.get(svc)": what the value builds is often
                # not known (an injector, a registry, a factory); the annotation says what it holds. Later
                # than the value, so a value whose kind is known still counts first.
                self.assignments.append((self._scope, key, node.annotation))  # type: ignore[arg-type]
        elif isinstance(node.target, cst.Name):
            # "client: OpenAI" in a class body or function types the name.
            self._bind(node.target, node.annotation.annotation, annotation=True)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        key = target_key(node.target) if isinstance(node.operator, cst.AddAssign) else None
        if key is not None:
            owner = self._scope.class_name if key.startswith("self.") else self._scope.qualname
            self.added.setdefault((owner or self._scope.qualname, key), []).append(node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        # "with smtplib.SMTP(host) as smtp": smtp is what the item built.
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self._bind(node.asname.name, node.item)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind(node.target, node.value)

    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression, *, annotation: bool = False) -> None:
        key = target_key(target)
        if key is None:
            return
        if annotation:
            value = cst.Annotation(annotation=value)  # type: ignore[assignment]
        if self._in_class_body() and "." not in key:
            self.class_attrs[(self._classes[-1], f"self.{key}")] = value
            if not annotation:
                self.values[(self._classes[-1], f"self.{key}")] = value
            return
        self.assignments.append((self._scope, key, value))
        if not annotation:
            owner = self._scope.class_name if key.startswith("self.") else self._scope.qualname
            self.values[(owner or self._scope.qualname, key)] = value

    def _in_class_body(self) -> bool:
        return bool(self._classes) and self._scope.qualname != self._classes[-1] and ".".join(self._prefix) == self._classes[-1]

    def visit_Dict(self, node: cst.Dict) -> None:
        self.dict_literals.append((self._scope, node))

    # -- calls -----------------------------------------------------------
    def visit_Await(self, node: cst.Await) -> None:
        if isinstance(node.expression, cst.Call):
            self.awaited.add(id(node.expression))

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, self._scope))


_SKIPPED_FIELDS = frozenset({"lpar", "rpar", "comma", "semicolon", "colon", "equal", "dot", "star", "operator",
                             "header", "footer", "leading_lines", "lines_after_decorators", "trailing_whitespace",
                             "newline", "asynchronous", "default_newline", "default_indent"})  # fmt: skip
_FIELDS: dict[type, tuple[str, ...]] = {}


def syntax_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The syntax nodes directly in ``node``, in its fields' order: libcst's ``children`` less the
    whitespace, brackets, commas and operator tokens. ``children`` rebuilds the node to list them
    (``_visit_and_replace_children``), which is far slower than reading its fields."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(node)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )  # fmt: skip
        _FIELDS[type(node)] = names
    out: list[cst.CSTNode] = []
    is_node = _IS_NODE
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        found = is_node.get(kind)
        if found is None:
            found = _is_node(kind)
        if found:
            out.append(value)
        elif isinstance(value, tuple | list):
            out.extend([v for v in value if is_node.get(type(v)) or (type(v) not in is_node and _is_node(type(v)))])
    return out


# Whether a type is a libcst node, by type (a miss remembered too: a string, None or a tuple is
# asked about in every node): ``isinstance`` and ``issubclass`` against libcst's abstract base
# class go through ``ABCMeta`` for every field of every node.
_IS_NODE: dict[type, bool] = {}


def _is_node(kind: type) -> bool:
    found = _IS_NODE[kind] = issubclass(kind, cst.CSTNode)
    return found


def _declares_field(value: cst.BaseExpression) -> bool:
    """``Field(...)``, ``field(...)``, ``PrivateAttr(...)``, ``attrs.field(...)``: a field declaration, not a value."""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    return name in {"Field", "field", "PrivateAttr", "ib", "attrib"}


def _deferred_parameter(call: cst.Call, scope: Scope) -> str | None:
    """``loop.run_in_executor(None, partial(func, *args, **kwargs))``, ``asyncio.to_thread(func, *args)``: the
    parameter whose call a helper runs in a thread and hands back (``_run_sync(requests.post, url, …)``)."""
    deferrer = (dotted_name(call.func) or "").rpartition(".")[2]
    position = {"to_thread": 0, "run_in_executor": 1}.get(deferrer)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    ran = positional[position] if position is not None and len(positional) > position else None
    if isinstance(ran, cst.Call) and (dotted_name(ran.func) or "").rpartition(".")[2] == "partial" and ran.args:
        ran = ran.args[0].value
    return ran.value if isinstance(ran, cst.Name) and ran.value in scope.params else None


def target_key(target: cst.BaseExpression) -> str | None:
    """"name" for a plain name, "self.attr" for an attribute of self/cls."""
    if isinstance(target, cst.Name):
        return target.value
    if (
        isinstance(target, cst.Attribute)
        and isinstance(target.value, cst.Name)
        and target.value.value in {"self", "cls"}
    ):
        return f"self.{target.attr.value}"
    return None


def _dotted(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def dotted_name(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a chain of names, None when any link is not a name."""
    parts: list[str] = []
    while type(node) is cst.Attribute:  # libcst's node classes are leaves: type() spares ABCMeta's isinstance
        parts.append(node.attr.value)
        node = node.value
    if type(node) is not cst.Name:
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))
