"""``ModuleIndex``'s tables read off Python's own syntax tree: the first step of moving the read-only
analysis from libcst to ``ast`` (ten times cheaper to parse; ``edit/`` stays on libcst for ``apply``).

The scopes (functions and methods, with their class and parameters), the bindings (``assignments``,
``unpacked``, ``values``, ``class_attrs``, ``added``), the decorators, the classes and their bases, and
the imports, as ``ModuleIndex.build`` makes them from libcst's tree: the same keys in the same order,
a name bound twice ending as it does there. The nodes are Python's (an annotation standing for the
value it types is an ``Annotation``). ``differences`` says where the two indexes of one module disagree;
tests/contracts/test_pyindex.py checks the corpus, ``benchmarks/index_parity.py`` a tree.

The scan reads its imports and class bases where that is all it needs of a module (taint by parameter
following a method into its class's bases, a name into a package's re-export: ``discovery._Module.lookups``);
the other tables are what the analysis will read once its look-ups are on Python's nodes (``crossref``'s
tables first), so a module is never parsed by libcst for them.
"""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
import warnings
from collections.abc import Iterator

import libcst as cst

from escalated.contracts.calls import ToolSite
from escalated.contracts.scan import apis
from escalated.contracts.scan.index import MODULE_SCOPE, STAR, Imports, ModuleIndex
from escalated.contracts.scan.tools import APPROVAL_KEYWORDS


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class Annotation:
    """An annotation where ``ModuleIndex`` keeps one for a value (``client: OpenAI``): what it names."""

    annotation: ast.expr


Value = ast.expr | Annotation
_Def = ast.FunctionDef | ast.AsyncFunctionDef


class PyScope:
    """A function (or the module): ``index.Scope`` on Python's tree."""

    def __init__(self, qualname: str, *, node: ast.AST, parent: PyScope | None, class_name: str | None) -> None:
        self.qualname = qualname
        self.node = node
        self.parent = parent
        self.class_name = class_name
        self.params: dict[str, ast.arg] = {}


