"""Find every LLM call under a path and recommend a mode for each.

``scan_source`` handles one file's text; ``scan_tree`` walks a folder
(honouring .gitignore, ``--exclude`` and ``[tool.escalated.contracts]``,
skipping virtualenvs), skips files that cannot call a model after a cheap
text check, skips generated and oversized files with a note, and reports
files that fail to parse instead of dropping them.

The project is indexed once: the candidate files, plus the project modules
they import (so a tool's helper in ``payments.py`` is classified by what it
does). A per-file budget of analysis steps bounds the analysis.

Which files those are is found from Python's own syntax tree (their imports),
parsed ten times faster than libcst's and dropped at once. libcst parses a
module some other parsed module imports for its tables (kinds, tools, tool
sites: no syntax nodes) and releases it; it is parsed again for its own
analysis, and taint by parameter (``ProjectFlow``) parses the few modules it
follows into (which function, which parameter: from Python's tree, read with
the imports, ``index.functions_of``). A module no parsed module imports (a test, an example, a
script: most of a real tree) is parsed when its turn comes, analysed and
released. The scan holds one module's tree and a few followed into, not every
tree of the project.
"""

from __future__ import annotations

import ast
import bisect
import contextlib
import ctypes
import functools
import gc
import io
import itertools
import re
import tokenize
import warnings
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

import attrs
import libcst as cst

from escalated.contracts.calls import Finding, LlmCall, ParseProblem, ScanResult, ToolSite
from escalated.contracts.deep import deep_stack
from escalated.contracts.scan import apis, crossref, graphs
from escalated.contracts.scan.call_match import PROVIDER_WORDS, only_implemented, provider_families, registered_families
from escalated.contracts.scan.callers import ancestors, with_callers_evidence
from escalated.contracts.scan.config import ScanOptions
from escalated.contracts.scan.files import (
    calls_any,
    imports_sdk,
    is_test_path,
    iter_files,
    looks_generated,
    might_call_llm,
    served_graphs,
)
from escalated.contracts.scan.flows import FlowReads, Loadable, Lookups, ProjectFlow
from escalated.contracts.scan.index import (
    MODULE_SCOPE, STAR, Imports, ModuleIndex, Signature, WorkMeter, dotted_name, functions_of, parse_module,
)  # fmt: skip
from escalated.contracts.scan.module import FileBudget, ModuleCalls, analyse_module
from escalated.contracts.scan.positions import outline
from escalated.contracts.scan.pyindex import PyIndex
from escalated.contracts.scan.pyindex import dotted_name as py_dotted_name
from escalated.contracts.scan.kinds import BY_NAME, PROJECT_INTERFACE, Kind

_TOO_DEEP = "too deeply nested to analyse"
_Parsed = tuple[str, cst.Module, ModuleIndex]


@attrs.define(eq=False)
class _Module:
    """A file the scan analyses: its text and imports from the discovery pass, and libcst's
    tree and index while they are needed."""

    rel: str
    source: str
    imports: Imports
    outline: array[int] | None = None  # of Python's tree, for the spans of reported nodes
    functions: dict[str, Signature] | None = None  # of Python's tree, for taint by parameter to look up
    module: cst.Module | None = None
    index: ModuleIndex | None = None
    kept: bool = False  # other modules look things up in it: its tables are exported
    failed: bool = False
    # A top-level function shares its name with a module-level list: its tools export depends on which
    # of the two was classified last, so it is redone whenever the tools are (see _export_more_tools).
    shadowed: bool = False
    # Its top-level functions and classes: the names crossref.tool_exports classifies only when wanted.
    top_names: tuple[str, ...] = ()
    # What its star imports bring in, by name (local name -> qualified), once the tables are known.
    star_names: dict[str, str] = attrs.Factory(dict)
    # Where its tree may be held between rounds instead of released (see _HeldTrees), and whether it is.
    held_in: _HeldTrees | None = None
    held: bool = False

    def load(self, errors: list[ParseProblem]) -> _Parsed | None:
        """libcst's tree and index, parsed now if they are not kept (a held tree gets a new index);
        None (the error recorded once) when libcst cannot parse what Python's parser took."""
        if self.failed:
            return None
        if self.module is None or self.index is None:
            try:
                _rel, self.module, self.index = self._parse(self.module if self.held else None)
            except cst.ParserSyntaxError as exc:
                self.failed = True
                errors.append(ParseProblem(self.rel, _syntax_error(exc)))
                return None
            except RecursionError:
                self.failed = True
                errors.append(ParseProblem(self.rel, _TOO_DEEP))
                return None
        return self.rel, self.module, self.index

    def release(self, *, agents: bool | None = None) -> None:
        """Done with the tree for now: dropped, unless held (see _HeldTrees): then only its index is.
        Its tables just made (``agents``: whether it binds an agent), it is held if the budget allows."""
        if not self.held and agents is not None and not self.failed and self.module is not None and self.held_in is not None:
            self.held = self.held_in.take(self, agents=agents)
        if self.held:
            self.index = None  # as large as the tree, and a tenth of the parse's time to build again
        else:
            self.drop()

    def drop(self) -> None:
        if self.held and self.held_in is not None:
            self.held_in.give_back(self)
        self.held = False
        self.module = self.index = None

    def parsed_apart(self, meter: WorkMeter) -> _Parsed | None:
        """A tree and index of its own, counting on ``meter``, for another module's analysis to
        follow into (``load``'s are released when this module's own analysis is done)."""
        if self.failed:
            return None
        # A held tree is shared (libcst's nodes are immutable), never its index: the module's own rounds set theirs.
        loaded = self._parse(self.module if self.held else None)
        loaded[2].meter = meter
        return loaded

    def lookups(self) -> Lookups | None:
        """Its imports and its classes' bases as ``load``'s index has them (absolute, with the star imports'
        names), read off Python's tree (``pyindex``) instead of parsing with libcst; None when Python's
        parser refuses the file."""
        python = _python_tree(self.source)
        if python is None:
            return None
        index = PyIndex().build(python, self.source)
        crossref.absolutise(index, self.rel)
        for name, target in self.star_names.items():
            if not index.binds(name):  # as _fresh adds them
                index.imports.setdefault(name, target)
        bases = {
            qualname: tuple(py_dotted_name(base.value if isinstance(base, ast.Starred) else base) for base in written)
            for qualname, written in index.class_bases.items()
        }  # fmt: skip
        return Lookups(dict(index.imports), bases)

    def _parse(self, module: cst.Module | None = None) -> _Parsed:
        if module is None:
            module = parse_module(self.source)
        index = ModuleIndex().build(module)
        crossref.absolutise(index, self.rel)
        self._fresh(index)
        return self.rel, module, index

    def _fresh(self, index: ModuleIndex) -> None:
        """The module's text and outline, a meter of its own, no served graph; the star imports'
        names once they are known."""
        index.source, index.outline = self.source, self.outline
        index.meter, index.served = WorkMeter(), frozenset()
        for name, target in self.star_names.items():
            if not index.binds(name):  # a name the module binds itself is its own
                index.imports.setdefault(name, target)


# What a scan may hold in libcst trees (see _HeldTrees): what is left of this allowance once the scan's own
# peak is counted, estimated from the source it parses (about 24 bytes a character, measured on two real
# trees of 3.3 and 13 million characters); a held tree takes about 24 bytes a character (23 by tracemalloc on
# the Agents SDK's largest modules), its index as much again: the index is not held, it is built again.
_HELD_ALLOWANCE = 200_000_000
_SCAN_BYTES_PER_CHAR = 24
_HELD_BYTES_PER_CHAR = 24


def _held_budget(parsed: Iterable[_Module]) -> int:
    """The characters of source whose trees the scan may hold: none on a tree large enough to need all of it."""
    return max(0, _HELD_ALLOWANCE - _SCAN_BYTES_PER_CHAR * sum(len(entry.source) for entry in parsed)) // _HELD_BYTES_PER_CHAR


@attrs.define
class _HeldTrees:
    """The modules whose trees are held from their tables to their own analysis instead of parsed again.

    libcst's parse, not the analysis, is most of a scan's time, and a module other modules import is
    parsed for its tables, its agents' two tool rounds (a module binding an agent someone imports), its
    own analysis and taint by parameter following into it (which builds an index of its own on a held
    tree). Held, in the order the first tables are made: a module with agents (loaded four times or
    more) while the budget allows, any other while half of it does. Only the tree is held: its index,
    about as large, is built on it again at each load (a tenth of a parse's time), so each round reads
    an index as a new parse gives it. Each is dropped when its own analysis is done (the wrapper rounds
    parse the modules they re-analyse again). The memory a held
    tree took is not all given back to the system (the allocator's arenas stay fragmented), so holding
    raises the scan's later peak as well: hence a budget left over from the scan's own estimated peak."""

    budget: int
    used: int = 0
    open: bool = True  # while the first tables are made: the only modules held

    def take(self, entry: _Module, *, agents: bool) -> bool:
        limit = self.budget if agents else self.budget // 2
        if not self.open or self.used + len(entry.source) > limit:
            return False
        self.used += len(entry.source)
        return True

    def give_back(self, entry: _Module) -> None:
        self.used -= len(entry.source)


def _syntax_error(exc: cst.ParserSyntaxError) -> str:
    return f"syntax error at line {exc.raw_line}, column {exc.raw_column}: {exc.message}"


@attrs.frozen
class ScanContext:
    """The project tables of one scan: enough to re-scan one of its files as the scan saw it."""

    externals: Mapping[str, Kind]
    tools: Mapping[str, tuple[Finding, ...]]
    wrappers: Mapping[str, Mapping[str, tuple[str, str]]]
    sdk: Mapping[str, str]
    tool_sites: Mapping[str, ToolSite] = attrs.field(factory=dict)
    state_graphs: tuple[graphs.Graph, ...] = ()


