"""Find every LLM call in Python source and recommend a mode for each.

``scan_source`` handles one file's text; ``scan_tree`` walks a folder
(honouring .gitignore, skipping virtualenvs), skips files that cannot call
a model after a cheap text check, and reports files that fail to parse
instead of dropping them.
"""

from __future__ import annotations

import ast
import io
import itertools
import tokenize
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from escalated.contracts import rules
from escalated.contracts.scan import apis, crossref
from escalated.contracts.scan.index import ModuleIndex, Scope
from escalated.contracts.calls import Finding, LlmCall, Location, ParseProblem, ScanResult
from escalated.contracts.scan.resolve import Kind, Match, Resolver
from escalated.contracts.scan.surface import SurfaceAnalyzer
from escalated.contracts.scan.syntax import literal
from escalated.contracts.deep import deep_stack
from escalated.contracts.scan.files import iter_files, might_call_llm

_CONFIDENCE_ORDER = ("low", "medium", "high")
_TOO_DEEP = "too deeply nested to analyse"


class _Guards:
    """Calls already wrapped as ``guard("id", lambda: <call>)``, possibly awaited."""

    def __init__(self, index: ModuleIndex, resolver: Resolver) -> None:
        self.wrapped: dict[int, tuple[str | None, cst.Call]] = {}
        for call, _scope in index.calls:
            if not _is_guard(call, resolver) or len(call.args) < 2:
                continue
            lam = call.args[1].value
            if isinstance(lam, cst.Lambda) and isinstance(lam.body, cst.Call):
                first = call.args[0].value
                guard_id = literal(first)
                self.wrapped[id(lam.body)] = (guard_id, call)


def _is_guard(call: cst.Call, resolver: Resolver) -> bool:
    qualified = resolver.qualified(call.func)
    if qualified is not None:
        return qualified in apis.GUARD_NAMES
    return isinstance(call.func, cst.Name) and call.func.value == "guard"


