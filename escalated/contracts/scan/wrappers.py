"""A module's own model wrappers, called in the same module.

``LLM.completion`` returns what ``client.chat.completions.create`` returned;
``CodingAgent.step`` calls ``self.llm.completion(...)`` and runs the reply as
a shell command. The decision is made where the wrapper is called, so that
call site is reported as a call (``api`` is the wrapper's name, confidence
medium) with its own decision surface. Found in rounds: a wrapper of a
wrapper (``ask`` returning ``LLM().completion(...)``) is known once the
inner one is.
"""

from __future__ import annotations

from collections.abc import Mapping

import libcst as cst

from escalated.contracts.scan import apis
from escalated.contracts.scan.index import Scope, dotted_name
from escalated.contracts.scan.registries import lookup_in
from escalated.contracts.scan.kinds import Match, runs_callback
from escalated.contracts.scan.syntax import argument
from escalated.contracts.scan.resolve import Resolver

# Running a function elsewhere: Modal's .call/.remote/.local/.map/.starmap, Ray's .remote
# (the result is the function's return, or an iterator of them for map).
REMOTE_CALLS = frozenset({"call", "remote", "local", "map", "starmap"})

# Running a function in a thread or an executor: asyncio.to_thread(f, ...), anyio's to_thread.run_sync(f, ...),
# loop.run_in_executor(executor, f, ...) (what f returns, awaited), executor.submit(f, ...) (its future's
# result()): where the function and the parameter it is handed as sit.
_DEFERRERS = {"to_thread": (0, "func"), "run_sync": (0, "func"), "run_in_executor": (1, "func"), "submit": (0, "fn")}

# qualified name in the module ("ask", "LLM.completion") -> (provider, api of the call inside)
LocalWrappers = Mapping[str, tuple[str, str]]


def match_local(resolver: Resolver, call: cst.Call, scope: Scope, local: LocalWrappers) -> Match | None:
    """``ask(...)``, ``self.completion(...)``, ``self.llm.completion(...)`` / ``LLM().completion(...)``."""
    func = call.func
    if resolver.calls_http_helper(call, scope):
        return None  # self._request_api("/api/embeddings", payload): match_call judges what the helper posts
    ran = _callback_run(resolver, call, scope, local)
    if ran is not None:
        return ran
    held = registry_wrappers(resolver, call, scope, local)
    if held:
        return Match(local[held[0]][0], held[0], "medium", None, also=tuple(held[1:]))
    if isinstance(func, cst.Name):
        nested = _nested(func.value, scope, local)
        if nested is not None:
            return Match(local[nested][0], func.value, "medium", None)
        found = local.get(func.value)
        if found is None or _shadowed(func.value, scope):
            return _instance_called(resolver, func, scope, local) or _handed_called(resolver, func, scope, local)
        return Match(found[0], func.value, "medium", None)
    if not isinstance(func, cst.Attribute):
        return None
    if isinstance(func.value, cst.Name) and func.attr.value in REMOTE_CALLS:
        # generate_response.call(...) / .remote(...) / .map(...): a Modal function (or a Ray or Celery
        # task) run elsewhere returns what the function returns.
        found = local.get(func.value.value)
        if found is not None and not _shadowed(func.value.value, scope):
            return Match(found[0], func.value.value, "medium", None)
    owner = _owner(resolver, func.value, scope)
    qualname = f"{owner}.{func.attr.value}" if owner else None
    if scope.class_name is not None and (_is_super(func.value) or (qualname is not None and qualname not in local)):
        inherited = _base_method(resolver, scope.class_name, func.attr.value, local, skip_own=_is_super(func.value))
        if inherited is not None and (_is_super(func.value) or owner == scope.class_name):
            return _wrapper_match(inherited, local)
    if owner and qualname not in local and func.attr.value in local and resolver.looks_up_by_name(owner):
        # func.gpt_call(prompt): a registry of another module looking its attributes up by name, asked for this
        # module's wrapper function of that name.
        return Match(local[func.attr.value][0], func.attr.value, "low", None)
    return _wrapper_match(qualname, local)


