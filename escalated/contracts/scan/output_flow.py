"""Where one model call's output flows, and what it decides there.

A small flow-insensitive taint pass over the enclosing function, into the
module-local helpers the output is passed to, and back to the module-local
callers it is returned to; passed to a function of another project module, it
is followed there (``ParamFlow``: scan/flows.py). Each use found becomes rule
findings: the calls it reaches (``effects.py``), the branches it drives and
the side effects inside them.
"""

from __future__ import annotations

import re

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol

import attrs
import libcst as cst

from escalated.contracts import rules
from escalated.contracts.calls import Finding
from escalated.contracts.scan import graphs
from escalated.contracts.scan.effects import CallEffects
from escalated.contracts.scan.index import MODULE_SCOPE, ModuleIndex, Scope, dotted_name, syntax_children, target_key
from escalated.contracts.scan.nodeflow import POST, NodeClasses
from escalated.contracts.scan.registries import RUN_METHODS, Registries
from escalated.contracts.scan.resolve import Resolver
from escalated.contracts.scan.syntax import (
    annotated_class, branch_bodies, is_primary, literal, param_for, short_name, short_name_or_none, trivial_test,
)
from escalated.contracts.scan.tools import ToolResolver

MAX_DEPTH = 3  # helper functions followed in or out of the enclosing function
MAX_STEPS = 4000  # bound on work per call, so one pathological file cannot stall a scan
# Arguments that name the tool a collection runs (``tool_collection.run(name=..., tool_input=...)``).
_TOOL_NAME_KEYWORDS = frozenset({"name", "tool_name"})
# Methods of a class followed for a look-up by name on an object typed with it (``getattr(computer, kind)``).
_MAX_TYPED_METHODS = 40


# A handler of the model's tool calls, named so (tool_handler, useToolHandler, run_tool, call_tools).
_TOOL_WORDS = frozenset({"tool", "tools"})
_HANDLES = frozenset({"handler", "handle", "use", "run", "call", "execute", "invoke", "process", "dispatch"})


class ParamFlow(Protocol):
    """The project's functions followed by parameter (scan/flows.py)."""

    def param_findings(self, qualified: str, call: cst.Call, arg: cst.Arg) -> tuple[Finding, ...] | None: ...

    def callback_findings(self, qualified: str, call: cst.Call, arg: cst.Arg) -> tuple[Finding, ...] | None: ...

    def param_returns(self, qualified: str, call: cst.Call, arg: cst.Arg) -> bool: ...

    def filled_findings(self, owner: str, method: str, positional: tuple[str, ...], param: str) -> tuple[Finding, ...]: ...

    def filled_args(self, qualified: str, call: cst.Call, arg: cst.Arg) -> tuple[cst.Arg, ...]: ...

    def run_folder(self, owner: str, attribute: str) -> str | None: ...

    def kept_findings(self, owners: tuple[str, ...], method: str, attribute: str) -> tuple[Finding, ...]: ...

    def methods_of(self, qualified: str) -> tuple[str, list[str]]: ...

    def asks_a_model(self, qualified: str) -> bool: ...


@attrs.define
class FlowState:
    """One trace: what it found so far, and what is still to follow."""

    findings: list[Finding] = attrs.Factory(list)
    escapes: bool = False
    gated_tools: int = 0
    returned: set[str] = attrs.Factory(set)
    # Functions the output was passed into: returning it there is a pass-through (truncate), not a wrapper.
    passed_into: set[str] = attrs.Factory(set)
    # The function holding the model call the trace started from (follow_output).
    origin: str | None = None
    # False when the output came in through a parameter from another module: returned, it goes back there.
    follow_returns: bool = True
    seen: set[tuple[str, str]] = attrs.Factory(set)
    # Of those, the names so far seen holding only something built from the output: found holding
    # the output itself later (``x = out.a() if hasattr(out, "a") else dict(out)``), followed again.
    seen_derived: set[tuple[str, str]] = attrs.Factory(set)
    seen_calls: set[int] = attrs.Factory(set)
    # For each of those, the first of the name's references (in source order) followed so far: a binding
    # earlier than the one it was first followed from (problem["code"] = answer at two places) follows it again.
    seen_from: dict[tuple[str, str], int] = attrs.Factory(dict)
    steps: int = 0
    # Names found to carry the output, still to follow. A worklist rather than
    # recursion: a long chain of assignments must not exhaust the stack.
    # The flag: the name holds something built from the output (a list of answers), not the output.
    # The binding (a plain ``name = ...``): references before it, outside a loop around it, see an older value.
    pending: list[tuple[str, Scope, int, bool, cst.Name | None]] = attrs.Factory(list)
    # Names holding a paused run's requests (``for request in result.user_input_requests``), in their
    # scope: answering them is the framework's approval, and a branch on them chooses nothing.
    paused: set[tuple[str, str]] = attrs.Factory(set)
    # Loop targets over the output itself (for chunk in stream): each a piece of the output, in its scope.
    pieces: set[tuple[str, str]] = attrs.Factory(set)
    # Calls of a tool looked up by name the output reached (scan/registries.py), judged once for
    # the name and once for the arguments: (id of the call, whether an argument carries the output).
    dispatched: set[tuple[int, bool]] = attrs.Factory(set)
    # Calls running a tool collection by the name the answer gave, judged once.
    collections_run: set[int] = attrs.Factory(set)
    # Parameters of the function the trace started from that the output was written into
    # (post_proxy.update_attachment(code), record["code"] = answer): what the caller passed there now holds it.
    filled: set[str] = attrs.Factory(set)
    # Attributes of the method's own object the output was kept in (``self.tool_call = response...``),
    # as (the method's qualified name, attribute): what the method's callers read there after the call.
    kept: set[tuple[str, str]] = attrs.Factory(set)


