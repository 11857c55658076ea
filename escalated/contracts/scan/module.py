"""The LLM calls of one parsed module, each with its decision surface and recommendation.

``analyse_module`` is the per-file half of a scan (``discovery`` is the tree
half): match calls against the SDK tables, number them per function, find
guards and existing gates, and ask the surface analysis what each output
controls. A budget of analysis steps bounds the work one file may take.
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import attrs
import libcst as cst
from libcst.metadata import CodeRange

from escalated.contracts import rules
from escalated.contracts.calls import Finding, LlmCall, Location, ToolSite
from escalated.contracts.scan import apis
from escalated.contracts.scan.index import MODULE_SCOPE, ModuleIndex, Scope, WorkMeter, dotted_name
from escalated.contracts.scan.kinds import Kind, Match
from escalated.contracts.scan.output_flow import kept_reads
from escalated.contracts.scan.positions import Positions
from escalated.contracts.scan.resolve import Resolver
from escalated.contracts.scan.surface import ParamFlow, Surface, SurfaceAnalyzer
from escalated.contracts.scan.syntax import literal
from escalated.contracts.scan.wrappers import match_local

_CONFIDENCE_ORDER = ("low", "medium", "high")
_TOO_DEEP = "too deeply nested to analyse"
# file-time-s is counted in analysis steps, not read off the clock, so the same file is cut
# at the same call on every machine. A loaded 2-core machine takes 500,000-900,000 steps a
# second: a second of file-time-s is a fifth of a real one or less, far inside the clock below.
STEPS_PER_S = 100_000
# The clock stops a file only for work the steps do not count (it should never be reached).
# It is this thread's CPU time, not the wall clock: on a machine loaded by other work a
# file's wall time can be ten times its CPU time, and a scan's result must not depend on
# what else the machine is doing (a loaded 2-core machine cut two of openai-agents-python's
# analyses short on the wall clock).
_CLOCK_FACTOR = 4
_CLOCK_FLOOR_S = 30.0
BUDGET_CLOCK = time.thread_time


@attrs.frozen
class FileBudget:
    """How much analysis one file may take: steps on the scan's meter, and the clock behind them."""

    meter: WorkMeter
    until_steps: int
    until_s: float  # BUDGET_CLOCK(): this thread's CPU seconds

    @classmethod
    def starting(cls, meter: WorkMeter, *, file_time_s: float) -> FileBudget:
        clock_s = max(_CLOCK_FACTOR * file_time_s, _CLOCK_FLOOR_S)
        return cls(meter, meter.steps + int(file_time_s * STEPS_PER_S), BUDGET_CLOCK() + clock_s)

    def ran_out(self) -> str | None:
        """Why the file's analysis stops here, or None while it may go on."""
        if self.meter.steps > self.until_steps:
            return "not analysed: the file's analysis time limit ran out (file-time-s, counted in analysis steps)"
        if BUDGET_CLOCK() > self.until_s:
            return "not analysed: the file's analysis time limit ran out (on the CPU clock, for work the steps do not count)"
        return None


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


def _positions(module: cst.Module, index: ModuleIndex) -> Positions:
    """Spans on demand, shared by every round of this module's analysis."""
    if not isinstance(index.positions, Positions):
        index.positions = Positions(module, index, source=index.source)
    return index.positions


@attrs.frozen
class ModuleCalls:
    calls: tuple[LlmCall, ...]
    # Functions and methods (qualified in the module) that return a model's output,
    # with the (provider, api) of the call inside: wrappers other modules call.
    returns_output: Mapping[str, tuple[str, str]]
    # Per call (same order): the functions whose return value carries its output.
    returned_by: tuple[frozenset[str], ...] = ()
    # Methods (qualified in the module) keeping the output on their own object and returning none of it
    # (``RequestAdapter.invoke_llm``: ``self.tool_call``), with those attributes; among returns_output too.
    kept: Mapping[str, frozenset[str]] = attrs.Factory(dict)