def registry_wrappers(resolver: Resolver, call: cst.Call, scope: Scope, local: LocalWrappers) -> list[str]:
    """``llm = self.available_providers[self.provider_name]; thought = llm(history)`` with
    ``self.available_providers = {"ollama": self.ollama_fn, "openai": self.openai_fn, …}`` (or
    ``self.providers[name](history)``, ``.get(name)``): a look-up by a key known at run time in a dict
    written in the module, whose values are the module's wrappers; the call is a call site of each."""
    value: cst.BaseExpression | None = call.func
    if isinstance(value, cst.Name):
        value = _value_in(resolver, value.value, scope)
    lookup = lookup_in(value) if value is not None else None
    if lookup is None or lookup.container is None:
        return []
    container = lookup.container
    table: cst.BaseExpression | None = None
    if isinstance(container, cst.Attribute) and isinstance(container.value, cst.Name) and container.value.value == "self":
        if scope.class_name is None:
            return []
        table = resolver.index.values.get((scope.class_name, f"self.{container.attr.value}"))
    elif isinstance(container, cst.Name):
        table = _value_in(resolver, container.value, scope)
    if not isinstance(table, cst.Dict):
        return []
    held: list[str] = []
    for element in table.elements:
        if not isinstance(element, cst.DictElement):
            continue
        entry = element.value
        qualname: str | None = None
        if isinstance(entry, cst.Attribute) and isinstance(entry.value, cst.Name) and entry.value.value == "self":
            qualname = f"{scope.class_name}.{entry.attr.value}"
        elif isinstance(entry, cst.Name):
            qualname = entry.value
        if qualname is not None and qualname in local and qualname not in held:
            held.append(qualname)
    return held


def _value_in(resolver: Resolver, name: str, scope: Scope) -> cst.BaseExpression | None:
    """What ``name`` is bound to, in ``scope`` or the nearest enclosing one binding it."""
    current: Scope | None = scope
    while current is not None:
        value = resolver.index.values.get((current.qualname, name))
        if value is not None or name in current.params:
            return value
        current = current.parent
    return None


def _callback_run(resolver: Resolver, call: cst.Call, scope: Scope, local: LocalWrappers) -> Match | None:
    """``await retry_with_fallback_models(self._get_prediction)``, where the function (of this module or
    another) returns ``await f(model)``: handed one of the module's wrappers (a method, a function, or an
    instance whose ``__call__`` is one), it hands back that wrapper's answer."""
    func = call.func
    runs: tuple[int, str] | None = None
    if isinstance(func, cst.Name) and not _shadowed(func.value, scope):
        own = next((s for s in resolver.index.functions_by_name.get(func.value, []) if s.class_name is None), None)
        runs = resolver.index.runs_callback(own) if own is not None else None
    elif (
        isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"}
        and scope.class_name is not None
    ):  # fmt: skip
        # self._execute_with_retry(node, policy, _call_provider): a method of the class that returns func().
        method = resolver.index.scopes.get(f"{scope.class_name}.{func.attr.value}")
        runs = resolver.index.runs_callback(method) if method is not None else None
    if runs is None:
        qualified = resolver.qualified(func)
        runs = runs_callback(resolver.externals.get(f"{qualified}()")) if qualified is not None else None
    if runs is None:
        runs = _deferred(func)
    if runs is None:
        return None
    callback = argument(call, *runs)
    if isinstance(callback, cst.Call) and resolver.qualified(callback.func) in apis.PARTIALS and callback.args:
        callback = callback.args[0].value  # run_in_executor(None, partial(self.ask, prompt)): the partial's function
    if isinstance(callback, cst.Name) and not _nested(callback.value, scope, local) and callback.value not in local:
        # call = self._safe_chat_stream if stream else self._safe_chat; self._run_with_retry(call, kw): the
        # name holds one of the methods the function bound to it (either branch).
        held = resolver.index.values.get((scope.qualname, callback.value))
        for option in (held.body, held.orelse) if isinstance(held, cst.IfExp) else (held,):
            if isinstance(option, cst.Attribute):
                found = _callback_match(resolver, option, scope, local)
                if found is not None:
                    return found
        return None
    return _callback_match(resolver, callback, scope, local)