class OutputFlow:
    def __init__(
        self,
        index: ModuleIndex,
        resolver: Resolver,
        effects: CallEffects,
        tools: ToolResolver,
        *,
        line_of: Callable[[cst.CSTNode], int],
        llm_calls: set[int],
        wrapper_sites: Mapping[str, list[tuple[cst.Call, Scope]]],
        project: ParamFlow | None,
    ) -> None:
        self.index = index
        self.resolver = resolver
        self.effects = effects
        self.tools = tools
        self.line_of = line_of
        self.llm_calls = llm_calls
        # The module's own wrappers (qualname) -> their call sites here: where a returned output goes.
        self.wrapper_sites = wrapper_sites
        # Other modules' functions, followed from the parameter the output is passed as.
        self.project = project
        self._parents = index.parents
        self._names: dict[int, dict[str, list[cst.CSTNode]]] = {}
        self._reaches: dict[tuple[int, int], bool] = {}  # (reader, writer) scopes -> the one calls the other
        self._routers: list[Scope] | None = None  # the module's graph routers (scan/graphs.py), once asked
        self._def_scopes: dict[int, Scope] | None = None
        self._passes: dict[int, bool] = {}
        self._runs_after: dict[int, list[Finding]] = {}  # a file write of the output -> the code run after it
        self._assigned: dict[int, dict[str, list[cst.CSTNode]]] = {}  # a function -> the values it binds names to
        self._declared: dict[int, frozenset[str]] = {}
        self._looped: dict[int, frozenset[str]] = {}
        self.registries = Registries(index, tools)
        self._nodes: NodeClasses | None = None  # the module's PocketFlow node classes (scan/nodeflow.py), once asked
        self._calls_in: dict[str, list[tuple[cst.Call, Scope]]] | None = None  # scope -> the calls in it (nested ones too)
        self._asking: dict[str, bool] = {}  # function (qualified in the module) -> it asks a model (asks_in)

    def follow_output(self, origin: cst.CSTNode, scope: Scope, flow: FlowState) -> None:
        """Everything the output appearing at ``origin`` (in ``scope``) reaches."""
        if flow.origin is None:
            flow.origin = scope.qualname
        self._follow(origin, scope, flow, depth=0)
        self._drain(flow)
        self.index.meter.steps += flow.steps

    def follow_param(self, param: str, scope: Scope, flow: FlowState) -> None:
        """Everything parameter ``param`` of function ``scope`` reaches when it holds the output."""
        self._taint_key(param, scope, flow, depth=1, derived=True)
        self._drain(flow)
        self.index.meter.steps += flow.steps

    def follow_read(self, receiver: str, attribute: str, after: cst.CSTNode, scope: Scope, flow: FlowState, *, depth: int) -> None:
        """Everything the reads of ``receiver.attribute`` (``adapter.tool_call``) in function ``scope``
        after node ``after`` (the call that filled it) reach, holding the output."""
        for node in kept_reads(self.index, receiver, attribute, after, scope, stops=self.llm_calls):
            self._follow(node, scope, flow, depth=depth)
        self._drain(flow)
        self.index.meter.steps += flow.steps

    def param_returned(self, param: str, scope: Scope) -> bool:
        """Whether function ``scope`` returns what its parameter ``param`` carries, or parts of it
        (``parse_script(response)`` returning the message and the script split out of the reply)."""
        flow = FlowState(follow_returns=False)
        self._taint_key(param, scope, flow, depth=1)
        self._drain(flow)
        self.index.meter.steps += flow.steps
        return scope.qualname in flow.returned

    def param_filled(self, param: str, scope: Scope) -> set[str]:
        """The other parameters of function ``scope`` that what its parameter ``param`` carries is written
        into (``raw_text_to_post(llm_output, post_proxy)`` … ``post_proxy.update_attachment(value)``)."""
        flow = FlowState(follow_returns=False, origin=scope.qualname)
        self._taint_key(param, scope, flow, depth=1)
        self._drain(flow)
        self.index.meter.steps += flow.steps
        return flow.filled - {param}

    def follow_callback(self, param: str, scope: Scope, flow: FlowState, *, depth: int = 0) -> None:
        """What function ``scope`` does with what its parameter ``param``, a callback, returns when that
        is built from the output: ``response = await respond(thread)`` then ``smtp.send_message(response...)``.
        Handed on to a function or method of this module (``self.process(respond)``), followed there."""
        for call, where in self.index.calls:
            if where is not scope:
                continue
            if isinstance(call.func, cst.Name) and call.func.value == param:
                parent = self._parents.get(id(call))
                self._follow(parent if isinstance(parent, cst.Await) else call, scope, flow, depth=1, derived=True)
                continue
            for arg in call.args:
                if depth < 2 and isinstance(arg.value, cst.Name) and arg.value.value == param and not arg.star:
                    target = self.tools.function(short_name(call.func), scope) if isinstance(call.func, cst.Name | cst.Attribute) else None
                    inner = param_for(target.node, call, arg) if target is not None and isinstance(target.node, cst.FunctionDef) else None
                    if target is not None and inner is not None and target is not scope:
                        self.follow_callback(inner, target, flow, depth=depth + 1)
        self._drain(flow)
        self.index.meter.steps += flow.steps

    def _callback_sites(self, scope: Scope, flow: FlowState) -> bool:
        """``emailer.run(respond)`` with ``respond`` returning the output: the project function or method of
        another module it is handed to calls it; what that does with the result is the output's fate."""
        if self.project is None or scope.class_name is not None or scope.parent is not self.index.module_scope:
            return False
        name, found = scope.qualname, False
        for call, caller in self.index.calls:
            for arg in call.args:
                if isinstance(arg.value, cst.Name) and arg.value.value == name and not arg.star and id(call) not in self.llm_calls:
                    passed = self._handed(call, arg, caller)
                    if passed is not None:
                        flow.findings.extend(passed)
                        found = True
        return found

    def _callee(self, call: cst.Call, scope: Scope) -> str | None:
        """The called function's qualified name: imported, or a method of a class of
        another module (``PlanRunner().run(reply)``, ``self.runner.run(reply)``)."""
        qualified = self.resolver.qualified(call.func)
        if qualified is None and isinstance(call.func, cst.Attribute):
            owner = self.resolver.kind_of(call.func.value, scope)
            if owner is not None and owner.kind.startswith("interface:"):
                return f"*.{call.func.attr.value}"  # env.execute(action), env: Environment: every class with execute
            # A model wrapper's own object (ExecuteNbCode, an Action with an llm): a method of it that asks
            # no model (run(code) runs the code) is followed like any project object's; one that does is a
            # model call, where the walk stops (_passed_on).
            project_object = owner is not None and owner.kind.startswith(("object:", "wrapper:"))
            cls = owner.kind.partition(":")[2] if owner is not None and project_object else ""
            qualified = f"{cls}.{call.func.attr.value}" if "." in cls else None
        if qualified is None and isinstance(call.func, cst.Name | cst.Attribute):
            # executor(response, messages) with executor = Executor(), a class of another module: its __call__.
            called = self.resolver.kind_of(call.func, scope)
            cls = called.kind.partition(":")[2] if called is not None and called.kind.startswith("object:") else ""
            qualified = f"{cls}.__call__" if "." in cls else None
        return qualified

    def _handed(self, call: cst.Call, arg: cst.Arg, scope: Scope) -> list[Finding] | None:
        assert self.project is not None
        qualified = self._callee(call, scope)
        found = self.project.callback_findings(qualified, call, arg) if qualified is not None else None
        if not found:
            return None
        label, line = f"{dotted_name(call.func) or qualified}({short_name_or_none(arg.value) or '…'})", self.line_of(call)
        return [attrs.evolve(f, detail=f"{label} -> {f.detail}", line=line) for f in found]

    def _drain(self, flow: FlowState) -> None:
        while flow.pending and flow.steps <= MAX_STEPS:
            key, current, depth, derived, binding = flow.pending.pop(0)
            references = self._references(current).get(key, ())
            start = self._reached_from(binding, references)
            for at, reference in enumerate(references):
                if not self._is_binding(reference) and (at >= start or self._in_loop_with(reference, binding)):
                    paused = (current.qualname, key) in flow.paused
                    self._follow(reference, current, flow, depth=depth, derived=derived, paused=paused)

    def _reached_from(self, binding: cst.Name | None, references: Sequence[cst.CSTNode]) -> int:
        """Index of ``binding`` among the name's references (in source order), 0 when unknown."""
        if binding is None:
            return 0
        return next((at for at, reference in enumerate(references) if reference is binding), 0)

    def _in_loop_with(self, reference: cst.CSTNode, binding: cst.Name | None) -> bool:
        """The reference sits in a loop that also holds the binding: a later turn sees the new value."""
        loops: set[int] = set()
        node = self._parents.get(id(binding)) if binding is not None else None
        while node is not None and not isinstance(node, cst.FunctionDef | cst.Module):
            rebinds = isinstance(node, cst.For) and binding is not None and binding.value in _bound_names(node.target)
            if isinstance(node, cst.For | cst.While) and not rebinds:  # a loop binding the name anew each turn does not
                loops.add(id(node))
            node = self._parents.get(id(node))
        node = self._parents.get(id(reference))
        while node is not None and not isinstance(node, cst.FunctionDef | cst.Module):
            if id(node) in loops:
                return True
            node = self._parents.get(id(node))
        return False

    def _follow(self, node: cst.CSTNode, scope: Scope, flow: FlowState, *, depth: int, derived: bool = False, paused: bool = False) -> None:
        """Walk up from an expression carrying the output to the statement using it.

        ``derived``: what is carried was built from the output (passed through a call or
        into a list, a string, a loop) rather than being the output or a field of it; a
        function returning such a thing is not a wrapper of the model.
        ``paused``: what is carried is (built from) a paused run's requests.
        """
        child, parent = node, self._parents.get(id(node))
        update: str | None = None  # the graph-state key a returned ``{"key": output}`` updates
        updated_with_output = False  # and whether its value is the output itself (not built from it)
        while parent is not None:
            flow.steps += 1
            if flow.steps > MAX_STEPS:
                flow.escapes = True
                return
            if _reads_usage(parent, child):
                return  # tokens = response["usage"]: the request's token counts, none of the answer
            if isinstance(parent, cst.Call) and parent.func is child:
                if isinstance(child, cst.Attribute) and self._asks(parent, scope):
                    # chat.append_assistant_message(answer) … chat.generate(…): the object holding the answer
                    # asks a model with it as context; what comes back is that request's own answer, judged
                    # at that call (as an answer passed in a model call's arguments is).
                    return
                self._dispatch(parent, scope, flow)  # TOOLS[name](…), fn(…) with fn = TOOLS[name], tool.execute(…)
            if isinstance(parent, cst.Arg) and parent.value is child:
                consumer = self._parents.get(id(parent))
                if isinstance(consumer, cst.Call):
                    self._consume(consumer, parent, scope, flow, depth=depth, paused=paused, derived=derived)
                    if id(consumer) in self.llm_calls or (self._asks(consumer, scope) and not self._passes_through(parent, child, scope)):
                        # coder.execute(step_by_step_plan=plan): the answer is part of the next request's
                        # prompt; what that request returns is its own answer, judged at that call.
                        return
                    if _last_name(consumer.func) in _ASKS_A_PERSON:
                        # reply = await self.ask_question(question): the answer is shown to a person; what
                        # comes back is the person's reply (a button, their text), not the model's.
                        return
            elif isinstance(parent, cst.Assign) and parent.value is child:
                for target in parent.targets:
                    binding = target.target if isinstance(target.target, cst.Name) else None
                    self._taint_target(target.target, scope, flow, depth=depth, derived=derived, binding=binding, paused=paused)
                return
            elif isinstance(parent, cst.AugAssign) and parent.value is child and (record := self._collects_into_record(parent, scope)):
                self._taint_target(record, scope, flow, depth=depth, derived=derived, paused=paused)
                return
            elif isinstance(parent, cst.AnnAssign | cst.AugAssign) and parent.value is child:
                grown = isinstance(parent, cst.AugAssign) and not self._collects(parent, scope) and not _adds_record(parent)
                self._taint_target(parent.target, scope, flow, depth=depth, derived=derived or grown, paused=paused)
                return
            elif isinstance(parent, cst.NamedExpr) and parent.value is child:
                self._taint_target(parent.target, scope, flow, depth=depth, derived=derived, paused=paused)
            elif isinstance(parent, cst.For | cst.CompFor) and parent.iter is child:
                # for request in result.user_input_requests: each is a tool call the framework holds for a human
                requests = paused or (isinstance(child, cst.Attribute) and child.attr.value in _PAUSE_STATE)
                # for chunk in stream: each piece of the output itself is the output (a streaming wrapper
                # yields chunk.choices[0].delta.content); in a comprehension it is built into something else.
                pieces = derived or not isinstance(parent, cst.For)
                if not pieces and isinstance(parent.target, cst.Name):
                    flow.pieces.add((scope.qualname, parent.target.value))
                # for result in stream: the name holds the answer from this loop on (and on the loop's later
                # turns), not where an earlier loop bound it to something else.
                if isinstance(parent, cst.CompFor):
                    # [line.strip() for line in answer]: the comprehension's own variable, read only inside it.
                    self._follow_comprehension(parent, scope, flow, depth=depth, paused=requests, derived=derived)
                else:
                    binding = parent.target if isinstance(parent.target, cst.Name) else None
                    self._taint_target(parent.target, scope, flow, depth=depth, derived=pieces, binding=binding, paused=requests)
                    return
            elif isinstance(parent, cst.WithItem) and parent.item is child:
                if parent.asname is not None:
                    self._taint_target(parent.asname.name, scope, flow, depth=depth, derived=derived, paused=paused)
                return
            elif isinstance(parent, cst.DictElement) and parent.value is child:
                update, updated_with_output = graphs.update_key(parent), not derived
            elif isinstance(parent, cst.Return | cst.Yield):
                if update is not None and isinstance(parent, cst.Return) and graphs.takes_state(scope):
                    self._routed(update, scope, flow, depth=depth, itself=updated_with_output)
                self._returned(scope, flow, depth=depth, derived=derived)
                return
            elif isinstance(parent, cst.If | cst.While | cst.IfExp) and parent.test is child:
                self._branch(parent, child, flow, paused=paused)
                if not isinstance(parent, cst.IfExp):
                    return
            elif isinstance(parent, cst.Match) and parent.subject is child:
                self._branch(parent, child, flow, paused=paused)
                return
            elif isinstance(parent, cst.Lambda):
                run = self._run_by_local_runner(parent, child, scope)
                if run is None:
                    return
                # await self.measure("agent", lambda: agent.process_request(text)): the runner returns what
                # the lambda returns, so its call's value is the output still.
                child, parent = run, self._parents.get(id(run))
                continue
            elif isinstance(parent, cst.BaseSmallStatement | cst.BaseCompoundStatement):
                return
            derived = derived or not (
                _projects(parent, child) or _holds(parent, child) or self._still_output(parent, scope) or self._passes_through(parent, child, scope)
                or (isinstance(parent, _PIECE_LISTS) and parent.elt is child and _picks_pieces(parent))
            )  # fmt: skip
            child, parent = parent, self._parents.get(id(parent))

    def _asks(self, call: cst.Call, scope: Scope) -> bool:
        """The call asks a model: it is one (a model call, a wrapper's call site), or it calls a function of
        this module, or a method of a project class its receiver is typed by (of this module, or of another
        through the project's modules), that asks one in its body."""
        if id(call) in self.llm_calls:
            return True
        func = call.func
        local = _this_modules_callee(func)
        if local:
            target = self.tools.function(short_name(func), scope)  # type: ignore[arg-type]
            if target is not None and target is not scope and isinstance(target.node, cst.FunctionDef):
                return self.asks_in(target)
        if not isinstance(func, cst.Attribute):
            return False
        owner = self.resolver.kind_of(func.value, scope)
        if owner is None or not owner.kind.startswith(("object:", "wrapper:")):
            return False
        cls, method = owner.kind.partition(":")[2], func.attr.value
        if "." not in cls:  # a class of this module
            found = self.index.scopes.get(f"{cls}.{method}")
            return found is not None and self.asks_in(found)
        return self.project is not None and self.project.asks_a_model(f"{cls}.{method}")

    def asks_in(self, function: Scope, *, depth: int = 0) -> bool:
        """Whether ``function`` asks a model: a call in its body (nested functions too) is a model call
        (or a wrapper's call site here), or calls a function or method of this module that asks one
        (three deep)."""
        known = self._asking.get(function.qualname)
        if known is not None:
            return known
        self._asking[function.qualname] = False  # recursion: not (yet) known to ask
        if self._calls_in is None:
            self._calls_in = {}
            for call, where in self.index.calls:
                inner: Scope | None = where
                while inner is not None:
                    self._calls_in.setdefault(inner.qualname, []).append((call, where))
                    inner = inner.parent
        found = False
        for call, where in self._calls_in.get(function.qualname, ()):
            if id(call) in self.llm_calls or self.resolver.match_call(call, where) is not None:
                found = True
                break
            func = call.func
            local = _this_modules_callee(func)
            target = self.tools.function(short_name(func), where) if local and depth < 3 else None  # type: ignore[arg-type]
            if target is not None and target is not function and self.asks_in(target, depth=depth + 1):
                found = True
                break
        self._asking[function.qualname] = found
        return found

    def _run_by_local_runner(self, lambda_: cst.Lambda, body: cst.CSTNode, scope: Scope) -> cst.Call | None:
        """The call ``lambda_`` (whose body is ``body``) is handed to, when that is a function or method of this
        module that returns what calling its parameter returns (``return await fn()``, or a name bound so);
        else None."""
        arg = self._parents.get(id(lambda_))
        call = self._parents.get(id(arg)) if isinstance(arg, cst.Arg) and lambda_.body is body else None
        if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Name | cst.Attribute) or id(call) in self.llm_calls:
            return None
        if isinstance(call.func, cst.Attribute) and not (isinstance(call.func.value, cst.Name) and call.func.value.value in {"self", "cls"}):
            return None
        target = self.tools.function(short_name(call.func), scope)
        if target is None or not isinstance(target.node, cst.FunctionDef) or target is scope:
            return None
        param = param_for(target.node, call, arg)  # type: ignore[arg-type]
        return call if param is not None and _returns_called(target.node, param) else None

    def _follow_comprehension(
        self, loop: cst.CompFor, scope: Scope, flow: FlowState, *, depth: int, paused: bool, derived: bool = True
    ) -> None:
        """The references, inside the comprehension, of the names ``loop`` binds (what is built of them).
        ``[t["response"] for t in answers]`` picks each answer's field: the list built holds the answers'
        pieces, as a list appended each answer's own piece does; anything else built of them is derived."""
        bound = _bound_names(loop.target)
        comprehension = self._parents.get(id(loop))
        while comprehension is not None and not isinstance(comprehension, _COMPREHENSIONS):
            comprehension = self._parents.get(id(comprehension))
        if comprehension is None:
            return
        picks = _picks_pieces(comprehension)
        for node in self.index.walk(comprehension):
            if isinstance(node, cst.Name) and node.value in bound and not self._is_binding(node) and not self._is_label(node):
                self._follow(node, scope, flow, depth=depth, derived=derived or not picks, paused=paused)

    def _consume(
        self, call: cst.Call, arg: cst.Arg, scope: Scope, flow: FlowState, *, depth: int, paused: bool = False, derived: bool = True
    ) -> None:
        kit = self.effects.toolkit_effect(call) if id(call) not in self.llm_calls else None
        passed = [kit] if kit is not None else self._passed_on(call, arg, scope, flow)
        if passed is None and self._writes_note(call, scope):
            passed = []  # file.write(email) into open("output.txt", "a"): text kept for a person, as printed
        routes = graphs.routes_to(self.resolver.qualified(call.func), arg)
        if routes is not None:
            flow.findings.append(rules.fact("output-drives-branch", routes, self.line_of(call)))
        if passed is None:
            passed = self.effects.classify_call(call, tainted=is_primary(call, arg))
            passed += self._named_act_implemented(call, arg, scope, passed)
            passed += self._unseen_tool_handler(call, arg, scope, passed)
            passed += self._run_after_write(call, arg, scope, flow, derived=derived)
        flow.findings.extend(passed)
        if id(call) not in self.llm_calls:
            self._dispatch(call, scope, flow, arg=arg)  # tool_obj(**cmd["args"]) with tool_obj = self.tool_map[cmd["name"]]
            self._collection_run(call, scope, flow)
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        keeps = not rules.only_displays(dotted_name(call.func) or "")  # logger.warning(output): the logger carries nothing
        # websocket.send_text(output), bus.publish(output): a channel delivers it, it does not hold it.
        keeps = keeps and not (isinstance(call.func, cst.Attribute) and rules.words(call.func.attr.value)[:1] in _SENDS)
        if receiver is not None and id(call) not in self.llm_calls and self._is_local_object(receiver) and not _builds_anew(call) and keeps:
            # message.set_content(output), payload.update(output): the receiver now carries it.
            self._fills(receiver, scope, flow)
            collects = self._collects_pieces(call, arg, scope, flow, derived=derived)
            # f.write(json.dumps(review)): the handle holds it from here on, not the f an earlier
            # ``with open(...) as f`` of the function read its baseline from.
            self._taint_target(receiver, scope, flow, depth=depth, derived=not collects, binding=_holder(receiver))
        elif receiver is not None and not derived and _self_attribute(receiver) and _adds_answer_turn(call, arg):
            # self.short_memory.add(role=self.agent_name, content=answer): the object's conversation holds the
            # answer as a turn of its own (only so: self.io.tool_output(text) must not taint every use of self.io).
            self._taint_target(receiver, scope, flow, depth=depth, derived=False)
        if receiver is not None and not derived and id(call) not in self.llm_calls and self._returns_last(call, scope):
            # self.messages.append(Message("assistant", answer)) … return self.messages[-1].content: the answer.
            self._returned(scope, flow, depth=depth, derived=False)
        if depth >= MAX_DEPTH or not isinstance(call.func, cst.Name | cst.Attribute):
            return
        if isinstance(call.func, cst.Attribute) and not (isinstance(call.func.value, cst.Name) and call.func.value.value in {"self", "cls"}):
            return
        target = self.tools.function(short_name(call.func), scope)
        if target is None or not isinstance(target.node, cst.FunctionDef):
            return
        if isinstance(call.func, cst.Attribute) and _abstract(target.node) and self.project is not None and id(call) not in self.llm_calls:
            # self._execute(tool_input) in a base class whose _execute only raises NotImplementedError: the
            # subclasses' _execute run, any project class's (as on a protocol).
            flow.findings.extend(self.project.param_findings(f"*.{call.func.attr.value}", call, arg) or ())
            return
        param = param_for(target.node, call, arg)
        if param is not None:
            flow.passed_into.add(target.qualname)
            self._taint_key(param, target, flow, depth=depth + 1, derived=True, paused=paused)

    def _dispatch(self, call: cst.Call, scope: Scope, flow: FlowState, *, arg: cst.Arg | None = None) -> None:
        """The output reached the name or the arguments of a tool looked up by name in a registry
        (scan/registries.py): the run reaches every tool the registry holds."""
        # Judged once for the name, once more for the arguments (which a class's method may be followed with).
        key = (id(call), arg is not None)
        if key in flow.dispatched:
            return
        flow.dispatched.add(key)
        lookup = self.registries.dispatched(call, scope)
        if lookup is None:
            return
        refs, entries, where, handed = self.registries.members(lookup, scope)
        if not refs and not entries and lookup.owner is not None and arg is not None:
            typed = self._typed_methods(lookup.owner, call, arg, scope)
            if typed is not None:
                flow.findings.extend(typed)
                return
        found: list[Finding] = []
        for entry in entries:
            tools, findings = self.tools.resolve(entry, where)
            refs = refs + [t for t in tools if t.body is not None or t.known is not None or t.where != "not resolved"]
            found += findings
        if not refs and all(f.rule == rules.FACT_RULES["tools-unresolved"] for f in found):
            # Nothing the module shows is in it (tools = {t.name: t for t in self.tools}): tool.execute(args)
            # runs whichever project class has that method, as on a protocol.
            # register(self, tool: Tool) filling it: the subclasses of Tool with that method (all of them).
            bases = sorted(handed) if handed and "" not in handed else []
            found = list(self._any_implementer(call, arg, bases) or ())
            if found:
                method = call.func.attr.value if isinstance(call.func, cst.Attribute) else "it"
                which = f"any subclass of {' or '.join(bases)}" if bases else "any project class"
                label = f"a tool looked up by name at line {self.line_of(call)}: {which} with {method}()"
                flow.findings.extend(attrs.evolve(f, detail=f"{f.detail} ({label})") for f in found)
            return
        if (id(call), arg is None) in flow.dispatched:
            return  # its tools already counted, for the name or the arguments
        for ref in refs:
            if ref.line == 0 and ref.body is not None:
                ref = attrs.evolve(ref, line=self.line_of(ref.body))
            found += self.effects.classify_tool(ref)
        if lookup.container is not None:
            holder = dotted_name(lookup.container) or "a registry"
        else:
            holder = f"getattr({(dotted_name(lookup.owner) if lookup.owner is not None else None) or '…'}, …)"
        label = f"looked up by name in {holder} at line {self.line_of(call)}"
        flow.findings.extend(attrs.evolve(f, detail=f"{f.detail} ({label})") for f in found)

    def _collection_run(self, call: cst.Call, scope: Scope, flow: FlowState) -> None:
        """``self.tool_collection.run(name=block.name, tool_input=block.input)`` with the collection built from
        tools (``ToolCollection(ComputerTool(), BashTool(), EditTool())``): the model's answer names the tool,
        so the run reaches every tool the collection holds (the worst decides)."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute) and func.attr.value in RUN_METHODS
            and any(a.keyword is not None and a.keyword.value in _TOOL_NAME_KEYWORDS for a in call.args)
            and not (isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"})
        ):  # fmt: skip
            return
        if id(call) in flow.collections_run:
            return
        flow.collections_run.add(id(call))
        holder, line = dotted_name(func.value) or "a collection", self.line_of(call)
        for ref in self.tools.collection(func.value, scope):
            if ref.line == 0 and ref.body is not None:
                ref = attrs.evolve(ref, line=self.line_of(ref.body))
            label = f"a tool of {holder} run by the name the model gave at line {line}"
            flow.findings.extend(attrs.evolve(f, detail=f"{f.detail} ({label})") for f in self.effects.classify_tool(ref))

    def _typed_methods(self, owner: cst.BaseExpression, call: cst.Call, arg: cst.Arg, scope: Scope) -> list[Finding] | None:
        """``getattr(computer, action["type"])(**action_args)`` with ``computer: ComputerHandler``, a project
        class or protocol of another module: the answer picks which of its methods runs, so the run reaches
        what each of them does with the arguments (for a protocol or an abstract class, what every project
        class with that method does: any of them may be the one given). None when the owner is no such class."""
        if self.project is None:
            return None
        kind = self.resolver.kind_of(owner, scope)
        typed = kind.kind if kind is not None and kind.provider == "project" else ""
        interface = typed.startswith("interface:")
        if not (interface or typed.startswith("object:")):
            return None
        qualified, methods = self.project.methods_of(typed.partition(":")[2])
        if not methods:
            return None
        found: list[Finding] = []
        for method in methods[:_MAX_TYPED_METHODS]:
            found += self.project.param_findings(f"*.{method}" if interface else f"{qualified}.{method}", call, arg) or ()
        what = "any project class with that method" if interface else "its method"
        label = f"getattr({dotted_name(owner) or '…'}, …) at line {self.line_of(call)}: a method of {qualified.rpartition('.')[2]}, {what}"
        return [attrs.evolve(f, detail=f"{f.detail} ({label})", line=self.line_of(call)) for f in sorted(set(found))]

    def _named_act_implemented(self, call: cst.Call, arg: cst.Arg, scope: Scope, named: Sequence[Finding]) -> list[Finding]:
        """``self.process_manager.run_command(cmd)``, ``env_controller.run_bash_script(code)``: a receiver the
        scan cannot type, whose method's name alone says it runs code (or moves money, deletes, sends): what
        the project's classes with that method do with the output, any of them may be the one given. Their
        bodies confirm the name (a subprocess started) or add nothing; the name's signal stays either way."""
        func = call.func
        if not (
            isinstance(func, cst.Attribute) and self.project is not None and id(call) not in self.llm_calls
            and any(f.basis == "name" and rules.RULES_BY_ID[f.rule].mode == "required" for f in named)
            and not (isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"})
            and self.resolver.kind_of(func.value, scope) is None
        ):  # fmt: skip
            return []
        # Only what confirms the name: publish_comment(text) reaching a fixed ssh command's arguments in one
        # provider (Gerrit) says the comment is posted, not that the text runs as code.
        said = {f.rule for f in named if f.basis == "name" and rules.RULES_BY_ID[f.rule].mode == "required"}
        found = self.project.param_findings(f"*.{func.attr.value}", call, arg) or ()
        label, line = f"{dotted_name(func) or func.attr.value}() (any project class with {func.attr.value}())", self.line_of(call)
        return [attrs.evolve(f, detail=f"{label} -> {f.detail}", line=line) for f in found if f.basis == "code" and f.rule in said]

    def _unseen_tool_handler(self, call: cst.Call, arg: cst.Arg, scope: Scope, found: Sequence[Finding]) -> list[Finding]:
        """``self.tool_config["useToolHandler"](response, conversation)``, ``tool_config["tool"].tool_handler(...)``:
        the model's reply (its tool calls) handed first to a handler the scan cannot resolve, looked up in a
        configuration or on an untyped object and named for tools: the app's tools run there, unseen from
        here (not analysed), as an agent's tools given by a parameter are."""
        func = call.func
        if found or id(call) in self.llm_calls or not call.args or call.args[0] is not arg or arg.keyword is not None:
            return []
        if isinstance(func, cst.Subscript):
            key = literal(func.slice[0].slice.value) if len(func.slice) == 1 and isinstance(func.slice[0].slice, cst.Index) else None
            named = key
        elif isinstance(func, cst.Attribute) and not (isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"}):
            named = func.attr.value if self.resolver.kind_of(func.value, scope) is None and self._callee(call, scope) is None else None
        else:
            named = None
        if not named or not _TOOL_WORDS & set(rules.words(named)) or not _HANDLES & set(rules.words(named)):
            return []
        if isinstance(func, cst.Subscript):
            handler = f"{dotted_name(func.value) or '…'}[{named!r}]"
        else:
            handler = dotted_name(func) or f"….{named}"
        why = f"not analysed: the output is handed to {handler}(), a tool handler the app supplies: its tools cannot be resolved statically"
        return [rules.fact("tools-unresolved", why, self.line_of(call))]

    def _any_implementer(self, call: cst.Call, arg: cst.Arg | None, bases: Sequence[str] = ()) -> tuple[Finding, ...] | None:
        method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
        if method is None or arg is None or self.project is None:
            return None
        found: list[Finding] = []
        followed = False
        for base in bases:
            more = self.project.param_findings(f"*{base}.{method}", call, arg)
            followed = followed or more is not None
            found += more or ()
        if not followed:  # no annotation, or no project subclass of it has the method (Union[...], a library's class)
            return self.project.param_findings(f"*.{method}", call, arg)
        return tuple(sorted(set(found)))

    def _returns_last(self, call: cst.Call, scope: Scope) -> bool:
        """``self.messages.append(record)`` in a function that returns ``self.messages[-1]`` (or a field of
        it, ``.content``): the list's last element, what was just appended, is what the caller gets."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "append" and len(call.args) == 1):
            return False
        key = target_key(func.value)
        if key is None or not key.startswith("self.") or scope.qualname == MODULE_SCOPE:
            return False
        for node in self.index.walk(scope.node, skip_defs=True):
            value = node.value if isinstance(node, cst.Return) else None
            while isinstance(value, cst.Attribute):
                value = value.value
            if (
                isinstance(value, cst.Subscript) and target_key(value.value) == key and len(value.slice) == 1
                and isinstance(value.slice[0].slice, cst.Index) and literal(value.slice[0].slice.value) is None
                and _is_minus_one(value.slice[0].slice.value)
            ):  # fmt: skip
                return True
        return False

    def _run_after_write(self, call: cst.Call, arg: cst.Arg, scope: Scope, flow: FlowState, *, derived: bool) -> list[Finding]:
        """``test_file.write(answer)`` on a handle opened for writing (``open(path, "w")``, or
        ``path.write_text(answer)``), then, later in the same function, a call that runs code
        (``Runner.run_command(command=self.test_command)`` reaching ``subprocess.run``): what the
        model wrote is in the file the run runs (a test file, a script, a module), so the answer
        runs though the command holds none of it (R1). Only when the answer is the text written:
        a line number it gave (where the text is spliced in) or an indentation width (``width * " "``)
        places or pads text that came from elsewhere (_written_text)."""
        if not is_primary(call, arg) or not self._writes_file(call, scope):
            return []
        found = self._runs_after.get(id(call))
        if found is None:
            found = self._runs_after[id(call)] = self._run_after(call, scope)
        if found and derived and not self._written_text(arg.value, scope, flow):
            return []
        return found

    def _run_after(self, call: cst.Call, scope: Scope) -> list[Finding]:
        after = False  # the function's nodes in source order: the calls after the write
        for later in self.index.walk(scope.node, skip_defs=True):
            after = after or later is call
            if not after or not isinstance(later, cst.Call) or later is call or id(later) in self.llm_calls:
                continue
            runs = [f for f in self._runs_code(later, scope) if _runs_by_code(f)]
            if runs:
                what = dotted_name(call.func) or "write"
                why = f"{what}() writes the output to a file, then {_as_run(runs[0].detail)} runs code"
                line = self.line_of(later)
                return [rules.fact("runs-model-code", f"{why} (line {line})" if line else why, self.line_of(call))]
        return []

    def _runs_code(self, call: cst.Call, scope: Scope) -> list[Finding]:
        """What ``call`` does, as if its arguments held the output: a call of this module, a library's
        (``subprocess.run``), or a function or class method of another project module (followed from
        each argument)."""
        found = list(self.effects.classify_call(call, tainted=True))
        if self.project is None or any(_runs_by_code(f) for f in found):
            return found
        qualified = self._callee(call, scope)
        if qualified is None or qualified.startswith("*."):
            return found
        for arg in call.args:
            found += self.project.param_findings(qualified, call, arg) or ()
        return found

    def _written_text(self, value: cst.BaseExpression, scope: Scope, flow: FlowState) -> bool:
        """Whether the text ``value`` (what a write writes) is built, in function ``scope``, from a name the
        trace carries the output in that the function does not assign itself (a parameter handed the
        output, ``self.code`` kept by another method) or from the model call or a call site of a wrapper
        of this module, followed through the function's assignments; not through what only positions or
        counts: a subscript's index or slice, a repetition count (``width * " "``), ``int(…)``, ``len(…)``."""
        assigned = self._assignments(scope)
        carried = {key for where, key in flow.seen if where == scope.qualname}
        sites = {id(site) for sites in self.wrapper_sites.values() for site, _ in sites}
        todo: list[cst.CSTNode] = [value]
        visited: set[str] = set()
        while todo:
            node = todo.pop()
            if isinstance(node, cst.Call) and (id(node) in self.llm_calls or id(node) in sites):
                return True
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in _NUMBER_BUILTINS:
                continue
            if isinstance(node, cst.Subscript):
                todo.append(node.value)
                continue
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
                todo += [side for side, other in ((node.left, node.right), (node.right, node.left)) if not _text_literal(other)]
                continue
            if isinstance(node, cst.IfExp):
                todo += [node.body, node.orelse]
                continue
            key = target_key(node) if isinstance(node, cst.Name | cst.Attribute) else None
            if key is not None:
                if key in visited:
                    continue
                visited.add(key)
                if key in assigned:
                    todo += assigned[key]
                elif key in carried:
                    return True
                if isinstance(node, cst.Name):
                    continue
            todo += [child for child in node.children if isinstance(child, cst.CSTNode)]
        return False

    def _assignments(self, scope: Scope) -> dict[str, list[cst.CSTNode]]:
        """The values function ``scope`` binds each name to: ``x = v``, ``x += v``, ``x: T = v``, ``for x in v``,
        ``with v as x`` (the value's whole expression; targets other than plain names are left out)."""
        found = self._assigned.get(id(scope.node))
        if found is not None:
            return found
        found = self._assigned[id(scope.node)] = {}
        for node in self.index.walk(scope.node, skip_defs=True):
            pairs: list[tuple[cst.BaseExpression, cst.CSTNode]] = []
            if isinstance(node, cst.Assign):
                pairs = [(t.target, node.value) for t in node.targets]
            elif isinstance(node, cst.AugAssign | cst.AnnAssign) and node.value is not None:
                pairs = [(node.target, node.value)]
            elif isinstance(node, cst.For | cst.CompFor):
                pairs = [(node.target, node.iter)]
            elif isinstance(node, cst.WithItem) and node.asname is not None:
                pairs = [(node.asname.name, node.item)]
            for target, bound in pairs:
                for name in _bound_names(target):
                    found.setdefault(name, []).append(bound)
        return found

    def _writes_file(self, call: cst.Call, scope: Scope) -> bool:
        """``handle.write(x)`` on ``with open(path, "w") as handle`` (any mode that writes text or bytes),
        ``open(path, "w").write(x)`` or ``path.write_text(x)``; not a note (``_writes_note``)."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return False
        if func.attr.value in {"write_text", "write_bytes"}:
            return True
        if func.attr.value not in {"write", "writelines"}:
            return False
        if isinstance(func.value, cst.Call):
            return _opens_for_writing(func.value)
        if not isinstance(func.value, cst.Name):
            return False
        handle = func.value.value
        opened: cst.BaseExpression | None = None  # the last `with … as handle` before the write binds it
        for node in self.index.walk(scope.node, skip_defs=True):
            if node is call:
                break
            if isinstance(node, cst.WithItem) and isinstance(node.asname, cst.AsName) and isinstance(node.asname.name, cst.Name):
                if node.asname.name.value == handle:
                    opened = node.item
        return opened is not None and _opens_for_writing(opened) and not _opens_note(opened)

    def _writes_note(self, call: cst.Call, scope: Scope) -> bool:
        """``file.write(text)`` on a handle the function opened as ``with open("output.txt", "a") as file``:
        a text or markdown file at a path written in the code, the program's own output for a person to
        read, not a system of record. A path built from anything else (a parameter, the answer) still writes."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in {"write", "writelines"} and isinstance(func.value, cst.Name)):
            return False
        handle = func.value.value
        for node in self.index.walk(scope.node, skip_defs=scope.qualname == MODULE_SCOPE):
            if isinstance(node, cst.WithItem) and node.asname is not None and isinstance(node.asname.name, cst.Name):
                if node.asname.name.value == handle:
                    return _opens_note(node.item)
        return False

    def _passed_on(self, call: cst.Call, arg: cst.Arg, scope: Scope, flow: FlowState | None = None) -> list[Finding] | None:
        """The output passed to a function (or a method of a class) of another project module:
        what that function does with it."""
        if self.project is None or id(call) in self.llm_calls:
            return None
        qualified = self._callee(call, scope)
        if qualified is not None and flow is not None and not qualified.startswith("*."):
            # raw_text_to_post(llm_output=answer, post_proxy=post_proxy) writing the answer into post_proxy:
            # what was passed there holds it now.
            for filled in self.project.filled_args(qualified, call, arg):
                self._fills(filled.value, scope, flow)
                self._into_run_folder(filled.value, scope, flow, self.line_of(call))
                if self._is_local_object(filled.value):
                    # perform_improvement(review, coder): coder holds the review from this call on; a use of
                    # coder before it (perform_writeup(idea, folder, coder) a step earlier, outside a loop
                    # around both) saw the coder without it.
                    self._taint_target(filled.value, scope, flow, depth=MAX_DEPTH, derived=True, binding=_holder(filled.value))
        found = self.project.param_findings(qualified, call, arg) if qualified is not None else None
        if found is None or qualified is None:
            return None
        label, line = f"{dotted_name(call.func) or '.'.join(qualified.split('.')[-2:])}()", self.line_of(call)
        return [attrs.evolve(f, detail=f"{label} -> {f.detail}", line=line) for f in rules.own_record_writes(qualified, found)]

    def _passes_through(self, parent: cst.CSTNode, child: cst.CSTNode, scope: Scope) -> bool:
        """``return parse_script(text)``: the output handed to a project function (of this module or another)
        that returns it, or parts of it (split, sliced, unpacked; not a value computed from it); the caller
        gets the answer still. Not a model call's argument: a prompt built from one answer is not the next
        answer."""
        if isinstance(parent, cst.Arg):
            call, arg = self._parents.get(id(parent)), parent
        elif isinstance(parent, cst.Call) and isinstance(child, cst.Arg):
            call, arg = parent, child
        else:
            return False
        if not isinstance(call, cst.Call) or arg.star or id(call) in self.llm_calls:
            return False
        found = self._passes.get(id(arg))
        if found is None:
            self._passes[id(arg)] = False  # a function handing it back to its caller: no loop
            found = self._passes[id(arg)] = self._returns_arg(call, arg, scope)
        return found

    def _returns_arg(self, call: cst.Call, arg: cst.Arg, scope: Scope) -> bool:
        func = call.func
        local = _this_modules_callee(func)
        target = self.tools.function(short_name(func), scope) if local and isinstance(func, cst.Name | cst.Attribute) else None
        if target is not None and isinstance(target.node, cst.FunctionDef):
            called = self._property_class(target.node) if isinstance(func, cst.Attribute) else None
            if called is not None:
                # self.printer(chunks) with printer a property returning Printer: Printer.__call__'s.
                return self.project is not None and self.project.param_returns(f"{called}.__call__", call, arg)
            param = param_for(target.node, call, arg)
            return param is not None and target is not scope and self.param_returned(param, target)
        if self.project is None:
            return False
        qualified = self._callee(call, scope)
        return qualified is not None and self.project.param_returns(qualified, call, arg)

    def _property_class(self, node: cst.FunctionDef) -> str | None:
        """The class a property's annotation names (``def printer(self) -> Printer``), qualified: calling
        the property's value calls that class's ``__call__``."""
        if node.returns is None or not any(dotted_name(d.decorator) == "property" for d in node.decorators):
            return None
        named = annotated_class(node.returns.annotation, self.resolver.qualified)
        return self.resolver.qualified(named) if named is not None else None

    def _still_output(self, node: cst.CSTNode, scope: Scope) -> bool:
        """``return content, prompt_tokens``: the callers unpack the output itself (a wrapper still);
        ``dict(response.choices[0].message)``: a copy of it; ``parts = list(stream(…))`` … ``"".join(parts)``:
        the streamed pieces, joined back into the text."""
        if isinstance(node, cst.Arg):
            copy = self._parents.get(id(node))
            if isinstance(copy, cst.Call) and len(copy.args) == 1 and not node.star and self._listed_to_join(copy, scope):
                return True
            # ChatCompletionResponse(**completion.model_dump()): the record is built from the answer's own fields.
            if isinstance(copy, cst.Call) and _records(copy.func) and node.star in {"", "**"} and id(copy) not in self.llm_calls:
                return True
            if isinstance(copy, cst.Call) and _parses(copy.func) and not node.star and id(copy) not in self.llm_calls:
                return True
            if isinstance(copy, cst.Call) and self._casts(copy) and copy.args[1] is node:
                return True
            return (
                isinstance(copy, cst.Call) and _copies(copy.func)
                and len(copy.args) == 1 and copy.args[0] is node and node.keyword is None and not node.star
            )  # fmt: skip
        if isinstance(node, cst.Call):  # walked up from its (one) argument, checked above
            if self._casts(node):
                return True  # cast(str, response): walked up from the value, checked above
            return (_copies(node.func) and len(node.args) == 1) or self._listed_to_join(node, scope) or (
                (_records(node.func) or _parses(node.func)) and id(node) not in self.llm_calls
            )
        values = self._parents.get(id(node)) if isinstance(node, cst.Element) else node
        if isinstance(values, cst.List) and len(values.elements) == 1:
            # return [response.choices[0].message.content], cost: the answer alone in a list the function
            # returns (the callers take responses[0]), as UFO's provider services do; a list of several
            # things, or one kept to build on, is something else.
            holder = self._parents.get(id(values))
            if isinstance(holder, cst.Element):
                holder = self._parents.get(id(holder))
                return isinstance(holder, cst.Tuple) and isinstance(self._parents.get(id(holder)), cst.Return)
            return isinstance(holder, cst.Return)
        return isinstance(values, cst.Tuple) and isinstance(self._parents.get(id(values)), cst.Return)

    def _casts(self, call: cst.Call) -> bool:
        """``cast(str, response)``, ``typing.cast(BatchResult, result.final_output)``: the value itself, only
        told to the type checker (vision-agent's run_planning, an Agents SDK run's final output)."""
        positional = [a for a in call.args if a.keyword is None and not a.star]
        return len(call.args) == 2 and len(positional) == 2 and self.resolver.qualified(call.func) in _CASTS

    def _collects(self, statement: cst.AugAssign, scope: Scope) -> bool:
        """``new_items += response["output"]`` / ``text += chunk`` into a local started empty
        (``new_items = []``, ``text = ""``): what it collects is the output itself."""
        if not (isinstance(statement.operator, cst.AddAssign) and isinstance(statement.target, cst.Name)):
            return False
        start = self._value_before(statement.target.value, scope, statement)
        if isinstance(start, cst.List):
            return not start.elements
        return isinstance(start, cst.SimpleString) and literal(start) == ""

    def _collects_into_record(self, statement: cst.AugAssign, scope: Scope) -> cst.Name | None:
        """``msg["content"] += chunk["content"]`` into ``msg = {"role": "assistant", "content": ""}``: the
        streamed pieces collected under a key started empty make the dict a record of the answer, as
        ``text += chunk`` into ``text = ""`` makes the text the answer. The record's name, or None."""
        target = statement.target
        if not (
            isinstance(statement.operator, cst.AddAssign) and isinstance(target, cst.Subscript)
            and isinstance(target.value, cst.Name) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)
        ):  # fmt: skip
            return None
        key = literal(target.slice[0].slice.value)
        start = self._value_before(target.value.value, scope, statement)
        if key is None:
            return None
        if isinstance(start, cst.Call):
            # msg = format_chat_message("assistant", ""), Message(role="assistant", content=""): a record made
            # with an empty text, which the pieces then fill.
            started_empty = any(_empty_text(arg.value) for arg in start.args)
        else:
            started_empty = isinstance(start, cst.Dict) and any(
                isinstance(element, cst.DictElement) and literal(element.key) == key and _empty_text(element.value)
                for element in start.elements
            )
        return target.value if started_empty else None

    def _collects_pieces(self, call: cst.Call, arg: cst.Arg, scope: Scope, flow: FlowState, *, derived: bool) -> bool:
        """``for operation in content: processed.append(operation)`` into a list started empty: the list
        holds the output's own pieces again, as ``+=`` collects them (a list of whole answers does not)."""
        func = call.func
        if not derived and _adds_answer_turn(call, arg):
            # memory.add(role="assistant", content=answer): a conversation object given the answer as a turn
            # of its own holds it, as a list appended {"role": "assistant", "content": answer}.
            return True
        if derived or not (isinstance(func, cst.Attribute) and func.attr.value == "append" and isinstance(func.value, cst.Name)):
            return False
        # _data = {"user": ..., "assistant": answer}; chat_history.append(_data): the record, named first.
        record = self._value_before(arg.value.value, scope, call) if isinstance(arg.value, cst.Name) else arg.value
        if isinstance(record, cst.Dict):
            # messages.append({"role": "assistant", "content": answer}): the conversation holds the answer,
            # unless a user's turn is appended after it: then it is the next prompt, the answer its context.
            return not self._asked_after(func.value.value, scope, call)
        piece = isinstance(arg.value, cst.Name) and (scope.qualname, arg.value.value) in flow.pieces
        if not piece and not self._joined(func.value.value, scope):
            return False
        start = self._value_before(func.value.value, scope, call)
        return isinstance(start, cst.List) and not start.elements

    def _asked_after(self, name: str, scope: Scope, node: cst.CSTNode) -> bool:
        """``messages.append({"role": "user", "content": question})`` in ``scope`` after ``node``: the list
        is a prompt built around an earlier answer (a summary kept as context), not the answer's record."""
        at = self.index.order_of(node)
        for call, caller in self.index.calls:
            func = call.func
            if not (
                caller is scope and isinstance(func, cst.Attribute) and func.attr.value == "append"
                and isinstance(func.value, cst.Name) and func.value.value == name and len(call.args) == 1
                and isinstance(call.args[0].value, cst.Dict) and self.index.order_of(call) > at
            ):  # fmt: skip
                continue
            for element in call.args[0].value.elements:
                if (
                    isinstance(element, cst.DictElement) and literal(element.key) == "role"
                    and literal(element.value) == "user"
                ):  # fmt: skip
                    return True
        return False

    def _value_before(self, name: str, scope: Scope, node: cst.CSTNode) -> cst.BaseExpression | None:
        """The value ``name`` was last given in ``scope`` before ``node``: ``response = ""`` and not a later
        ``response = chat(text)`` below (in code after a return, or for the next turn)."""
        at = self.index.order_of(node)
        found = None
        for where, key, value in self.index.assignments:
            if where is scope and key == name and not isinstance(value, cst.Annotation) and self.index.order_of(value) < at:
                if found is None or self.index.order_of(value) > self.index.order_of(found):
                    found = value
        return found if found is not None else self.index.values.get((scope.qualname, name))

    def _listed_to_join(self, call: cst.Call, scope: Scope) -> bool:
        """``list(stream)`` whose list is only there to be joined into text: ``"".join(list(stream))``, or
        ``parts = list(stream)`` with ``"".join(parts)`` in the function."""
        if not (isinstance(call.func, cst.Name) and call.func.value == "list" and len(call.args) == 1):
            return False
        parent = self._parents.get(id(call))
        if isinstance(parent, cst.Arg):
            joining = self._parents.get(id(parent))
            return isinstance(joining, cst.Call) and _joins(joining.func)
        if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
            return self._joined(parent.targets[0].target.value, scope)
        return False

    def _joined(self, name: str, scope: Scope) -> bool:
        """``result.append(answer)`` … ``return "\\n".join(result)``: a list started empty that the
        function joins back into text holds the output's text, not a list of answers."""
        for call, caller in self.index.calls:
            if caller is scope and _joins(call.func) and len(call.args) == 1:
                value = call.args[0].value
                if isinstance(value, cst.Name) and value.value == name:
                    return True
        return False

    def _fills(self, holder: cst.BaseExpression, scope: Scope, flow: FlowState) -> None:
        """The output written into ``holder``: a parameter of the function the trace started from
        (``def reply(self, memory, post_proxy)`` … ``post_proxy.update_attachment(code)``) hands it to
        whatever the caller passed there, which reads it after the call (scan/flows.py: fills)."""
        if (
            isinstance(holder, cst.Name) and flow.origin == scope.qualname
            and holder.value in scope.params and holder.value not in {"self", "cls"}
        ):  # fmt: skip
            flow.filled.add(holder.value)

    def _into_run_folder(self, store: cst.BaseExpression, scope: Scope, flow: FlowState, line: int) -> None:
        """``dbs.workspace["run.sh"] = answer`` (or ``to_files(answer, dbs.workspace)`` writing it there) with
        ``dbs: DBs``, where a fixed command of the project runs a file of ``dbs.workspace``'s folder."""
        if not (
            self.project is not None and isinstance(store, cst.Attribute) and isinstance(store.value, cst.Name)
            and store.value.value in scope.params
        ):  # fmt: skip
            return
        annotation = scope.params[store.value.value].annotation
        owner = (dotted_name(annotation.annotation) or "").rpartition(".")[2] if annotation is not None else ""
        where = self.project.run_folder(owner, store.attr.value) if owner else None
        if where is not None:
            why = f"written into {dotted_name(store)}, whose folder a fixed command runs a file of ({where})"
            flow.findings.append(rules.fact("runs-model-code", why, line))

    def _is_local_object(self, node: cst.BaseExpression) -> bool:
        # Only local variables: self.io.tool_output(text) must not taint every use of self.io.
        return isinstance(node, cst.Name) and node.value not in self.index.imports and node.value not in {"self", "cls"}

    def _taint_target(
        self,
        target: cst.BaseExpression,
        scope: Scope,
        flow: FlowState,
        *,
        depth: int,
        derived: bool = False,
        binding: cst.Name | None = None,
        paused: bool = False,
    ) -> None:
        if isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                if len(target.elements) > 1 and isinstance(element.value, cst.Name) and _COUNTS.search(element.value.value):
                    continue  # message, tokens = self.generate(...): the answer, and what it cost
                self._taint_target(element.value, scope, flow, depth=depth, derived=derived, paused=paused)
            return
        if isinstance(target, cst.Subscript | cst.Attribute) and target_key(target) is None:
            # out["x"] = output / obj.field = output: the container now carries it. A loop's own variable
            # (for file in files: file.meta = answer) carries it from there on; the next turn holds another.
            written = target.value if isinstance(target.value, cst.Name) and self._loop_variable(target.value) else None
            self._fills(target.value, scope, flow)
            if isinstance(target, cst.Subscript):
                self._into_run_folder(target.value, scope, flow, self.line_of(target))
                stored = self._node_classes().store_key(scope, target) if scope.class_name is not None else None
                if stored is not None:
                    self._stored(stored, flow, depth=depth)
            # problem["code"] = answer: problem holds it from this statement on (a loop's own variable from
            # this turn on), not where the function read it before.
            self._taint_target(target.value, scope, flow, depth=depth, derived=True, binding=written or _holder(target.value), paused=paused)
            return
        key = target_key(target)
        if key is not None:
            self._keeps(key, scope, flow)
            self._taint_key(key, scope, flow, depth=depth, derived=derived, binding=binding, paused=paused)

    def _keeps(self, key: str, scope: Scope, flow: FlowState) -> None:
        """``self.tool_call = response.choices[0].message.tool_calls[0]`` in a method (not ``__init__``):
        the object keeps the output for whoever called the method (``adapter.invoke_llm(...)`` then
        ``execute(adapter.tool_call)`` in another module); its other methods read it here already."""
        attribute = key.removeprefix("self.")
        if attribute == key or "." in attribute or scope.class_name is None or not isinstance(scope.node, cst.FunctionDef):
            return
        if scope.node.name.value.startswith("__"):
            return
        flow.kept.add((scope.qualname, attribute))

    def _taint_key(
        self,
        key: str,
        scope: Scope,
        flow: FlowState,
        *,
        depth: int,
        derived: bool = False,
        binding: cst.Name | None = None,
        paused: bool = False,
    ) -> None:
        scopes = self._class_scopes(scope) if key.startswith("self.") else [scope]
        for current in scopes:
            # self.buffer = answer in update_buffer, return self.buffer in to_string: to_string hands back
            # what an earlier call stored and asks no model itself, so it is no wrapper, unless it calls
            # the method that asks (self.update_buffer(…) first). Its readers' use of it is followed alike.
            # Only in a call's own flow, where returns make wrappers: an object given the answer (a parameter's
            # flow: conversation.add(answer), then a getter of it) hands back what it was given.
            held = derived or (
                flow.follow_returns and current.qualname != scope.qualname and not self._asks_through(current, scope)
            )
            at = (current.qualname, key)
            bound = binding if current is scope else None
            start = self._reached_from(bound, self._references(current).get(key, ()))
            if at in flow.seen and (held or at not in flow.seen_derived) and flow.seen_from.get(at, 0) <= start:
                continue
            flow.seen_from[at] = min(start, flow.seen_from.get(at, start))
            flow.seen.add(at)
            if paused:
                flow.paused.add(at)
            if held:
                flow.seen_derived.add(at)
            else:
                flow.seen_derived.discard(at)
            flow.pending.append((key, current, depth, held, bound))

    def _asks_through(self, reader: Scope, writer: Scope) -> bool:
        """``reader`` calls ``writer``, directly or through other methods of the class (``self.m(…)``, six deep):
        what ``writer`` stores, ``reader`` asked for (``run`` -> ``_run_loop`` -> ``_step`` filling the history)."""
        cached = self._reaches.get((id(reader), id(writer)))
        if cached is not None:
            return cached
        methods = {s.qualname.rpartition(".")[2]: s for s in self._class_scopes(reader) if s.qualname.count(".") == 1}
        wanted, todo, seen = writer.qualname.rpartition(".")[2], [(reader, 0)], {reader.qualname}
        found = False
        while todo and not found:
            current, depth = todo.pop(0)
            for node in self.index.walk(current.node):
                if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name)
                        and node.func.value.value == "self"):  # fmt: skip
                    continue
                name = node.func.attr.value
                if name == wanted:
                    found = True
                    break
                callee = methods.get(name)
                if callee is not None and callee.qualname not in seen and depth < 6:
                    seen.add(callee.qualname)
                    todo.append((callee, depth + 1))
        self._reaches[(id(reader), id(writer))] = found
        return found

    def _returned(self, scope: Scope, flow: FlowState, *, depth: int, derived: bool) -> None:
        if scope.qualname != MODULE_SCOPE and scope.qualname not in flow.passed_into and not derived:
            flow.returned.add(scope.qualname)
        if scope.class_name is not None and self._node_returned(scope, flow, depth=depth, derived=derived):
            return
        if not flow.follow_returns:
            return  # the output came in as an argument: where it returns to, the caller follows
        if scope.qualname == MODULE_SCOPE or depth >= MAX_DEPTH:
            flow.escapes = True
            return
        name = scope.qualname.rpartition(".")[2]
        self.index.meter.steps += len(self.index.calls)
        callers = [
            (call, caller)
            for call, caller in self.index.calls
            if short_name_or_none(call.func) == name and caller is not scope and id(call) not in flow.seen_calls
            # self._request_api("/api/embeddings", payload): an HTTP helper's call asking no model gets no answer
            and (id(call) in self.llm_calls or not self.resolver.calls_http_helper(call, caller))
        ]
        named = {id(call) for call, _caller in callers}
        callers += [
            (call, caller)
            for call, caller in self.wrapper_sites.get(scope.qualname, ())
            if id(call) not in named and caller is not scope and id(call) not in flow.seen_calls
        ]  # fmt: skip
        entered = scope.qualname in flow.passed_into and scope.qualname != flow.origin
        if entered and not any(id(call) in self.llm_calls for call, _caller in callers):
            # send_event(kind, answer) handing back what it was given: the call that passed it carries
            # it on (_follow walks up from that call); its other callers passed something else. A model
            # wrapper's call (generate_file(name) handing back the name beside the code it asked for)
            # stops the walk there, so what it hands back goes on from its callers as before.
            return
        if not callers and not self._callback_sites(scope, flow):
            flow.escapes = True
        for call, caller in callers:
            flow.seen_calls.add(id(call))
            parent = self._parents.get(id(call))
            origin = parent if isinstance(parent, cst.Await) else call
            self._follow(origin, caller, flow, depth=depth + 1, derived=derived)

    def _node_classes(self) -> NodeClasses:
        if self._nodes is None:
            self._nodes = NodeClasses(self.index)
        return self._nodes

    def _node_returned(self, scope: Scope, flow: FlowState, *, depth: int, derived: bool) -> bool:
        """A PocketFlow node's ``prep`` or ``exec`` returning the output: the flow hands it to the node's
        ``exec`` or ``post`` (scan/nodeflow.py), followed there; ``post`` returning it names the node the
        flow goes to next."""
        nodes = self._node_classes()
        if scope.class_name not in nodes.classes:
            return False
        if scope.qualname.rpartition(".")[2] in POST:
            why = f"the flow's next node is the action {scope.qualname}() returns from the model's output"
            flow.findings.append(rules.fact("output-drives-branch", why, self.line_of(scope.node)))
            return True
        handed = list(nodes.handed_to(scope))
        for receiver, param in handed:
            self._taint_key(param, receiver, flow, depth=depth, derived=derived)
        return bool(handed)

    def _stored(self, key: str, flow: FlowState, *, depth: int) -> None:
        """The output written into a PocketFlow node's shared store under ``key``: what the nodes reading
        ``shared[key]`` in their ``prep`` or ``post`` do with it is its fate."""
        if (f"shared[{key!r}]", "") in flow.seen:
            return
        flow.seen.add((f"shared[{key!r}]", ""))
        for read, scope in self._node_classes().store_reads(key):
            self._follow(read, scope, flow, depth=depth, derived=True)

    def _routed(self, key: str, node: Scope, flow: FlowState, *, depth: int, itself: bool) -> None:
        """A node's state update carrying the output (scan/graphs.py): read by a router of the graph, the
        graph's next step is chosen on it; read by another node of the same graph in this module, what
        that node does with it is the output's fate."""
        if self._routers is None:
            self._routers = [scope for scope in self.index.scopes.values() if graphs.is_router(self.index, scope)]
        for scope in self._routers:
            read = next(graphs.state_reads(self.index, scope, key), None)
            if read is not None:
                name = scope.qualname.rpartition(".")[2]
                why = f"the graph routes on the model's output: {name}() reads state[{key!r}]"
                flow.findings.append(rules.fact("output-drives-branch", why, self.line_of(read)))
        name = node.qualname.rpartition(".")[2]
        for graph in graphs.GRAPHS.get():
            if name not in graph.nodes:
                continue
            for router, read_key, _line in graph.reads:
                if read_key == key and router not in self.index.functions_by_name:  # a router of this module: above
                    why = f"the graph routes on the model's output: {router}() reads state[{key!r}] (in {graph.rel})"
                    flow.findings.append(rules.fact("output-drives-branch", why, 0))
            if depth >= MAX_DEPTH or not itself:
                continue  # only the answer itself (a draft) is followed into the nodes that read it
            for scope in self.index.scopes.values():
                reader = scope.qualname.rpartition(".")[2]
                if scope is node or reader not in graph.nodes or reader in graph.routers or not graphs.takes_state(scope):
                    continue
                for read in graphs.state_reads(self.index, scope, key):
                    self._follow(read, scope, flow, depth=depth + 1)

    def _branch(self, statement: cst.CSTNode, test: cst.CSTNode, flow: FlowState, *, paused: bool = False) -> None:
        # A match compares its subject with every case: always a choice, even on a bare name.
        if not isinstance(statement, cst.Match) and (trivial_test(test) or _dispatches_on_type(test)):
            return
        if isinstance(statement, cst.IfExp) and statement.test.deep_equals(statement.body):
            return  # msg.author_name if msg.author_name else "user": the value or a default, nothing chosen
        line = self.line_of(statement)
        if (
            not paused
            and not self._inside_pause(statement)
            and not _tracks_change(statement)
            and not self._only_ends_loop(statement)
            and not _only_filters(statement)
            and not self._picks_speaker(statement)
        ):
            # if tool_name in {"close_ticket"}: on a paused run's request, the human's (or a policy's) answer
            flow.findings.append(rules.fact("output-drives-branch", f"branch on the model's output ({type(statement).__name__.lower()})", line))
        for part in branch_bodies(statement):
            for node in self.index.walk(part):
                if isinstance(node, cst.Call):
                    flow.findings.extend(self.effects.classify_call(node, tainted=False, via="in a branch on the output"))

    def _only_ends_loop(self, statement: cst.CSTNode) -> bool:
        """``if "AUTOMODE_COMPLETE" in response: automode = False`` (else: print, the next prompt): the
        output decides only whether the loop asking the model goes on, not what happens; the call's
        effects are judged where they are. One arm leaves the loop (``break``, a bare ``return``, its
        ``while`` flag set to a constant); every arm does nothing else but display, ``continue`` or
        set a name to a literal string (the next prompt) or a constant."""
        if not isinstance(statement, cst.If):
            return False
        flags: set[str] = set()  # the names in the enclosing whiles' tests
        in_loop = False
        node = self._parents.get(id(statement))
        while node is not None and not isinstance(node, cst.FunctionDef | cst.Module):
            if isinstance(node, cst.While):
                flags |= {n.value for n in self.index.walk(node.test) if isinstance(n, cst.Name)}
            in_loop = in_loop or isinstance(node, cst.While | cst.For)
            node = self._parents.get(id(node))
        arms = _simple_arms(statement)
        if arms is None:
            return False
        leaves = False
        for small in (small for arm in arms for small in arm):
            kind = _loop_control(small, flags)
            if kind is None:
                return False
            leaves = leaves or kind == "leave"
        return in_loop and leaves

    def _picks_speaker(self, statement: cst.CSTNode) -> bool:
        """``if tool_response.startswith("Case not resolved"): agent = tool_editor_agent; continue`` ``elif
        ...: agent = agent_creator_agent`` ``else: raise ...`` in a chat loop: the answer decides which agent
        (or prompt) the loop asks next, not what is done: the next agent's run is judged at its own call.
        Every arm does no more than set names to other names or literals, display, ``continue``, ``break``,
        ``pass``, a bare ``return`` or ``raise``, and one arm at least sets a name to another name (the next
        speaker)."""
        if not isinstance(statement, cst.If):
            return False
        node = self._parents.get(id(statement))
        while node is not None and not isinstance(node, cst.While | cst.For):
            if isinstance(node, cst.FunctionDef | cst.Module):
                return False
            node = self._parents.get(id(node))
        if node is None:
            return False
        arms = _simple_arms(statement)
        if arms is None:
            return False
        speaker = False
        for small in (small for arm in arms for small in arm):
            if _names_speaker(small):
                speaker = True
            elif not isinstance(small, cst.Raise) and _loop_control(small, set()) is None:
                return False
        return speaker

    def _inside_pause(self, statement: cst.CSTNode) -> bool:
        """A branch inside the handling of a paused run (``if requirement.needs_user_feedback:``,
        ``for r in run.active_requirements:``): it fills the human's form or runs the tool call the
        framework paused on, whose effects are judged as that tool's; the model chooses nothing there.
        What the branch's body calls is still judged."""
        node = self._parents.get(id(statement))
        while node is not None and not isinstance(node, cst.FunctionDef | cst.Module):
            if isinstance(node, cst.If | cst.While) and _pause_test(node.test):
                return True
            if isinstance(node, cst.For) and isinstance(node.iter, cst.Attribute) and node.iter.attr.value in _PAUSE_STATE:
                return True
            node = self._parents.get(id(node))
        return False

    def _class_scopes(self, scope: Scope) -> list[Scope]:
        if scope.class_name is None:
            return [scope]
        self.index.meter.steps += len(self.index.scopes)
        return [s for s in self.index.scopes.values() if s.class_name == scope.class_name]

    def _references(self, scope: Scope) -> dict[str, list[cst.CSTNode]]:
        cached = self._names.get(id(scope))
        if cached is not None:
            return cached
        names: dict[str, list[cst.CSTNode]] = {}
        for node in self.index.walk(scope.node, skip_defs=scope.qualname == MODULE_SCOPE):
            key = target_key(node) if isinstance(node, cst.Name | cst.Attribute) else None
            if key is None or self._is_label(node):
                continue
            if not self._nested_local(node, key, scope) and not self._comprehension_local(node, key, scope):
                names.setdefault(key, []).append(node)
        self._names[id(scope)] = names
        return names

    def _nested_local(self, node: cst.CSTNode, key: str, scope: Scope) -> bool:
        """``chunk`` inside a function nested in ``scope`` that binds its own ``chunk`` (a parameter or an
        assignment, not declared ``nonlocal``): another variable than ``scope``'s, though written alike."""
        if "." in key:
            return False
        current = self._parents.get(id(node))
        while current is not None and current is not scope.node:
            if isinstance(current, cst.FunctionDef):
                nested = self._scope_of_def(current)
                if nested is not None and (key in nested.params or (nested.qualname, key) in self.index.values or key in self._loop_names(current)):
                    return key not in self._nonlocals(current)
            current = self._parents.get(id(current))
        return False

    def _loop_variable(self, name: cst.Name) -> bool:
        """``name`` is bound by a ``for`` enclosing it (``for file in files: file.meta = ...``)."""
        node = self._parents.get(id(name))
        while node is not None and not isinstance(node, cst.FunctionDef | cst.Module):
            if isinstance(node, cst.For) and name.value in _bound_names(node.target):
                return True
            node = self._parents.get(id(node))
        return False

    def _comprehension_local(self, node: cst.CSTNode, key: str, scope: Scope) -> bool:
        """``line`` inside ``[line.strip() for line in text]``: the comprehension's own variable, another than
        the function's ``line`` (but for the first ``for``'s iterable, read outside the comprehension)."""
        if "." in key:
            return False
        path: set[int] = set()
        current: cst.CSTNode | None = node
        while current is not None and current is not scope.node:
            if isinstance(current, cst.FunctionDef | cst.Lambda):
                return False
            if isinstance(current, _COMPREHENSIONS):
                loop: cst.CompFor | None = current.for_in
                outside = current.for_in.iter
                bound: set[str] = set()
                while loop is not None:
                    bound |= _bound_names(loop.target)
                    loop = loop.inner_for_in
                if key in bound and id(outside) not in path:
                    return True
            path.add(id(current))
            current = self._parents.get(id(current))
        return False

    def _scope_of_def(self, node: cst.FunctionDef) -> Scope | None:
        if self._def_scopes is None:
            self._def_scopes = {id(s.node): s for s in self.index.scopes.values()}
        return self._def_scopes.get(id(node))

    def _loop_names(self, node: cst.FunctionDef) -> frozenset[str]:
        """The names a function's own ``for`` loops bind (local to it, like its assignments)."""
        found = self._looped.get(id(node))
        if found is None:
            found = self._looped[id(node)] = frozenset(
                name for statement in self.index.walk(node, skip_defs=True) if isinstance(statement, cst.For)
                for name in _bound_names(statement.target)
            )  # fmt: skip
        return found

    def _nonlocals(self, node: cst.FunctionDef) -> frozenset[str]:
        found = self._declared.get(id(node))
        if found is None:
            found = self._declared[id(node)] = frozenset(
                item.name.value for statement in self.index.walk(node, skip_defs=True) if isinstance(statement, cst.Nonlocal)
                for item in statement.names
            )  # fmt: skip
        return found

    def _is_label(self, node: cst.CSTNode) -> bool:
        """A name that is not a variable: the ``answer`` of ``order.answer`` or of ``f(answer=1)``."""
        parent = self._parents.get(id(node))
        if isinstance(parent, cst.Attribute):
            return parent.attr is node
        return isinstance(parent, cst.Arg) and parent.keyword is node

    def _is_binding(self, node: cst.CSTNode) -> bool:
        parent = self._parents.get(id(node))
        if isinstance(parent, cst.AssignTarget | cst.AsName | cst.Param):
            return True
        if isinstance(parent, cst.Attribute) and parent.value is node and target_key(parent) is not None:
            return True  # "self" inside self.x: the attribute is the reference
        if isinstance(parent, cst.AnnAssign | cst.AugAssign | cst.NamedExpr) and parent.target is node:
            return True
        return isinstance(parent, cst.For | cst.CompFor) and parent.target is node