def analyse_module(
    module: cst.Module,
    index: ModuleIndex,
    *,
    path: str,
    externals: Mapping[str, Kind] | None,
    imported_tools: Mapping[str, tuple[Finding, ...]] | None = None,
    wrappers: Mapping[str, Mapping[str, tuple[str, str]]] | None = None,
    budget: FileBudget | None = None,
    project: ParamFlow | None = None,
    tool_sites: Mapping[str, ToolSite] | None = None,
    inherited: Mapping[str, tuple[str, str]] | None = None,
) -> ModuleCalls:
    """``inherited``: methods of this module's classes (``BaseLLM.acompletion_text``) that a class
    deriving from them in another module implements as a wrapper of the model: ``self.acompletion_text(…)``
    in the base runs whichever subclass the object is, so it is a call site of that wrapper."""
    index.served = apis.SERVED_GRAPHS.get().get(path, frozenset())
    resolver = Resolver(index, externals=externals, wrappers=wrappers)
    kept: dict[str, frozenset[str]] = dict(apis.KEPT_OUTPUTS.get())
    primitives: list[tuple[cst.Call, Scope, Match]] = []
    for call, scope in index.calls:
        found = resolver.match_call(call, scope)
        if (
            found is not None and not _after_exit(call, index.parents) and not _warms_up(call, index.parents)
            and not _never_run(call, scope, found, index, resolver.wrappers)
        ):  # fmt: skip
            primitives.append((call, scope, found))
    local: dict[str, tuple[str, str]] = dict(inherited or {})
    taken = {id(c) for c, _s, _m in primitives}
    sites: list[tuple[cst.Call, Scope, Match]] = [
        (call, scope, match)
        for call, scope in (index.calls if local else ())
        if id(call) not in taken and (match := match_local(resolver, call, scope, local)) is not None
        and not _after_exit(call, index.parents)
    ]  # fmt: skip
    stops = {id(c) for c, _s, _m in (*primitives, *sites)}
    primitives, sites = _reading_kept(primitives, kept, index, stops), _reading_kept(sites, kept, index, stops)
    if not primitives and not sites:
        return ModuleCalls((), {})
    context = _Context(module, index, resolver, path=path, imported_tools=imported_tools, budget=budget, project=project,
                       tool_sites=tool_sites, kept=kept)
    result = _handed_out(context.analyse(primitives, sites), index)
    # The module's own wrappers, in rounds: each round's call sites may make their callers wrappers too.
    for _ in range(_WRAPPER_ROUNDS):
        grown = {q: v for q, v in result.returns_output.items() if q not in local}
        if not grown:
            break
        local.update(grown)
        kept.update(result.kept)
        taken = {id(c) for c, _s, _m in (*primitives, *sites)}
        found_sites = [
            (call, scope, match)
            for call, scope in index.calls
            if id(call) not in taken and (match := match_local(resolver, call, scope, local)) is not None
            and not _after_exit(call, index.parents)
        ]  # fmt: skip
        found_sites = _reading_kept(found_sites, kept, index, taken | {id(c) for c, _s, _m in found_sites})
        if not found_sites:
            break
        sites += found_sites
        result = _handed_out(context.analyse(primitives, sites), index)
    return _bound_wrappers(result, index)


# The arguments a request puts its question in (``messages=``, ``input=``, ``contents=``, ``prompt=``).
_QUESTIONS = frozenset({"messages", "input", "contents", "prompt"})


def _warms_up(call: cst.Call, parents: Mapping[int, cst.CSTNode]) -> bool:
    """``ollama.chat(model=self.name, messages=[])`` as a statement of its own: every question argument is
    written empty and the answer is dropped. It loads the model (or checks it is up); nothing is asked and
    nothing comes back to act on, so it is no model call. A request whose answer is kept, or with any
    other argument that could carry a question (positional, ``**kwargs``), stays one."""
    asked = [a for a in call.args if a.keyword is not None and a.keyword.value in _QUESTIONS]
    if not asked or any(a.keyword is None or a.star for a in call.args):
        return False
    if not all(isinstance(a.value, cst.List | cst.Tuple) and not a.value.elements for a in asked):
        return False
    parent = parents.get(id(call))
    if isinstance(parent, cst.Await):
        parent = parents.get(id(parent))
    return isinstance(parent, cst.Expr)