class PyIndex(Imports):
    """``ModuleIndex``'s tables of scopes, bindings, classes and imports, built from ``ast``."""

    def __init__(self) -> None:
        super().__init__()
        self.scopes: dict[str, PyScope] = {}
        self.assignments: list[tuple[PyScope, str, Value]] = []
        self.unpacked: list[tuple[PyScope, str, ast.expr, tuple[int, ...]]] = []
        self.functions_by_name: dict[str, list[PyScope]] = {}
        self.class_attrs: dict[tuple[str, str], Value] = {}
        self.values: dict[tuple[str, str], ast.expr] = {}
        self.added: dict[tuple[str, str], list[ast.expr]] = {}
        self.decorators: dict[str, tuple[ast.expr, ...]] = {}
        self.class_bases: dict[str, tuple[ast.expr, ...]] = {}  # positional bases (``*bases`` as ``Starred``)
        self.class_nodes: dict[str, ast.ClassDef] = {}
        self._scope = PyScope(MODULE_SCOPE, node=ast.Module(body=[], type_ignores=[]), parent=None, class_name=None)
        self.scopes[MODULE_SCOPE] = self._scope
        self._classes: list[str] = []
        self._prefix: list[str] = []
        self.source: str | None = None  # the module's text: a string literal's tokens are read off it

    @property
    def module_scope(self) -> PyScope:
        return self.scopes[MODULE_SCOPE]

    def build(self, tree: ast.Module, source: str) -> PyIndex:
        """Walk ``tree`` (Python's of ``source``) once, in the order ``ModuleIndex.build`` walks libcst's (``index.syntax_children``)."""
        self.source = source
        self.module_scope.node = tree
        stack: list[tuple[ast.AST, bool]] = [(tree, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self._leave(node)
                continue
            self._visit(node)
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                stack.append((node, True))
            stack.extend((child, False) for child in reversed(_children(node)))
        return self

    def binds(self, name: str) -> bool:
        """``ModuleIndex.binds``: whether the module binds ``name`` at top level (an assignment, a def, a class)."""
        return (MODULE_SCOPE, name) in self.values or name in self.class_nodes or any(
            s.parent is self.module_scope and s.class_name is None for s in self.functions_by_name.get(name, ())
        )

    def qualified(self, node: ast.expr) -> str | None:
        """``ModuleIndex.qualified``: ``oa.chat.completions`` -> ``openai.chat.completions`` through the imports."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def literal(self, node: ast.expr) -> str | None:
        """``syntax.literal``: the text of a plain string literal (libcst's ``SimpleString``: one token,
        bytes read as latin-1), None for anything else (two literals written side by side too)."""
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str | bytes)) or not self._one_token(node):
            return None
        return node.value if isinstance(node.value, str) else node.value.decode("latin-1")

    def _one_token(self, node: ast.Constant) -> bool:
        segment = ast.get_source_segment(self.source or "", node)
        if segment is None:
            return False
        try:
            tokens = list(tokenize.generate_tokens(io.StringIO(segment).readline))
        except (tokenize.TokenError, SyntaxError):
            return False
        return sum(token.type == tokenize.STRING for token in tokens) == 1

    def _visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is not None:
                    self.imports[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    self.imports.setdefault(root, root)
        elif isinstance(node, ast.ImportFrom):
            self._import_from(node)
        elif isinstance(node, ast.ClassDef):
            self._prefix.append(node.name)
            qual = ".".join(self._prefix)
            self._classes.append(qual)
            self.class_bases[qual] = tuple(node.bases)
            self.class_nodes[qual] = node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self._function(node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Tuple | ast.List):
                    self._unpack(target, node.value, ())
                else:
                    self._bind(target, node.value)
        elif isinstance(node, ast.AnnAssign):
            self._ann_assign(node)
        elif isinstance(node, ast.AugAssign):
            key = target_key(node.target) if isinstance(node.op, ast.Add) else None
            if key is not None:
                owner = self._scope.class_name if key.startswith("self.") else self._scope.qualname
                self.added.setdefault((owner or self._scope.qualname, key), []).append(node.value)
        elif isinstance(node, ast.withitem):
            if isinstance(node.optional_vars, ast.Name):
                self._bind(node.optional_vars, node.context_expr)
        elif isinstance(node, ast.NamedExpr):
            self._bind(node.target, node.value)

    def _leave(self, node: ast.AST) -> None:
        self._prefix.pop()
        if isinstance(node, ast.ClassDef):
            self._classes.pop()
        else:
            assert self._scope.parent is not None
            self._scope = self._scope.parent

    def _import_from(self, node: ast.ImportFrom) -> None:
        if any(alias.name == "*" for alias in node.names):
            if node.module:
                if node.level:
                    self.relative_imports[STAR + node.module] = (node.level, node.module)
                else:
                    self.imports[STAR + node.module] = node.module
            return
        module = node.module or ""
        for alias in node.names:
            local = alias.asname or alias.name
            if node.level:
                self.relative_imports[local] = (node.level, f"{module}.{alias.name}" if module else alias.name)
            else:
                self.imports[local] = f"{module}.{alias.name}"

    def _function(self, node: _Def) -> None:
        self._prefix.append(node.name)
        qual = ".".join(self._prefix)
        in_class = self._classes and self._classes[-1] == ".".join(self._prefix[:-1])
        class_name = self._classes[-1] if in_class else self._scope.class_name
        scope = PyScope(qual, node=node, parent=self._scope, class_name=class_name)
        args = node.args
        for param in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            scope.params[param.arg] = param
        self.scopes[qual] = scope
        self.functions_by_name.setdefault(node.name, []).append(scope)
        self.decorators[qual] = tuple(node.decorator_list)
        self._scope = scope

    def _unpack(self, target: ast.Tuple | ast.List, value: ast.expr, path: tuple[int, ...]) -> None:
        for position, element in enumerate(target.elts):
            if isinstance(element, ast.Starred):
                return  # the places after a starred target depend on the value's length
            if isinstance(element, ast.Tuple | ast.List):
                self._unpack(element, value, (*path, position))
                continue
            key = target_key(element)
            if key is not None:
                self.unpacked.append((self._scope, key, value, (*path, position)))

    def _ann_assign(self, node: ast.AnnAssign) -> None:
        if node.value is not None and _declares_field(node.value) and isinstance(node.target, ast.Name):
            self._bind(node.target, node.value)
            if self._classes and (self._classes[-1], f"self.{node.target.id}") in self.class_attrs:
                self.class_attrs[(self._classes[-1], f"self.{node.target.id}")] = Annotation(node.annotation)
            return
        if node.value is not None:
            self._bind(node.target, node.value)
            key = target_key(node.target)
            if key is not None and not self._in_class_body():
                self.assignments.append((self._scope, key, Annotation(node.annotation)))
        elif isinstance(node.target, ast.Name):
            self._bind(node.target, node.annotation, annotation=True)

    def _bind(self, target: ast.expr, value: ast.expr, *, annotation: bool = False) -> None:
        key = target_key(target)
        if key is None:
            return
        bound: Value = Annotation(value) if annotation else value
        if self._in_class_body() and "." not in key:
            self.class_attrs[(self._classes[-1], f"self.{key}")] = bound
            if not annotation:
                self.values[(self._classes[-1], f"self.{key}")] = value
            return
        self.assignments.append((self._scope, key, bound))
        if not annotation:
            owner = self._scope.class_name if key.startswith("self.") else self._scope.qualname
            self.values[(owner or self._scope.qualname, key)] = value

    def _in_class_body(self) -> bool:
        return bool(self._classes) and self._scope.qualname != self._classes[-1] and ".".join(self._prefix) == self._classes[-1]


def _children(node: ast.AST) -> list[ast.AST]:
    """``node``'s children in the order libcst's fields put them, where it differs from Python's:
    a class's body before its bases, a function's parameters as libcst orders them (the ordinary
    ones, ``*args``, the keyword-only ones, ``**kwargs``, the positional-only ones last), a dict's
    keys and values in turn, a call's arguments as written, a case's guard after its body."""
    if isinstance(node, ast.ClassDef):
        return [*node.body, *node.bases, *node.keywords, *node.decorator_list]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [*_parameters(node.args), *node.body, *node.decorator_list, *([node.returns] if node.returns else [])]
    if isinstance(node, ast.Lambda):
        return [*_parameters(node.args), node.body]
    if isinstance(node, ast.Dict):
        out: list[ast.AST] = []
        for key, value in zip(node.keys, node.values, strict=True):
            out += [value] if key is None else [key, value]
        return out
    if isinstance(node, ast.Call):
        return [node.func, *arguments(node)]
    if isinstance(node, ast.match_case):
        return [node.pattern, *node.body, *([node.guard] if node.guard else [])]
    return list(ast.iter_child_nodes(node))


def _parameters(args: ast.arguments) -> Iterator[ast.AST]:
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    paired = list(zip(positional, defaults, strict=True))
    ordinary, only = paired[len(args.posonlyargs) :], paired[: len(args.posonlyargs)]
    for arg, default in ordinary:
        yield from _param(arg, default)
    if args.vararg is not None:
        yield from _param(args.vararg, None)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        yield from _param(arg, default)
    if args.kwarg is not None:
        yield from _param(args.kwarg, None)
    for arg, default in only:
        yield from _param(arg, default)


def _param(arg: ast.arg, default: ast.expr | None) -> Iterator[ast.AST]:
    if arg.annotation is not None:
        yield arg.annotation
    if default is not None:
        yield default


def target_key(target: ast.expr) -> str | None:
    """``index.target_key`` on Python's tree: "name" for a plain name, "self.attr" for an attribute of self/cls."""
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in {"self", "cls"}:
        return f"self.{target.attr}"
    return None


def dotted_name(node: ast.expr) -> str | None:
    """``index.dotted_name``: ``a.b.c`` for a chain of names, None when any link is not a name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def arguments(call: ast.Call) -> list[ast.expr | ast.keyword]:
    """A call's arguments as written (libcst's ``Call.args``): Python's tree puts the keywords apart."""
    found: list[ast.expr | ast.keyword] = [*call.args, *call.keywords]
    return sorted(found, key=lambda a: (a.lineno, a.col_offset))


def _declares_field(value: ast.expr) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in {"Field", "field", "PrivateAttr", "ib", "attrib"}


# -- crossref's tables, read off the index ------------------------------------------------------


def tool_site_exports(rel: str, index: PyIndex) -> dict[str, ToolSite]:
    """``crossref.tool_site_exports`` on Python's tree: name -> where each top-level function is (line 0),
    its tool name, the contract of its ``@guard_tool`` and whether the framework asks a human first."""
    found: dict[str, ToolSite] = {}
    for name, scopes in index.functions_by_name.items():
        for scope in scopes:
            if scope.parent is index.module_scope and scope.class_name is None:
                decorators = index.decorators.get(scope.qualname, ())
                tool_name = _tool_name(index, decorators)
                found[name] = ToolSite(tool_name or name, rel, scope.qualname, 0, _guard_id(index, decorators), _needs_approval(index, decorators))
    return found


def own_methods(index: PyIndex, qualname: str) -> bool:
    """``crossref._own_methods``: whether the class defines a method other than ``__init__``."""
    prefix = f"{qualname}."
    return any(
        name.startswith(prefix) and "." not in name[len(prefix):] and name != f"{qualname}.__init__"
        for name in index.scopes
    )


_TYPE_OF = frozenset({"type", "Type", "typing.Type", "typing_extensions.Type"})
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
_CONTEXT_VARS = frozenset({"contextvars.ContextVar"})


def class_returned(index: PyIndex, scope: PyScope) -> str | None:
    """``crossref._class_returned``: ``-> type[Model]``, ``-> Type["Model"]``, the module's top-level class
    a function returns (libcst's one subscript element: Python's ``Tuple`` of two or more is not one)."""
    annotation = getattr(scope.node, "returns", None)
    if not isinstance(annotation, ast.Subscript) or isinstance(annotation.slice, ast.Tuple | ast.Slice):
        return None
    outer = annotation.value
    if not (isinstance(outer, ast.Name) and outer.id == "type") and index.qualified(outer) not in _TYPE_OF:
        return None
    inner = annotation.slice
    name = inner.id if isinstance(inner, ast.Name) else index.literal(inner)
    return name if name is not None and name in index.class_nodes else None


def registrar(index: PyIndex, qualname: str, module: str) -> str | None:
    """``crossref._registrar``: the project decorator registering the class (``@register_agent(models=...)``):
    a function of this module or one imported from the project's own package, by its qualified name."""
    packages = set(module.split(".")[:-1])
    for decorator in index.class_nodes[qualname].decorator_list:
        func = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = dotted_name(func)
        if name is None:
            continue
        if "." not in name and any(s.class_name is None and s.parent is index.module_scope for s in index.functions_by_name.get(name, ())):
            return f"{module}.{name}" if module else name
        head, _, rest = name.partition(".")
        relative = index.relative_imports.get(head)
        if relative is not None and module:
            level, target = relative
            base = module.split(".")[:-1]
            base = base[: len(base) - (level - 1)] if level > 1 else base
            return ".".join([*base, target, *([rest] if rest else [])])
        qualified = index.qualified(func)
        if qualified is not None and qualified.split(".")[0] in packages:
            return qualified
    return None


def annotated(index: PyIndex, module: str) -> list[tuple[str, str]]:
    """``crossref._annotated``: ``SESSION_CONTEXT: ContextVar[SessionContext]`` at top level, ``conversation:
    Conversation`` in a top-level class's body (an indented body: libcst's ``IndentedBlock``), each alone on
    its line (libcst's ``SimpleStatementLine`` of one statement): (name, ``annotated:`` or ``contextvar:``
    and the class)."""
    bodies: list[tuple[str, list[ast.stmt]]] = []
    if isinstance(index.module_scope.node, ast.Module):
        bodies.append(("", index.module_scope.node.body))
    lines = _LINE_BREAKS.split(index.source or "")  # as Python numbers lines (not str.splitlines: a form feed is no break)
    for qualname, node in index.class_nodes.items():
        if "." not in qualname and _indented(node, lines):
            bodies.append((f"{qualname}.", node.body))
    found: list[tuple[str, str]] = []
    for prefix, body in bodies:
        for at, statement in enumerate(body):
            if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
                continue
            before, after = body[at - 1] if at else None, body[at + 1] if at + 1 < len(body) else None
            if (before is not None and before.end_lineno == statement.lineno) or (after is not None and after.lineno == statement.end_lineno):
                continue  # x: A; y = 1 on one line: libcst's line of two small statements
            held = _held_class(index, statement.annotation, module)
            if held is not None:
                found.append((prefix + statement.target.id, held))
    return found


def _indented(node: ast.ClassDef, lines: list[str]) -> bool:
    """Whether the class's body starts a line of its own (``class A: x: int`` is libcst's ``SimpleStatementSuite``)."""
    first = node.body[0]
    line = lines[first.lineno - 1] if 0 < first.lineno <= len(lines) else ""
    return line[: first.col_offset].strip() == ""  # only indentation before it: byte and character offsets agree


def _held_class(index: PyIndex, node: ast.expr, module: str, *, depth: int = 0) -> str | None:
    """``crossref._held_class`` on Python's tree (``None`` is Python's constant, libcst's name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
        text = index.literal(node) if depth < 2 else None
        if text is None:
            return None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                parsed = ast.parse(text, mode="eval").body
        except (SyntaxError, ValueError):
            return None
        return _held_class(index, parsed, module, depth=depth + 1)
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Tuple | ast.Slice):
        inner = _held_class(index, node.slice, module, depth=depth + 1)
        outer = index.qualified(node.value)
        if inner is None or not inner.startswith("annotated:"):
            return None
        if outer in _CONTEXT_VARS:
            return "contextvar:" + inner.partition(":")[2]
        return inner if outer in {"typing.Optional"} else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        if isinstance(node.right, ast.Constant) and node.right.value is None:
            return _held_class(index, node.left, module, depth=depth + 1)
        return None
    if isinstance(node, ast.Name) and node.id in index.class_nodes and module:
        return f"annotated:{module}.{node.id}"
    qualified = index.qualified(node) if isinstance(node, ast.Name | ast.Attribute) else None
    return f"annotated:{qualified}" if qualified is not None and "." in qualified else None


def _guard_id(index: PyIndex, decorators: tuple[ast.expr, ...]) -> str | None:
    """``ToolResolver.guard_id``: @guard_tool("billing.run")."""
    for call in decorators:
        if isinstance(call, ast.Call) and (call.args or call.keywords) and _is_guard_tool(index, call):
            first = arguments(call)[0]
            return index.literal(first.value if isinstance(first, ast.keyword | ast.Starred) else first) or "?"
    return None


def _is_guard_tool(index: PyIndex, call: ast.Call) -> bool:
    qualified = index.qualified(call.func)
    return qualified in apis.GUARD_TOOL_NAMES if qualified else (dotted_name(call.func) or "").endswith("guard_tool")


def _tool_name(index: PyIndex, decorators: tuple[ast.expr, ...]) -> str | None:
    """``ToolResolver.tool_name``: @tool("refund"), @function_tool(name_override="refund")."""
    for call in decorators:
        if isinstance(call, ast.Call) and not _is_guard_tool(index, call):
            written = arguments(call)
            first = written[0] if written else None
            # libcst's first argument with no keyword: a positional one, ``*value`` and ``**value`` too.
            value = first.value if isinstance(first, ast.Starred) or (isinstance(first, ast.keyword) and first.arg is None) else first
            if isinstance(value, ast.expr) and index.literal(value) is not None:
                return index.literal(value)
            named = _keyword_string(index, call, "name") or _keyword_string(index, call, "name_override")
            if named:
                return named
    return None


def _keyword_string(index: PyIndex, call: ast.Call, keyword: str) -> str | None:
    for arg in call.keywords:
        if arg.arg == keyword and index.literal(arg.value) is not None:
            return index.literal(arg.value)
    return None


def _needs_approval(index: PyIndex, decorators: tuple[ast.expr, ...]) -> bool:
    """``ToolResolver.needs_approval``: @function_tool(needs_approval=True), @interrupt_for_approval,
    @approval_required(policy=...)."""
    return any(
        (isinstance(d, ast.Call) and _approval_asked(index, d))
        or index.qualified(d) == apis.LANGGRAPH_TOOL_GATE
        or (isinstance(d, ast.Call) and index.qualified(d.func) == apis.CREWAI_TOOL_GATE)
        for d in decorators
    )


def _approval_asked(index: PyIndex, call: ast.Call) -> bool:
    """``tools.approval_asked``: anything but False/None asks; approval_mode="always_require"."""
    return any(
        a.arg is not None
        and ((a.arg in APPROVAL_KEYWORDS and _truthy(a.value)) or (a.arg == "approval_mode" and index.literal(a.value) == "always_require"))
        for a in call.keywords
    )


def _truthy(node: ast.expr) -> bool:
    """``tools._truthy``: libcst's ``False`` and ``None`` are names, Python's constants."""
    return not (isinstance(node, ast.Constant) and (node.value is False or node.value is None))


# -- the check: both indexes of one module, table by table --------------------------------------


def differences(libcst_index: ModuleIndex, module: cst.Module, py_index: PyIndex) -> list[str]:
    """Where ``py_index`` disagrees with ``libcst_index`` (built from ``module``): each table's keys in order,
    each scope's class, parent and parameters, and each node as Python reads its code (``ast.dump``)."""
    code = _Code(module)
    out: list[str] = []

    def same(table: str, left: object, right: object) -> None:
        # A table's order counts too (the analysis iterates them): dicts are compared as their items in order.
        if isinstance(left, dict) and isinstance(right, dict):
            left, right = list(left.items()), list(right.items())
        if left != right:
            out.append(f"{table}: libcst {left!r} != ast {right!r}")

    same("imports", libcst_index.imports, py_index.imports)
    same("relative_imports", libcst_index.relative_imports, py_index.relative_imports)
    same("scopes", list(libcst_index.scopes), list(py_index.scopes))
    for name, scope in libcst_index.scopes.items():
        other = py_index.scopes.get(name)
        if other is None:
            continue
        parent = scope.parent.qualname if scope.parent else None
        same(f"scope {name}", (scope.class_name, parent, list(scope.params)),
             (other.class_name, other.parent.qualname if other.parent else None, list(other.params)))  # fmt: skip
    same("functions_by_name", {n: [s.qualname for s in ss] for n, ss in libcst_index.functions_by_name.items()},
         {n: [s.qualname for s in ss] for n, ss in py_index.functions_by_name.items()})  # fmt: skip
    same("decorators", {q: [code.of(d.decorator) for d in ds] for q, ds in libcst_index.decorators.items()},
         {q: [_dump(d) for d in ds] for q, ds in py_index.decorators.items()})  # fmt: skip
    same("class_bases", {q: [code.of(a.value, star=a.star) for a in args] for q, args in libcst_index.class_bases.items()},
         {q: [_dump(b) for b in bases] for q, bases in py_index.class_bases.items()})  # fmt: skip
    same("class_nodes", list(libcst_index.class_nodes), list(py_index.class_nodes))
    same("values", {k: code.of(v) for k, v in libcst_index.values.items()}, {k: _dump(v) for k, v in py_index.values.items()})
    same("class_attrs", {k: code.of(v) for k, v in libcst_index.class_attrs.items()},
         {k: _dump(v) for k, v in py_index.class_attrs.items()})  # fmt: skip
    same("added", {k: [code.of(v) for v in vs] for k, vs in libcst_index.added.items()},
         {k: [_dump(v) for v in vs] for k, vs in py_index.added.items()})  # fmt: skip
    same("assignments", [(s.qualname, key, code.of(v)) for s, key, v in libcst_index.assignments],
         [(s.qualname, key, _dump(v)) for s, key, v in py_index.assignments])  # fmt: skip
    same("unpacked", [(s.qualname, key, code.of(v), path) for s, key, v, path in libcst_index.unpacked],
         [(s.qualname, key, _dump(v), path) for s, key, v, path in py_index.unpacked])  # fmt: skip
    return out


def export_differences(libcst_index: ModuleIndex, py_index: PyIndex, module: str) -> list[str]:
    """Where the ported helpers of ``crossref.exports`` (``_annotated``, ``_registrar``, ``_class_returned``,
    ``_own_methods``) give another answer on ``py_index`` than on ``libcst_index`` (both absolutised), for
    the module named ``module``."""
    from escalated.contracts.scan import crossref  # the libcst side: crossref reads the analysis's modules

    out: list[str] = []
    left, right = list(crossref._annotated(libcst_index, module)), annotated(py_index, module)
    if left != right:
        out.append(f"annotated: libcst {left!r} != ast {right!r}")
    for qualname in libcst_index.class_nodes:
        if qualname not in py_index.class_nodes:
            continue
        pair = (crossref._own_methods(libcst_index, qualname), own_methods(py_index, qualname))
        if pair[0] != pair[1]:
            out.append(f"own methods of {qualname}: libcst {pair[0]} != ast {pair[1]}")
        if "." not in qualname:
            registered = (crossref._registrar(libcst_index, qualname, module), registrar(py_index, qualname, module))
            if registered[0] != registered[1]:
                out.append(f"registrar of {qualname}: libcst {registered[0]!r} != ast {registered[1]!r}")
    for qualname, scope in libcst_index.scopes.items():
        other = py_index.scopes.get(qualname)
        if other is None:
            continue
        handed = (crossref._class_returned(libcst_index, scope), class_returned(py_index, other))
        if handed[0] != handed[1]:
            out.append(f"class returned by {qualname}: libcst {handed[0]!r} != ast {handed[1]!r}")
    return out


def _dump(node: ast.AST | Annotation) -> str:
    if isinstance(node, Annotation):
        return "annotation " + ast.dump(node.annotation)
    return ast.dump(node)


class _Code:
    """A libcst node as Python's parser reads its code."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module

    def of(self, node: cst.CSTNode, *, star: str = "") -> str:
        if isinstance(node, cst.Annotation):
            return "annotation " + self.of(node.annotation)
        text = self.module.code_for_node(node)
        try:
            parsed = ast.parse(f"({star}{text}\n)" if not star else f"({star}{text},\n)", mode="eval").body
        except SyntaxError as exc:
            return f"<unparsable {text!r}: {exc.msg}>"
        if star and isinstance(parsed, ast.Tuple) and len(parsed.elts) == 1:
            parsed = parsed.elts[0]
        return ast.dump(parsed)