def _positions(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """Line/column spans of every node.

    The provider's own code generation pass is all we need; the metadata
    wrapper adds a second full visit that costs as much again.
    """
    provider = PositionProvider()
    try:
        provider._gen_impl(module)
        return provider._computed
    except AttributeError:  # pragma: no cover - a libcst without these internals
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


def scan_source(source: str, path: str) -> tuple[LlmCall, ...]:
    """Every LLM call in one module. Raises ``cst.ParserSyntaxError`` on bad syntax."""

    def work() -> tuple[LlmCall, ...]:
        module = cst.parse_module(source)
        return _analyse(module, ModuleIndex().build(module), path=path, externals=None)

    return deep_stack(work)


def _analyse(
    module: cst.Module,
    index: ModuleIndex,
    *,
    path: str,
    externals: Mapping[str, Kind] | None,
    imported_tools: Mapping[str, tuple[Finding, ...]] | None = None,
) -> tuple[LlmCall, ...]:
    resolver = Resolver(index, externals=externals)
    matches: list[tuple[cst.Call, Scope, Match]] = []
    for call, scope in index.calls:
        found = resolver.match_call(call, scope)
        if found is not None:
            matches.append((call, scope, found))
    if not matches:
        return ()
    positions = _positions(module)
    # Ordinals follow source order, whatever order the walk met the calls in.
    matches.sort(key=lambda m: (positions[m[0]].start.line, positions[m[0]].start.column))

    def line_of(node: cst.CSTNode) -> int:
        found = positions.get(node)
        return found.start.line if found is not None else 0

    surface = SurfaceAnalyzer(
        index, resolver, line_of=line_of, code_of=module.code_for_node,
        llm_calls={id(c) for c, _, _ in matches}, imported_tools=imported_tools,
    )  # fmt: skip
    guards = _Guards(index, resolver)
    gates = _Gates(index, resolver)
    ordinals: dict[str, int] = {}
    calls = []
    for call, scope, found in matches:
        ordinal = ordinals.get(scope.qualname, 0)
        ordinals[scope.qualname] = ordinal + 1
        calls.append(
            _build(call, scope, found, path=path, ordinal=ordinal, module=module, positions=positions,
                   index=index, guards=guards, gates=gates, surface=surface)
        )  # fmt: skip
    return tuple(calls)


def _build(
    call: cst.Call,
    scope: Scope,
    found: Match,
    *,
    path: str,
    ordinal: int,
    module: cst.Module,
    positions: object,
    index: ModuleIndex,
    guards: _Guards,
    gates: _Gates,
    surface: SurfaceAnalyzer,
) -> LlmCall:
    span = positions[call]  # type: ignore[index]
    guard_id, guard_call = guards.wrapped.get(id(call), (None, None))
    guarded = guard_call is not None
    awaited = id(guard_call if guard_call is not None else call) in index.awaited
    origin: cst.CSTNode = guard_call if guard_call is not None else call
    result = surface.analyze(call, scope, found, origin=origin)
    findings = result.findings
    confidence = _analysis_confidence(findings, escapes=result.escapes, call_confidence=found.confidence)
    return LlmCall(
        location=Location(path, span.start.line, span.start.column, span.end.line, span.end.column),
        provider=found.provider,
        api=found.api,
        function=scope.qualname,
        index=ordinal,
        is_async=awaited,
        confidence=found.confidence,
        guarded=guarded,
        guard_id=guard_id,
        existing_gate=gates.gate_for(scope, found, tools_gated=result.tools_gated),
        findings=findings,
        recommendation=rules.recommend(findings, confidence=confidence),
        source=module.code_for_node(call),
    )


def _analysis_confidence(findings: tuple[Finding, ...], *, escapes: bool, call_confidence: str) -> str:
    """High when the deciding evidence is exact; low when the output left what we can follow."""
    if not findings:
        own = "low" if escapes else "medium"
    elif escapes and all(rules.RULES_BY_ID[f.rule].mode in {"sampled", "autonomous"} for f in findings):
        own = "low"
    else:
        own = "high" if any(f.rule in {"R1", "R7", "R8"} or f.detail.startswith("SQL") for f in findings) else "medium"
    return _CONFIDENCE_ORDER[min(_CONFIDENCE_ORDER.index(own), _CONFIDENCE_ORDER.index(call_confidence))]


class _Gates:
    """Human gates the code already has, so nothing is gated twice."""

    def __init__(self, index: ModuleIndex, resolver: Resolver) -> None:
        self.interrupt_scopes: set[str] = set()
        self.gated_builders: set[int] = set()
        for call, scope in index.calls:
            qualified = resolver.qualified(call.func)
            if qualified in apis.INTERRUPT_NAMES:
                self.interrupt_scopes.add(scope.qualname)
            for arg in call.args:
                keyword = arg.keyword.value if arg.keyword else None
                if keyword in {"interrupt_before", "interrupt_after"}:
                    self.gated_builders.add(id(call))
                if isinstance(arg.value, cst.Call | cst.List) and "HumanInTheLoopMiddleware" in _names_in(index, arg.value):
                    self.gated_builders.add(id(call))
        self.resolver = resolver

    def gate_for(self, scope: Scope, found: Match, *, tools_gated: bool) -> str | None:
        if scope.qualname in self.interrupt_scopes:
            return "langgraph.interrupt"
        kind = found.receiver
        while kind is not None:
            if kind.origin is not None and id(kind.origin) in self.gated_builders:
                return "langgraph.interrupt"
            kind = kind.base
        # needs_approval covers a run only when it sits on every risky tool that run reaches.
        if found.api.startswith("agents.Runner") and tools_gated:
            return "needs_approval"
        return None


def _names_in(index: ModuleIndex, node: cst.CSTNode) -> set[str]:
    return {n.value for n in index.subtree(node) if isinstance(n, cst.Name)}


def _decode(data: bytes) -> str:
    """Honour a PEP 263 coding cookie or a BOM, as Python itself does."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


def scan_tree(root: Path, *, progress: Callable[[int, str], None] | None = None) -> ScanResult:
    """Scan every Python file under ``root``; paths in the result are relative POSIX."""
    return deep_stack(lambda: _scan_tree(root, progress=progress))


def _scan_tree(root: Path, *, progress: Callable[[int, str], None] | None) -> ScanResult:
    """The scan itself (see ``scan_tree``).

    Two passes: parse every candidate file, collect what each module exports
    (clients built at top level), then analyse each file with that table.
    """
    errors: list[ParseProblem] = []
    notebooks: list[str] = []
    parsed: list[tuple[str, cst.Module, ModuleIndex]] = []
    files = lines = 0
    base = root if root.is_dir() else root.parent
    for number, rel in enumerate(iter_files(root), start=1):
        if progress is not None:
            progress(number, rel)
        if rel.endswith(".ipynb"):
            notebooks.append(rel)
            continue
        files += 1
        try:
            data = (base / rel).read_bytes()
        except OSError as exc:
            errors.append(ParseProblem(rel, f"cannot read: {exc.strerror}"))
            continue
        lines += data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        if not might_call_llm(data) and not _may_re_export(rel, data):
            continue
        problem = _parse_into(parsed, rel, data)
        if problem is not None:
            errors.append(problem)
    kinds: list[tuple[str, Mapping[str, Kind]]] = []
    tools: list[tuple[str, Mapping[str, tuple[Finding, ...]]]] = []
    analysable: list[tuple[str, cst.Module, ModuleIndex]] = []
    for rel, module, index in parsed:
        crossref.absolutise(index, rel)
        try:
            exported = crossref.exports(index), crossref.tool_exports(rel, module, index)
        except RecursionError:
            errors.append(ParseProblem(rel, _TOO_DEEP))
            continue
        kinds.append((rel, exported[0]))
        tools.append((rel, exported[1]))
        analysable.append((rel, module, index))
    indexes = [(rel, index) for rel, _module, index in analysable]
    table, tool_table = crossref.with_reexports(kinds, indexes), crossref.with_reexports(tools, indexes)
    calls: list[LlmCall] = []
    for rel, module, index in analysable:
        try:
            calls.extend(_analyse(module, index, path=rel, externals=table, imported_tools=tool_table))
        except RecursionError:
            errors.append(ParseProblem(rel, _TOO_DEEP))
    calls.sort(key=lambda c: (c.location.path, c.location.line, c.location.column))
    return ScanResult(tuple(calls), tuple(sorted(errors)), files, lines, tuple(notebooks))


def _may_re_export(rel: str, data: bytes) -> bool:
    """A package's ``__init__.py`` may re-export a client (``from .models import client``)."""
    return (rel == "__init__.py" or rel.endswith("/__init__.py")) and b"import" in data


def _parse_into(parsed: list[tuple[str, cst.Module, ModuleIndex]], rel: str, data: bytes) -> ParseProblem | None:
    try:
        source = _decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError):
        return ParseProblem(rel, "cannot decode the file as Python source text")
    if _may_nest_too_deeply(data):
        problem = _python_rejects(source, rel)
        if problem is not None:
            return problem
    try:
        module = cst.parse_module(source)
        parsed.append((rel, module, ModuleIndex().build(module)))
    except cst.ParserSyntaxError as exc:
        return ParseProblem(rel, f"syntax error at line {exc.raw_line}, column {exc.raw_column}: {exc.message}")
    except RecursionError:
        return ParseProblem(rel, _TOO_DEEP)
    return None