# The SDKs' coroutine twins of their requests (``litellm.acompletion``, a LangChain runnable's ``ainvoke``).
_ASYNC_REQUESTS = frozenset({"acompletion", "atext_completion", "ainvoke", "apredict", "agenerate", "acall", "arun", "abatch", "acreate"})
# What runs a coroutine handed to it (or keeps it for something that will).
_RUNS_COROUTINES = frozenset({
    "run", "run_until_complete", "create_task", "ensure_future", "gather", "wait", "wait_for", "shield", "as_completed",
    "run_coroutine_threadsafe", "start_soon", "spawn", "submit", "append", "extend", "add", "put", "put_nowait",
})  # fmt: skip


def _never_run(
    call: cst.Call, scope: Scope, found: Match, index: ModuleIndex, wrappers: Mapping[str, Mapping[str, tuple[str, str]]]
) -> bool:
    """``response = self.llm.agenerate_response(prompt)`` in a plain ``def`` (AgentVerse's ReflectionAgent.step):
    the coroutine function's call makes a coroutine, and nothing runs it (no ``await`` in a plain function,
    and it is handed to no ``asyncio.run``/``create_task``/``gather``, not returned, yielded or kept): the
    model is never asked. The callee is a coroutine by name: an SDK's (``acompletion``, ``ainvoke``) or a
    project wrapper method ``a<name>`` whose class has the wrapper ``<name>`` too (``agenerate_response``
    beside ``generate_response``)."""
    function = scope.node
    if not isinstance(function, cst.FunctionDef) or function.asynchronous is not None or not _coroutine(found, wrappers):
        return False
    parents = index.parents
    parent = parents.get(id(call))
    if isinstance(parent, cst.Arg):
        consumer = parents.get(id(parent))
        return isinstance(consumer, cst.Call) and not _runs(consumer)
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)):
        return False
    name = parent.targets[0].target.value
    for node in index.walk(function):
        if not (isinstance(node, cst.Name) and node.value == name) or node is parent.targets[0].target:
            continue
        holder = parents.get(id(node))
        if isinstance(holder, cst.Arg) and isinstance(consumer := parents.get(id(holder)), cst.Call) and not _runs(consumer):
            continue  # parse(response): handed to a call that does not run it
        return False  # returned, yielded, kept, run, or rebound: it may run
    return True


def _coroutine(found: Match, wrappers: Mapping[str, Mapping[str, tuple[str, str]]]) -> bool:
    owner, _, method = found.api.rpartition(".")
    if method in _ASYNC_REQUESTS:
        return True
    if not (owner and method.startswith("a") and len(method) > 1):
        return False
    return any(
        qualified.rpartition(".")[2] == owner and method in methods and method[1:] in methods
        for qualified, methods in wrappers.items()
    )  # fmt: skip