# A paused run's state (Agno; the Microsoft Agent Framework's user_input_requests): whether the
# framework stopped for a human, and for what; the model's tools were gated, its answer chose nothing.
_PAUSE_STATE = frozenset({
    "is_paused", "active_requirements", "needs_confirmation", "needs_user_input", "needs_user_feedback", "needs_external_execution",
    "user_input_requests",
})  # fmt: skip


# Text and notes: what a program writes there is read by a person, not loaded by another system.
_NOTE_SUFFIXES = (".txt", ".md", ".log")


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_PIECE_LISTS = (cst.ListComp, cst.GeneratorExp)


# A conversation object's methods taking one turn (``role=``, ``content=``).
_ADDS_TURN = frozenset({"add", "add_message", "append_message", "add_turn"})


def _adds_answer_turn(call: cst.Call, arg: cst.Arg) -> bool:
    """``conversation.add(role=self.agent_name, content=answer)``: ``arg`` is the ``content=`` of a turn added
    with a role that is not the user's (a literal ``"user"`` is the next prompt, not the answer's record)."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value in _ADDS_TURN and arg.keyword is not None and arg.keyword.value == "content"):
        return False
    role = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "role"), None)
    written = literal(role) if role is not None else None
    return role is not None and (written is None or written.lower() not in {"user", "human"})


def _self_attribute(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


def kept_reads(
    index: ModuleIndex, receiver: str, attribute: str, after: cst.CSTNode, scope: Scope, *, stops: Collection[int] = ()
) -> list[cst.Attribute]:
    """The reads of ``receiver.attribute`` (``adapter.tool_call``) in function ``scope`` after node ``after``
    (the call that filled it, its arguments included), up to the next of the calls ``stops`` (model calls
    and wrapper calls) on the same receiver, whose own answer what it reads from then on may be; not the writes."""
    start = index.order_of(index.subtree(after)[-1])
    found: list[cst.Attribute] = []
    for node in index.walk(scope.node, skip_defs=True):
        if index.order_of(node) <= start:
            continue
        if isinstance(node, cst.Call) and id(node) in stops and isinstance(node.func, cst.Attribute) and dotted_name(node.func.value) == receiver:
            break
        if not (isinstance(node, cst.Attribute) and node.attr.value == attribute):
            continue
        parent = index.parents.get(id(node))
        written = isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.AnnAssign | cst.AugAssign) and parent.target is node)
        if not written and dotted_name(node.value) == receiver:
            found.append(node)
    return found


def _picks_pieces(comprehension: cst.CSTNode) -> bool:
    """``[t["response"] for t in answers]``, ``(c.message.content for c in out.choices)``: one ``for``, its
    element the loop's variable or a field of it (attributes, literal subscripts): each answer's own piece."""
    if not isinstance(comprehension, _PIECE_LISTS) or comprehension.for_in.inner_for_in is not None:
        return False
    target = comprehension.for_in.target
    if not isinstance(target, cst.Name):
        return False
    element: cst.BaseExpression = comprehension.elt
    while isinstance(element, cst.Attribute | cst.Subscript):
        if isinstance(element, cst.Subscript) and not (
            len(element.slice) == 1 and isinstance(element.slice[0].slice, cst.Index)
            and isinstance(element.slice[0].slice.value, cst.SimpleString | cst.Integer)
        ):  # fmt: skip
            return False
        element = element.value
    return isinstance(element, cst.Name) and element.value == target.value
# A channel's delivering methods (first word): what is sent on it leaves, the channel does not keep it.
_SENDS = frozenset({("send",), ("emit",), ("publish",), ("broadcast",), ("notify",)})
# A question put to a person (not a model wrapper, whose call is the next request): the reply is theirs.
_ASKS_A_PERSON = frozenset({"ask_question", "ask_user", "ask_human"})


def _last_name(func: cst.BaseExpression) -> str | None:
    """``ask_question`` of ``ask_question(...)``, ``self.ask_question(...)``, ``self.ui.ask_question(...)``."""
    return func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else None


def _returns_called(function: cst.FunctionDef, param: str) -> bool:
    """Whether ``function`` returns what calling its parameter ``param`` returns: ``return await fn()``, or
    ``result = await fn()`` ... ``return result``."""

    def called(value: cst.BaseExpression | None) -> bool:
        value = value.expression if isinstance(value, cst.Await) else value
        return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == param

    bound: set[str] = set()
    returned: list[cst.BaseExpression | None] = []

    class _Visit(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function  # not a nested function's own statements

        def visit_Lambda(self, node: cst.Lambda) -> bool:
            return False

        def visit_Assign(self, node: cst.Assign) -> None:
            if called(node.value):
                bound.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))

        def visit_Return(self, node: cst.Return) -> None:
            returned.append(node.value)

    function.visit(_Visit())
    return any(called(value) or (isinstance(value, cst.Name) and value.value in bound) for value in returned)


def _bound_names(target: cst.BaseExpression) -> set[str]:
    """The names a ``for`` target binds: ``line``, ``(key, value)``."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, cst.Tuple | cst.List):
        return {name for element in target.elements for name in _bound_names(element.value)}
    return set()


