"""Wrap LLM call expressions with their guard, keeping everything else as is.

``client.chat.completions.create(...)`` becomes
``guard("<id>", lambda: client.chat.completions.create(...))``; an awaited call
``await X(...)`` becomes ``await guard("<id>", lambda: X(...))`` because the
guard hands back a coroutine when the thunk returns an awaitable. libcst keeps
formatting, comments, line endings and the source encoding.

A lambda is not always a faithful stand-in for the expression it holds; those
calls are skipped with the reason instead of being rewritten into something
that behaves differently (see ``_unsafe_reason``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import attrs
import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from escalated.contracts.calls import Location

GUARD_MODULE = "escalated.guard"
GUARD_NAME = "guard"
IMPORT_LINE = f"from {GUARD_MODULE} import {GUARD_NAME}"


@attrs.frozen
class Target:
    """One call to wrap: where it is and which contract guards it."""

    location: Location
    contract_id: str


@attrs.frozen
class Skip:
    location: Location
    contract_id: str
    reason: str


@attrs.frozen
class Rewritten:
    code: bytes
    wrapped: tuple[Target, ...]
    skipped: tuple[Skip, ...]
    already_guarded: tuple[Target, ...]

    @property
    def changed(self) -> bool:
        return bool(self.wrapped)


def rewrite_source(source: bytes | str, targets: Sequence[Target], *, check_only: bool = False) -> Rewritten:
    """Wrap every target call in ``source``; raises ``libcst.ParserSyntaxError`` on bad input.

    ``check_only`` sorts the targets (wrappable, skipped with a reason, already
    guarded) without rewriting: ``code`` is then the source unchanged.
    """
    # Freshly parsed, so nothing else holds the tree: no defensive deep copy.
    original = cst.parse_module(source)
    wrapper = MetadataWrapper(original, unsafe_skip_copy=True)
    finder = _CallFinder()
    wrapper.visit(finder)

    chosen: dict[cst.Call, Target] = {}
    skipped: list[Skip] = []
    guarded: list[Target] = []
    conflict = "the module already binds the name 'guard' to something else" if finder.binds_guard else None
    for target in targets:
        found = finder.lookup(target.location)
        if found is None:
            skipped.append(Skip(target.location, target.contract_id, "call not found at this location"))
        elif found.guard_id == target.contract_id:
            guarded.append(target)
        elif found.guard_id is not None:
            reason = (
                f"already wrapped in guard {found.guard_id!r}, but its contract is {target.contract_id!r}; fix the id"
            )
            skipped.append(Skip(target.location, target.contract_id, reason))
        elif conflict:
            skipped.append(Skip(target.location, target.contract_id, conflict))
        elif found.unsafe:
            skipped.append(Skip(target.location, target.contract_id, found.unsafe))
        else:
            chosen[found.node] = target

    if not chosen or check_only:
        return Rewritten(original.bytes, (), tuple(skipped), tuple(guarded))
    ids = {n: t.contract_id for n, t in chosen.items()}
    on_path = {id(a) for n in chosen for a in finder.found_for(n).ancestors} | {id(n) for n in chosen}
    new_module = original.visit(_Wrapper(ids, on_path))
    assert isinstance(new_module, cst.Module)
    new_module = ensure_import(new_module)
    return Rewritten(new_module.bytes, tuple(chosen.values()), tuple(skipped), tuple(guarded))


# -- finding the calls -----------------------------------------------------


@attrs.frozen
class _Found:
    node: cst.Call
    # The contract id of the guard() whose lambda already holds this call.
    guard_id: str | None
    ancestors: tuple[cst.CSTNode, ...]

    @property
    def unsafe(self) -> str | None:
        # Computed only for targets: probing every call's subtree is quadratic.
        return _unsafe_reason(self.node, self.ancestors)


class _CallFinder(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        super().__init__()
        self._stack: list[cst.CSTNode] = []
        self._by_span: dict[tuple[int, int, int, int], _Found] = {}
        self.binds_guard = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        if not self.binds_guard and type(node) in _BINDERS and GUARD_NAME in _bound_names(node):
            self.binds_guard = True
        if isinstance(node, cst.Call):
            span = _span(self.get_metadata(PositionProvider, node))
            # A guard() call itself counts as guarded: a scanner span that lands
            # on the wrapper must never produce guard(..., lambda: guard(...)).
            guard_id = _guard_call_id(node) if is_guard_call(node) else _enclosing_guard_id(self._stack)
            self._by_span[span] = _Found(node, guard_id, tuple(self._stack))
        self._stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self._stack.pop()

    def found_for(self, node: cst.Call) -> _Found:
        return next(f for f in self._by_span.values() if f.node is node)

    def lookup(self, loc: Location) -> _Found | None:
        exact = self._by_span.get((loc.line, loc.column, loc.end_line, loc.end_column))
        if exact is not None:
            return exact
        # Tolerate a scanner that measured one end differently (parentheses),
        # but only when the other end singles out one call.
        starts = [f for s, f in self._by_span.items() if s[:2] == (loc.line, loc.column)]
        if len(starts) == 1:
            return starts[0]
        ends = [f for s, f in self._by_span.items() if s[2:] == (loc.end_line, loc.end_column)]
        return ends[0] if len(ends) == 1 else None


def _span(rng: CodeRange) -> tuple[int, int, int, int]:
    return (rng.start.line, rng.start.column, rng.end.line, rng.end.column)


def _enclosing_guard_id(stack: list[cst.CSTNode]) -> str | None:
    """The id when the call is the body of ``guard("<id>", lambda: <call>)``."""
    if len(stack) < 3:
        return None
    lam, arg, outer = stack[-1], stack[-2], stack[-3]
    if not (isinstance(lam, cst.Lambda) and isinstance(arg, cst.Arg) and isinstance(outer, cst.Call)):
        return None
    if not is_guard_call(outer) or len(outer.args) != 2 or outer.args[1] is not arg:
        return None
    return _guard_call_id(outer)


def _guard_call_id(node: cst.Call) -> str | None:
    first = node.args[0].value if node.args else None
    if isinstance(first, cst.SimpleString):
        value = first.evaluated_value
        return value if isinstance(value, str) else "?"
    return "?"


def is_guard_call(node: cst.Call) -> bool:
    func = node.func
    if isinstance(func, cst.Name):
        return func.value in (GUARD_NAME, "guard_async")
    return isinstance(func, cst.Attribute) and func.attr.value in (GUARD_NAME, "guard_async")


def _unsafe_reason(call: cst.Call, stack: Sequence[cst.CSTNode]) -> str | None:
    """Why ``lambda: <call>`` would not behave like ``<call>`` here, if it would not."""
    for node in reversed(stack):
        if isinstance(node, cst.FormattedString):
            return "call inside an f-string (quoting would change); wrap it by hand"
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            break
        if isinstance(node, cst.ClassDef):
            return "call in a class body: a lambda there cannot see the class's names"
    probe = _BodyProbe()
    call.visit(probe)
    return probe.reason


class _BodyProbe(cst.CSTVisitor):
    """Finds what a lambda body cannot hold or would evaluate differently."""

    def __init__(self) -> None:
        super().__init__()
        self.reason: str | None = None

    def _flag(self, reason: str) -> bool:
        self.reason = self.reason or reason
        return False

    def visit_Await(self, node: cst.Await) -> bool:
        return self._flag("the call's arguments contain 'await'")

    def visit_Yield(self, node: cst.Yield) -> bool:
        return self._flag("the call's arguments contain 'yield'")

    def visit_NamedExpr(self, node: cst.NamedExpr) -> bool:
        return self._flag("the call's arguments assign with ':=', which would bind inside the lambda")

    def visit_Call(self, node: cst.Call) -> bool:
        if isinstance(node.func, cst.Name) and not node.args:
            if node.func.value == "super":
                return self._flag("zero-argument super() does not work inside a lambda")
            if node.func.value in ("locals", "vars"):
                return self._flag(f"{node.func.value}() would see the lambda's scope")
        return True

    def visit_Name(self, node: cst.Name) -> bool:
        if node.value == "__class__":
            self._flag("__class__ does not resolve inside a lambda")
        return True


def _bound_names(node: cst.CSTNode) -> set[str]:
    """Names ``node`` binds in its scope (our own guard import excepted)."""
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return {node.name.value}
    if isinstance(node, cst.Param):
        return {node.name.value}
    if isinstance(node, cst.ImportFrom):
        return set() if _is_our_import(node) else _alias_names(node.names)
    if isinstance(node, cst.Import):
        return _alias_names(node.names)
    if isinstance(node, (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr)):
        return _target_names(node.target)
    if isinstance(node, cst.AsName):
        return _target_names(node.name)
    if isinstance(node, (cst.Global, cst.Nonlocal)):
        return {n.name.value for n in node.names}
    if isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
        return {node.name.value}
    return set()


_BINDERS = frozenset(
    {
        cst.FunctionDef, cst.ClassDef, cst.Param, cst.ImportFrom, cst.Import, cst.AssignTarget, cst.AnnAssign,
        cst.AugAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.AsName, cst.Global, cst.Nonlocal, cst.MatchAs,
        cst.MatchStar,
    }
)  # fmt: skip


def _alias_names(names: Sequence[cst.ImportAlias] | cst.ImportStar) -> set[str]:
    if isinstance(names, cst.ImportStar):
        return set()
    out = set()
    for alias in names:
        if alias.asname is None:
            # "import a.b" binds "a"; "from m import x" binds "x".
            out.add(cst.Module([]).code_for_node(alias.name).split(".")[0])
    return out


def _target_names(target: cst.BaseExpression) -> set[str]:
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_names(e.value) for e in target.elements))
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return set()


# -- rewriting ---------------------------------------------------------------


class _Wrapper(cst.CSTTransformer):
    def __init__(self, ids: dict[cst.Call, str], on_path: set[int]) -> None:
        super().__init__()
        self._ids = ids
        self._on_path = on_path

    def on_visit(self, node: cst.CSTNode) -> bool:
        # Only descend towards a target: untouched subtrees are reused as they are.
        return id(node) in self._on_path

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        contract_id = self._ids.get(original_node)
        if contract_id is None:
            return updated_node
        return wrap_call(updated_node, contract_id)


def wrap_call(call: cst.Call, contract_id: str) -> cst.Call:
    """``guard("<id>", lambda: <call>)``; the call's own parentheses move outside."""
    thunk = cst.Lambda(params=cst.Parameters(), body=call.with_changes(lpar=[], rpar=[]))
    id_arg = cst.Arg(
        cst.SimpleString(json.dumps(contract_id)), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    )
    return cst.Call(func=cst.Name(GUARD_NAME), args=[id_arg, cst.Arg(thunk)], lpar=call.lpar, rpar=call.rpar)