def _runs(call: cst.Call) -> bool:
    func = call.func
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return name is None or name in _RUNS_COROUTINES
def _kept_in(found: Match, kept: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The attributes a matched wrapper method keeps the output in, when it keeps it there and returns
    none of it (empty for any other call)."""
    return kept.get(found.api, frozenset()) if found.confidence != "high" else frozenset()


def _reading_kept(
    matches: list[tuple[cst.Call, Scope, Match]], kept: Mapping[str, frozenset[str]], index: ModuleIndex, stops: set[int]
) -> list[tuple[cst.Call, Scope, Match]]:
    """``matches`` without the calls of a method keeping the output on its object (``adapter.invoke_llm(...)``)
    after which the caller does not read what it kept (``adapter.tool_call``), before another model call or
    wrapper call on the same object (``stops``: ``solver.solve()`` after ``solver.initial_solve()``) keeps
    its own; ``self.method(...)``: the class's own methods read it where it is kept already."""
    out = []
    for call, scope, found in matches:
        attributes = _kept_in(found, kept)
        if attributes:
            receiver = dotted_name(call.func.value) if isinstance(call.func, cst.Attribute) else None
            if receiver is None or receiver in {"self", "cls"}:
                continue
            if not any(kept_reads(index, receiver, attribute, call, scope, stops=stops) for attribute in attributes):
                continue
        out.append((call, scope, found))
    return out


def _after_exit(call: cst.Call, parents: Mapping[int, cst.CSTNode]) -> bool:
    """``return response`` and then the old way, kept below it: a call in a statement that follows a
    ``return`` or ``raise`` of the same block never runs."""
    child, parent = parents.get(id(call)), None
    while child is not None:
        parent = parents.get(id(child))
        if isinstance(parent, cst.IndentedBlock | cst.Module):
            for statement in parent.body:
                if statement is child:
                    break
                if isinstance(statement, cst.SimpleStatementLine) and any(isinstance(s, cst.Return | cst.Raise) for s in statement.body):
                    return True
        child = parent
    return False


def _handed_out(result: ModuleCalls, index: ModuleIndex) -> ModuleCalls:
    """``def get_llm(self): … async def client(convo): return await llm_client(convo) … return client``:
    a function handing out a wrapper it defines (or one of the module's wrapper functions), not its
    answer. What it returns asks the model when called: ``llm = self.get_llm(); await llm(convo)``. Kept
    as ``BaseAgent.get_llm()`` (calling the function's result), a wrapper of its own for other modules."""
    handed: dict[str, tuple[str, str]] = {}
    inner: dict[str, str] = {}  # what is handed out (``BaseAgent.get_llm()``) -> the function it is
    for qualname, scope in index.scopes.items():
        if not isinstance(scope.node, cst.FunctionDef) or f"{qualname}()" in result.returns_output:
            continue
        for node in index.walk(scope.node.body, skip_defs=True):
            handed_out = _partial_of(node.value) if isinstance(node, cst.Return) else None
            if not (isinstance(node, cst.Return) and isinstance(handed_out, cst.Name)):
                continue
            name = handed_out.value
            function = f"{qualname}.{name}"
            found = result.returns_output.get(function)
            if found is None and name not in scope.params and (qualname, name) not in index.values and (MODULE_SCOPE, name) not in index.values:
                function, found = name, result.returns_output.get(name)  # return ask: the module's wrapper function itself
            if found is not None:
                handed[f"{qualname}()"], inner[f"{qualname}()"] = found, function
                break
    _handed_on(result, index, handed, inner)
    if not handed:
        return result
    # The calls the handed-out function returns, the calls of what is handed out return too: where another
    # module calls ``llm = self.get_llm(); command = await llm(convo)`` and runs the command is their evidence.
    returned_by = tuple(exits | {out for out, function in inner.items() if function in exits} for exits in result.returned_by)
    return attrs.evolve(result, returns_output={**result.returns_output, **handed}, returned_by=returned_by)


# What binds arguments to a function and hands it out: calling its result calls the function.
_PARTIALS = frozenset({"functools.partial", "partial"})


def _partial_of(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``return functools.partial(trader_node, name="Trader")`` hands out ``trader_node`` with an argument bound
    (TradingAgents' create_trader): the function itself, for what a call of the result does; any other value as it is."""
    if not (isinstance(value, cst.Call) and dotted_name(value.func) in _PARTIALS and value.args):
        return value
    first = value.args[0]
    if first.keyword is None and not first.star:
        return first.value
    return value


def _handed_on(result: ModuleCalls, index: ModuleIndex, handed: dict[str, tuple[str, str]], inner: dict[str, str]) -> None:
    """``return LLMAPIHandlerFactory.get_llm_api_handler(key)``, or ``handler = self.get_llm(); …;
    return handler``: a function returning what a function of the module hands out hands it out too
    (a registry or an override picking one of a factory's handlers), in rounds as deep as the wrappers'."""
    bound: dict[tuple[int, str], list[cst.BaseExpression]] | None = None
    for _ in range(_WRAPPER_ROUNDS):
        known = {**result.returns_output, **handed}
        if not any(key.endswith("()") for key in known):
            return  # nothing handed out to hand on
        if bound is None:
            bound = {}
            for where, name, value in index.assignments:
                bound.setdefault((id(where), name), []).append(value)
        grown: dict[str, tuple[str, str]] = {}
        for qualname, scope in index.scopes.items():
            key = f"{qualname}()"
            if not isinstance(scope.node, cst.FunctionDef) or key in known:
                continue
            for node in index.walk(scope.node.body, skip_defs=True):
                if not isinstance(node, cst.Return) or node.value is None:
                    continue
                called = next((c for v in _returned_values(node.value, scope, bound) if (c := _called_function(v, scope, index)) in known), None)
                if called is not None:
                    grown[key] = known[called]
                    inner[key] = inner.get(called, called.removesuffix("()"))
                    break
        if not grown:
            return
        handed.update(grown)


def _returned_values(
    value: cst.BaseExpression, scope: Scope, bound: Mapping[tuple[int, str], list[cst.BaseExpression]]
) -> list[cst.BaseExpression]:
    """The returned expression, or for a name of the function, every value bound to it there."""
    if isinstance(value, cst.Await):
        value = value.expression
    if not isinstance(value, cst.Name):
        return [value]
    return [v.expression if isinstance(v, cst.Await) else v for v in bound.get((id(scope), value.value), [])[:8]]


def _called_function(value: cst.BaseExpression, scope: Scope, index: ModuleIndex) -> str | None:
    """``f(…)``, ``self.m(…)`` or ``Factory.m(…)`` of the module: the called function's ``qualname()``."""
    if not isinstance(value, cst.Call):
        return None
    func = value.func
    if isinstance(func, cst.Name):
        current: Scope | None = scope
        while current is not None and current.parent is not None:
            if f"{current.qualname}.{func.value}" in index.scopes:
                return f"{current.qualname}.{func.value}()"
            current = current.parent
        top = index.scopes.get(func.value)
        return f"{func.value}()" if top is not None and top.class_name is None else None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        owner = func.value.value
        if owner in {"self", "cls"}:
            owner = scope.class_name or ""
        if owner in index.class_nodes and f"{owner}.{func.attr.value}" in index.scopes:
            return f"{owner}.{func.attr.value}()"
    return None


def _bound_wrappers(result: ModuleCalls, index: ModuleIndex) -> ModuleCalls:
    """``self.completions = fixed_litellm_completions`` in a method of ``Llm``: the module's wrapper
    function bound to an attribute is a wrapper method of the class (``llm.completions(…)`` elsewhere)."""
    bound = {
        f"{scope.class_name}.{key.removeprefix('self.')}": value.value
        for scope, key, value in index.assignments
        if scope.class_name is not None and key.startswith("self.") and "." not in key.removeprefix("self.")
        and isinstance(value, cst.Name) and value.value in result.returns_output
    }  # fmt: skip
    new = {method: function for method, function in bound.items() if method not in result.returns_output}
    if not new:
        return result
    # The calls the function returns the method returns too: its call sites' evidence is theirs.
    returned_by = tuple(exits | {m for m, function in new.items() if function in exits} for exits in result.returned_by)
    returns_output = {**result.returns_output, **{m: result.returns_output[f] for m, f in new.items()}}
    return attrs.evolve(result, returns_output=returns_output, returned_by=returned_by)


# A wrapper of a wrapper of a wrapper is as deep as the same-module rounds go.
_WRAPPER_ROUNDS = 3


class _Context:
    """One module's analysis, repeatable with more wrapper call sites known."""

    def __init__(self, module: cst.Module, index: ModuleIndex, resolver: Resolver, *, path: str,
                 imported_tools: Mapping[str, tuple[Finding, ...]] | None, budget: FileBudget | None,
                 project: ParamFlow | None, tool_sites: Mapping[str, ToolSite] | None,
                 kept: Mapping[str, frozenset[str]]) -> None:  # fmt: skip
        self.module, self.index, self.resolver, self.path, self.project = module, index, resolver, path, project
        self.kept = kept  # Class.method -> the attributes it keeps the output in (analyse_module's, growing)
        self.imported_tools, self.budget, self.tool_sites = imported_tools, budget, tool_sites
        self.positions = _positions(module, index)
        self.guards = _Guards(index, resolver)
        self.gates = _Gates(index, resolver)

    def line_of(self, node: cst.CSTNode) -> int:
        return self.positions.line(node)

    def span(self, node: cst.CSTNode) -> CodeRange:
        found = self.positions.span(node)
        assert found is not None, "a call of this module has a span"
        return found

    def analyse(self, primitives: list[tuple[cst.Call, Scope, Match]], sites: list[tuple[cst.Call, Scope, Match]]) -> ModuleCalls:
        # Ordinals follow source order (the index's pre-order), whatever order the rounds found the calls in.
        order = self.index.order_of
        matches = sorted([*primitives, *sites], key=lambda m: order(m[0]))
        wrapper_sites: dict[str, list[tuple[cst.Call, Scope]]] = {}
        for call, scope, found in sites:
            for api in (found.api, *found.also):
                wrapper_sites.setdefault(api, []).append((call, scope))
        surface = SurfaceAnalyzer(
            self.index, self.resolver, line_of=self.line_of, code_of=self.module.code_for_node,
            llm_calls={id(c) for c, _, _ in matches}, imported_tools=self.imported_tools, wrapper_sites=wrapper_sites,
            project=self.project, tool_sites=self.tool_sites,
        )  # fmt: skip
        ordinals: dict[str, int] = {}
        calls = []
        returned_by: list[frozenset[str]] = []
        returns_output: dict[str, tuple[str, str]] = {}
        kept: dict[str, set[str]] = {}
        kept_api: dict[str, tuple[str, str]] = {}
        for call, scope, found in matches:
            ordinal = ordinals.get(scope.qualname, 0)
            ordinals[scope.qualname] = ordinal + 1
            ran_out = self.budget.ran_out() if self.budget is not None else None
            if ran_out is not None:
                # The file's budget is spent: the call is still reported, as something not followed.
                result = Surface((rules.fact("not-analysed", ran_out, self.line_of(call)),), escapes=True, tools_gated=False)
            else:
                result = surface.analyze(call, scope, found, origin=_origin(call, self.guards, self.index), kept=_kept_in(found, self.kept))
            for qualname in sorted(result.returned):
                returns_output.setdefault(qualname, (found.provider, found.api))
            for qualname, attribute in sorted(result.kept):
                kept.setdefault(qualname, set()).add(attribute)
                kept_api.setdefault(qualname, (found.provider, found.api))
            returned_by.append(result.returned)
            calls.append(
                _build(call, scope, found, result, path=self.path, ordinal=ordinal, module=self.module, span=self.span(call),
                       index=self.index, guards=self.guards, gates=self.gates)
            )  # fmt: skip
        # A method keeping the output on its object and returning none of it: a wrapper all the same, whose
        # callers reading what it kept are its call sites (_reads_kept).
        only_kept = {q: frozenset(a) for q, a in kept.items() if q not in returns_output and "." in q}
        returns_output.update({q: kept_api[q] for q in only_kept})
        return ModuleCalls(tuple(calls), returns_output, tuple(returned_by), only_kept)


def _origin(call: cst.Call, guards: _Guards, index: ModuleIndex) -> cst.CSTNode:
    """Where the output appears: the guard wrapping the call, when there is one."""
    _guard_id, guard_call = guards.wrapped.get(id(call), (None, None))
    return guard_call if guard_call is not None else call


def _build(
    call: cst.Call,
    scope: Scope,
    found: Match,
    result: Surface,
    *,
    path: str,
    ordinal: int,
    module: cst.Module,
    span: CodeRange,
    index: ModuleIndex,
    guards: _Guards,
    gates: _Gates,
) -> LlmCall:
    guard_id, guard_call = guards.wrapped.get(id(call), (None, None))
    guarded = guard_call is not None
    awaited = id(guard_call if guard_call is not None else call) in index.awaited
    findings = result.findings
    runner = _is_runner(found)
    confidence = analysis_confidence(findings, escapes=result.escapes, call_confidence=found.confidence)
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
        recommendation=rules.recommend(findings, confidence=confidence, path=path),
        source=module.code_for_node(call),
        runner=runner,
        tools_in_loop=runner and _awaits_tools(found),
        runner_kind=found.receiver.kind if runner and found.receiver is not None else "",
        risky_tools=tuple(attrs.evolve(t, path=t.path or path) for t in result.risky_tools) if runner else (),
    )


def _awaits_tools(found: Match) -> bool:
    """The OpenAI Agents SDK runs sync tools inside its event loop (Runner.run*, the realtime runner)."""
    kind = found.receiver
    return found.api.startswith("agents.Runner") or (kind is not None and kind.kind == "agents-realtime")


def _is_runner(found: Match) -> bool:
    """Runner.run*, a LangGraph prebuilt agent, a crew: the call runs the agent's tools itself."""
    if found.api.startswith("agents.Runner") or found.api == "run_demo_loop":
        return True
    kind = found.receiver
    while kind is not None:
        if kind.kind in apis.RUNNER_KINDS:
            return True
        kind = kind.base
    return False


def analysis_confidence(findings: tuple[Finding, ...], *, escapes: bool, call_confidence: str) -> str:
    """High when the deciding evidence is exact; low when the output left what we can follow."""
    if not findings:
        own = "low" if escapes else "medium"
    elif escapes and all(rules.RULES_BY_ID[f.rule].mode in {"sampled", "autonomous"} for f in findings):
        own = "low"
    else:
        own = "high" if any(f.rule in rules.EXACT_RULES or f.detail.startswith("SQL") for f in findings) else "medium"
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
        self.resolver = resolver

    def gate_for(self, scope: Scope, found: Match, *, tools_gated: bool) -> str | None:
        if scope.qualname in self.interrupt_scopes:
            return "langgraph.interrupt"
        kind = found.receiver
        while kind is not None:
            if kind.origin is not None and id(kind.origin) in self.gated_builders:
                return "langgraph.interrupt"
            kind = kind.base
        # The framework's approval covers a run only when it sits on every risky tool that run reaches.
        if tools_gated and _is_runner(found):
            return _APPROVAL_GATES.get(found.receiver.kind if found.receiver else "", "needs_approval")
        return None


# The name of each framework's own tool approval, as existingGate reports it.
_APPROVAL_GATES = {
    "pydantic-agent": "requires_approval", "strands-agent": "tool-approval", "crew": "tool-approval",
    "adk-agent": "tool-approval", "adk-runner": "tool-approval", "adk-app": "tool-approval",
    "agno-agent": "tool-approval", "agno-team": "tool-approval",
    "maf-agent": "tool-approval", "maf-workflow": "tool-approval",
    "ag2-agent": "human_input_mode", "ag2-chat": "human_input_mode",  # the executor asks the person (offered.py)
    # A LangChain/LangGraph prebuilt agent: @interrupt_for_approval on its tools, or create_agent's
    # HumanInTheLoopMiddleware naming each of them (offered.py).
    "agent": "langgraph.interrupt",
}  # fmt: skip