def _callback_match(resolver: Resolver, callback: cst.BaseExpression | None, scope: Scope, local: LocalWrappers) -> Match | None:
    """The module's wrapper a callback handed to a runner is: a function, a method, an instance's ``__call__``."""
    qualname: str | None = None
    if isinstance(callback, cst.Name):
        qualname = _nested(callback.value, scope, local) or (callback.value if callback.value in local else None)
    elif isinstance(callback, cst.Attribute):
        owner = _owner(resolver, callback.value, scope)
        qualname = f"{owner}.{callback.attr.value}" if owner else None
    elif isinstance(callback, cst.Call) and isinstance(callback.func, cst.Name) and callback.func.value in resolver.index.class_nodes:
        qualname = f"{callback.func.value}.__call__"  # PredictionPreparator(handler, …): its __call__ runs
    return _wrapper_match(qualname, local)


def _deferred(func: cst.BaseExpression) -> tuple[int, str] | None:
    """``asyncio.to_thread``, ``loop.run_in_executor``, ``executor.submit``, anyio's ``to_thread.run_sync``:
    which argument the call runs in a thread (see _DEFERRERS), or None for any other callee."""
    dotted = dotted_name(func) or ""
    last = dotted.rpartition(".")[2]
    if last == "run_sync" and not dotted.endswith("to_thread.run_sync"):
        return None
    if last == "submit" and not _executor_like(dotted.rpartition(".")[0]):
        return None
    return _DEFERRERS.get(last) if isinstance(func, cst.Attribute) else None


def _executor_like(receiver: str) -> bool:
    """``executor``, ``pool``, ``self._executor``, ``agent.background_executor``, ``exe``: a receiver named
    as an executor or a pool. ``submit`` is a common verb elsewhere (Gradio's ``msg.submit(handler)``
    registers an event handler, PRAW's ``subreddit.submit(title)`` posts): only an executor's runs ``fn``."""
    last = receiver.rpartition(".")[2].lower()
    return "executor" in last or "pool" in last or last in {"ex", "exe"}


def _instance_called(resolver: Resolver, func: cst.Name, scope: Scope, local: LocalWrappers) -> Match | None:
    """``await self(convo)`` in a method of ``LLMClient``, or ``client(convo)`` with ``client = LLMClient()``:
    calling an instance runs its class's ``__call__``, a wrapper when it returns the model's answer."""
    if func.value == "cls":
        return None  # cls(...) builds an instance
    owner = _owner(resolver, func, scope)
    qualname = f"{owner}.__call__" if owner else None
    return _wrapper_match(qualname, local)


def _handed_called(resolver: Resolver, func: cst.Name, scope: Scope, local: LocalWrappers) -> Match | None:
    """``llm = self.get_llm(); await llm(convo)``: the name holds what a function of the module hands
    out, a wrapper it defines (``BaseAgent.get_llm()``, see module._handed_out)."""
    return _handed_name(resolver, func.value, scope, local, depth=0)


