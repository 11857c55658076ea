"""Taint by parameter across the project: what another module does with the output passed in.

``execute_plan(reply)`` with ``execute_plan`` in ``app/executor.py``: the
reply is followed from that function's parameter through its own module (and
on into the modules it passes it to, a few levels), so a reply that becomes
shell commands two modules away is judged by what happens to it there, not
by every call in that function's body. Summaries are computed on demand, once
per (function, parameter), with the same flow analysis as a model call's own
output; deterministic because the scan visits files in sorted order. Which
function a name is and which parameter the value binds are read off Python's
tree (``index.functions_of``): libcst parses a module only to analyse a
(function, parameter) not summarised yet.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import libcst as cst

from escalated.contracts.calls import Finding
from escalated.contracts.scan import crossref
from escalated.contracts.scan.index import MODULE_SCOPE, ModuleIndex, Signature, dotted_name
from escalated.contracts.scan.kinds import Kind
from escalated.contracts.scan.resolve import Resolver
from escalated.contracts.scan.surface import SurfaceAnalyzer
from escalated.contracts.scan.syntax import param_at

# Modules followed in a row: the caller's, then up to this many more.
MAX_MODULES = 3
# Classes followed for a call on a protocol or abstract class (the first by path).
MAX_IMPLEMENTATIONS = 12
# Subclasses followed for a tool looked up in a registry typed by their base class (``register(self, tool:
# Tool)``): a registry holds any of them, so each is followed, not only the first few.
MAX_SUBCLASSES = 40
# Classes a method is looked up through when its class inherits it (the class's bases, theirs, ...).
MAX_BASES = 4
# Parsed modules kept for following into, the most recently used: a real tree's analyses follow
# into a few hundred modules over the scan, mostly one at a time (the memo holds what was found).
KEEP_PARSED = 8
# And at most this much of their source, the most recently used first (one larger module is kept alone):
# a libcst tree and its index take about 48 bytes a character, and the scan's peak memory is when its
# largest module is analysed beside them.
KEEP_CHARS = 200_000

_Parsed = tuple[str, cst.Module, ModuleIndex]


@attrs.frozen
class Lookups:
    """What following a method into its class's bases, or a name into where a package's re-export points,
    reads of a module: its imports (absolute, with the star imports' names, as the loaded index has them)
    and each class's positional bases as written (``index.dotted_name``: None for anything but a dotted name)."""

    imports: Mapping[str, str]
    bases: Mapping[str, tuple[str | None, ...]]

    @classmethod
    def of(cls, index: ModuleIndex) -> Lookups:
        return cls(dict(index.imports), {q: tuple(dotted_name(arg.value) for arg in args) for q, args in index.class_bases.items()})


# A project module by its path, how to parse it when it is first followed into, its functions read off
# Python's tree (``index.functions_of``; None when Python's parser refused it: libcst's tree says, once parsed)
# and its ``Lookups`` read off Python's tree (None then too).
Loadable = tuple[str, Callable[[], _Parsed | None], Mapping[str, Signature] | None, Callable[[], Lookups | None]]
_Key = tuple[str, str, str]


@attrs.define
class FlowReads:
    """What one module's analysis read of what a ``ProjectFlow`` learns as the scan goes on: the module
    names it looked up (each with what it found first; ``_ABSENT``: nothing), and the (function,
    parameter) summaries it found not yet made and cut (a cycle, or as deep as followed). Everything
    else it reads is fixed for the scan, or a summary made once and kept (``_memo``, ``_returns``)."""

    names: dict[str, object] = attrs.Factory(dict)
    cut: set[_Key] = attrs.Factory(set)


_ABSENT = object()


class ProjectFlow:
    def __init__(
        self,
        modules: Sequence[Loadable],
        *,
        externals: Mapping[str, Kind],
        tools: Mapping[str, tuple[Finding, ...]],
        implementers: Callable[[str], Sequence[tuple[str, Loadable]]] | None = None,
        callers: Callable[[str], Sequence[Loadable]] | None = None,
        run_folders: Callable[[], Mapping[tuple[str, str], str]] | None = None,
    ) -> None:
        self._modules: dict[str, Loadable | None] = {}
        self._implementers = implementers
        self._callers = callers
        self._run_folders = run_folders
        self._fills: dict[tuple[str, str, tuple[str, ...], str], tuple[Finding, ...]] = {}
        self._filled: dict[tuple[str, str, str], frozenset[str]] = {}
        self._keeps: dict[tuple[tuple[str, ...], str, str], tuple[Finding, ...]] = {}
        self._via: dict[str, str | None] = {}  # a package's re-export -> where it is defined
        # Parsed on first use and kept: only the modules followed into, not every one some module imports.
        self._parsed: OrderedDict[str, _Parsed | None] = OrderedDict()
        self._lookups: dict[str, Lookups | None] = {}  # read once a module (a few names a class or import)
        self.add(modules)
        self._externals = externals
        self._tools = tools
        self._analyzers: dict[str, SurfaceAnalyzer] = {}
        self._memo: dict[tuple[str, str, str], tuple[Finding, ...]] = {}
        self._returns: dict[tuple[str, str, str], bool] = {}
        self._open: list[tuple[str, str, str]] = []
        self._reads: FlowReads | None = None

    @contextlib.contextmanager
    def reading(self) -> Iterator[FlowReads]:
        """Record what the analysis run inside reads (``FlowReads``), for ``unchanged``."""
        reads = self._reads = FlowReads()
        try:
            yield reads
        finally:
            self._reads = None

    def unchanged(self, reads: FlowReads) -> bool:
        """Whether an analysis that read ``reads`` would read the same now: every name it looked up finds
        what it found, and no summary it cut has been made since. Another such analysis, with the same
        tables, gives the same result (the summaries it made are kept, and found again as they were)."""
        modules = self._modules
        if any(modules.get(name, _ABSENT) is not found for name, found in reads.names.items()):
            return False
        return not any(key in self._memo or key in self._returns or key in self._filled for key in reads.cut)

    def add(self, modules: Sequence[Loadable]) -> None:
        """Modules to follow into (the scan adds those only its wrapper round's importers reach)."""
        by_name = self._modules
        for entry in modules:
            parts = crossref.module_name(entry[0]).split(".")
            for start in range(len(parts)):
                name = ".".join(parts[start:])
                # A name two modules could supply (two utils.py) is not guessed.
                by_name[name] = entry if name not in by_name else None

    @property
    def known(self) -> int:
        """How many names of modules to follow into it knows: grows with every module added."""
        return len(self._modules)

    def param_findings(self, qualified: str, call: cst.Call, arg: cst.Arg) -> tuple[Finding, ...] | None:
        """Findings for the output passed as ``arg`` of ``call`` to project function ``qualified``.

        None when ``qualified`` is not a top-level function, or a method of a top-level
        class, of a parsed project module.
        """
        if qualified.startswith("*."):
            return self._implemented(qualified[2:], call, arg)
        if qualified.startswith("*"):
            base, _, method = qualified[1:].rpartition(".")
            return self._implemented(method, call, arg, base=base)
        return self._follow(qualified, call, arg, returned=False)

    def _implemented(self, method: str, call: cst.Call, arg: cst.Arg, *, base: str = "") -> tuple[Finding, ...] | None:
        """``self.env.execute(action)`` with ``env: Environment`` (a protocol): what each project class
        with an ``execute`` method does with it (any of them may be the one given). With ``base``
        (``*Tool.execute``: a registry that ``register(self, tool: Tool)`` fills), the project's
        subclasses of that class with the method, every one up to ``MAX_SUBCLASSES``."""
        if self._implementers is None:
            return None
        if base:
            derived = getattr(self._implementers, "derived", None)
            implementers = derived(method, base)[:MAX_SUBCLASSES] if derived is not None else ()
        else:
            implementers = self._implementers(method)[:MAX_IMPLEMENTATIONS]
        found: list[Finding] = []
        followed = False
        # Not back into a function being followed (with another of its parameters): a registry's own
        # ``execute(call, context)`` running ``tool.execute(context, args)`` is not one of its tools, and
        # following it again would spend the modules left on itself.
        following = {(key[0], key[1]) for key in self._open}
        for qualified, loadable in implementers:
            known = {entry[0] for entry in self._modules.values() if entry is not None}
            if loadable[0] not in known:
                self.add([loadable])
            function = self._function(qualified) if following else None
            if function is not None and (function[0][0], function[1]) in following:
                continue
            more = self._follow(qualified, call, arg, returned=False)
            if more is not None:
                followed = True
                found += more
        return tuple(sorted(set(found))) if followed else None

    def methods_of(self, qualified: str) -> tuple[str, list[str]]:
        """The public methods project class ``qualified`` defines (``app.computers.Handler``, also where
        its package's ``__init__`` imports it from), read off its module, with the class's qualified name
        where it is defined; none when it is no such class."""
        for _ in range(2):  # the class's own module, or the one a package's re-export points to
            module, _, name = qualified.rpartition(".")
            loadable = self._module(module) if module else None
            functions = self._functions(loadable) if loadable is not None else None
            if loadable is None or functions is None:
                return qualified, []
            own = sorted(
                method for method, signature in functions.items()
                if signature.class_name == name and method.count(".") == 1 and method.startswith(f"{name}.")
                and not method.partition(".")[2].startswith("_")
            )  # fmt: skip
            if own:
                return qualified, [method.partition(".")[2] for method in own]
            lookups = self._lookups_of(loadable)
            origin = lookups.imports.get(name) if lookups is not None else None
            if origin is None or origin == qualified:
                return qualified, []
            qualified = origin
        return qualified, []

    def asks_a_model(self, qualified: str) -> bool:
        """Whether project function ``qualified`` (``app.chat.Conversation.generate``) asks a model in its
        body, or through the functions of its module it calls (OutputFlow.asks_in); memoised."""
        found = self._function(qualified)
        if found is None:
            return False
        loadable, name, _signature = found
        key = (loadable[0], name, "asks")
        known = self._returns.get(key)
        if known is not None:
            return known
        parsed = self._parse(loadable)
        scope = parsed[2].scopes.get(name) if parsed is not None else None
        if parsed is None or scope is None:
            return False
        result = self._returns[key] = self._analyzer(*parsed).flow.asks_in(scope)
        return result

    def param_returns(self, qualified: str, call: cst.Call, arg: cst.Arg) -> bool:
        """Whether project function ``qualified`` returns what ``arg`` of ``call`` passes it, or parts of
        it (a parser splitting the answer); memoised, cycles cut."""
        bound = self._bound(qualified, call, arg)
        if bound is None:
            return False
        loadable, name, param = bound
        key = (loadable[0], name, f"{param}->")
        known = self._returns.get(key)
        if known is not None:
            return known
        if key in self._open or len(self._open) >= MAX_MODULES:
            if self._reads is not None:
                self._reads.cut.add(key)
            return False
        parsed = self._parse(loadable)
        scope = parsed[2].scopes.get(name) if parsed is not None else None
        if parsed is None or scope is None:
            return False
        self._open.append(key)
        try:
            result = self._analyzer(*parsed).param_returns(scope, param)
        finally:
            self._open.pop()
        self._returns[key] = result
        return result

    def filled_findings(self, owner: str, method: str, positional: tuple[str, ...], param: str) -> tuple[Finding, ...]:
        """``CodeGenerator.reply(memory, post_proxy)`` writing the output into ``post_proxy``: what the
        modules calling ``reply`` on a ``CodeGenerator`` do with the object they passed, after the call
        (the object is the answer's way back, as a return value is). Memoised; not followed further out."""
        return self._in_callers(
            self._fills, (owner, method, positional, param), method,
            lambda analyzer: analyzer.filled_findings(owner, method, positional, param),
        )

    def kept_findings(self, owners: tuple[str, ...], method: str, attribute: str) -> tuple[Finding, ...]:
        """``RequestAdapter.invoke_llm`` keeping the output in ``self.tool_call``: what the modules calling
        ``invoke_llm`` on an object of that class (or of a class it derives from) do with its ``tool_call``
        after the call (the attribute is the answer's way back, as a return value is). Memoised; not
        followed further out."""
        return self._in_callers(
            self._keeps, (owners, method, attribute), method,
            lambda analyzer: analyzer.kept_findings(owners, method, attribute),
        )

    def _in_callers(
        self, memo: dict[Any, tuple[Finding, ...]], key: Any, method: str, ask: Callable[[Any], tuple[Finding, ...]]
    ) -> tuple[Finding, ...]:
        """What the modules calling ``method`` report through ``ask`` (their analyser's findings for
        the object or attribute the answer comes back in), each marked with its module. Memoised
        under ``key`` in ``memo``; a cycle finds nothing more; not followed further out."""
        known = memo.get(key)
        if known is not None:
            return known
        if self._callers is None or self._open:
            return ()
        memo[key] = ()
        found: list[Finding] = []
        for loadable in self._callers(method)[:MAX_IMPLEMENTATIONS]:
            parsed = self._parse(loadable)
            if parsed is None:
                continue
            rel, module, index = parsed
            found += [attrs.evolve(f, detail=f"{f.detail} (in {rel})", line=0) for f in ask(self._analyzer(rel, module, index))]
        result = memo[key] = tuple(sorted(set(found)))
        return result

    def run_folder(self, owner: str, attribute: str) -> str | None:
        """Where a fixed command runs a file of the folder of store ``owner.attribute`` (``DBs.workspace``:
        ``bash run.sh`` with ``cwd=dbs.workspace.path``), as ``path:line``; None when nothing does."""
        return self._run_folders().get((owner, attribute)) if self._run_folders is not None else None

    def filled_args(self, qualified: str, call: cst.Call, arg: cst.Arg) -> tuple[cst.Arg, ...]:
        """The arguments of ``call`` whose parameters project function ``qualified`` writes what ``arg``
        passes it into (``raw_text_to_post(llm_output=answer, post_proxy=post_proxy)``: ``post_proxy``);
        memoised, cycles cut."""
        # Only here is a package's re-export followed to its definition: param_findings does not yet (it
        # would reach further into every project's own logs and records, a round of its own).
        found = self._function(qualified) or self._reexported(qualified)
        if found is None:
            return ()
        loadable, name, signature = found
        param = param_at(signature.positional, call, arg)
        if param is None or param not in signature.names:
            return ()
        key = (loadable[0], name, f"{param}=>")
        filled = self._filled.get(key)
        if filled is None:
            if key in self._open or len(self._open) >= MAX_MODULES:
                if self._reads is not None:
                    self._reads.cut.add(key)
                return ()
            parsed = self._parse(loadable)
            scope = parsed[2].scopes.get(name) if parsed is not None else None
            if parsed is None or scope is None:
                return ()
            self._open.append(key)
            try:
                filled = frozenset(self._analyzer(*parsed).param_filled(scope, param))
            finally:
                self._open.pop()
            self._filled[key] = filled
        positional = found[2].positional
        return tuple(a for a in call.args if a is not arg and not a.star and param_at(positional, call, a) in filled)

    def callback_findings(self, qualified: str, call: cst.Call, arg: cst.Arg) -> tuple[Finding, ...] | None:
        """Findings for a function returning the output handed as ``arg`` of ``call`` to project function
        ``qualified``, which calls it: what that function does with what the callback returns."""
        return self._follow(qualified, call, arg, returned=True)

    def _follow(self, qualified: str, call: cst.Call, arg: cst.Arg, *, returned: bool) -> tuple[Finding, ...] | None:
        """Into ``qualified``'s parameter that ``arg`` binds: what it does with the value
        (``returned``: with what calling that parameter returns), memoised, cycles cut."""
        bound = self._bound(qualified, call, arg)
        if bound is None:
            return None
        loadable, name, param = bound
        key = (loadable[0], name, f"{param}()" if returned else param)
        if key in self._memo:
            return self._memo[key]
        if key in self._open or len(self._open) >= MAX_MODULES:
            if self._reads is not None:
                self._reads.cut.add(key)
            return ()  # a cycle, or as far as the chain is followed
        # libcst's tree only now: what the function is and which parameter the value binds came from Python's.
        parsed = self._parse(loadable)
        if parsed is None:
            return None
        rel, module, index = parsed
        scope = index.scopes.get(name)
        if scope is None:  # the two parsers disagree: not followed
            return None
        self._open.append(key)
        try:
            analyzer = self._analyzer(rel, module, index)
            findings = analyzer.callback_findings(scope, param) if returned else analyzer.param_findings(scope, param)
        finally:
            self._open.pop()
        # Lines belong to that file: the caller re-lines them to its own call.
        result = tuple(sorted({attrs.evolve(f, detail=f"{f.detail} (in {rel})", line=0) for f in findings}))
        self._memo[key] = result
        return result

    def _bound(self, qualified: str, call: cst.Call, arg: cst.Arg) -> tuple[Loadable, str, str] | None:
        """Project function ``qualified``'s module, its name there and the parameter ``arg`` of ``call``
        binds; None when it is no such function or the argument binds none of its parameters."""
        found = self._function(qualified)
        if found is None:
            return None
        loadable, name, signature = found
        param = param_at(signature.positional, call, arg)
        if param is None or param not in signature.names:
            return None
        return loadable, name, param

    def _function(self, qualified: str) -> tuple[Loadable, str, Signature] | None:
        """``app.executor.execute_plan`` or ``app.executor.PlanRunner.run``: its module, its name there and
        its signature (a top-level function, or a method of a top-level class, its own or inherited)."""
        return self._direct(qualified) or self._inherited(qualified)

    def _direct(self, qualified: str) -> tuple[Loadable, str, Signature] | None:
        for cut in (1, 2):
            parts = qualified.rsplit(".", cut)
            loadable = self._module(parts[0]) if len(parts) == cut + 1 else None
            functions = self._functions(loadable) if loadable is not None else None
            if loadable is None or functions is None:
                continue
            name = ".".join(parts[1:])
            signature = functions.get(name)
            # A name without a dot is a function at the module's top level; Class.method, a method of that class.
            if signature is not None and (cut == 1 or signature.class_name == parts[1]):
                return loadable, name, signature
        return None

    def _inherited(self, qualified: str, *, depth: int = 0) -> tuple[Loadable, str, Signature] | None:
        """``app.execute.LocalInterpreter.exec_isolation`` that ``LocalInterpreter`` does not define but
        inherits from a project class (of its module or one it imports): the base's method, the nearest
        first, as Python looks it up (a base of ``object`` or of a library adds nothing)."""
        parts = qualified.rsplit(".", 2)
        loadable = self._module(parts[0]) if len(parts) == 3 and depth < MAX_BASES else None
        functions = self._functions(loadable) if loadable is not None else None
        # Only a class the module defines with methods of its own is looked up for its bases.
        if loadable is None or functions is None or not any(name.startswith(f"{parts[1]}.") for name in functions):
            return None
        lookups = self._lookups_of(loadable)
        if lookups is None:
            return None
        for written in lookups.bases.get(parts[1], ()):
            origin: str | None = None
            if written is not None and written in lookups.bases:
                origin = f"{parts[0]}.{written}"
            elif written is not None:
                head, _, rest = written.partition(".")
                imported = lookups.imports.get(head)
                origin = ".".join(filter(None, (imported, rest))) if imported is not None else None
            if origin is None or origin == f"{parts[0]}.{parts[1]}":
                continue
            found = self._direct(f"{origin}.{parts[2]}") or self._inherited(f"{origin}.{parts[2]}", depth=depth + 1)
            if found is not None:
                return found
        return None

    def _reexported(self, qualified: str) -> tuple[Loadable, str, Signature] | None:
        """``taskweaver.role.PostTranslator.raw_text_to_post`` where ``taskweaver/role/__init__.py`` only
        imports ``PostTranslator`` from ``.translator``: the function where the package's import points."""
        if qualified in self._via:
            target = self._via[qualified]
        else:
            target = self._via[qualified] = None
            for cut in (1, 2):
                parts = qualified.rsplit(".", cut)
                loadable = self._module(parts[0]) if len(parts) == cut + 1 else None
                lookups = self._lookups_of(loadable) if loadable is not None else None
                origin = lookups.imports.get(parts[1]) if lookups is not None else None
                if origin is not None and origin != f"{parts[0]}.{parts[1]}":
                    target = self._via[qualified] = ".".join([origin, *parts[2:]])
                    break
        return self._function(target) if target is not None else None

    def _module(self, name: str) -> Loadable | None:
        if self._reads is not None:
            self._reads.names.setdefault(name, self._modules.get(name, _ABSENT))
        return self._modules.get(name)

    def _functions(self, loadable: Loadable) -> Mapping[str, Signature] | None:
        """The module's functions: read off Python's tree, or else libcst's (parsed now; None if it cannot be)."""
        if loadable[2] is not None:
            return loadable[2]
        parsed = self._parse(loadable)
        if parsed is None:
            return None
        return {name: Signature.of(scope) for name, scope in parsed[2].scopes.items() if name != MODULE_SCOPE}

    def _lookups_of(self, loadable: Loadable) -> Lookups | None:
        """The module's imports and classes' bases: read off Python's tree, or else libcst's (parsed now;
        None if it cannot be); once a module."""
        rel = loadable[0]
        if rel not in self._lookups:
            found = loadable[3]()
            if found is None:
                parsed = self._parse(loadable)
                found = Lookups.of(parsed[2]) if parsed is not None else None
            self._lookups[rel] = found
        return self._lookups[rel]

    def _parse(self, loadable: Loadable) -> _Parsed | None:
        rel, load = loadable[0], loadable[1]
        if rel in self._parsed:
            self._parsed.move_to_end(rel)
            return self._parsed[rel]
        if len(self._parsed) >= KEEP_PARSED:
            self._drop_oldest()
        found = self._parsed[rel] = load()
        kept = sum(len(parsed[2].source or "") for parsed in self._parsed.values() if parsed is not None)
        while len(self._parsed) > 1 and kept > KEEP_CHARS:
            kept -= self._drop_oldest()
        return found

    def _drop_oldest(self) -> int:
        """Forget the least recently used parsed module; how much source it was."""
        dropped, parsed = self._parsed.popitem(last=False)
        self._analyzers.pop(dropped, None)  # one in use lives on in its caller until it returns
        return len(parsed[2].source or "") if parsed is not None else 0

    def _analyzer(self, rel: str, module: cst.Module, index: ModuleIndex) -> SurfaceAnalyzer:
        analyzer = self._analyzers.get(rel)
        if analyzer is None:
            analyzer = SurfaceAnalyzer(
                index, Resolver(index, externals=self._externals), line_of=lambda _node: 0, code_of=module.code_for_node,
                llm_calls=set(), imported_tools=self._tools, project=self,
            )  # fmt: skip
            self._analyzers[rel] = analyzer
        return analyzer