def _abstract(node: cst.FunctionDef) -> bool:
    """A method with no body of its own (``raise NotImplementedError``, ``pass``, ``...``, after a docstring),
    or marked ``@abstractmethod``: what runs is a subclass's."""
    if any(short_name_or_none(d.decorator) == "abstractmethod" for d in node.decorators):
        return True
    body = list(node.body.body) if isinstance(node.body, cst.IndentedBlock) else []
    first = body[0].body[0] if body and isinstance(body[0], cst.SimpleStatementLine) else None
    if isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString | cst.ConcatenatedString):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    small = body[0].body[0]
    if isinstance(small, cst.Pass) or (isinstance(small, cst.Expr) and isinstance(small.value, cst.Ellipsis)):
        return True
    if isinstance(small, cst.Raise) and small.exc is not None:
        raised = small.exc.func if isinstance(small.exc, cst.Call) else small.exc
        return short_name_or_none(raised) == "NotImplementedError"
    return False


# Builtins whose value is a number or a truth value: what they are handed only counts or positions.
_NUMBER_BUILTINS = frozenset({"int", "float", "len", "range", "bool", "enumerate", "min", "max", "abs", "round", "sum"})


def _text_literal(node: cst.BaseExpression) -> bool:
    """A string (or f-string, concatenated strings) written in the code: ``" " * width`` repeats it."""
    return isinstance(node, cst.SimpleString | cst.FormattedString | cst.ConcatenatedString)