def _handed_name(resolver: Resolver, name: str, scope: Scope, local: LocalWrappers, *, depth: int) -> Match | None:
    """What the name holds, when a function of the module handed it out; through ``target = flex_handler
    if flex_handler is not None else handler`` (either branch) and a name bound to another name."""
    current: Scope | None = scope
    index = resolver.index
    while current is not None:
        value = index.values.get((current.qualname, name))
        if value is not None or name in current.params:
            break
        current = current.parent
    else:
        return None
    if current is None or value is None:
        return None
    for option in (value.body, value.orelse) if isinstance(value, cst.IfExp) else (value,):
        if isinstance(option, cst.Await):
            option = option.expression
        found: Match | None = None
        if isinstance(option, cst.Name) and option.value != name and depth < 3:
            found = _handed_name(resolver, option.value, current, local, depth=depth + 1)
        elif isinstance(option, cst.Call):
            found = _wrapper_match(_handed_key(resolver, option.func, current, local), local)
        if found is not None:
            return found
    return None


def _handed_key(resolver: Resolver, callee: cst.BaseExpression, scope: Scope, local: LocalWrappers) -> str | None:
    """``get_llm`` -> ``get_llm()``; ``self.get_llm`` and ``LLMAPIHandlerFactory.get_llm_api_handler`` (a
    class of the module, its static method) -> ``Class.method()``."""
    if isinstance(callee, cst.Name):
        return _nested(f"{callee.value}()", scope, local) or f"{callee.value}()"
    if not isinstance(callee, cst.Attribute):
        return None
    receiver = callee.value
    if isinstance(receiver, cst.Name) and receiver.value in resolver.index.class_nodes:
        return f"{receiver.value}.{callee.attr.value}()"
    owner = _owner(resolver, receiver, scope)
    return f"{owner}.{callee.attr.value}()" if owner else None


def _wrapper_match(qualname: str | None, local: LocalWrappers) -> Match | None:
    """A call site of the module's wrapper ``qualname``, if it is one."""
    found = local.get(qualname) if qualname is not None else None
    return Match(found[0], qualname, "medium", None) if found is not None and qualname is not None else None


def _nested(name: str, scope: Scope, local: LocalWrappers) -> str | None:
    """``_open_response()`` in ``stream`` or in a function nested beside it: the wrapper nested in an
    enclosing function (``stream._open_response``), the nearest first."""
    current: Scope | None = scope
    while current is not None and current.parent is not None:
        if f"{current.qualname}.{name}" in local:
            return f"{current.qualname}.{name}"
        current = current.parent
    return None


def _owner(resolver: Resolver, receiver: cst.BaseExpression, scope: Scope) -> str | None:
    """The module's class whose instance ``receiver`` is."""
    if isinstance(receiver, cst.Name) and receiver.value in {"self", "cls"}:
        return scope.class_name
    kind = resolver.kind_of(receiver, scope)
    if kind is None or not kind.kind.startswith("object:"):
        return None
    return kind.kind.partition(":")[2] or None


def _is_super(receiver: cst.BaseExpression) -> bool:
    return isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super"


def _base_method(resolver: Resolver, class_name: str, method: str, local: LocalWrappers, *, skip_own: bool) -> str | None:
    """``super()._chat_completion(…)`` in ``OpenAIService.chat_completion``, or ``self._chat_completion(…)``
    it inherits, where ``BaseOpenAIService`` of the same module defines the wrapper: the nearest class of
    the module, from the class up its bases, that defines ``method`` (another module's base is
    call_match's ``_inherited_wrapper``). The class's own method first unless the call goes through super()."""
    index = resolver.index
    todo, seen = [class_name.split(".")[0]], set[str]()
    while todo and len(seen) < 8:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        if f"{name}.{method}" in index.scopes and not (skip_own and name == class_name.split(".")[0]):
            return f"{name}.{method}" if f"{name}.{method}" in local else None
        todo += [b.value.value for b in index.class_bases.get(name, ()) if isinstance(b.value, cst.Name) and b.value.value in index.class_nodes]
    return None


def _shadowed(name: str, scope: Scope) -> bool:
    """A parameter or nested function of the same name hides the module's function."""
    current: Scope | None = scope
    while current is not None and current.parent is not None:
        if name in current.params:
            return True
        current = current.parent
    return False