# Python refuses brackets nested deeper than this ("too many nested parentheses");
# libcst's native parser has no such limit and overflows its stack (SIGSEGV) on
# a few thousand, so such a file is left to Python's own parser to report.
_MAX_NESTING = 200
_BRACKET_STEP = {ord("("): 1, ord("["): 1, ord("{"): 1, ord(")"): -1, ord("]"): -1, ord("}"): -1}
_NOT_BRACKETS = bytes(b for b in range(256) if b not in _BRACKET_STEP)


def _may_nest_too_deeply(data: bytes) -> bool:
    """A rough count: brackets inside strings and comments count too."""
    if data.count(b"(") + data.count(b"[") + data.count(b"{") <= _MAX_NESTING:
        return False
    brackets = data.translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(_BRACKET_STEP[b] for b in brackets)) > _MAX_NESTING


def _python_rejects(source: str, rel: str) -> ParseProblem | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes warn; only errors matter here
        try:
            compile(source, rel, "exec", ast.PyCF_ONLY_AST)
        except SyntaxError as exc:
            return ParseProblem(rel, f"syntax error at line {exc.lineno}, column {max((exc.offset or 1) - 1, 0)}: {exc.msg}")
        except (RecursionError, MemoryError):
            return ParseProblem(rel, _TOO_DEEP)
    return None