def _runs_by_code(found: Finding) -> bool:
    """A finding that code is run, shown by what the code does (not by a name alone)."""
    return found.rule == rules.FACT_RULES["runs-model-code"] and found.basis == "code"


def _as_run(detail: str) -> str:
    """A finding's detail as the call it names (``Runner.run_command() -> subprocess.run()``)."""
    return detail.split(" (")[0]


def _opens_for_writing(opened: cst.BaseExpression) -> bool:
    """``open(path, "w")`` (or ``"a"``, ``"x"``, binary too), ``path.open("w")``."""
    if not (isinstance(opened, cst.Call) and opened.args):
        return False
    func = opened.func
    if isinstance(func, cst.Name) and func.value == "open":
        rest = opened.args[1:]
    elif isinstance(func, cst.Attribute) and func.attr.value == "open":
        rest = opened.args
    else:
        return False
    mode = next((a.value for a in rest if a.keyword is None or a.keyword.value == "mode"), None)
    text = literal(mode) if isinstance(mode, cst.SimpleString) else None
    return text is not None and any(c in text for c in "wax")


def _opens_note(opened: cst.BaseExpression) -> bool:
    """``open("output.txt", "a")``: a text file at a path written in the code, opened for writing text."""
    if not (isinstance(opened, cst.Call) and isinstance(opened.func, cst.Name) and opened.func.value == "open" and opened.args):
        return False
    path = literal(opened.args[0].value) if isinstance(opened.args[0].value, cst.SimpleString) else None
    if path is None or not path.lower().endswith(_NOTE_SUFFIXES):
        return False
    mode = next((a.value for a in opened.args[1:] if a.keyword is None or a.keyword.value == "mode"), None)
    text = literal(mode) if isinstance(mode, cst.SimpleString) else None
    return text is not None and "b" not in text and any(c in text for c in "wax")