def _is_our_import(node: cst.ImportFrom) -> bool:
    if node.relative or node.module is None or isinstance(node.names, cst.ImportStar):
        return False
    module = cst.Module([]).code_for_node(node.module)
    return module == GUARD_MODULE and any(
        a.asname is None and isinstance(a.name, cst.Name) and a.name.value == GUARD_NAME for a in node.names
    )


def has_guard_import(module: cst.Module) -> bool:
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            if any(isinstance(s, cst.ImportFrom) and _is_our_import(s) for s in stmt.body):
                return True
    return False


def ensure_import(module: cst.Module) -> cst.Module:
    """Add ``from escalated.guard import guard`` once, after the leading imports."""
    if has_guard_import(module):
        return module
    body = list(module.body)
    at = import_position(body)
    line = cst.parse_statement(IMPORT_LINE + module.default_newline, config=module.config_for_parsing)
    return module.with_changes(body=[*body[:at], line, *body[at:]])


def import_position(body: Sequence[cst.BaseStatement]) -> int:
    """Index after the docstring, ``__future__`` imports and the leading import block."""
    at = 0
    for i, stmt in enumerate(body):
        if i == 0 and _is_docstring(stmt):
            at = 1
            continue
        if isinstance(stmt, cst.SimpleStatementLine) and all(
            isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
        ):
            at = i + 1
            continue
        break
    return at


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