def scan_source(source: str, path: str, *, context: ScanContext | None = None) -> tuple[LlmCall, ...]:
    """Every LLM call in one module. Raises ``cst.ParserSyntaxError`` on bad syntax."""

    def work() -> tuple[LlmCall, ...]:
        module = parse_module(source)
        index = ModuleIndex().build(module)
        index.source = source
        if context is None:
            return analyse_module(module, index, path=path, externals=None).calls
        crossref.absolutise(index, path)
        token, graphs_token = apis.EXTRA_SDK.set(context.sdk), graphs.GRAPHS.set(context.state_graphs)
        try:
            return analyse_module(
                module, index, path=path, externals=context.externals, imported_tools=context.tools,
                wrappers=context.wrappers, tool_sites=context.tool_sites,
            ).calls  # fmt: skip
        finally:
            apis.EXTRA_SDK.reset(token)
            graphs.GRAPHS.reset(graphs_token)

    return deep_stack(work)


def _decode(data: bytes) -> str:
    """Honour a PEP 263 coding cookie or a BOM, as Python itself does."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    return data.decode(encoding)


def scan_tree(
    root: Path, *, progress: Callable[[int, str], None] | None = None, options: ScanOptions | None = None
) -> ScanResult:
    """Scan every Python file under ``root``; paths in the result are relative POSIX."""
    with _fewer_collections():
        return deep_stack(lambda: _scan_tree(root, progress=progress, options=options or ScanOptions()))


# A scan builds and drops millions of syntax nodes while it holds large tables. At CPython's
# default thresholds (700 new objects) the cyclic collector ran thousands of times, and its
# passes over the whole live heap took a fifth of the CPU of a scan of a real tree. The trees
# are freed by reference counting (nothing of them is in a cycle), so collecting rarely
# frees the same memory: the first threshold is raised while a scan runs, then restored.
_SCAN_GC_THRESHOLD = 50_000


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], _SCAN_GC_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@attrs.define
class _Tree:
    """What the walk found: files to analyse, the rest (by module name), and what to report."""

    parsed: list[_Module] = attrs.Factory(list)
    others: dict[str, str] = attrs.Factory(dict)  # module name (every suffix) -> rel of a file not parsed
    errors: list[ParseProblem] = attrs.Factory(list)
    skipped: list[ParseProblem] = attrs.Factory(list)
    notebooks: list[str] = attrs.Factory(list)
    # Files not parsed that build a state graph (scan/graphs.py): which functions are its nodes and routers.
    graph_sources: list[tuple[str, str]] = attrs.Factory(list)
    files: int = 0
    lines: int = 0
    rels: list[str] = attrs.Factory(list)  # every Python file walked
    # Method name -> the indented ``def`` of it outside test folders, counted up to two (apis.METHOD_DEFS).
    method_defs: dict[str, int] = attrs.Factory(dict)


def _scan_tree(root: Path, *, progress: Callable[[int, str], None] | None, options: ScanOptions) -> ScanResult:
    token = apis.EXTRA_SDK.set(dict(options.sdk))
    served = apis.SERVED_GRAPHS.set(served_graphs(root))
    inherited = apis.INHERITED_WRAPPERS.set(MappingProxyType({}))
    overridden = apis.OVERRIDDEN_WRAPPERS.set(frozenset())
    class_bases = apis.CLASS_BASES.set(MappingProxyType({}))
    subclass_clients = apis.SUBCLASS_CLIENTS.set(MappingProxyType({}))
    kept = apis.KEPT_OUTPUTS.set(MappingProxyType({}))
    method_defs = apis.METHOD_DEFS.set(MappingProxyType({}))
    base = root if root.is_dir() else root.parent
    package = crossref.PACKAGE.set(crossref.package_of(base))
    try:
        tree = _walk_tree(root, base=base, progress=progress, options=options)
        apis.METHOD_DEFS.set(MappingProxyType(tree.method_defs))
        folders = crossref.SCRIPT_FOLDERS.set(crossref.ScriptFolders.of(tree.rels))
        try:
            _follow_imports(tree, base=base, options=options)
            calls, context = _analyse_tree(tree, base=base, options=options)
        finally:
            crossref.SCRIPT_FOLDERS.reset(folders)
    finally:
        crossref.PACKAGE.reset(package)
        apis.METHOD_DEFS.reset(method_defs)
        apis.OVERRIDDEN_WRAPPERS.reset(overridden)
        apis.KEPT_OUTPUTS.reset(kept)
        apis.CLASS_BASES.reset(class_bases)
        apis.SUBCLASS_CLIENTS.reset(subclass_clients)
        apis.INHERITED_WRAPPERS.reset(inherited)
        apis.SERVED_GRAPHS.reset(served)
        apis.EXTRA_SDK.reset(token)
    calls.sort(key=lambda c: (c.location.path, c.location.line, c.location.column))
    return ScanResult(
        tuple(calls), tuple(sorted(tree.errors)), tree.files, tree.lines, tuple(tree.notebooks), tuple(sorted(tree.skipped)),
        context=context,
    )


# An indented ``def`` (a method, or a function nested in one): what apis.METHOD_DEFS counts.
_METHOD_DEF = re.compile(rb"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.M)


def _walk_tree(root: Path, *, base: Path, progress: Callable[[int, str], None] | None, options: ScanOptions) -> _Tree:
    tree = _Tree()
    extra = _sdk_hint(options)
    for number, rel in enumerate(iter_files(root, exclude=options.exclude, include=options.include), start=1):
        if progress is not None:
            progress(number, rel)
        if rel.endswith(".ipynb"):
            tree.notebooks.append(rel)
            continue
        tree.files += 1
        tree.rels.append(rel)
        try:
            data = (base / rel).read_bytes()
        except OSError as exc:
            tree.errors.append(ParseProblem(rel, f"cannot read: {exc.strerror}"))
            continue
        tree.lines += data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        if not is_test_path(rel):
            for method in _METHOD_DEF.findall(data):
                name = method.decode("ascii", "replace")
                tree.method_defs[name] = min(tree.method_defs.get(name, 0) + 1, 2)
        if not might_call_llm(data, extra=extra) and not _may_re_export(rel, data):
            # It imports an SDK: a syntax error there is reported (exit 2), never skipped silently.
            # Python's own parser is the cheap check; libcst parses only files that are analysed.
            problem = _rejected(rel, data) if imports_sdk(data) else None
            if problem is not None:
                tree.errors.append(problem)
                continue
            # Nothing shaped like a model call: not parsed unless a parsed file imports it.
            for name in _suffixes(crossref.module_name(rel)):
                tree.others.setdefault(name, rel)
            if b"add_conditional_edges" in data and (source := _decode_or_none(data)) is not None:
                tree.graph_sources.append((rel, source))  # a graph module imports its nodes, no SDK
            continue
        note = _skip_note(rel, data, options=options)
        if note is not None:
            tree.skipped.append(ParseProblem(rel, note))
            continue
        problem = _parse_into(tree.parsed, rel, data)
        if problem is not None:
            tree.errors.append(problem)
    return tree


def _skip_note(rel: str, data: bytes, *, options: ScanOptions) -> str | None:
    if len(data) > options.max_file_bytes:
        return f"not analysed: {len(data) // 1024} KB is over the {options.max_file_bytes // 1024} KB limit (max-file-kb)"
    if looks_generated(rel, data):
        return "not analysed: generated code (a generator's marker or a *_pb2.py name)"
    return None


def _sdk_hint(options: ScanOptions) -> re.Pattern[bytes] | None:
    if not options.sdk:
        return None
    names = sorted({part for name in options.sdk for part in name.split(".")})
    return re.compile(b"|".join(re.escape(n.encode()) for n in names))


def _suffixes(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[start:]) for start in range(len(parts))]


def _follow_imports(tree: _Tree, *, base: Path, options: ScanOptions) -> None:
    """Parse the project modules the candidate files import (two levels): a tool's helper
    in ``payments.py`` holds the evidence even though it never names a model."""
    done: set[str] = set()
    for _ in range(2):
        wanted: set[str] = set()
        for entry in tree.parsed:
            if entry.rel in done:
                continue
            done.add(entry.rel)
            crossref.absolutise(entry.imports, entry.rel)
            for target in entry.imports.imports.values():
                for module in (target, target.rpartition(".")[0]):
                    found = tree.others.get(module)
                    if found is not None:
                        wanted.add(found)
        for rel in sorted(wanted):
            for name in _suffixes(crossref.module_name(rel)):
                tree.others.pop(name, None)
            data = (base / rel).read_bytes()
            note = _skip_note(rel, data, options=options)
            problem = None if note is not None else _parse_into(tree.parsed, rel, data)
            if problem is not None:
                tree.errors.append(problem)
    tree.parsed.sort(key=lambda p: p.rel)


def _analyse_tree(tree: _Tree, *, base: Path, options: ScanOptions) -> tuple[list[LlmCall], ScanContext]:
    held = _HeldTrees(_held_budget(tree.parsed))
    for entry in tree.parsed:
        crossref.absolutise(entry.imports, entry.rel)
        entry.held_in = held
    try:
        return _analyse_held(tree, base=base, options=options, held=held)
    finally:
        for entry in tree.parsed:
            entry.drop()


def _analyse_held(tree: _Tree, *, base: Path, options: ScanOptions, held: _HeldTrees) -> tuple[list[LlmCall], ScanContext]:
    # A graph module a parsed file imports is parsed too: its text once.
    sources = dict([*tree.graph_sources, *((entry.rel, entry.source) for entry in tree.parsed)])
    project_graphs = graphs.graphs_of(sorted(sources.items()))
    token = graphs.GRAPHS.set(project_graphs)
    try:
        calls, context = _analyse_graphs_set(tree, base=base, options=options, held=held)
    finally:
        graphs.GRAPHS.reset(token)
    return calls, attrs.evolve(context, state_graphs=project_graphs)


def _analyse_graphs_set(tree: _Tree, *, base: Path, options: ScanOptions, held: _HeldTrees) -> tuple[list[LlmCall], ScanContext]:
    targets = _import_targets(tree.parsed)
    reached = _reached_by(targets)
    tables = _Tables()
    analysable: list[_Module] = []
    for entry in tree.parsed:
        # A module no import reaches: nothing of it is ever looked up, it is only analysed (in its turn).
        if not reached(entry.rel) or tables.add(tree, entry, wanted=crossref.imported_by(targets, entry.rel)):
            analysable.append(entry)
    held.open = False
    # One meter for the scan: following the output into another module counts against the file followed from.
    meter = WorkMeter()
    table, tool_table = crossref.with_reexports(tables.kinds, tables.indexes), crossref.with_reexports(tables.tools, tables.indexes)
    sites = crossref.with_reexports(tables.sites, tables.indexes)
    _import_star_names(tree.parsed, [*table, *tool_table])
    # Agents of one module run from another (an agent of an agent's too): their tools, classified with
    # the tools they import from other modules, for the modules that bind an agent someone imports.
    pairs = enumerate(zip(tables.kinds, tables.tools, strict=True))
    with_agents = [i for i, ((_rel, kinds_found), (_r, own)) in pairs if crossref.imports_tools_for_others(kinds_found, own)]
    regrown: Collection[str] | None = None  # the tool table's keys the first round added or changed
    for _round in range(2 if with_agents else 0):
        for i in with_agents:
            (rel, own_tools), entry = tables.tools[i], tables.entries[i]
            if regrown is not None and not _may_look_up(entry, regrown, table):
                continue  # the second round would read what the first read: the same exports again
            loaded = entry.load(tree.errors)
            assert loaded is not None  # it loaded for its tables
            wanted = crossref.imported_by(targets, rel)
            own_tools.update(crossref.agent_tool_exports(*loaded, imported=tool_table, externals=table, sites=sites, wanted=wanted))
            entry.release()
        first, tool_table = tool_table, crossref.with_reexports(tables.tools, tables.indexes)
        regrown = {key for key in first.keys() | tool_table.keys() if first.get(key) != tool_table.get(key)}
    context = ScanContext(table, tool_table, {}, dict(options.sdk), sites)
    apis.SUBCLASS_CLIENTS.set(_subclass_clients(tables))
    project = ProjectFlow(
        tables.loadable(meter), externals=table, tools=tool_table, implementers=_Implementers(tree, base=base, meter=meter, options=options),
        callers=_Callers(tree, base=base, meter=meter, options=options), run_folders=_RunFolders(tree, base=base, options=options),
    )  # fmt: skip
    by_file: dict[str, tuple[LlmCall, ...]] = {}
    imports_of: dict[str, Mapping[str, str]] = {}  # what each analysed module imports, for its wrapper call sites
    returned_by: dict[str, tuple[frozenset[str], ...]] = {}
    bases: dict[str, set[str]] = {}  # class -> the classes it derives from (names as written), every module's
    apis.CLASS_BASES.set(bases)  # filled as the modules are analysed (_analyse_one)
    defined: dict[str, str | None] = {}  # class (as written) -> the module defining it (None: more than one does)
    owned: dict[str, Mapping[str, tuple[str, str]]] = {}  # module -> its wrappers, private methods too
    kept_by: dict[str, Mapping[str, frozenset[str]]] = {}  # module -> its methods keeping the output on self (ModuleCalls.kept)
    returned: list[tuple[str, Mapping[str, Mapping[str, tuple[str, str]]]]] = []
    # Modules where no call matched without wrappers: a wrapper round analyses one again only if it
    # writes a wrapper's name or one whose externals entry changed since (see _WrapperWords).
    quiet: set[str] = set()
    changed: dict[str, list[Kind]] = {}  # externals entries the wrapper rounds added or changed: what they were and are
    # What each module was last analysed with (see _Seen), to skip an analysis that can only repeat.
    seen: dict[str, _Seen] = {}
    version = 0  # bumped when a round grows the tables (externals, tools, tool sites, modules to follow into)
    for entry in analysable:
        with project.reading() as reads:
            found = _analyse_one(tree, entry, meter=meter, context=context, options=options, project=project, bases=bases,
                                 defined=defined)  # fmt: skip
        if found is not None:
            by_file[entry.rel], returned_by[entry.rel] = found.calls, found.returned_by
            imports_of[entry.rel] = entry.imports.imports
            owned[entry.rel] = found.returns_output
            kept_by[entry.rel] = found.kept
            returned.append((entry.rel, crossref.wrapper_exports(found.returns_output)))
            if not found.calls:
                quiet.add(entry.rel)
            seen[entry.rel] = _Seen.of(found, context.wrappers, (version, project.known), {}, reads=reads, project=project)
    given: dict[str, dict[str, tuple[str, str]]] = {}
    # Later rounds, only for the files that call another module's wrapper: its call sites are calls,
    # and a function returning such a call's output is a wrapper for the next round (a wrapper of a
    # wrapper two modules away: AICaller.call_model, then DefaultAgentCompletion.generate_tests).
    callers: list[_Module] = []
    fresh = returned
    subclasses = _Subclasses(tree, base=base)
    for _round in range(_CROSS_MODULE_ROUNDS):
        apis.KEPT_OUTPUTS.set(_kept_outputs(owned, kept_by))
        # from pkg import Wrapper (re-exported) too, and a class's wrapper methods inherited from another module's class
        used, declared = _with_inherited(returned, bases, defined, [*analysable, *callers])
        apis.INHERITED_WRAPPERS.set(declared)
        wrappers = crossref.with_reexports(used, tables.indexes)
        grown_modules = {name.rpartition(".")[0] for name in crossref.table(fresh)}
        found_callers = _wrapper_callers(tree, base=base, options=options, wrappers=fresh, skip={e.rel for e in callers},
                                         externals=table)
        callers += found_callers
        more = targets | _import_targets(callers)
        if not more <= targets:  # they may look up tools no candidate imports
            _export_more_tools(tree, tables, old=targets, new=more)
            now_reached = _reached_by(more)
            # Project modules only a caller imports (emailer.py, naming no SDK, given a callback): parsed now.
            imported = _parse_imported(tree, found_callers, base=base, options=options)
            newly = [e for e in [*analysable, *imported] if not e.kept and now_reached(e.rel)]
            added = [e for e in newly if tables.add(tree, e, wanted=crossref.imported_by(more, e.rel))]
            if added:
                # What the first round never looked up, now reachable: the tables as if they had held it all along.
                before = dict(table)
                table.update(crossref.with_reexports(tables.kinds, tables.indexes))
                for key, kind in table.items():
                    if before.get(key) is not kind:
                        changed.setdefault(key, []).extend(k for k in (before.get(key), kind) if k is not None)
                sites.update(crossref.with_reexports(tables.sites, tables.indexes))
                project.add(tables.loadable(meter)[-len(added) :])
            context = attrs.evolve(context, tools=crossref.with_reexports(tables.tools, tables.indexes))
            targets = more
            version += 1
        context = attrs.evolve(context, wrappers=wrappers)
        unseen = _Unseen(wrappers, table, project)
        calling = {id(entry) for entry in found_callers}
        named = (
            _named_callers([*analysable, *callers], wrappers, table) | _mixin_callers([*analysable, *callers], wrappers)
            | _injected_callers([*analysable, *callers], wrappers, registries=any(kind == BY_NAME for kind in table.values()))
            | _loading_callers([*analysable, *callers], wrappers)
        )
        exported = dict(returned)
        grown: list[tuple[str, Mapping[str, Mapping[str, tuple[str, str]]]]] = []
        interfaces = {key.rpartition('.')[2] for key, kind in table.items() if kind == PROJECT_INTERFACE}
        inherited = _inherited(owned, bases, defined, subclasses, interfaces)
        written = _WrapperWords(
            wrappers, table, changed=changed, families=provider_families(wrappers), registered=registered_families(wrappers, table),
            only=only_implemented(wrappers),
        )
        handing = _handing_out(table, wrappers)
        for entry in [*analysable, *callers]:
            if any(
                t in wrappers or t in grown_modules or t.rpartition(".")[0] in grown_modules
                or table.get(t) == PROJECT_INTERFACE  # self.model.query(...) with model: Model, any new wrapper
                or t in handing  # ai = config.create_issue_investigator(), "-> 'IssueInvestigator'": a wrapper class
                for t in entry.imports.imports.values()
            ) or entry.rel in named or inherited.get(entry.rel, {}) != given.get(entry.rel, {}):  # fmt: skip
                given[entry.rel] = inherited.get(entry.rel, {})
                if entry.rel in quiet and not given[entry.rel] and not written.in_module(entry.source, _targets(entry)):
                    continue  # nothing matched in it without wrappers, it inherits none and names none: nothing again
                last = seen.get(entry.rel)
                if last is not None and not unseen.since(last, (version, project.known), given[entry.rel], entry):
                    continue  # analysed with the same tables, and none of the wrappers new since is named in it: the same again
                with project.reading() as reads:
                    found = _analyse_one(tree, entry, meter=meter, context=context, options=options, project=project, bases=bases,
                                         defined=defined, inherited=given[entry.rel])  # fmt: skip
                if found is None or found.calls:
                    quiet.discard(entry.rel)
                seen.pop(entry.rel, None)
                if found is not None:
                    seen[entry.rel] = _Seen.of(found, wrappers, (version, project.known), given[entry.rel], reads=reads, project=project)
                if found is not None:
                    by_file[entry.rel], returned_by[entry.rel] = found.calls, found.returned_by
                    imports_of[entry.rel] = entry.imports.imports
                    owned[entry.rel] = found.returns_output
                    _overridden(given[entry.rel], found.returns_output)
                    kept_by[entry.rel] = found.kept
                    # LLMClientBase.stream_async, abstract, which the clients deriving from it in other modules
                    # implement with the model: a call of it on an object typed by the base (llm_client:
                    # LLMClientBase) elsewhere runs one of them.
                    now = crossref.wrapper_exports({**given[entry.rel], **found.returns_output})
                    if now and now != exported.get(entry.rel):
                        exported[entry.rel] = now
                        grown.append((entry.rel, now))
            elif id(entry) in calling and entry.load(tree.errors) is not None:
                entry.release()  # parsed all the same: a file the scan reads and libcst cannot parse is reported
        if not grown:
            if _with_inherited(returned, bases, defined, [*analysable, *callers])[0] == used:
                break
            continue  # the round's modules made known classes inheriting wrappers: their instances' calls, again
        returned, fresh = sorted(exported.items()), grown
    by_file = with_callers_evidence(by_file, returned_by, bases=bases, imports=imports_of)
    calls = [
        attrs.evolve(call, in_tests=True) if is_test_path(rel) else call
        for rel in sorted(by_file)
        for call in _with_tool_lines(by_file[rel], base=base)
    ]
    return calls, context


def _subclass_clients(tables: _Tables) -> Mapping[str, Mapping[str, Kind]]:
    """Base class (as written) -> attribute -> the model client a class deriving from it in another module
    binds to that attribute (``class OpenAI(BaseOpenAI)`` setting ``self.client = openai.OpenAI(...).chat.completions``,
    exported as ``OpenAI.client``): the base's methods calling ``self.client.create(...)`` ask it. Only a base
    class one module defines, and the first client (by module) each attribute is bound to."""
    defining: dict[str, int] = {}
    for entry in tables.entries:
        for name in set(_TOP_CLASS.findall(entry.source or "")):
            defining[name] = defining.get(name, 0) + 1
    out: dict[str, dict[str, Kind]] = {}
    for (_rel, kinds), entry in sorted(zip(tables.kinds, tables.entries, strict=True), key=lambda pair: pair[0][0]):
        heads = {head.group(1): head.group(2) for head in _Subclasses.HEAD.finditer(entry.source or "")}
        for key, kind in sorted(kinds.items()):
            owner, _, attr = key.partition(".")
            if not attr or "." in attr or attr.endswith("()") or owner not in heads or kind.provider in {"project", "mock"}:
                continue
            for written in heads[owner].split(","):
                base = written.strip().rpartition(".")[2]
                if not base.isidentifier() or base == owner or defining.get(base) != 1:
                    continue
                if re.search(rf"^class[ \t]+{base}\b", entry.source or "", re.M) is None:  # its own module's: resolve's
                    out.setdefault(base, {}).setdefault(attr, kind)
    return MappingProxyType({base: MappingProxyType(attrs_) for base, attrs_ in out.items()})


_TOP_CLASS = re.compile(r"^class[ \t]+(\w+)", re.M)


def _kept_outputs(
    owned: Mapping[str, Mapping[str, tuple[str, str]]], kept_by: Mapping[str, Mapping[str, frozenset[str]]]
) -> Mapping[str, frozenset[str]]:
    """``Class.method`` -> the attributes the method keeps the output in (``LettaLLMRequestAdapter.invoke_llm``:
    ``tool_call``), and the same for the classes it derives from (``LettaLLMAdapter.invoke_llm``: a call on
    an object typed by the base runs it), unless that method of theirs returns the output (apis.KEPT_OUTPUTS)."""
    returning = {q for rel, found in owned.items() for q in found if q not in kept_by.get(rel, {})}
    bases = apis.CLASS_BASES.get()
    out: dict[str, frozenset[str]] = {}
    for found in kept_by.values():
        for qualname, attributes in found.items():
            owner, _, method = qualname.rpartition(".")
            for name in [owner, *ancestors(owner, bases)]:
                if f"{name}.{method}" not in returning:
                    out[f"{name}.{method}"] = out.get(f"{name}.{method}", frozenset()) | attributes
    return MappingProxyType(out)


class _WrapperWords:
    """The names through which a module's call can match one of another module's wrappers.

    A wrapper is matched (``call_match``, ``resolve``) only through: the qualified name of a
    callee, a class called or an annotation (``ask(...)``, ``LLM()``, ``caller: AICaller``), whose
    last part is a name written in the module (its import, or the attribute, names it); a receiver
    named after the class or its last words calling one of its methods (``globals.ai.run(`` for
    ``AI.run``, ``self.llm.aask(`` for ``BaseLLM.aask``); or one
    of its methods called on an object typed as a project interface, reached through a name
    written in the module (the externals' keys of interface kinds). A module that writes none
    of them matches with these wrappers exactly what it matched with none. The externals (what
    other modules bind) are looked up by a qualified name, one of the module's import targets
    and the names written after it (``tools.send``), and a model object's attribute
    (``self.agents.writer``) or a crew's method also by a name written in the module. A module
    where nothing matched before the wrapper rounds, which writes none of these names, can look
    up no externals entry new or changed since (``changed``) and whose classes inherit no wrapper
    from a subclass, has nothing to analyse again.

    A string literal read as a name (a string annotation, ``getattr``'s name) counts by its
    value: its words are the text's, or the text's with each escape read as the separator it
    stands for and each backslash-newline joining its lines; an escape that can spell a letter
    (hex, unicode, a character's name, octal) makes the module analysed again all the same.
    """

    _WORD = re.compile(r"\w+")
    _CONTINUED = re.compile(r"\\(?:\r\n|\r|\n)")
    _ESCAPED = re.compile(r"\\.")
    _SPELLS = re.compile(r"\\[xuUN0-7]")

    def __init__(
        self, wrappers: Mapping[str, Mapping[str, tuple[str, str]]], externals: Mapping[str, Kind], *, changed: Mapping[str, Sequence[Kind]],
        families: Collection[str] = (), called: Iterable[str] = (), registered: Collection[str] = (),
        only: Collection[str] = (),
    ) -> None:
        # Functions and classes, and changed externals an attribute may find (a model object's, a crew's; a
        # project class is looked up only by qualified name): any one written may match.
        self.names = {
            key.rpartition(".")[2].removesuffix("()")
            for key, kinds in changed.items() if any(kind.provider != "project" or kind.kind == "crew" for kind in kinds)
        }  # fmt: skip
        self.names.update(called)  # a class's methods changed, its instances' kind not: called by their names (see _wrappers_delta)
        # Each changed externals key under each of its dotted prefixes, with the names after it: an import
        # target among them looks it up only through an attribute chain of those names written after it.
        self.below: dict[str, list[list[str]]] = {}
        for key in changed:
            parts = key.removesuffix("()").split(".")
            for end in range(1, len(parts) + 1):
                self.below.setdefault(".".join(parts[:end]), []).append(parts[end:])
        # A method -> its classes' names and endings a receiver may be named after (``_named_after``), lower case.
        self.methods: dict[str, set[str]] = {}
        for owner, methods in wrappers.items():
            name = owner.rpartition(".")[2]
            self.names.add(name.removesuffix("()"))
            for method in methods:
                if method.endswith("()"):
                    # get_llm(), a method handing out a wrapper: called on self in a subclass or a mixin, by any receiver.
                    self.names.add(method.removesuffix("()"))
                elif method:
                    self.methods.setdefault(method, set()).update(ending.lower() for ending in _named_after(name))
                if method in families:  # a provider family's method, on a receiver named for a model (self.llm)
                    self.methods[method].update(PROVIDER_WORDS)
                if method in registered or method in only:  # a registered family's method, or the only def of it: any receiver
                    self.methods[method].add("")
        self.interfaces = {
            key.rpartition(".")[2].removesuffix("()")
            for key, kind in externals.items()
            if kind.kind == "interface" or kind.kind.startswith("interface:")
        }  # fmt: skip

    def in_module(self, source: str, targets: Iterable[str]) -> bool:
        if self._SPELLS.search(source):
            return True
        joined = self._CONTINUED.sub("", source)
        words = {*self._WORD.findall(source), *self._WORD.findall(joined), *self._WORD.findall(self._ESCAPED.sub(" ", joined))}
        if not self.names.isdisjoint(words):
            return True
        if any(all(name in words for name in rest) for target in targets for rest in self.below.get(target, ())):
            return True
        called = [method for method in self.methods if method in words]
        if not called:
            return False
        if not self.interfaces.isdisjoint(words):
            return True
        receivers = source.replace("_", "").lower()
        return any(owner in receivers for method in called for owner in self.methods[method])


@attrs.frozen
class _Seen:
    """What a module was last analysed with: the wrappers, the tables' version and
    the wrappers its classes inherit; ``repeatable`` unless its file's budget of steps ran out (an
    analysis again, with more of the scan's memo filled, may get further). What it read of taint by
    parameter's modules and summaries (``reads``), and whether that was still so when it was done
    (``settled``: not when it made a module known that it had looked up before)."""

    wrappers: Mapping[str, Mapping[str, tuple[str, str]]]
    version: tuple[int, int]
    inherited: Mapping[str, tuple[str, str]]
    repeatable: bool
    reads: FlowReads
    settled: bool

    @classmethod
    def of(
        cls, found: ModuleCalls, wrappers: Mapping[str, Mapping[str, tuple[str, str]]], version: tuple[int, int],
        inherited: Mapping[str, tuple[str, str]], *, reads: FlowReads, project: ProjectFlow,
    ) -> _Seen:
        ran_out = any(_RAN_OUT in f.detail for call in found.calls for f in call.findings)
        return cls(wrappers, version, dict(inherited), not ran_out, reads, project.unchanged(reads))


_RAN_OUT = "analysis time limit ran out"


class _Unseen:
    """Whether a module analysed before (``_Seen``) can come out differently now.

    With the same tables (externals, tools, tool sites, and the modules taint by parameter can follow
    into, which a protocol's implementers add to as well: ``version``) and the same inherited wrappers, only the wrappers differ, and the analysis
    reaches a wrapper only through a name written in the module (``_WrapperWords``): one that writes
    no name of a wrapper added, changed or dropped since (of a class whose instances' kind is the same, no
    name of its methods that changed: ``_wrappers_delta``) is analysed exactly as before. What taint by
    parameter follows into was memoised by that analysis, so the memo is not filled differently.

    The modules to follow into grow as other analyses follow a call on a protocol into its implementers
    (``version[1]``), mostly under names this module's analysis never looked up: when every name it looked
    up finds what it found and no summary it cut short has been made since (``ProjectFlow.unchanged``),
    it reads the same as before, as with the same modules."""

    def __init__(
        self, wrappers: Mapping[str, Mapping[str, tuple[str, str]]], externals: Mapping[str, Kind], project: ProjectFlow,
    ) -> None:
        self.wrappers, self.externals, self.project = wrappers, externals, project
        self._words: dict[int, _WrapperWords] = {}

    def since(self, last: _Seen, version: tuple[int, int], inherited: Mapping[str, tuple[str, str]], entry: _Module) -> bool:
        if not last.repeatable or last.version[0] != version[0] or dict(inherited) != last.inherited:
            return True
        if last.version[1] != version[1] and not (last.settled and self.project.unchanged(last.reads)):
            return True
        words = self._words.get(id(last.wrappers))
        if words is None:
            before, now = last.wrappers, self.wrappers
            delta, methods = _wrappers_delta(before, now)
            families = {*provider_families(before), *provider_families(now)}
            registered = {*registered_families(before, self.externals), *registered_families(now, self.externals)}
            only = {*only_implemented(before), *only_implemented(now)}
            words = self._words[id(last.wrappers)] = _WrapperWords(
                delta, self.externals, changed={}, families=families, called=methods, registered=registered, only=only,
            )
        return words.in_module(entry.source, _targets(entry))


def _wrappers_delta(
    before: Mapping[str, Mapping[str, tuple[str, str]]], now: Mapping[str, Mapping[str, tuple[str, str]]],
) -> tuple[dict[str, Mapping[str, tuple[str, str]]], set[str]]:
    """What differs between two wrappers tables, as the analysis can see it: the wrappers (functions and
    classes) added, dropped, or whose instances' kind changed, whole; and, of a class whose instances'
    kind is the same, the names of the methods added, changed or dropped.

    The resolver reads a class's entry as a whole only for its instances' kind (``Resolver._instance_of``,
    an annotation's kind: whether it is there, whether it is a function, its first answer's provider); every
    other look-up is by the name of the method called, written in the module (``x.run(``, ``self.run(``,
    ``self.get_llm()(``), except a function's (``""``) and an instance called (``__call__``), found through
    the wrapper's own name. So a module that writes none of a class's changed methods matches through that
    class exactly what it matched before."""
    delta: dict[str, Mapping[str, tuple[str, str]]] = {}
    methods: set[str] = set()
    for owner in sorted(now.keys() | before.keys()):
        was, is_ = before.get(owner), now.get(owner)
        if was == is_:
            continue
        if was is None or is_ is None or _instance_kind(was) != _instance_kind(is_):
            delta[owner] = now[owner] if owner in now else before[owner]
            continue
        differ = {method for method in was.keys() | is_.keys() if was.get(method) != is_.get(method)}
        if differ & {"", "__call__"}:
            delta[owner] = is_
        else:
            methods.update(method.removesuffix("()").rpartition(".")[2] for method in differ)
    return delta, methods


def _instance_kind(methods: Mapping[str, tuple[str, str]]) -> tuple[bool, bool, str | None]:
    """What the resolver reads of a wrapper class's whole entry (``Resolver._instance_of``)."""
    return bool(methods), "" in methods, min(methods.values())[0] if methods else None


def _targets(entry: _Module) -> list[str]:
    """What the module's index will resolve names through: its imports, and what its star imports bring."""
    return [*entry.imports.imports.values(), *entry.star_names.values()]


def _project_modules(
    tree: _Tree, base: Path, options: ScanOptions, pattern: re.Pattern[bytes]
) -> Iterator[tuple[_Module, ast.Module | None]]:
    """The project's modules (tests left out) whose text ``pattern`` finds, parsed or not yet, each with
    Python's tree of it (its outline and functions filled in on the way): where _Implementers and _Callers
    look for a method's definitions and calls."""
    texts = {entry.rel: entry for entry in tree.parsed}
    for rel in sorted({*texts, *tree.others.values()}):
        if is_test_path(rel):
            continue
        entry = texts.get(rel)
        if entry is None:
            try:
                data = (base / rel).read_bytes()
            except OSError:
                continue
            if not pattern.search(data) or _skip_note(rel, data, options=options) is not None:
                continue
            decoded = _decode_or_none(data)
            if decoded is None:
                continue
            entry = _Module(rel, decoded, Imports())
        elif not pattern.search(entry.source.encode()):
            continue
        python = _python_tree(entry.source)
        if python is not None and entry.outline is None:
            entry.outline, entry.functions = outline(python), functions_of(python)
        yield entry, python


@attrs.define
class _Implementers:
    """The project's classes with a method of a given name (``execute``), for a call on a protocol or
    abstract class (``self.env.execute(action)``, ``env: Environment``): whichever may stand behind it.
    Found by the method's ``def`` in the text, then by Python's parser; once per name."""

    tree: _Tree
    base: Path
    meter: WorkMeter
    options: ScanOptions
    found: dict[str, list[tuple[str, Loadable]]] = attrs.Factory(dict)
    # The base classes' names of the classes of the modules defining a method asked for, by class name.
    bases: dict[str, set[str]] = attrs.Factory(dict)

    def __call__(self, method: str) -> list[tuple[str, Loadable]]:
        if method not in self.found:
            self.found[method] = self._find(method)
        return self.found[method]

    def derived(self, method: str, base: str) -> list[tuple[str, Loadable]]:
        """Those of ``self(method)`` whose class derives from a class named ``base`` (``class RunSqlTool(
        Tool[Args])``), directly or through classes of the modules defining the method."""
        implementers = self(method)
        out = []
        for qualified, loadable in implementers:
            seen: set[str] = set()
            todo = [qualified.rsplit(".", 2)[-2]]
            while todo:
                name = todo.pop()
                if name in seen or len(seen) > MAX_BASE_NAMES:
                    continue
                seen.add(name)
                todo += self.bases.get(name, ())
            if base in seen - {qualified.rsplit(".", 2)[-2]}:
                out.append((qualified, loadable))
        return out

    def _find(self, method: str) -> list[tuple[str, Loadable]]:
        defining = re.compile(rb"^[ \t]+(?:async[ \t]+)?def[ \t]+" + re.escape(method.encode()) + rb"\s*\(", re.M)
        out: list[tuple[str, Loadable]] = []
        for entry, python in _project_modules(self.tree, self.base, self.options, defining):
            rel = entry.rel
            for node in python.body if python is not None else ():
                if isinstance(node, ast.ClassDef):
                    self.bases.setdefault(node.name, set()).update(filter(None, map(_base_of, node.bases)))
            classes = [
                node.name for node in (python.body if python is not None else ())
                if isinstance(node, ast.ClassDef)
                and any(isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and f.name == method for f in node.body)
            ]  # fmt: skip
            load = functools.partial(entry.parsed_apart, self.meter)
            out += [(f"{crossref.module_name(rel)}.{name}.{method}", (rel, load, entry.functions, entry.lookups)) for name in classes]
        return out


# Class names walked up from one class to its bases, when asking whether it derives from another.
MAX_BASE_NAMES = 16


def _base_of(node: ast.expr) -> str:
    """``Tool``, ``tools.Tool``, ``Tool[Args]``: ``Tool``."""
    if isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


@attrs.define
class _Callers:
    """The project modules calling a method of a given name on something (``.reply(``), for an output
    written into a parameter of a method of that name (``ProjectFlow.filled_findings``). Found by the
    call in the text; once per name."""

    tree: _Tree
    base: Path
    meter: WorkMeter
    options: ScanOptions
    found: dict[str, list[Loadable]] = attrs.Factory(dict)

    def __call__(self, method: str) -> list[Loadable]:
        if method not in self.found:
            self.found[method] = self._find(method)
        return self.found[method]

    def _find(self, method: str) -> list[Loadable]:
        calling = re.compile(rb"\." + re.escape(method.encode()) + rb"\s*\(")
        out: list[Loadable] = []
        for entry, _python in _project_modules(self.tree, self.base, self.options, calling):
            out.append((entry.rel, functools.partial(entry.parsed_apart, self.meter), entry.functions, entry.lookups))
        return out


# A fixed command that runs a file of its working folder: ``bash run.sh``, ``python main.py``.
_RUNS_A_FILE = re.compile(r"^\s*(?:bash|sh|zsh|python3?|node|ruby|perl)\s+[\w./-]+\.(?:sh|py|js|rb|pl)\b")
_STARTS_PROCESS = frozenset({"Popen", "run", "call", "check_call", "check_output", "create_subprocess_shell", "create_subprocess_exec"})


@attrs.define
class _RunFolders:
    """Stores whose folder a fixed command runs a file of (``subprocess.Popen("bash run.sh", shell=True,
    cwd=dbs.workspace.path)`` with ``dbs: DBs``): (the class the store hangs off, the attribute), found
    once in the project's text. An answer written into ``dbs.workspace`` elsewhere is code that runs."""

    tree: _Tree
    base: Path
    options: ScanOptions
    found: dict[tuple[str, str], str] | None = None

    def __call__(self) -> dict[tuple[str, str], str]:
        if self.found is None:
            self.found = self._find()
        return self.found

    def _find(self) -> dict[tuple[str, str], str]:
        texts = {entry.rel: entry.source for entry in self.tree.parsed}
        out: dict[tuple[str, str], str] = {}
        for rel in sorted({*texts, *self.tree.others.values()}):
            if is_test_path(rel):
                continue
            source = texts.get(rel)
            if source is None:
                try:
                    data = (self.base / rel).read_bytes()
                except OSError:
                    continue
                if b"cwd" not in data or _skip_note(rel, data, options=self.options) is not None:
                    continue
                source = _decode_or_none(data)
            if source is None or "cwd" not in source:
                continue
            python = _python_tree(source)
            for function in (n for n in ast.walk(python) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)) if python else ():
                declared = {a.arg: ast.unparse(a.annotation).rpartition(".")[2] for a in function.args.args if a.annotation is not None}
                for node in ast.walk(function):
                    store = _run_folder(node, declared)
                    if store is not None and isinstance(node, ast.Call):
                        out.setdefault(store, f"{rel}:{node.lineno}")
        return out


def _run_folder(node: ast.AST, declared: Mapping[str, str]) -> tuple[str, str] | None:
    """(class, attribute) of ``cwd=dbs.workspace.path`` in a process started on a fixed command running a file."""
    if not (isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute | ast.Name)):
        return None
    name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
    first = node.args[0]
    command = first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else None
    if isinstance(first, ast.List) and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in first.elts):
        command = " ".join(str(e.value) for e in first.elts if isinstance(e, ast.Constant))
    if name not in _STARTS_PROCESS or command is None or not _RUNS_A_FILE.match(command):
        return None
    cwd = next((k.value for k in node.keywords if k.arg == "cwd"), None)
    if isinstance(cwd, ast.Attribute) and cwd.attr in {"path", "root", "dir", "folder"}:
        cwd = cwd.value  # dbs.workspace.path: the store's own folder
    if isinstance(cwd, ast.Attribute) and isinstance(cwd.value, ast.Name) and cwd.value.id in declared:
        return declared[cwd.value.id], cwd.attr
    return None


# Rounds of wrappers across modules: a wrapper of a wrapper of a wrapper, each in its own module.
_CROSS_MODULE_ROUNDS = 8


@attrs.define
class _Tables:
    """What the modules other modules import export (no syntax nodes), and those modules."""

    kinds: list[tuple[str, Mapping[str, Kind]]] = attrs.Factory(list)
    tools: list[tuple[str, dict[str, tuple[Finding, ...]]]] = attrs.Factory(list)
    sites: list[tuple[str, Mapping[str, ToolSite]]] = attrs.Factory(list)
    entries: list[_Module] = attrs.Factory(list)

    @property
    def indexes(self) -> list[tuple[str, Imports]]:
        return [(entry.rel, entry.imports) for entry in self.entries]

    def loadable(self, meter: WorkMeter) -> list[Loadable]:
        return [(entry.rel, functools.partial(entry.parsed_apart, meter), entry.functions, entry.lookups) for entry in self.entries]

    def add(self, tree: _Tree, entry: _Module, *, wanted: Callable[[str], bool]) -> bool:
        """Parse ``entry``, export its tables and release it; False when it cannot be analysed."""
        loaded = entry.load(tree.errors)
        if loaded is None:
            return False
        rel, module, index = loaded
        agents = False
        try:
            kinds, tools = crossref.exports(index, rel), crossref.tool_exports(rel, module, index, wanted=wanted)
            agents = crossref.imports_tools_for_others(kinds, tools)
            sites = crossref.tool_site_exports(rel, module, index)
            entry.shadowed = not _tool_lists(index).isdisjoint(index.functions_by_name)
            entry.top_names = tuple(sorted({
                *(name for name in index.class_nodes if "." not in name),
                *(name for name, scopes in index.functions_by_name.items()
                  if any(s.parent is index.module_scope and s.class_name is None for s in scopes)),
            }))  # fmt: skip
        except RecursionError:
            tree.errors.append(ParseProblem(rel, _TOO_DEEP))
            entry.failed = True
            return False
        finally:
            entry.release(agents=agents)  # held if the budget allows (its agents' tool rounds load it twice more)
        entry.kept = True
        self.kinds.append((rel, kinds))
        self.tools.append((rel, tools))
        self.sites.append((rel, sites))
        self.entries.append(entry)
        return True


def _import_star_names(parsed: Iterable[_Module], keys: Iterable[str]) -> None:
    """``from configs.agents import *``: each top-level name the tables hold for that module
    (``configs.agents.triage_agent``, its ``@tools``) is imported by name, as if written out."""
    stars = [(entry, target) for entry in parsed for local, target in entry.imports.imports.items() if local.startswith(STAR)]
    if not stars:
        return
    known = sorted(set(keys))
    for entry, module in stars:
        prefix = f"{module}."
        for key in known[bisect.bisect_left(known, prefix) :]:
            if not key.startswith(prefix):
                break
            name = key[len(prefix) :].partition("@")[0].removesuffix("()")
            if name.isidentifier() and not name.startswith("_"):
                entry.star_names.setdefault(name, f"{module}.{name}")


def _tool_lists(index: ModuleIndex) -> set[str]:
    """The module-level names bound to a list or tuple: ``crossref.tool_exports`` classifies them whatever is wanted."""
    return {name for (owner, name), value in index.values.items() if owner == MODULE_SCOPE and isinstance(value, cst.List | cst.Tuple)}


def _reached_by(targets: set[str]) -> Callable[[str], bool]:
    """Whether an import can reach anything of module ``rel``: a target is one of the module's
    names (every suffix of its dotted path, as the tables register them), is below one
    (``from tools import send``), or above one, reached by attributes (``import pkg`` then
    ``pkg.tools.send``). Every look-up of another module's tables, tools, functions and
    wrappers starts from an import target, so a module no target reaches is never read
    by another: it is analysed on its own and released."""
    below = {".".join(parts[:end]) for target in targets for parts in [target.split(".")] for end in range(1, len(parts) + 1)}

    def reached(rel: str) -> bool:
        parts = crossref.module_name(rel).split(".")
        for start in range(len(parts)):
            name = parts[start:]
            if ".".join(name) in below or any(".".join(name[:end]) in targets for end in range(1, len(name))):
                return True
        return False

    return reached


def _may_look_up(entry: _Module, keys: Collection[str], externals: Mapping[str, Kind]) -> bool:
    """Whether the agents' tool round can read one of ``keys`` of the tool table in ``entry``.

    ``agent_tool_exports`` reads the tool table only under a name qualified through the module's
    imports (``index.qualified``: an import target, the attributes written after it, then ``()`` or
    ``@tools``), or under a crew's key the externals hold (``Resolver._crew_of``, by a class
    of whatever module): so a key under none of its import targets, and no crew's, is not read."""
    targets = _targets(entry)
    return any(
        any(key.startswith(target) for target in targets) or ((kind := externals.get(key)) is not None and kind.kind == "crew")
        for key in keys
    )  # fmt: skip


def _import_targets(parsed: Iterable[_Module]) -> set[str]:
    """Every name the modules import: the only keys another module's tools are looked up under (or below)."""
    return {target for entry in parsed for target in entry.imports.imports.values()}


def _export_more_tools(tree: _Tree, tables: _Tables, *, old: set[str], new: set[str]) -> None:
    """Classify the tools the wrapper round's extra importers can look up and the first round left out.

    A name is newly wanted only through a target the first round did not have, so a module none
    of those targets reaches, or none of whose functions and classes is newly wanted, has nothing
    new, and what ``tool_exports`` gives it regardless (its tool lists and crews) is already there,
    as the first round found it: it is not parsed again, unless a function of it shadows such a
    list (the list's export would win now)."""
    added = _reached_by(new - old)
    for (rel, found), entry in zip(tables.tools, tables.entries, strict=True):
        if not added(rel) and not entry.shadowed:
            continue
        was, now = crossref.imported_by(old, rel), crossref.imported_by(new, rel)

        def newly(name: str, was: Callable[[str], bool] = was, now: Callable[[str], bool] = now) -> bool:
            return now(name) and not was(name)

        if not entry.shadowed and not any(newly(name) for name in entry.top_names):
            continue

        loaded = entry.load(tree.errors)
        assert loaded is not None  # it loaded for its tables
        try:
            found.update(crossref.tool_exports(*loaded, wanted=newly))
        except RecursionError:
            continue  # as deep as the first round allowed: what it exported stands
        finally:
            entry.release()


def _with_tool_lines(calls: tuple[LlmCall, ...], *, base: Path) -> list[LlmCall]:
    """Tools of other modules are exported without a line: find their ``def`` in their file."""
    out = []
    for call in calls:
        if any(t.line == 0 and t.function for t in call.risky_tools):
            sites = tuple(attrs.evolve(t, line=_def_line(base / t.path, t.function)) if t.line == 0 and t.function else t for t in call.risky_tools)
            call = attrs.evolve(call, risky_tools=tuple(sorted(sites)))
        out.append(call)
    return out


def _def_line(path: Path, function: str) -> int:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return 0
    found = re.search(rf"^[ \t]*(?:async[ \t]+)?def[ \t]+{re.escape(function.rpartition('.')[2])}\b", text, re.M)
    return text.count("\n", 0, found.start()) + 1 if found else 0


def _named_callers(
    entries: Sequence[_Module], wrappers: Mapping[str, Mapping[str, tuple[str, str]]], externals: Mapping[str, Kind] | None = None,
) -> set[str]:
    """Modules calling a wrapper method through a receiver named after its class (``globals.ai.run(``
    for ``AI.run``, ``llm.completions(`` for ``Llm.completions``), or a registered family's method on any
    receiver (``agent_loop.predict_step(``): they import nothing of it, so only their text says they call it."""
    shapes = sorted({
        r"\b" + re.escape(name.replace("_", "")) + r"\." + re.escape(method.replace("_", "")) + r"\s*\("
        for owner, methods in wrappers.items() for method in methods if method
        for name in _named_after(owner.rpartition(".")[2])
    })  # fmt: skip
    # A provider family's method on a receiver named for a model (self.ai_handler.chat_completion).
    words = "|".join(sorted(PROVIDER_WORDS))
    shapes += sorted(rf"(?:{words})\w*\." + re.escape(method.replace("_", "")) + r"\s*\(" for method in provider_families(wrappers))
    shapes += sorted(r"\." + re.escape(method.replace("_", "")) + r"\s*\(" for method in registered_families(wrappers, externals or {}))
    # The only def of a wrapper method in the project, on a receiver of any name (self.reflector.reflect_on_final_decision).
    shapes += sorted(r"\." + re.escape(method.replace("_", "")) + r"\s*\(" for method in only_implemented(wrappers))
    if not shapes:
        return set()
    calling = re.compile("|".join(shapes), re.IGNORECASE)
    called = {method.replace("_", "") for methods in wrappers.values() for method in methods if method}
    owners = {owner.rpartition(".")[2] for owner in wrappers}
    if any(_SPACE.search(method) for method in called) or any("\n" in owner for owner in owners):
        return {entry.rel for entry in entries if calling.search(entry.source.replace("_", ""))}  # see _calls_named
    longest_first = sorted(called, key=lambda method: (-len(method), method))
    spot = re.compile(r"\.(?:" + "|".join(re.escape(method) for method in longest_first) + r")\s*\(", re.IGNORECASE)
    return {entry.rel for entry in entries if _calls_named(entry.source.replace("_", ""), calling, spot)}


_SPACE = re.compile(r"\s")


def _calls_named(text: str, calling: re.Pattern[str], spot: re.Pattern[str]) -> bool:
    r"""Whether ``calling`` (``_named_callers``' shapes) matches somewhere in ``text``, searched only on the lines
    where ``spot`` finds one of the wrappers' methods called. Tried at every character of every module in every
    wrapper round, its case-insensitive alternations, with no literal for the regex engine to look for first,
    were a quarter of the CPU of a scan of a real tree.

    The same answer: each shape ends with ``\.`` + a method + ``\s*\(``, and writes no line break before that
    ``\.`` (a class name's ending, a provider word and ``\w*``), so a match starts on the line of a ``.`` from
    which ``spot`` (the same methods, the same flags) matches, and ends no later than that match: a method
    writes no space (``_named_callers`` checks), so of two methods matching after the same ``.`` the longer
    ends later (``get_llm()`` then ``(``, beside ``get_llm`` then ``(``), and ``spot`` tries the longest
    first. Every such ``.`` is tried, and its line, up to the end of ``spot``'s match, searched with
    ``calling``; a match it finds ending earlier on the line is a match all the same."""
    position = 0
    while (found := spot.search(text, position)) is not None:
        line = text.rfind("\n", 0, found.start()) + 1
        if calling.search(text, line, found.end()) is not None:
            return True
        position = found.start() + 1
    return False


def _mixin_callers(entries: Sequence[_Module], wrappers: Mapping[str, Mapping[str, tuple[str, str]]]) -> set[str]:
    """Modules calling ``self.get_llm(`` where ``get_llm`` hands out a wrapper (``BaseAgent.get_llm()``): a
    mixin calls it on whatever class it is mixed into, importing nothing of it."""
    handed = sorted({method.removesuffix("()") for methods in wrappers.values() for method in methods if method.endswith("()")})
    if not handed:
        return set()
    calling = re.compile(r"\bself\.(?:" + "|".join(re.escape(m) for m in handed) + r")\s*\(")
    return {entry.rel for entry in entries if calling.search(entry.source)}


def _injected_callers(entries: Sequence[_Module], wrappers: Mapping[str, Mapping[str, tuple[str, str]]], *, registries: bool) -> set[str]:
    """Modules calling a wrapper function by a name they neither define nor import (``gpt_call(prompt)``
    with ``gpt_call`` put into their globals by whatever loads them, see call_match._injected_wrapper), or,
    when a project class looks its attributes up by name (``registries``), as an attribute (``func.gpt_call(``)."""
    names = sorted({owner.rpartition(".")[2] for owner, methods in wrappers.items() if "" in methods})
    if not names:
        return set()
    alternatives = "|".join(re.escape(n) for n in names)
    out: set[str] = set()
    if registries:
        called = re.compile(r"\.(?:" + alternatives + r")\s*\(")
        out = {entry.rel for entry in entries if called.search(entry.source)}
    calling = re.compile(r"(?<![\w.])(" + alternatives + r")\s*\(")
    for entry in entries:
        if entry.rel in out:
            continue
        for name in {m.group(1) for m in calling.finditer(entry.source)}:
            # Defined or imported at the top of the module: its own (one nested in a function is told apart there).
            bound = re.compile(rf"^(?:async[ \t]+)?def[ \t]+{name}\b|\bimport\b[^\n]*\b{name}\b|^{name}[ \t]*=", re.M)
            if not bound.search(entry.source):
                out.add(entry.rel)
                break
    return out


def _snake(class_name: str) -> str:
    """``FunctionManager`` -> ``function_manager``, what an instance of it made at the top of a module is called."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", class_name).lower()


def _loading_callers(entries: Sequence[_Module], wrappers: Mapping[str, Mapping[str, tuple[str, str]]]) -> set[str]:
    """Modules loading a wrapper function by its name, importing nothing of it:
    ``getattr(importlib.import_module(f".{kind}", "pkg"), "chat_request")`` (see call_match._loaded_by_name)."""
    names = sorted({owner.rpartition(".")[2] for owner, methods in wrappers.items() if "" in methods})
    if not names:
        return set()
    loading = re.compile(r"\bgetattr\([^\n]*['\"](?:" + "|".join(re.escape(n) for n in names) + r")['\"]")
    return {entry.rel for entry in entries if "import_module" in entry.source and loading.search(entry.source)}


def _named_after(class_name: str) -> list[str]:
    """The names a receiver of the class may have: the class's, and its endings that start a CamelCase
    word, three letters or more (``BaseLLM``: ``llm``), as ``call_match`` reads them."""
    return [class_name] + [class_name[i:] for i in range(1, len(class_name) - 2) if class_name[i].isupper()]


def _wrapper_callers(
    tree: _Tree, *, base: Path, options: ScanOptions, wrappers: list[tuple[str, Mapping[str, Mapping[str, tuple[str, str]]]]],
    skip: set[str], externals: Mapping[str, Kind] | None = None,
) -> list[_Module]:
    """Files the text pre-check passed over that call a wrapper by name (``self.brain.think(``)."""
    # get_llm() (a method handing out a wrapper) is called as get_llm(.
    names = sorted({(method or owner).removesuffix("()") for _rel, found in wrappers for owner, methods in found.items() for method in methods})
    if not names:
        return []
    alternatives = b"|".join(re.escape(n.encode()) for n in names)
    # Its call, or its import under another name (from .subscription import chat as chat_subscription).
    shapes = rb"\b(?:" + alternatives + rb")\s*\(|\bimport\b[^\n]*\b(?:" + alternatives + rb")[ \t]+as[ \t]"
    # A class whose instances are called (__call__ returns the answer): its import, the instance is called by any name.
    called = sorted({owner.rpartition(".")[2] for _rel, found in wrappers for owner, methods in found.items() if "__call__" in methods})
    if called:
        # Or an instance of one made at the top of its module (function_manager = FunctionManager()), imported:
        # named in the tables, or after its class.
        wanted = {f"object:{name}" for name in called}
        instances = {key.rpartition(".")[2] for key, kind in (externals or {}).items() if kind.kind in wanted}
        called = sorted({*called, *instances, *(_snake(name) for name in called)})
    if called:
        shapes += rb"|\bimport\b[^\n]*\b(?:" + b"|".join(re.escape(n.encode()) for n in called) + rb")\b"
    # A wrapper function loaded by its name (getattr(importlib.import_module(f".{kind}", "pkg"), "chat_request")).
    functions = sorted({owner.rpartition(".")[2] for _rel, found in wrappers for owner, methods in found.items() if "" in methods})
    if functions:
        shapes += rb"|\bgetattr\([^\n]*['\"](?:" + b"|".join(re.escape(n.encode()) for n in functions) + rb")['\"]"
    calling = re.compile(shapes)
    parsed: list[_Module] = []
    for rel in sorted(set(tree.others.values()) - skip):
        try:
            data = (base / rel).read_bytes()
        except OSError:
            continue
        if calls_any(data, calling) and b"import" in data and _skip_note(rel, data, options=options) is None:
            problem = _parse_into(parsed, rel, data)
            if problem is not None:
                tree.errors.append(problem)
    for entry in parsed:
        crossref.absolutise(entry.imports, entry.rel)
    return parsed


def _parse_imported(tree: _Tree, callers: list[_Module], *, base: Path, options: ScanOptions) -> list[_Module]:
    """The project modules the wrapper round's callers import that no pass parsed yet (one level)."""
    wanted = sorted({
        found for entry in callers for target in entry.imports.imports.values()
        for module in (target, target.rpartition(".")[0]) if (found := tree.others.get(module)) is not None
    })  # fmt: skip
    parsed: list[_Module] = []
    for rel in wanted:
        data = (base / rel).read_bytes()
        if _skip_note(rel, data, options=options) is None:
            problem = _parse_into(parsed, rel, data)
            if problem is not None:
                tree.errors.append(problem)
    for entry in parsed:
        crossref.absolutise(entry.imports, entry.rel)
    return parsed


def _overridden(given: Mapping[str, tuple[str, str]], returns_output: Mapping[str, tuple[str, str]]) -> None:
    """Keep ``apis.OVERRIDDEN_WRAPPERS`` up to date with a module just analysed: of the methods it was given as
    wrappers because subclasses of other modules override them so (``given``), those whose own body is none."""
    known = set(apis.OVERRIDDEN_WRAPPERS.get())
    for qualname in given:
        owner, _, method = qualname.partition(".")
        if qualname in returns_output:
            known.discard((owner, method))
        else:
            known.add((owner, method))
    apis.OVERRIDDEN_WRAPPERS.set(frozenset(known))


def _with_inherited(
    returned: Sequence[tuple[str, Mapping[str, Mapping[str, tuple[str, str]]]]], bases: Mapping[str, set[str]],
    defined: Mapping[str, str | None], entries: Sequence[_Module],
) -> tuple[list[tuple[str, Mapping[str, Mapping[str, tuple[str, str]]]]], dict[tuple[str, str], str]]:
    """``returned`` with each class's wrapper methods inherited from a base class of another module
    (``AsyncInterpreter(OpenInterpreter)``: ``AsyncInterpreter.chat``, ``AsyncInterpreter._respond_and_store``),
    for calls on an instance of the subclass elsewhere. Not a method of that name the subclass's module
    defines anywhere (an override, or one that may be). With it, (class, method) -> the base declaring it."""
    own: dict[str, dict[str, tuple[str, str]]] = {}
    for rel, exports in returned:
        for owner, methods in exports.items():
            if defined.get(owner) == rel:
                own.setdefault(owner, {}).update({m: found for m, found in methods.items() if m})
    declared: dict[tuple[str, str], str] = {}
    added: dict[str, dict[str, dict[str, tuple[str, str]]]] = {}
    # Each module's classes by their headers (a class name two modules define is still each module's).
    heads = sorted({
        (entry.rel, head.group(1), written.strip().rpartition(".")[2])
        for entry in entries for head in _Subclasses.HEAD.finditer(entry.source) for written in head.group(2).split(",")
    })  # fmt: skip
    sources = {entry.rel: entry.source for entry in entries}
    for home, name, direct in heads:
        source = sources[home]
        chain = [direct, *ancestors(direct, bases)] if direct.isidentifier() else []
        for at, base in enumerate(chain):
            where = defined.get(base)
            if where is None:
                continue
            # A base of another module: a method of that name anywhere in the subclass's module may override
            # it. One of the same module (class SWEngineerAgent(BaseAgent) beside BaseAgent.inference): only
            # the subclass's own body and those of the classes between them can.
            overriding = source or "" if where != home else "".join(_class_body(source or "", between) for between in [name, *chain[:at]])
            for method, found in sorted(own.get(base, {}).items()):
                if re.search(rf"^[ \t]+(?:async[ \t]+)?def[ \t]+{re.escape(method)}\b", overriding, re.M):
                    continue
                if method not in added.get(home, {}).get(name, {}):
                    added.setdefault(home, {}).setdefault(name, {})[method] = found
                    declared[(name, method)] = base
    if not added:
        return list(returned), declared
    out: list[tuple[str, Mapping[str, Mapping[str, tuple[str, str]]]]] = []
    for rel, exports in returned:
        more = added.pop(rel, {})
        merged = {owner: dict(methods) for owner, methods in exports.items()}
        for owner, methods in more.items():
            merged[owner] = {**methods, **merged.get(owner, {})}
        out.append((rel, merged))
    return out + sorted(added.items()), declared


def _handing_out(table: Mapping[str, Kind], wrappers: Mapping[str, Mapping[str, tuple[str, str]]]) -> set[str]:
    """The functions and classes of the project whose factories (``make()``, ``Config.create_investigator()``)
    are annotated to return an instance of a class with wrapper methods: a module importing one may call them."""
    handing: set[str] = set()
    for key, kind in table.items():
        if key.endswith("()") and kind.kind.startswith("annotated:") and kind.kind.partition(":")[2] in wrappers:
            name = key.removesuffix("()")
            handing.update({name, name.rpartition(".")[0]})
    return handing


def _class_body(source: str, name: str) -> str:
    """The text of the top-level ``class name`` of a module's source, header to the next top-level line."""
    head = re.search(rf"^class[ \t]+{re.escape(name)}\b[^\n]*\n", source, re.M)
    if head is None:
        return ""
    end = re.compile(r"^(?=[^\s#])", re.M).search(source, head.end())
    return source[head.start() : end.start() if end is not None else len(source)]


class _Subclasses:
    """The classes of the project's files deriving from a class (by the name written in their header),
    each with the names of the methods its body defines: read from the text of every file once, when
    first asked."""

    HEAD = re.compile(r"^class[ \t]+(\w+)[ \t]*\(([^)]*)\)[^\n]*:", re.M)
    _DEF = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+(\w+)", re.M)
    _TOP = re.compile(r"^(?=[^\s#])", re.M)

    def __init__(self, tree: _Tree, *, base: Path) -> None:
        self.tree, self.base = tree, base
        self._of: dict[str, list[frozenset[str]]] | None = None

    def defining(self, base: str, method: str) -> int:
        """How many classes deriving directly from ``base`` define ``method``."""
        if self._of is None:
            self._of = {}
            texts = {entry.rel: entry.source for entry in self.tree.parsed}
            for rel in sorted(set(self.tree.others.values()) - texts.keys()):
                try:
                    texts[rel] = _decode((self.base / rel).read_bytes())
                except OSError:
                    continue
            for text in texts.values():
                for head in self.HEAD.finditer(text):
                    end = self._TOP.search(text, head.end() + 1)
                    methods = frozenset(self._DEF.findall(text, head.end(), end.start() if end else len(text)))
                    for written in head.group(2).split(","):
                        name = written.strip().rpartition(".")[2]
                        if name.isidentifier():
                            self._of.setdefault(name, []).append(methods)
        return sum(method in methods for methods in self._of.get(base, ()))


def _inherited(
    owned: Mapping[str, Mapping[str, tuple[str, str]]], bases: Mapping[str, set[str]], defined: Mapping[str, str | None],
    subclasses: _Subclasses | None = None, interfaces: Collection[str] = (),
) -> dict[str, dict[str, tuple[str, str]]]:
    """Module -> its classes' methods some class deriving from them in another module implements as a
    wrapper (``OpenAILLM.acompletion_text`` under ``BaseLLM``: ``BaseLLM.acompletion_text``). Only where
    at least half of the classes deriving directly from it that define the method are such wrappers:
    one tool in four asking a model does not make every tool's ``_execute`` (``BaseTool.execute``) one."""
    out: dict[str, dict[str, tuple[str, str]]] = {}
    wrapping: dict[tuple[str, str], set[str]] = {}
    for wrappers in owned.values():
        for qualname in wrappers:
            owner, _, method = qualname.partition(".")
            if method and "." not in method:
                for base in ancestors(owner, bases):
                    wrapping.setdefault((base, method), set()).add(owner)
    for rel, wrappers in owned.items():
        for qualname, found in sorted(wrappers.items()):
            owner, _, method = qualname.partition(".")
            if not method or "." in method:
                continue
            for base in ancestors(owner, bases):
                home = defined.get(base)
                if home is None or (home == rel and base not in interfaces):
                    continue  # in its own module, only an interface's (an ABC, abstract methods) is exported
                if subclasses is not None and 2 * len(wrapping[(base, method)]) < subclasses.defining(base, method):
                    continue
                out.setdefault(home, {}).setdefault(f"{base}.{method}", found)
    return out


def _analyse_one(
    tree: _Tree, entry: _Module, *, meter: WorkMeter, context: ScanContext, options: ScanOptions, project: ProjectFlow,
    bases: dict[str, set[str]], defined: dict[str, str | None], inherited: Mapping[str, tuple[str, str]] | None = None,
) -> ModuleCalls | None:
    """One module's calls; a module no other one reads is parsed for this and released after it.
    Its classes' bases are added to ``bases``, and where they are defined to ``defined``."""
    loaded = entry.load(tree.errors)
    if loaded is None:
        return None
    rel, module, index = loaded
    for name, args in index.class_bases.items():
        written = {(dotted_name(arg.value) or "").rpartition(".")[2] for arg in args if arg.keyword is None}
        bases.setdefault(name.rpartition(".")[2], set()).update(written - {""})
        if "." not in name:
            defined[name] = rel if defined.get(name, rel) == rel else None
    index.meter = meter
    try:
        return analyse_module(
            module, index, path=rel, externals=context.externals, imported_tools=context.tools,
            wrappers=context.wrappers or None, budget=FileBudget.starting(meter, file_time_s=options.file_time_s), project=project,
            tool_sites=context.tool_sites, inherited=inherited,
        )  # fmt: skip
    except RecursionError:
        tree.errors.append(ParseProblem(rel, _TOO_DEEP))
        return None
    finally:
        entry.drop()  # a held tree too: the wrapper rounds re-analyse a few modules, parsed again
        if len(entry.source) >= _TRIM_AFTER_CHARS:
            _give_back_memory()


def _trimmer() -> Callable[[int], object] | None:
    """glibc's ``malloc_trim``, where the C library has it (Linux): None elsewhere."""
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_MALLOC_TRIM = _trimmer()
# Only after a large module: each trim walks the heap (after every module, 5% of a scan's CPU in the kernel).
_TRIM_AFTER_CHARS = 50_000


def _give_back_memory() -> None:
    """Hand the C heap's free pages back to the system once a module's tree is dropped: a tree's
    larger blocks (lists, dicts, strings) come from malloc, whose free pages otherwise stay in the
    process, and the next, larger tree raises the scan's peak on top of them."""
    if _MALLOC_TRIM is not None:
        _MALLOC_TRIM(0)


def _decode_or_none(data: bytes) -> str | None:
    try:
        return _decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError):
        return None


def _may_re_export(rel: str, data: bytes) -> bool:
    """A package's ``__init__.py`` may re-export a client (``from .models import client``)."""
    return (rel == "__init__.py" or rel.endswith("/__init__.py")) and b"import" in data


def _parse_into(parsed: list[_Module], rel: str, data: bytes) -> ParseProblem | None:
    """Add the file to ``parsed`` with its imports, read off Python's own tree (libcst
    parses it when it is analysed); a file Python's parser refuses is left to libcst,
    which words the error (or parses what Python would not) as the scan always has."""
    try:
        source = _decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError):
        return ParseProblem(rel, _UNDECODABLE)
    if _may_nest_too_deeply(data):
        problem = _python_rejects(source, rel)
        if problem is not None:
            return problem
    entry = _Module(rel, source, Imports())
    python = _python_tree(source)
    if python is not None:
        entry.imports, entry.outline, entry.functions = Imports.of(python), outline(python), functions_of(python)
    else:
        errors: list[ParseProblem] = []
        loaded = entry.load(errors)
        if loaded is None:
            return errors[0]
        entry.imports.imports, entry.imports.relative_imports = dict(loaded[2].imports), dict(loaded[2].relative_imports)
        entry.release()
    parsed.append(entry)
    return None


def _python_tree(source: str) -> ast.Module | None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escapes warn; only the imports matter here
        try:
            return ast.parse(source)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
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


_UNDECODABLE = "cannot decode the file as Python source text"


def _rejected(rel: str, data: bytes) -> ParseProblem | None:
    """Why Python would refuse the file: its bytes (an encoding it cannot decode, a
    coding cookie naming none) or its syntax; None if it would run."""
    source = _decode_or_none(data)
    return ParseProblem(rel, _UNDECODABLE) if source is None else _python_rejects(source, rel)


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