def _names_speaker(small: cst.CSTNode) -> bool:
    """``agent = agent_creator_agent``: a name set to another plain name (not a constant)."""
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)):
        return False
    return isinstance(small.value, cst.Name) and small.value.value not in {"True", "False", "None"}


def _holder(node: cst.BaseExpression) -> cst.Name | None:
    """The local name an object or container is filled with the output through (``history.append(answer)``,
    ``problem["code"] = answer``, ``improve(answer, coder)``): its binding for the flow, so that the name's uses
    before that statement (outside a loop holding both) are not followed: they saw the object without it."""
    return node if isinstance(node, cst.Name) else None


def _this_modules_callee(func: cst.BaseExpression) -> bool:
    """``helper(…)``, ``self.helper(…)``, ``cls.build(…)``: a callee named in this module (a function, or a
    method of the class the call sits in), as ``ToolResolver.function`` looks it up."""
    return isinstance(func, cst.Name) or (
        isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"}
    )


def _simple_arms(statement: cst.If) -> list[list[cst.BaseSmallStatement]] | None:
    """The small statements of each arm of ``if``/``elif``/``else``, or None when an arm holds a compound
    statement (a loop, a nested ``if``): the branch tests that ask whether arms only steer a loop
    (``_only_ends_loop``, ``_picks_speaker``) read arms of simple lines alone."""
    arms: list[list[cst.BaseSmallStatement]] = []
    branch: cst.If | cst.Else | None = statement
    while branch is not None:
        suite = branch.body
        if isinstance(suite, cst.SimpleStatementSuite):
            arms.append(list(suite.body))
        elif isinstance(suite, cst.IndentedBlock) and all(isinstance(line, cst.SimpleStatementLine) for line in suite.body):
            arms.append([small for line in suite.body if isinstance(line, cst.SimpleStatementLine) for small in line.body])
        else:
            return None
        branch = branch.orelse if isinstance(branch, cst.If) else None
    return arms


def _loop_control(small: cst.CSTNode, flags: set[str]) -> str | None:
    """"leave" for ``break``, a bare ``return``, the loop's flag set to a constant; "stay" for a display
    call, ``continue``, ``pass``, a name set to a literal string or a constant; None for anything else."""
    if isinstance(small, cst.Break):
        return "leave"
    if isinstance(small, cst.Return):
        value = small.value
        return "leave" if value is None or (isinstance(value, cst.Name) and value.value in {"None", "True", "False"}) else None
    if isinstance(small, cst.Continue | cst.Pass):
        return "stay"
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return "stay" if rules.only_displays(dotted_name(small.value.func) or "") else None
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
        name, value = small.targets[0].target.value, small.value
        if isinstance(value, cst.Name) and value.value in {"True", "False", "None"}:
            return "leave" if name in flags else "stay"
        if isinstance(value, cst.SimpleString | cst.ConcatenatedString):
            return "stay"
    return None


# Methods that build a new object from their argument (output_format.model_validate_json(text) on a
# class): the result carries the output, the receiver (a class, a schema, a parser) does not.
_BUILDS_ANEW = frozenset({
    "model_validate", "model_validate_json", "model_validate_strings", "model_construct", "parse_obj", "parse_raw",
    "parse_file", "validate_json", "validate_python", "from_json", "from_dict", "from_text", "loads", "fromisoformat",
})  # fmt: skip


def _builds_anew(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in _BUILDS_ANEW


# Calls that only compute a value from their arguments: builtins and string, mapping and clock reads.
_PURE_CALLS = frozenset({
    "len", "str", "int", "float", "bool", "dict", "list", "set", "tuple", "min", "max", "sorted", "repr", "round", "abs",
    "any", "all", "isinstance", "strip", "lstrip", "rstrip", "lower", "upper", "title", "split", "rsplit", "splitlines",
    "replace", "find", "rfind", "index", "startswith", "endswith", "join", "format", "removeprefix", "removesuffix",
    "count", "get", "now", "utcnow", "strftime", "isoformat",
})  # fmt: skip


def _only_filters(statement: cst.CSTNode) -> bool:
    """``if think_end != -1: response = response[think_end + 8:]``, ``elif "<think>" in response: return None``,
    ``if name not in existing: return name``, ``if " " in name: raise ValueError(name)``: a check of the answer
    whose arms only trim it, hand it (or nothing) back, log or fail. It decides whether and which part of the
    answer is returned, not what happens: that is judged where the answer goes. Any arm doing more (a call
    beyond computing a value, a write to an attribute or an item of anything but the answer tested, a
    literal or constant handed back or kept: a route, a flag) makes it a choice."""
    if isinstance(statement, cst.IfExp):
        tested = _names(statement.test)
        return all(_handed_back(value, tested) for value in (statement.body, statement.orelse))
    if not isinstance(statement, cst.If | cst.While):
        return False
    # Arms that only display (a placeholder for what the code would do there) are still a choice.
    shown_only = all(
        isinstance(small, cst.Pass) or (isinstance(small, cst.Expr) and isinstance(small.value, cst.Call))
        for node in branch_bodies(statement)
        for line in _lines(node)
        for small in (line.body if isinstance(line, cst.SimpleStatementLine) else [None])
    )
    tested = _names(statement.test)
    return not shown_only and _filter_arms(statement, tested, rejects=_hands_back_answer(statement, tested))


def _lines(node: cst.CSTNode) -> Sequence[cst.CSTNode]:
    if isinstance(node, cst.Else):
        node = node.body
    if isinstance(node, cst.If):
        return [node]
    if isinstance(node, cst.IndentedBlock):
        return node.body
    return [cst.SimpleStatementLine(node.body)] if isinstance(node, cst.SimpleStatementSuite) else [node]


def _hands_back_answer(statement: cst.CSTNode, tested: set[str]) -> bool:
    """Some arm returns what the test looked at (not None): ``else: return response["key"]``."""
    if isinstance(statement, cst.Return):
        return statement.value is not None and not _constant(statement.value) and _handed_back(statement.value, tested)
    if isinstance(statement, cst.FunctionDef | cst.ClassDef | cst.Lambda):
        return False
    return any(_hands_back_answer(child, tested) for child in syntax_children(statement))


def _constant(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Name) and value.value in {"None", "True", "False"}


def _filter_arms(statement: cst.If | cst.While, tested: set[str], *, rejects: bool = False) -> bool:
    arms: list[cst.BaseSuite] = [statement.body]
    orelse = statement.orelse
    while orelse is not None:
        if isinstance(orelse, cst.If):
            arms.append(orelse.body)
            tested = tested | _names(orelse.test)
            orelse = orelse.orelse
        else:
            arms.append(orelse.body)
            orelse = None
    for arm in arms:
        if isinstance(arm, cst.IndentedBlock):
            lines: Sequence[cst.BaseStatement] = arm.body
        elif isinstance(arm, cst.SimpleStatementSuite):
            lines = [cst.SimpleStatementLine(arm.body)]
        else:
            return False
        for line in lines:
            if isinstance(line, cst.If):
                if not _filter_arms(line, tested | _names(line.test), rejects=rejects):
                    return False
            elif not isinstance(line, cst.SimpleStatementLine) or not all(_filters(small, tested, rejects=rejects) for small in line.body):
                return False
    return True


def _filters(small: cst.BaseSmallStatement, tested: set[str], *, rejects: bool = False) -> bool:
    """``rejects``: another arm hands the answer back, so ``return False`` here only refuses it (a
    validator: ``if "response" not in response: return False`` / ``else: return response["response"]``)."""
    if isinstance(small, cst.Continue | cst.Break | cst.Pass | cst.Raise):
        return True
    if isinstance(small, cst.Return):
        if rejects and isinstance(small.value, cst.Name) and small.value.value == "False":
            return True
        return small.value is None or (isinstance(small.value, cst.Name) and small.value.value == "None") or _handed_back(small.value, tested)
    if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
        return rules.only_displays(dotted_name(small.value.func) or "")
    if isinstance(small, cst.AugAssign):  # attempt += 1
        return isinstance(small.target, cst.Name) and _pure(small.value)
    if isinstance(small, cst.Assign):  # response = response[end:]: the answer trimmed, kept under a local name
        if all(isinstance(t.target, cst.Name) for t in small.targets):
            return bool(_names(small.value)) and _pure(small.value)
        # queries[k] = llm_response.queries: the answer tested, kept as it is in an item or a field (its
        # flow is followed from the assignment); a constant kept there (a route, a flag) is a choice.
        kept = all(isinstance(t.target, cst.Subscript | cst.Attribute) for t in small.targets)
        return kept and bool(_names(small.value) & tested) and _pure(small.value)
    return False


def _handed_back(value: cst.BaseExpression, tested: set[str]) -> bool:
    """What the test looked at (or None, or an empty list, dict, tuple or string: nothing), perhaps
    trimmed, handed back: not a value of the code's own."""
    if isinstance(value, cst.Name) and value.value == "None":
        return True
    if _empty(value):
        return True  # [single] if isinstance(single, str) else []: the answer, or nothing of it
    return bool(_names(value) & tested) and _pure(value)


def _empty(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.List | cst.Tuple | cst.Dict | cst.Set):
        return not value.elements
    return isinstance(value, cst.SimpleString) and value.evaluated_value in ("", b"")


def _names(node: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    def visit(current: cst.CSTNode) -> None:
        if isinstance(current, cst.Name):
            found.add(current.value)
        elif isinstance(current, cst.Attribute):
            visit(current.value)  # name.attr: the name
        else:
            for child in syntax_children(current):
                visit(child)

    visit(node)
    return found - {"None", "True", "False"}


def _pure(node: cst.CSTNode) -> bool:
    """No call in it but one that only computes a value (``response.strip()``, ``len(text)``)."""
    if isinstance(node, cst.Call):
        callee = node.func.attr.value if isinstance(node.func, cst.Attribute) else node.func.value if isinstance(node.func, cst.Name) else ""
        if callee not in _PURE_CALLS:
            return False
    if isinstance(node, cst.Lambda | cst.Await | cst.Yield):
        return False
    return all(_pure(child) for child in syntax_children(node))


def _tracks_change(statement: cst.CSTNode) -> bool:
    """``if rid != last_id: ...; last_id = rid``: whether the value changed since it was last kept
    (a new speaker in a streamed transcript), not what it chose. What the body calls is still judged."""
    if not isinstance(statement, cst.If):
        return False
    test = statement.test
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        # hasattr(event, "current_agent_name") and event.current_agent_name != current_agent
        test = test.right if isinstance(test.right, cst.Comparison) else test.left
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1 or not isinstance(test.comparisons[0].operator, cst.NotEqual | cst.IsNot):
        return False
    left, right = test.left, test.comparisons[0].comparator
    for line in statement.body.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for small in line.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                target, value = small.targets[0].target, small.value
                if (target.deep_equals(right) and value.deep_equals(left)) or (target.deep_equals(left) and value.deep_equals(right)):
                    return True
    return False


def _is_paused_status(test: cst.Comparison) -> bool:
    sides = (test.left, test.comparisons[0].comparator)
    return isinstance(test.comparisons[0].operator, cst.Equal | cst.NotEqual | cst.Is | cst.IsNot) and any(
        isinstance(side, cst.Attribute) and side.attr.value == "paused" for side in sides
    )


def _pause_test(test: cst.CSTNode) -> bool:
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return False  # if not run.is_paused: the run was not paused
    if isinstance(test, cst.BooleanOperation):
        return _pause_test(test.left) or _pause_test(test.right)
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and _is_paused_status(test):
        return not isinstance(test.comparisons[0].operator, cst.NotEqual | cst.IsNot)
    return (isinstance(test, cst.Attribute) and test.attr.value in _PAUSE_STATE) or _counts_pause(test)


def _counts_pause(test: cst.CSTNode) -> bool:
    """``len(result.user_input_requests) > 0``: how many human decisions the framework asks for."""
    if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Call) and test.left.args):
        return False
    counted = test.left.args[0].value
    return (dotted_name(test.left.func) or "") == "len" and isinstance(counted, cst.Attribute) and counted.attr.value in _PAUSE_STATE


def _dispatches_on_type(test: cst.CSTNode) -> bool:
    """``if isinstance(event, TaskResult):`` on a run's stream, ``if event.get("content"):``: which
    kind of event arrived, or whether it has text, says how to show it, not what to do."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return _dispatches_on_type(test.expression)
    if isinstance(test, cst.BooleanOperation):
        return all(_dispatches_on_type(side) or trivial_test(side) for side in (test.left, test.right))
    if isinstance(test, cst.Attribute) and test.attr.value in _PAUSE_STATE:
        return True  # if run_response.is_paused: / if requirement.needs_confirmation: the framework paused for a human
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and _is_paused_status(test):
        return True  # if run_response.status != RunStatus.paused:
    if _counts_pause(test):
        return True  # while len(result.user_input_requests) > 0: how many approvals the framework asks for
    if _event_type_test(test):
        return True  # if event.type == "output": / elif event.type in ("intermediate", "output"):
    if not isinstance(test, cst.Call):
        return False
    if isinstance(test.func, cst.Name) and test.func.value == "isinstance":
        return True
    if isinstance(test.func, cst.Attribute) and test.func.attr.value == "get" and test.args:
        key = test.args[0].value
        return trivial_test(cst.Subscript(value=test.func.value, slice=[cst.SubscriptElement(cst.Index(key))]))
    return False


def _event_type_test(test: cst.CSTNode) -> bool:
    """``event.type == "output"``, ``event.type in ("intermediate", "output")``, ``msg.role == "assistant"``,
    ``event.state is WorkflowRunState.IDLE``: which kind of event or message a stream delivered, or the
    state the workflow reports, compared with names written in the code."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return False
    left, comparator = test.left, test.comparisons[0].comparator
    if isinstance(left, cst.Attribute) and left.attr.value in {"state", "status"} and isinstance(comparator, cst.Attribute):
        return isinstance(test.comparisons[0].operator, cst.Is | cst.IsNot | cst.Equal | cst.NotEqual)  # event.state is RunState.IDLE
    if not (isinstance(left, cst.Attribute) and left.attr.value in {"type", "event_type", "role"}):
        return False
    if not isinstance(test.comparisons[0].operator, cst.Equal | cst.NotEqual | cst.In | cst.NotIn):
        return False
    values = [e.value for e in comparator.elements] if isinstance(comparator, cst.Tuple | cst.List | cst.Set) else [comparator]
    return all(isinstance(v, cst.SimpleString) for v in values)


# typing's cast: its second argument, unchanged at run time.
_CASTS = frozenset({"typing.cast", "typing_extensions.cast"})

# Builtins whose result is a copy of their one argument.
_COPIES = frozenset({"dict", "copy", "deepcopy"})  # not list(): a stream's chunks are built from it


def _copies(func: cst.BaseExpression) -> bool:
    """``dict(output)``, a copy; ``json.loads(output)``, ``output_format.model_validate_json(output)``: the
    answer parsed (into the schema asked for): the output itself still."""
    if isinstance(func, cst.Name):
        return func.value in _COPIES
    validated = isinstance(func, cst.Attribute) and func.attr.value in _VALIDATES
    return dotted_name(func) in _JSON_LOADS or validated or _joins(func)


# The JSON parsers real code uses alike (json5 for a model's lenient JSON, orjson and ujson for speed), and
# YAML's, which reads the YAML a prompt asks for (qodo-cover's load_yaml) as json.loads reads JSON.
_JSON_LOADS = frozenset({"json.loads", "json5.loads", "orjson.loads", "ujson.loads", "yaml.safe_load", "yaml.load"})


# A schema's parse of the answer (pydantic's model_validate_json, a TypeAdapter's validate_json): the
# structured output the caller asked for, the answer itself.
_VALIDATES = frozenset({
    "model_validate", "model_validate_json", "model_validate_strings", "parse_raw", "parse_obj", "validate_json",
    "validate_python", "validate_strings",
})  # fmt: skip


def _records(func: cst.BaseExpression) -> bool:
    """``Message("assistant", response)``, ``AIMessage(content=text)``, a private ``_StreamWithMetadata(gen,
    model)``: a record class built around the output holds it as a field; whoever gets the record gets the
    answer (a function returning it is a wrapper of the model still)."""
    name = func.value.lstrip("_") if isinstance(func, cst.Name) else None
    return name is not None and name[:1].isupper() and any(c.islower() for c in name) and name not in _NOT_RECORDS


_PARSES = re.compile(
    r"^_?(?:validate_and_|stream_and_)?(?:parse|extract)_(?:code|codes|json|commands?|blocks?|code_blocks?|python|script|actions?"
    r"|function_calls?|tool_calls?|(?:llm_|model_|ai_)?(?:response|reply|answer))$"
)


def _parses(func: cst.BaseExpression) -> bool:
    """``CodeParser.parse_code(text=rsp)``, ``extract_json(answer)``, ``validate_and_parse_function_call(answer)``,
    ``parser.stream_and_parse_llm_response(stream)``: the code, JSON, commands, function calls or edits
    parsed out of the answer are the answer itself (what runs them runs what the model wrote), as
    ``json.loads``."""
    name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
    return name is not None and _PARSES.match(name) is not None


# CamelCase callables that change what they are given rather than hold it.
_NOT_RECORDS = frozenset({"Exception", "ValueError", "RuntimeError", "TypeError", "KeyError", "Thread", "Process"})


def _joins(func: cst.BaseExpression) -> bool:
    """``"\\n".join(parts)``: the output's pieces joined back into its text."""
    return isinstance(func, cst.Attribute) and func.attr.value == "join" and isinstance(func.value, cst.SimpleString)


def _holds(parent: cst.CSTNode, child: cst.CSTNode) -> bool:
    """``{"role": "assistant", "content": text}``, ``yield {"type": "message", "content": chunk}``: a dict
    written around the output, under a key named in the source, is a record of it as ``Message(content=text)``
    is; whoever gets the dict gets the answer (``{**out}`` is a copy of it)."""
    if isinstance(parent, cst.DictElement):
        return parent.value is child and isinstance(parent.key, cst.SimpleString)
    if isinstance(parent, cst.StarredDictElement):
        return parent.value is child
    if isinstance(parent, cst.Element):
        return parent.value is child and isinstance(child, cst.Dict)  # [{"role": "assistant", "content": text}]
    return isinstance(parent, cst.Dict | cst.List)  # walked up from one of its elements, checked above


# A name unpacked beside the answer that holds what the request cost (``message, tokens = ask(...)``,
# ``answer, usage``, ``text, cost``): token counts, not a piece of the answer.
_COUNTS = re.compile(r"(?:^|_)(?:tokens|usage|costs?)$")

# What a model's response reports about the request (token counts), not what the model answered.
_USAGE = frozenset({"usage", "usage_metadata", "token_usage"})


def _reads_usage(parent: cst.CSTNode, child: cst.CSTNode) -> bool:
    """``response["usage"]``, ``response.usage``: the answer's token counts, read from the output."""
    if isinstance(parent, cst.Attribute) and parent.value is child:
        return parent.attr.value in _USAGE
    if isinstance(parent, cst.Subscript) and parent.value is child and len(parent.slice) == 1:
        index = parent.slice[0].slice
        return isinstance(index, cst.Index) and isinstance(index.value, cst.SimpleString) and literal(index.value) in _USAGE
    return False


def _adds_record(statement: cst.AugAssign) -> bool:
    """``messages += [{"role": "assistant", "content": answer}]``: the conversation now holds the answer's
    record (walked up from it); whoever gets the conversation gets the answer."""
    value = statement.value
    return isinstance(statement.operator, cst.AddAssign) and isinstance(value, cst.List) and any(
        isinstance(e.value, cst.Dict) for e in value.elements
    )


def _projects(parent: cst.CSTNode, child: cst.CSTNode) -> bool:
    """``parent`` is still the output (or a field of it): ``out.text``, ``out[0]``, ``await out``, ``out.strip()``,
    ``yield from out``."""
    if isinstance(parent, cst.Attribute | cst.Subscript):
        return parent.value is child
    if isinstance(parent, cst.Call):
        return parent.func is child
    if isinstance(parent, cst.IfExp):
        return parent.test is not child
    # yield from out: the stream's pieces yielded one by one, the output still.
    return isinstance(parent, cst.Await | cst.BooleanOperation | cst.From)


def _empty_text(node: cst.BaseExpression) -> bool:
    """``""`` or ``[]``: a text or a list of pieces not started yet."""
    return (isinstance(node, cst.SimpleString) and literal(node) == "") or (isinstance(node, cst.List) and not node.elements)


def _is_minus_one(node: cst.BaseExpression) -> bool:
    """``-1``: the last element."""
    return (
        isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer) and node.expression.value == "1"
    )  # fmt: skip
