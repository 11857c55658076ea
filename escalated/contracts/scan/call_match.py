"""Which model API a call is: the callee resolved through the receiver's kind, or its shape.

``match_call`` is the question the scan asks of every call in a module. The
callee's receiver is resolved (``resolve.py``) and its attribute chain looked
up in the SDK tables (``apis.py``); a receiver that cannot be resolved (a
parameter, an import) still matches on an unmistakable SDK shape, with lower
confidence. A mixin of ``Resolver``, which provides what an expression is.
"""

from __future__ import annotations

import builtins
import functools
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

import attrs
import libcst as cst

from escalated.contracts.scan import apis
from escalated.contracts.scan.index import MODULE_SCOPE, STAR, Scope, dotted_name, target_key
from escalated.contracts.scan.kinds import BY_NAME, REGISTERED, Kind, Match, runs_callback, weaker
from escalated.contracts.scan.syntax import argument, dotted_tail

_LLM_WORDS = re.compile(r"(?:^|_)(?:llm|llms|chat_?model|model|chat|lm|chain|agent|agent_executor)(?:$|_)", re.I)
# What a receiver holding one of a project's model providers is called (``self.llm``, ``model``,
# ``self.ai_handler``): the words of its name, snake or camel case.
PROVIDER_WORDS = frozenset({"llm", "llms", "lm", "model", "models", "ai", "handler", "provider", "providers", "backend", "engine"})
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def provider_families(wrappers: Mapping[str, Mapping[str, tuple[str, str]]]) -> dict[str, tuple[str, str]]:
    """Method -> (provider, api) of one of the wrapper methods of that name that two or more project classes
    implement (``OpenAi.chat_completion``, ``GooglePalm.chat_completion``): a family of providers, one of
    which a receiver the scan cannot type holds. Classes count by name (the table holds a class under each
    name a module can import it by); the first by qualified name."""
    classes: dict[str, set[str]] = {}
    first: dict[str, tuple[str, str]] = {}
    for owner in sorted(wrappers):
        module, _, name = owner.rpartition(".")
        for method, found in wrappers[owner].items():
            if method and "." not in method and not method.startswith("__") and not method.endswith("()") and module:
                classes.setdefault(method, set()).add(name)
                first.setdefault(method, found)
    return {method: first[method] for method, names in classes.items() if len(names) >= 2}


def registered_families(
    wrappers: Mapping[str, Mapping[str, tuple[str, str]]], externals: Mapping[str, Kind],
) -> dict[str, tuple[str, str]]:
    """Method -> (provider, api) of a public wrapper method that two or more project classes registered by
    the same project decorator implement (``@register_agent(models=...)`` on each agent loop, whose
    ``predict_step`` returns the model's answer; ``crossref`` exports the registration under
    ``Class.@registered``): the runner picks one of them from the registry at run time
    (``config.agent_class()``) and calls the method on a receiver the scan cannot type, whatever its name
    (``agent_loop.predict_step(...)``). The first by qualified name, as ``provider_families``."""
    classes: dict[tuple[str, str], set[str]] = {}
    first: dict[tuple[str, str], tuple[str, str]] = {}
    for owner in sorted(wrappers):
        registered = externals.get(f"{owner}.{REGISTERED}")
        module, _, name = owner.rpartition(".")
        if registered is None or not module:
            continue
        for method, found in wrappers[owner].items():
            if method and "." not in method and not method.startswith("_") and not method.endswith("()"):
                classes.setdefault((method, registered.kind), set()).add(name)
                first.setdefault((method, registered.kind), found)
    out: dict[str, tuple[str, str]] = {}
    for (method, registrar), names in sorted(classes.items()):
        if len(names) >= 2:
            out.setdefault(method, first[(method, registrar)])
    return out


# Method names too common to say whose object they are called on: the builtin types' (a list's ``clear``, a
# dict's ``update``), and verbs the objects of every library have (a client's ``run``, ``query`` or ``send``).
_COMMON_METHODS = frozenset({
    *dir(dict), *dir(list), *dir(str), *dir(set), *dir(bytes), *dir(object),
    "run", "arun", "call", "acall", "invoke", "ainvoke", "execute", "aexecute", "get", "post", "put", "patch",
    "delete", "send", "request", "arequest", "submit", "start", "stop", "close", "open", "read", "write", "load",
    "save", "add", "create", "acreate", "fetch", "step", "process", "handle", "apply", "parse", "search", "query",
    "aquery", "chat", "achat", "generate", "agenerate", "complete", "acomplete", "completion", "predict",
    "apredict", "stream", "astream", "forward", "fit", "train", "evaluate", "embed", "encode", "decode",
    "transform", "render", "compile", "connect", "dispatch", "emit", "log", "info", "debug", "warning", "error",
    "reset", "wait", "next", "send_message", "ask", "prompt", "input", "confirm", "select",
})  # fmt: skip


def only_implemented(wrappers: Mapping[str, Mapping[str, tuple[str, str]]]) -> dict[str, tuple[str, str]]:
    """Method -> (provider, api) of a public wrapper method of a project class that is the only ``def`` of
    that name in the project (``apis.METHOD_DEFS``; ``Reflector.reflect_on_final_decision``,
    ``Agent.call_utility_model``), its name not a common one (``_COMMON_METHODS``): called on a receiver
    the scan cannot type (``self.history.agent.call_utility_model(…)``, ``self.reflector`` given to the
    constructor untyped), it can only be that class's (or a class inheriting it). Classes count by the name
    declaring the method, as ``provider_families``."""
    defs = apis.METHOD_DEFS.get()
    if not defs:
        return {}
    classes: dict[str, set[str]] = {}
    first: dict[str, tuple[str, str]] = {}
    for owner in sorted(wrappers):
        module, _, name = owner.rpartition(".")
        for method, found in wrappers[owner].items():
            if (
                not module or not method or "." in method or method.startswith("_") or method.endswith("()")
                or method in _COMMON_METHODS or defs.get(method) != 1
            ):  # fmt: skip
                continue
            declared = _declared_by(name, method)
            classes.setdefault(method, set()).add(declared)
            first.setdefault(method, (found[0], f"{declared}.{method}"))
    return {method: first[method] for method, names in classes.items() if len(names) == 1}


def names_a_provider(name: str) -> bool:
    """``llm``, ``ai_handler``, ``chatModel``, ``self.model``'s ``model``: a word of the name says it holds a model."""
    return any(word.lower() in PROVIDER_WORDS for word in _WORDS.findall(name))


class CallMatcher:
    """Matches calls against the SDK tables; ``Resolver`` provides the bindings and ``kind_of``."""

    bindings: dict[tuple[str, str], Kind]
    _helper_posts: dict[int, tuple[str | None, str | None, str | None] | None]
    # Project functions and classes of other modules that return a model's output (see Resolver).
    wrappers: Mapping[str, Mapping[str, tuple[str, str]]]

    if TYPE_CHECKING:

        def qualified(self, node: cst.BaseExpression) -> str | None: ...

        def kind_of(self, node: cst.BaseExpression, scope: Scope) -> Kind | None: ...

        def other_kinds(self, node: cst.BaseExpression, scope: Scope, known: Kind) -> list[Kind]: ...

        def bound_wrappers(self, node: cst.BaseExpression, scope: Scope) -> set[str]: ...

    def match_call(self, node: cst.Call, scope: Scope) -> Match | None:
        found = self._match_callee(node.func, node, scope)
        if found is not None and found.provider == "litellm" and _mocked(node):
            return None
        if found is not None and _runs_a_media_model(found, node):
            return None
        if found is not None:
            return found
        handed = self._handed_to_runner(node, scope)
        if handed is not None:
            return handed
        loaded = self._loaded_by_name(node, scope)
        if loaded is not None:
            return loaded
        helped = self._posted_through_helper(node, scope)
        if helped is not None:
            return helped
        # asyncio.to_thread(client.models.generate_content, ...), asyncio.to_thread(completion, ...),
        # anyio's to_thread.run_sync(agent.run, ...) and loop.run_in_executor(None, fn, ...) run the
        # model call: the deferring call is the one to guard.
        deferrer = (dotted_name(node.func) or "").rpartition(".")[2]
        if deferrer == "run_sync" and (dotted_name(node.func) or "").endswith("to_thread.run_sync"):
            deferrer = "to_thread"
        # An executor's submit(fn, ...) (concurrent.futures) runs it in a thread: its future's result() is the answer.
        position = {"to_thread": 0, "run_in_executor": 1, "submit": 0}.get(deferrer)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        deferred = positional[position] if position is not None and len(positional) > position else None
        asked = node
        if isinstance(deferred, cst.Call) and self.qualified(deferred.func) in apis.PARTIALS and deferred.args:
            # run_in_executor(None, partial(client.invoke_model, modelId=…, body=…)): the partial's call.
            asked, deferred = deferred, deferred.args[0].value
        if not isinstance(deferred, cst.Attribute | cst.Name):
            return None
        inner = self._match_callee(deferred, asked, scope)
        return attrs.evolve(inner, confidence=weaker(inner.confidence, "medium")) if inner is not None else None

    def _handed_to_runner(self, node: cst.Call, scope: Scope) -> Match | None:
        """``await openai_error_handler(chain.arun, args, settings=…)``: a project function that returns what
        its parameter, called, returns (``return await func(*args, **kwargs)``, in a ``try`` mapping the SDK's
        errors), handed a model's own method (``chain.arun``, ``self.model.apredict_messages``, a client's
        ``chat.completions.create``): calling it asks the model, as ``asyncio.to_thread(fn, …)`` does. (Handed
        one of the project's wrappers instead: a wrapper call site, see wrappers._callback_run.)"""
        index = getattr(self, "index", None)
        if index is None:
            return None
        runs: tuple[int, str] | None = None
        if isinstance(node.func, cst.Name):
            own = next((s for s in index.functions_by_name.get(node.func.value, []) if s.class_name is None), None)
            runs = index.runs_callback(own) if own is not None else None
        if runs is None:
            qualified = self.qualified(node.func)
            runs = runs_callback(getattr(self, "externals", {}).get(f"{qualified}()")) if qualified is not None else None
        if runs is None:
            return None
        callback = argument(node, *runs)
        if not isinstance(callback, cst.Attribute):
            return None
        # _run_sync(requests.post, api_url, json=payload): the callback called with the arguments after it.
        asked = node.with_changes(func=callback, args=[a for a in node.args if a.value is not callback])
        inner = self._match_callee(callback, asked, scope)
        return attrs.evolve(inner, confidence=weaker(inner.confidence, "medium")) if inner is not None else None

    def _object_wrapper(self, kind: Kind, method: str) -> Match | None:
        """``objgenerator.chatcompletion(…)``, ``function_manager(…)``: an object of a project class of another
        module (``objgenerator = OBJGenerator()`` at the top of its module, imported), typed before that class's
        ``method`` was known to return the model's answer; a call site of that wrapper when one class of the
        name has it."""
        owner = kind.kind.partition(":")[2]
        index = getattr(self, "index", None)
        if index is None or owner in index.class_nodes:
            return None  # a class of this module: its wrappers are this module's own (wrappers.match_local)
        named = owner.rpartition(".")[2]
        found = {answer for name, answer in self._wrapper_methods.get(method, ()) if name == named}
        if len(found) != 1:
            return None
        return Match(next(iter(found))[0], f"{_declared_by(named, method)}.{method}", "medium", kind)

    def _loaded_by_name(self, node: cst.Call, scope: Scope) -> Match | None:
        """``self._get_request_func(request_type)(**kwargs)``: a function (or method) of the module that hands
        out a function loaded by name, ``getattr(importlib.import_module(f".{request_type}", "pkg"),
        "chatcompletion_request")``, or picked from a table whose every value is one (kept in
        ``self.funcs[request_type]``, or a dict of imported functions), where each module of that package
        defining the name defines a wrapper of the model: calling what it hands out asks the model."""
        index = getattr(self, "index", None)
        if index is None or not self.wrappers or not isinstance(node.func, cst.Call):
            return None
        function = self._helper_of(node.func, scope)
        if function is None:
            return None
        assert isinstance(function.node, cst.FunctionDef)  # _helper_of hands out functions only
        returned = [r.value for r in index.walk(function.node.body, skip_defs=True) if isinstance(r, cst.Return) and r.value is not None]
        found = [self._loaded(value, function, depth=0) for value in returned]
        if not found or any(f is None for f in found):
            return None
        provider, _api = found[0]  # type: ignore[misc]
        return Match(provider, f"{function.qualname}()", "medium", None)

    def _loaded(self, value: cst.BaseExpression, function: Scope, *, depth: int) -> tuple[str, str] | None:
        """(provider, api) of the wrapper ``value`` is when it is a function loaded by name, or one picked
        from a table of them (see _loaded_by_name); None otherwise."""
        index = getattr(self, "index", None)
        if index is None or depth > 3:
            return None
        if isinstance(value, cst.Name):
            bound = index.values.get((function.qualname, value.value))
            if bound is not None:
                return self._loaded(bound, function, depth=depth + 1)
            qualified = self.qualified(value)  # a table's value: an imported wrapper function
            return self.wrappers.get(qualified, {}).get("") if qualified is not None else None
        if isinstance(value, cst.Call) and dotted_name(value.func) == "getattr" and len(value.args) >= 2:
            name = _string_start(value.args[1].value)
            module = value.args[0].value
            if isinstance(module, cst.Name):
                module = index.values.get((function.qualname, module.value), module)
            if name is None or "\x00" in name or not isinstance(module, cst.Call) or not (dotted_name(module.func) or "").endswith("import_module"):
                return None
            return self._in_package(_imported_package(module), name)
        table: cst.BaseExpression | None = None
        if isinstance(value, cst.Subscript):
            table = value.value
        elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "get":
            table = value.func.value
        key = target_key(table) if table is not None else None
        if key is None:
            return None
        values = self._table_values(key, function)
        found = [self._loaded(v, s, depth=depth + 1) for v, s in values]
        return found[0] if found and all(f is not None for f in found) else None

    def _table_values(self, key: str, function: Scope) -> list[tuple[cst.BaseExpression, Scope]]:
        """The values put into the table ``key`` names (``self.funcs`` in any method of the class, or a name
        of the function or module): its dict literal's values and each ``table[k] = value``."""
        index = getattr(self, "index", None)
        if index is None:
            return []
        scopes: list[Scope] = []
        if key.startswith("self."):
            if function.class_name is None:
                return []
            prefix = function.class_name + "."
            scopes = [s for q, s in index.scopes.items() if q.startswith(prefix) and isinstance(s.node, cst.FunctionDef)]
        else:
            scopes = [function]
        out: list[tuple[cst.BaseExpression, Scope]] = []
        literals = [index.values.get((s.qualname, key)) for s in scopes]
        if function.class_name is not None:
            literals.append(index.values.get((function.class_name, key)))
        if not key.startswith("self."):
            literals.append(index.values.get((MODULE_SCOPE, key)))
        for literal in literals:
            if isinstance(literal, cst.Dict):
                out += [(e.value, function) for e in literal.elements if isinstance(e, cst.DictElement)]
        for s in scopes:
            if not isinstance(s.node, cst.FunctionDef):
                continue
            for node in index.walk(s.node.body, skip_defs=True):
                if isinstance(node, cst.Assign) and any(
                    isinstance(t.target, cst.Subscript) and target_key(t.target.value) == key for t in node.targets
                ):
                    out.append((node.value, s))
        return out

    def _in_package(self, package: str | None, name: str) -> tuple[str, str] | None:
        """The wrapper function ``name`` of a module of ``package`` (any module when the package is not
        known), when every one of them defining it is one."""
        if package is None:
            return None
        prefix = f"{package}." if package else ""
        having = [q for q in sorted(self.wrappers) if q.startswith(prefix) and q.endswith(f".{name}") and "" in self.wrappers[q]]
        return self.wrappers[having[0]][""] if having else None

    def _match_callee(self, callee: cst.BaseExpression, node: cst.Call, scope: Scope) -> Match | None:
        qualified = self.qualified(callee)
        if qualified == apis.PYDANTIC_ADAPTER_RUN and node.args:
            # apply wrote it for agent.run(...): the same run of the same agent, the same contract.
            agent = self.kind_of(node.args[0].value, scope)
            if agent is not None and agent.kind == "pydantic-agent":
                return Match(agent.provider, "run", agent.confidence, agent)
        for runs, runner_kind in ((apis.AGNO_ADAPTER_RUNS, "agno-agent"), (apis.MAF_ADAPTER_RUNS, "maf-agent")):
            if qualified in runs and node.args:
                agent = self.kind_of(node.args[0].value, scope)
                if agent is not None and agent.kind == runner_kind:
                    return Match(agent.provider, runs[qualified], agent.confidence, agent)
        if qualified in apis.LANGGRAPH_ADAPTER_RUNS and node.args:
            graph = self.kind_of(node.args[0].value, scope)
            if graph is not None and graph.kind == "agent":
                return Match(graph.provider, apis.LANGGRAPH_ADAPTER_RUNS[qualified], graph.confidence, graph)
        if qualified in apis.CHAIN_STREAMERS and node.args:
            streamed = self.kind_of(node.args[0].value, scope)
            if streamed is not None and streamed.provider == "langchain":
                return Match(streamed.provider, apis.CHAIN_STREAMERS[qualified], weaker(streamed.confidence, "medium"), streamed)
        if callee is node.func:
            posted = self._posted_to_model(qualified, node, scope)
            if posted is not None:
                return posted
        if qualified in apis.AG2_GROUP_RUNS:
            # AG2's initiate_group_chat(pattern=...): the chat itself is the receiver, so the pattern's agents are read.
            return Match("openai", qualified.rpartition(".")[2], "high", Kind("openai", "ag2-chat", origin=node))
        if qualified is not None:
            found = self._qualified_match(qualified)
            if found is not None:
                return found
            root = self._served_root_agent(qualified, node, scope)
            if root is not None:
                return root
        served = self._served_graph(node, scope)
        if served is not None:
            return served
        if qualified is None and isinstance(callee, cst.Name):
            injected = self._injected_wrapper(callee, scope)
            if injected is not None:
                return injected
        chain: list[str] = []
        func = callee
        while isinstance(func, cst.Attribute):
            chain.insert(0, func.attr.value)
            func = func.value
            kind = self.kind_of(func, scope)
            if kind is not None and kind.kind.startswith("object:") and len(chain) > 1:
                # llm.client.chat.completions.create with llm = LLM() and LLM setting self.client = OpenAI()
                inner = self.bindings.get((kind.kind.partition(":")[2], f"self.{chain[0]}"))
                if inner is not None:
                    kind, chain = inner, chain[1:]
            if kind is not None and kind.kind.startswith("object:") and len(chain) == 1 and self.looks_up_by_name(kind.kind.partition(":")[2]):
                # func.gpt_call(prompt) with func = Functionz() of another module, whose __getattr__ finds the
                # registered function of that name: the project's one wrapper function so named, if any.
                return self._named_wrapper(chain[0])
            if kind is not None and kind.kind.startswith("object:") and len(chain) == 1:
                # objgenerator.chatcompletion(...) with objgenerator = OBJGenerator() at the top of another module,
                # read as a plain object before its class's wrapper methods were known.
                known = self._object_wrapper(kind, chain[0])
                if known is not None:
                    return known
            if kind is not None and kind.kind.startswith("wrapper:"):
                # self.llm.completion(...) with self.llm = LLM() from another module of the project.
                owner = kind.kind.partition(":")[2]
                method = ".".join(chain)
                if method not in self.wrappers.get(owner, {}):
                    return None
                bound = {o for o in self.bound_wrappers(func, scope) if method in self.wrappers.get(o, {})}
                receiver = _last_identifier(func)
                if len(bound | {owner}) > 1 and receiver is not None and receiver not in {"self", "cls"}:
                    # self.engine = LMMEngineOpenAI(...) in one branch, LMMEngineAnthropic(...) in another: the call
                    # is whichever class's the branch built, so it stands for each class's method of that name.
                    return Match(kind.provider, f"{receiver}.{method}", "medium", kind)
                return Match(kind.provider, f"{_declared_by(owner.rpartition('.')[2], method)}.{method}", "medium", kind)
            if kind is not None and kind.kind.startswith("interface:"):
                # self.model.query(...) with model: Model, a protocol some project wrapper class implements.
                method = ".".join(chain)
                implemented = self._implemented(method)
                if implemented is None:
                    return None
                return Match(implemented[0], f"{kind.kind.partition(':')[2].rpartition('.')[2]}.{method}", "medium", kind)
            if kind is not None and kind.kind == "agents-runner":
                # runner = Runner(); runner.run(agent, ...): Runner.run, its agent the first argument.
                name = ".".join(chain)
                return Match("openai", f"agents.Runner.{name}", kind.confidence, None) if name in apis.AGENTS_RUNNER else None
            if kind is not None:
                api = ".".join(part for part in [*kind.resource.split("."), *chain] if part and part not in apis.TRANSPARENT_SEGMENTS)
                if api in apis.apis_for(kind.provider, kind.kind):
                    return Match(kind.provider, api, kind.confidence, kind)
                # client = OpenAI() if use_openai else Anthropic(): bound to clients of two SDKs in
                # branches, the call is the one whose SDK has it (client.messages.create: Anthropic's).
                for other in self.other_kinds(func, scope, kind):
                    if api in apis.apis_for(other.provider, other.kind):
                        return Match(other.provider, api, weaker(other.confidence, "medium"), other)
                return None  # a known object, but not a model call (e.g. llm.bind_tools)
        if isinstance(callee, cst.Call):
            # get_org_aware_primary_llm_api_handler(default=…)(prompt=…): the handler a factory hands out, called at once.
            kind = self.kind_of(callee, scope)
            if kind is not None and kind.kind.startswith("callable:"):
                return Match(kind.provider, kind.kind.partition(":")[2], kind.confidence, kind)
        if isinstance(callee, cst.Name | cst.Attribute):
            kind = self.kind_of(callee, scope)
            if kind is not None and kind.kind.startswith("callable:"):
                return Match(kind.provider, kind.kind.partition(":")[2], kind.confidence, kind)
            if kind is not None and kind.kind.startswith("wrapper:"):
                # llm_client(convo) with llm_client an instance of another module's class whose __call__
                # returns the model's answer.
                owner = kind.kind.partition(":")[2]
                if "__call__" in self.wrappers.get(owner, {}):
                    return Match(kind.provider, f"{_declared_by(owner.rpartition('.')[2], '__call__')}.__call__", "medium", kind)
            if kind is not None and kind.kind.startswith("object:"):
                # function_manager(...) with function_manager = FunctionManager() at the top of another module,
                # read as a plain object before its class's __call__ was known to return the model's answer.
                called = self._object_wrapper(kind, "__call__")
                if called is not None:
                    return called
            # llm("prompt") on a model built here (old LangChain); a typed
            # parameter may be any callable, so annotations do not count.
            if kind is not None and kind.kind == "chat" and isinstance(kind.origin, cst.Call):
                return Match("langchain", "__call__", "medium", kind)
            # model(messages) on a smolagents model built here, or typed as one (model: Model, kept as
            # self.model): calling it asks the model.
            if kind is not None and kind.kind == "smol-model" and (isinstance(callee, cst.Name) or _on_self(callee)):
                return Match(kind.provider, "__call__", kind.confidence if isinstance(kind.origin, cst.Call) else "medium", kind)
            # agent("...") on a Strands agent: calling the object runs it.
            if kind is not None and kind.kind == "strands-agent" and isinstance(callee, cst.Name):
                return Match(kind.provider, "__call__", kind.confidence, kind)
        inherited = self._inherited_wrapper(callee, scope)
        if inherited is not None:
            return inherited
        if self._stands_in(callee, scope):
            return None
        named = self._named_after_class(callee, scope)
        if named is not None:
            return named
        family = self._provider_family(callee, scope)
        if family is not None:
            return family
        only = self._only_implementer(callee, scope)
        if only is not None:
            return only
        return self._shape_match(callee, node)

    def _inherited_wrapper(self, callee: cst.BaseExpression, scope: Scope, *, method: str | None = None) -> Match | None:
        """``self._aask(prompt)`` in ``class WritePlan(Action)``, where ``Action`` (another module's class)
        has the method and it returns a model's output: the subclass calls the base's wrapper, private or not,
        unless the class (or a base of the module between them) defines the method itself. ``super().m(…)``
        skips the class's own ``m``: ``ChatHandler.get_completion`` yielding from ``super().get_completion(…)``."""
        receiver = callee.value if isinstance(callee, cst.Attribute) else None
        is_super = isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Name) and receiver.func.value == "super"
        if not (
            isinstance(callee, cst.Attribute) and (is_super or (isinstance(receiver, cst.Name) and receiver.value == "self"))
            and scope.class_name is not None and self.wrappers
        ):  # fmt: skip
            return None
        index = getattr(self, "index", None)
        if index is None:
            return None
        method, todo = method or callee.attr.value, [scope.class_name.split(".")[0]]
        if not is_super and not index.class_bases.get(todo[0]) and f"{todo[0]}.{method.removesuffix('()')}" not in index.scopes:
            return self._mixed_into(method)
        seen: set[str] = set()
        while todo and len(seen) < 8:
            name = todo.pop(0)
            if name in seen:
                continue
            seen.add(name)
            own = is_super and name == scope.class_name.split(".")[0]
            if name in index.class_nodes and f"{name}.{method.removesuffix('()')}" in index.scopes and not own:
                return None  # defined here: the module's own (match_local's) method
            for base in index.class_bases.get(name, ()):
                qualified = self.qualified(base.value)
                found = self._base_wrapper(qualified, method) if qualified is not None else None
                if found is not None and qualified is not None and is_super and self._only_overridden(qualified, method):
                    return None  # super()._execute_action(…) in the override that made the base's a wrapper: its own body
                if found is not None and qualified is not None:
                    return Match(found[0], f"{qualified.rpartition('.')[2]}.{method}", "medium", None)
                if isinstance(base.value, cst.Name) and base.value.value in index.class_nodes:
                    todo.append(base.value.value)
        return None

    @staticmethod
    def _only_overridden(qualified: str, method: str) -> bool:
        """The base's ``method`` is a wrapper only as its subclasses override it (``apis.OVERRIDDEN_WRAPPERS``)."""
        return (qualified.rpartition(".")[2], method.removesuffix("()")) in apis.OVERRIDDEN_WRAPPERS.get()

    def _mixed_into(self, method: str) -> Match | None:
        """``self.get_llm()`` in ``class RelevantFilesMixin:`` (no base class, no such method): a mixin, whose
        method comes from the classes it is mixed into. When every project class with a wrapper method of
        that name has the same one (``BaseAgent.get_llm()``, inherited by each agent), it is that one."""
        found = {
            (_declared_by(owner.rpartition(".")[2], method), methods[method])
            for owner, methods in self.wrappers.items() if method in methods
        }  # fmt: skip
        declared = {name for name, _found in found}
        answers = {answer for _name, answer in found}
        if len(answers) != 1 or len(declared) != 1:
            return None
        (name,), (answer,) = declared, answers
        return Match(answer[0], f"{name}.{method}", "medium", None)

    def _base_wrapper(self, qualified: str, method: str) -> tuple[str, str] | None:
        """The wrapper method of a base class, also when imported through a package that re-exports it
        (``from metagpt.actions import Action``): the one project class of that name that has it."""
        found = self.wrappers.get(qualified, {}).get(method)
        if found is not None or "." not in qualified:
            return found
        package, _, name = qualified.rpartition(".")
        if not self.wrappers.keys() & {f"{package}.{name}"} and not any(
            owner.startswith(package + ".") and owner.endswith("." + name) for owner in self.wrappers
        ):
            return None
        same = {
            methods[method] for owner, methods in self.wrappers.items()
            if owner.startswith(package + ".") and owner.endswith("." + name) and method in methods
        }  # fmt: skip
        return next(iter(same)) if len(same) == 1 else None

    def _named_after_class(self, callee: cst.BaseExpression, scope: Scope) -> Match | None:
        """``globals.ai.run(prompt)``: a receiver the scan cannot resolve, named after a project class
        (``AI``, ``LLMClient`` as ``llm_client``) one of whose wrapper methods it calls; or, none named so,
        after the last word of one (``self.llm.aask(…)`` and ``BaseLLM.aask``)."""
        if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Attribute | cst.Name)):
            return None
        receiver = _last_identifier(callee.value)
        if receiver is None or receiver in {"self", "cls"} or self.kind_of(callee.value, scope) is not None:
            return None
        wanted, method = receiver.replace("_", "").lower(), callee.attr.value
        having = self._wrapper_methods.get(method, ())
        found = {(_declared_by(name, method), answer) for name, answer in having if name.lower() == wanted}
        if not found and len(wanted) >= 3:
            found = {(_declared_by(name, method), answer) for name, answer in having if _last_word_is(name, wanted)}
        if len(found) != 1:
            return None
        (name, (provider, _api)), = found
        return Match(provider, f"{name}.{method}", "medium", None)

    def _provider_family(self, callee: cst.BaseExpression, scope: Scope) -> Match | None:
        """``self.llm.chat_completion(messages)`` with ``self.llm`` given to the constructor untyped, or
        ``model.inference`` of a dict of provider instances: a receiver the scan cannot type, named for a
        model (``names_a_provider``), calling a method two or more project classes of different modules
        implement as model wrappers (``provider_families``) holds one of them."""
        if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Attribute | cst.Name)):
            return None
        receiver = _last_identifier(callee.value)
        if receiver is None or receiver in {"self", "cls"} or self._imported_module(callee.value):
            return None
        found = self._provider_families.get(callee.attr.value) if names_a_provider(receiver) else None
        if found is None:
            # agent_loop.predict_step(...): a method of the classes a project decorator registers, on whichever
            # the runner picked from the registry (a receiver of any name).
            found = self._registered_families.get(callee.attr.value)
        if found is None or self.kind_of(callee.value, scope) is not None:
            return None
        return Match(found[0], f"{receiver}.{callee.attr.value}", "medium", None)

    def _only_implementer(self, callee: cst.BaseExpression, scope: Scope) -> Match | None:
        """``self.reflector.reflect_on_final_decision(…)`` with ``self.reflector`` given to the constructor
        untyped, ``bulk.summarize()`` on a loop's item, ``call_data["model"].unified_call(…)`` on a dict's
        entry: a receiver the scan cannot type calling a wrapper method that only one project class defines
        (``only_implemented``) calls that class's."""
        if not (isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Attribute | cst.Name | cst.Subscript)):
            return None
        receiver = _last_identifier(callee.value)
        if receiver in {"self", "cls"} or self._imported_module(callee.value):
            return None
        found = self._only_implemented.get(callee.attr.value)
        if found is None or self.kind_of(callee.value, scope) is not None or self._built_by_call(callee.value, scope):
            return None
        if scope.qualname.rpartition(".")[2] == callee.attr.value:
            # ``def converse(self, …): return self.client.converse(…)``: a method handing its work to the
            # same-named method of an object it holds delegates to another class (an SDK's client), since the
            # only ``def`` of that name is the method itself; matching it would make the wrapper call itself.
            return None
        return Match(found[0], found[1], "medium", None)

    def _built_by_call(self, receiver: cst.BaseExpression, scope: Scope) -> bool:
        """``self.sales_agent = self.initialize_agent()``, ``coder = Coder.create(...)``: the receiver holds what a
        call the scan could not resolve built, an object it knows nothing of (a library's, whose method may
        share the name); one handed in (a parameter, a loop's item, a dict's entry) is whatever the caller
        gives, and only a project class has the method."""
        key = target_key(receiver) if isinstance(receiver, cst.Name | cst.Attribute) else None
        index = getattr(self, "index", None)
        if key is None or index is None:
            return False
        if key.startswith("self."):
            value = index.values.get((scope.class_name, key)) if scope.class_name is not None else None
        else:
            value = None
            current: Scope | None = scope
            while current is not None and value is None:
                value = index.values.get((current.qualname, key))
                current = current.parent
        if isinstance(value, cst.Await):
            value = value.expression
        return isinstance(value, cst.Call)

    def _imported_module(self, receiver: cst.BaseExpression) -> bool:
        """``subprocess`` in ``subprocess.run(…)``: a module brought in by ``import``, or one of the standard
        library's, is no instance of a project class (MetaGPT's registered roles' ``run`` is not it)."""
        index = getattr(self, "index", None)
        if not isinstance(receiver, cst.Name) or index is None:
            return False
        target = index.imports.get(receiver.value)
        return target is not None and (target == receiver.value or target.split(".")[0] in sys.stdlib_module_names)

    def _injected_wrapper(self, callee: cst.Name, scope: Scope) -> Match | None:
        """``gpt_call(prompt)`` in a module that neither defines, imports nor is given ``gpt_call`` (no star
        import either): the name can only come from the module's globals, filled by whatever loads it
        (BabyAGI's functionz executes each function with its dependencies bound by name; plugin loaders do
        the same). It is the project's top-level wrapper function of that name when exactly one is."""
        index = getattr(self, "index", None)
        name = callee.value
        if index is None or not self.wrappers or name in _BUILTIN_NAMES or index.binds(name):
            return None
        if name in index.imports or name in index.relative_imports or any(
            key.startswith(STAR) for key in (*index.imports, *index.relative_imports)
        ):
            return None
        current: Scope | None = scope
        while current is not None:
            if name in current.params or (current.qualname, name) in index.values or f"{current.qualname}.{name}" in index.scopes:
                return None
            current = current.parent
        return self._named_wrapper(name)

    def _named_wrapper(self, name: str) -> Match | None:
        """The project's top-level wrapper function called ``name``, when exactly one is."""
        found = {answer for owner, answer in self._wrapper_methods.get("", ()) if owner == name}
        if len(found) != 1:
            return None
        (answer,) = found
        return Match(answer[0], name, "low", None)

    def looks_up_by_name(self, owner: str) -> bool:
        """``owner`` (``object:Functionz``'s class) is a project class of another module defining ``__getattr__``."""
        return owner.rpartition(".")[2] in self._by_name_owners

    @functools.cached_property
    def _by_name_owners(self) -> frozenset[str]:
        externals: Mapping[str, Kind] = getattr(self, "externals", {})
        return frozenset(key.removesuffix(".__getattr__").rpartition(".")[2] for key, found in externals.items() if found == BY_NAME)

    def _implemented(self, method: str) -> tuple[str, str] | None:
        """(provider, api) of a project class's wrapper method of that name (the first by name), if any."""
        having = self._wrapper_methods.get(method) if method else None
        return having[0][1] if having else None

    # The wrappers table does not change during an analysis (each round builds a new one), and these
    # lookups ran over all of it for every call: on crewAI's own tree a sixth of the scan. Built once.
    @functools.cached_property
    def _wrapper_methods(self) -> dict[str, list[tuple[str, tuple[str, str]]]]:
        """Method -> (class name, (provider, api)) of each table entry with that method, by qualified name."""
        having: dict[str, list[tuple[str, tuple[str, str]]]] = {}
        for owner in sorted(self.wrappers):
            name = owner.rpartition(".")[2]
            for method, found in self.wrappers[owner].items():
                having.setdefault(method, []).append((name, found))
        return having

    @functools.cached_property
    def _provider_families(self) -> dict[str, tuple[str, str]]:
        return provider_families(self.wrappers) if self.wrappers else {}

    @functools.cached_property
    def _only_implemented(self) -> dict[str, tuple[str, str]]:
        return only_implemented(self.wrappers) if self.wrappers else {}

    @functools.cached_property
    def _registered_families(self) -> dict[str, tuple[str, str]]:
        externals: Mapping[str, Kind] = getattr(self, "externals", {})
        return registered_families(self.wrappers, externals) if self.wrappers else {}

    def _posted_to_model(self, qualified: str | None, node: cst.Call, scope: Scope) -> Match | None:
        """``requests.post("https://api.openai.com/v1/chat/completions", ...)``, ``client.post(f"{base}/v1/
        chat/completions", ...)`` on an HTTP client or session, or ``self.requestor.arequest(method="post",
        url=self.url_suffix, ...)`` with ``self.url_suffix = "/chat/completions"``: a model's HTTP API called
        without its SDK (the address written in the call, in a name of the function or module, or in an
        attribute of the class)."""
        method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
        if qualified not in apis.HTTP_POSTS and method not in apis.HTTP_METHODS:
            return None
        url = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "url"), None)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if url is None and method in apis.HTTP_VERB_FIRST and len(positional) >= 2:
            # client.request("POST", url, ...), httpx's client.stream("POST", url, json=...) (a streamed answer).
            verb = _string_start(positional[0])
            url = positional[1] if verb is not None and verb.lower() == "post" else None
        elif url is None and positional and method not in apis.HTTP_VERB_FIRST:
            url = positional[0]
        text = self._url_text(url, scope) if url is not None else None
        found = apis.model_endpoint(text) if text is not None else None
        if found is None and url is not None:
            found = self._model_body(node, scope)
        if found is None and url is not None and _sends_body(node, url) and self._helped_callers(scope):
            found = "openai"  # the post of a helper one of whose callers asks a model through it
        if found is None or url is None or _asks_nothing(node) or not _sends_body(node, url):
            return None
        return Match(found, "http.post", "medium", None)

    def _helped_callers(self, scope: Scope) -> bool:
        """The function ``scope`` is a project HTTP helper (see _posted_through_helper) that a call of the
        module asks a model through."""
        index = getattr(self, "index", None)
        if index is None or not isinstance(scope.node, cst.FunctionDef):
            return False
        name = scope.node.name.value
        for call, where in index.calls:
            callee = call.func
            named = callee.attr.value if isinstance(callee, cst.Attribute) else callee.value if isinstance(callee, cst.Name) else None
            if named == name and self._helper_of(call, where) is scope and self._posted_through_helper(call, where) is not None:
                return True
        return False

    def _helper_of(self, node: cst.Call, scope: Scope) -> Scope | None:
        """The module's function (``helper(…)``) or the class's own method (``self.helper(…)``) ``node`` calls."""
        index = getattr(self, "index", None)
        if index is None:
            return None
        callee = node.func
        if isinstance(callee, cst.Name):
            qualname = callee.value
        elif (
            isinstance(callee, cst.Attribute) and isinstance(callee.value, cst.Name) and callee.value.value in {"self", "cls"}
            and scope.class_name is not None
        ):  # fmt: skip
            qualname = f"{scope.class_name}.{callee.attr.value}"
        else:
            return None
        function = index.scopes.get(qualname)
        return function if function is not None and isinstance(function.node, cst.FunctionDef) else None

    def calls_http_helper(self, node: cst.Call, scope: Scope) -> bool:
        """``node`` calls a project HTTP helper (see _posted_through_helper): it asks a model only when what it
        is given does, which match_call judges; as a wrapper's call site it would count an embedding too."""
        function = self._helper_of(node, scope)
        return function is not None and function is not scope and self._helper_post(function) is not None

    def _posted_through_helper(self, node: cst.Call, scope: Scope) -> Match | None:
        """``with self._request_api("/api/chat", payload) as resp:`` where ``_request_api(self, api_path,
        payload)`` posts ``payload`` to ``f"{self.config.api_base}{api_path}"`` (requests, httpx, aiohttp): a
        project HTTP helper posting what it is given. Asked a model's question (a model API's path, or a body
        with ``model`` and ``messages``; Ollama's ``/api/generate`` with ``model`` and ``prompt``), the call is
        the request."""
        function = self._helper_of(node, scope)
        if function is None or function is scope:
            return None
        posted = self._helper_post(function)
        if posted is None:
            return None
        base, url_param, body_param = posted
        node_params = function.node.params if isinstance(function.node, cst.FunctionDef) else None
        if node_params is None:
            return None
        positional = [p.name.value for p in (*node_params.posonly_params, *node_params.params)]
        if positional and positional[0] in {"self", "cls"} and function.class_name is not None:
            positional = positional[1:]
        text = base
        if url_param is not None:
            given = argument(node, positional.index(url_param) if url_param in positional else -1, url_param)
            path = self._url_text(given, scope) if given is not None else None
            text = (base or "") + (path if path is not None else "\x00")
        found = apis.model_endpoint(text) if text is not None else None
        if found is None and body_param is not None:
            given = argument(node, positional.index(body_param) if body_param in positional else -1, body_param)
            index = getattr(self, "index", None)
            if isinstance(given, cst.Name) and index is not None:
                given = index.values.get((scope.qualname, given.value))
            keys = {
                e.key.evaluated_value for e in given.elements
                if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
            } if isinstance(given, cst.Dict) else set()  # fmt: skip
            ollama = text is not None and text.endswith("/api/generate") and {"model", "prompt"} <= keys
            if {"model", "messages"} <= keys or {"inputs", "parameters"} <= keys or ollama:
                found = "openai"
        return Match(found, "http.post", "medium", None) if found is not None else None

    def _helper_post(self, function: Scope) -> tuple[str | None, str | None, str | None] | None:
        """The post a helper makes of what it is given: (the address's text before the parameter, or the
        whole address when no parameter is in it; the address's parameter; the body's parameter), at least one
        parameter; None when it posts nothing so. Read once a helper: each of its calls asks again (a method of
        a 5,500-line class called from a hundred places walked its body each time, swarms' Agent)."""
        key = id(function.node)
        if key not in self._helper_posts:
            self._helper_posts[key] = self._read_helper_post(function)
        return self._helper_posts[key]

    def _read_helper_post(self, function: Scope) -> tuple[str | None, str | None, str | None] | None:
        index = getattr(self, "index", None)
        if index is None or not isinstance(function.node, cst.FunctionDef):
            return None
        params = function.params
        for call in index.walk(function.node.body, skip_defs=True):
            if type(call) is not cst.Call:  # a leaf class: type() spares ABCMeta's isinstance
                continue
            method = call.func.attr.value if isinstance(call.func, cst.Attribute) else None
            if self.qualified(call.func) not in apis.HTTP_POSTS and method not in {"post", "apost"}:
                continue
            url = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "url"), None)
            positional = [a.value for a in call.args if a.keyword is None and not a.star]
            url = url if url is not None else positional[0] if positional else None
            body = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in {"json", "data"}), None)
            if url is None or body is None:
                continue
            if isinstance(url, cst.Name) and url.value not in params:
                url = index.values.get((function.qualname, url.value), url)
            url_param: str | None = None
            base: str | None = None
            if isinstance(url, cst.Name) and url.value in params:
                url_param, base = url.value, ""
            elif isinstance(url, cst.FormattedString) and url.parts:
                last = url.parts[-1]  # f"{self.config.api_base}{api_path}": a base, then the path it is given
                if isinstance(last, cst.FormattedStringExpression) and isinstance(last.expression, cst.Name) and last.expression.value in params:
                    url_param, base = last.expression.value, "\x00"
            if url_param is None:
                base = self._url_text(url, function)
            body_param = body.value if isinstance(body, cst.Name) and body.value in params else None
            if url_param is not None or body_param is not None:
                return base, url_param, body_param
        return None


    def _model_body(self, node: cst.Call, scope: Scope) -> str | None:
        """An address the code does not spell (``self.end_point``), asked a model's question: a body with
        ``model`` and ``messages`` (a chat completion), or ``inputs`` and ``parameters`` (a Hugging Face
        inference endpoint), written in the call or in a dict of the function (``data=json.dumps(payload)``)."""
        body = next((a.value for a in node.args if a.keyword is not None and a.keyword.value in {"json", "data"}), None)
        if isinstance(body, cst.Call) and dotted_name(body.func) == "json.dumps" and body.args:
            body = body.args[0].value
        index = getattr(self, "index", None)
        if isinstance(body, cst.Name) and index is not None:
            name = body.value
            body = index.values.get((scope.qualname, name))
            if body is None:
                body = self._unpacked_body(name, scope)
        if not isinstance(body, cst.Dict):
            return None
        keys = {
            e.key.evaluated_value for e in body.elements
            if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
        }  # fmt: skip
        return "openai" if {"model", "messages"} <= keys or {"inputs", "parameters"} <= keys else None

    def _unpacked_body(self, name: str, scope: Scope) -> cst.BaseExpression | None:
        """``headers, payload = generate_payload(inputs, …)``: the body a helper of the module (a function, or a
        method of the class on ``self``) builds and hands back in the tuple it returns (``return headers,
        payload``), as the dict it bound to that name there or wrote in the return."""
        index = getattr(self, "index", None)
        if index is None:
            return None
        for bound_in, key, value, path in index.unpacked:
            if bound_in is not scope or key != name or len(path) != 1 or not isinstance(value, cst.Call):
                continue
            func = value.func
            helper: Scope | None = None
            if isinstance(func, cst.Name):
                helper = next((s for s in index.functions_by_name.get(func.value, []) if s.class_name is None), None)
            elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self" and scope.class_name:
                helper = index.scopes.get(f"{scope.class_name}.{func.attr.value}")
            if helper is None or not isinstance(helper.node, cst.FunctionDef):
                return None
            for node in index.walk(helper.node.body, skip_defs=True):
                if not (isinstance(node, cst.Return) and isinstance(node.value, cst.Tuple)) or len(node.value.elements) <= path[0]:
                    continue
                element = node.value.elements[path[0]].value
                if isinstance(element, cst.Name):
                    element = index.values.get((helper.qualname, element.value))
                if isinstance(element, cst.Dict):
                    return element
            return None
        return None

    def _url_text(self, url: cst.BaseExpression, scope: Scope, depth: int = 0) -> str | None:
        """The text of an address: a string, an f-string (a placeholder naming a string of the module or
        class spelled out, any other ``\\x00``), or a name or attribute bound to one."""
        index = getattr(self, "index", None)
        if index is not None and isinstance(url, cst.Name | cst.Attribute) and depth < 3:
            key = target_key(url)
            bound: cst.BaseExpression | None = None
            if key is not None and key.startswith("self."):
                bound = index.values.get((scope.class_name, key)) if scope.class_name is not None else None
            elif key is not None:
                # url = "https://…/v1/responses" in the function (or one it is nested in), or at the top of the module.
                current: Scope | None = scope
                while bound is None and current is not None:
                    bound, current = index.values.get((current.qualname, key)), current.parent
                bound = bound if bound is not None else index.values.get((MODULE_SCOPE, key))
            return self._url_text(bound, scope, depth + 1) if bound is not None else None
        if isinstance(url, cst.BooleanOperation) and isinstance(url.operator, cst.Or) and depth < 3:
            # llm_config.model_endpoint or CHATGPT_CODEX_ENDPOINT: the address configured, else the one written.
            left = self._url_text(url.left, scope, depth + 1)
            return left if left is not None and "\x00" not in left else self._url_text(url.right, scope, depth + 1)
        if isinstance(url, cst.BinaryOperation) and isinstance(url.operator, cst.Add) and depth < 3:
            # self.config_llm["API_BASE"] + "/chat/completions": joined as an f-string's parts are, a part
            # the code does not spell standing for the placeholder.
            pieces = [self._url_text(side, scope, depth + 1) for side in (url.left, url.right)]
            return "".join(piece if piece is not None else "\x00" for piece in pieces)
        if isinstance(url, cst.FormattedString) and depth < 3:
            parts = []
            for part in url.parts:
                if isinstance(part, cst.FormattedStringText):
                    parts.append(part.value)
                    continue
                inner = part.expression if isinstance(part, cst.FormattedStringExpression) else None
                spelled = (
                    self._url_text(inner, scope, depth + 1)
                    if isinstance(inner, cst.Name | cst.Attribute) and not parts else None
                )
                parts.append(spelled if spelled is not None and "\x00" not in spelled else "\x00")
            return "".join(parts)
        return _string_start(url)

    def _imports(self, package: str) -> bool:
        index = getattr(self, "index", None)
        return index is not None and index.imports_from(package)

    def _served_graph(self, node: cst.Call, scope: Scope) -> Match | None:
        """``app = builder.compile()`` (or ``graph = create_agent(...)``) named in a langgraph.json: the
        LangGraph server runs it, so its definition is where its runs are decided. Reported as the call
        ``langgraph.json graph``, never wrapped by apply."""
        index = getattr(self, "index", None)
        if index is None or not index.served or scope.qualname != MODULE_SCOPE:
            return None
        if not any(index.values.get((MODULE_SCOPE, name)) is node for name in index.served):
            return None
        # Only a prebuilt agent graph: a hand-built StateGraph's nodes make their own model calls, reported there.
        built: cst.BaseExpression = node
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "compile":
            receiver = node.func.value
            built = index.values.get((MODULE_SCOPE, receiver.value), receiver) if isinstance(receiver, cst.Name) else receiver
        kind = self.kind_of(built, scope) if isinstance(built, cst.Call) else None
        if kind is None or kind.kind not in {"agent", "lg-multi"}:
            return None
        return Match("langchain", apis.SERVED_GRAPH, "high", Kind("langchain", "lg-served", origin=node))

    def _served_root_agent(self, qualified: str, node: cst.Call, scope: Scope) -> Match | None:
        """``root_agent = Agent(...)`` in a Google ADK agent package: ``adk run``/``web``/``api_server``
        and ``AdkApp(agent=root_agent)`` run it by that name, so its definition is where its runs are
        decided (the code never calls it). Reported as the call ``root_agent``, never wrapped by apply."""
        built = apis.constructor(qualified)
        if built is None or built[1] != "adk-agent" or scope.qualname != MODULE_SCOPE:
            return None
        index = getattr(self, "index", None)
        if index is None:
            return None
        served = index.values.get((MODULE_SCOPE, apis.ADK_ROOT_AGENT))
        if isinstance(served, cst.Name):  # root_agent = coordinator
            served = index.values.get((MODULE_SCOPE, served.value))
        if served is not node:
            return None
        return Match(built[0], apis.ADK_ROOT_AGENT, "high", Kind(built[0], built[1], origin=node))

    def _stands_in(self, callee: cst.BaseExpression, scope: Scope) -> bool:
        """The receiver is a mock or an object of a project class: a lookalike, not an SDK client."""
        node = callee
        while isinstance(node, cst.Attribute) and target_key(node) is None:
            node = node.value
        if node is callee or not isinstance(node, cst.Name | cst.Attribute):
            return False
        kind = self.kind_of(node, scope)
        return kind is not None and kind.provider in {"mock", "project"}

    def _qualified_match(self, qualified: str) -> Match | None:
        wrapped = self.wrappers.get(qualified, {}).get("")
        if wrapped is not None:  # ask(...) where ask, in another module, returns a model's output
            return Match(wrapped[0], qualified.rpartition(".")[2], "medium", None)
        qualified = apis.canonical(qualified)  # from agents.run import Runner
        if qualified in apis.MODULE_FUNCTIONS:  # replicate.run(...), palm.generate_text(...)
            return Match(*apis.MODULE_FUNCTIONS[qualified], "high", None)
        module, _, name = qualified.rpartition(".")
        if module == "litellm" and name in apis.LITELLM_FUNCTIONS:
            return Match("litellm", name, "high", None)
        if module == "ollama" and name in apis.OLLAMA_APIS:
            return Match("openai", f"ollama.{name}", "high", None)  # the module's default client
        if module == "agents.Runner" and name in apis.AGENTS_RUNNER:
            return Match("openai", f"agents.Runner.{name}", "high", None)
        if qualified in apis.SWARM_LOOPS:
            return Match("openai", "run_demo_loop", "high", None)
        if qualified in apis.ADAPTER_RUNS:
            # The adapter runs Runner.run itself (apply wrote it): the same call, the same contract.
            return Match("openai", apis.ADAPTER_RUNS[qualified], "high", None)
        for root, provider in apis.module_clients().items():
            if qualified.startswith(root + "."):
                api = qualified[len(root) + 1 :]
                if api in apis.apis_for(provider, "module"):
                    return Match(provider, api, "high", None)
        return None

    def _shape_match(self, callee: cst.BaseExpression, node: cst.Call) -> Match | None:
        """An SDK-shaped call on a receiver we could not resolve (a parameter, an import)."""
        written = dotted_name(callee)
        head, _, rest = (written or "").partition(".")
        clients = apis.module_clients()
        if head in clients and rest in apis.apis_for(clients[head], "module"):
            # "from .llm import litellm" (a lazy wrapper): named like the SDK, used like the SDK.
            return Match(clients[head], rest, "medium", None)
        tail = dotted_tail(callee)
        if tail is None:
            return None
        tail = ".".join(p for p in tail.split(".") if p not in apis.TRANSPARENT_SEGMENTS)
        for shape, provider in apis.SHAPE_FALLBACKS:
            if tail == shape or tail.endswith("." + shape):
                # OpenAI-compatible SDKs (Groq, Together, …) share the shape: still a model call.
                confidence = "medium"
                if provider == "anthropic" and not _looks_like_model_request(node):
                    return None  # Twilio and others have client.messages.create too
                if shape.startswith("generate_content") and "." not in tail:
                    confidence = "low"
                return Match(provider, shape, confidence, None)
        if isinstance(callee, cst.Attribute) and callee.attr.value in apis.LLAMAINDEX_TOOL_CALLS and self._imports("llama_index"):
            return Match("openai", callee.attr.value, "low", None)  # llm = await ctx.get("llm"); llm.achat_with_tools(...)
        if isinstance(callee, cst.Attribute) and callee.attr.value in apis.BEDROCK_APIS and self._imports("boto3"):
            # self.client.invoke_model(modelId=…, body=…) on a bedrock-runtime client made elsewhere (a method
            # given the service's name): asked of a model by its id, in a module that imports boto3.
            if any(arg.keyword is not None and arg.keyword.value == "modelId" for arg in node.args):
                return Match("anthropic", callee.attr.value, "low", None)
        if isinstance(callee, cst.Attribute) and callee.attr.value in apis.OLLAMA_APIS and self._imports("ollama"):
            # model = config.initialize_ollama() (a Client built in another module): chat(model=..., messages=...)
            # in a module that imports ollama, asked of a model by name.
            keywords = {arg.keyword.value for arg in node.args if arg.keyword is not None}
            if "model" in keywords and keywords & {"messages", "prompt"}:
                return Match("openai", callee.attr.value, "low", None)
        if isinstance(callee, cst.Attribute) and callee.attr.value in {"invoke", "ainvoke", "stream", "astream"}:
            receiver = _last_identifier(callee.value)
            if receiver is not None and _LLM_WORDS.search(receiver):
                return Match("langchain", callee.attr.value, "low", None)
        return None


def _last_identifier(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _looks_like_model_request(node: cst.Call) -> bool:
    names = {arg.keyword.value for arg in node.args if arg.keyword is not None}
    if names & {"to", "from_", "body", "media_url"}:
        return False
    return bool(names & {"messages", "max_tokens", "model", "system"}) or any(arg.star == "**" for arg in node.args)


def _string_start(node: cst.BaseExpression) -> str | None:
    """The text of a string literal, or of an f-string up to its first placeholder."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString):
        return "".join(p.value if isinstance(p, cst.FormattedStringText) else "\x00" for p in node.parts)
    if isinstance(node, cst.ConcatenatedString):
        left, right = _string_start(node.left), _string_start(node.right)
        return (left or "") + (right or "") if left is not None else None
    return None


def _on_self(node: cst.BaseExpression) -> bool:
    """``self.model``: an attribute of the instance itself."""
    return isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == "self"


_QUESTIONS = frozenset({"messages", "input", "contents", "prompt"})


_BUILTIN_NAMES = frozenset(dir(builtins))


def _mocked(node: cst.Call) -> bool:
    """``completion(model=…, messages=…, mock_response=text)``: litellm returns ``text`` as the answer without
    sending anything (its documented testing switch; cua's Azure ML adapter wraps an answer it already has)."""
    return any(a.keyword is not None and a.keyword.value == "mock_response" for a in node.args)


# Replicate runs any model by its name: these families make images, sound or video, and
# their output is a file's URL, not an answer the code reads. Only a name written in the
# call decides; any other (a language model's, or one read from elsewhere) is still a call.
_MEDIA_MODEL = re.compile(
    r"(?:^|[/_:.-])(?:stable-diffusion|sdxl|flux|kandinsky|dall-?e|midjourney|openjourney|imagen|ideogram"
    r"|recraft|controlnet|real-esrgan|esrgan|gfpgan|codeformer|rembg|musicgen|riffusion|bark|whisper"
    r"|zeroscope|video)(?:$|[/_:.-])",
    re.IGNORECASE,
)


# Gemini's image models (``gemini-2.5-flash-image``, ``gemini-3-pro-image-preview``,
# ``gemini-2.0-flash-exp-image-generation``) and Imagen answer ``generate_content`` with a picture.
_GEMINI_IMAGE_MODEL = re.compile(r"^(?:models/)?(?:gemini-[\w.-]*-image(?:$|-)|imagen-)", re.IGNORECASE)


def _runs_a_media_model(found: Match, node: cst.Call) -> bool:
    """``replicate.run("stability-ai/stable-diffusion:…", input=…)`` (or a ``Client``'s ``run``): an
    image, sound or video model by the name written in the call, not a language model. So is
    ``client.models.generate_content(model="gemini-3-pro-image-preview", …)``: the answer is an image."""
    on_replicate = found.api.startswith("replicate.") or (found.receiver is not None and found.receiver.kind == "replicate")
    if not on_replicate:
        model = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "model"), None)
        name = _string_start(model) if model is not None and "generate_content" in found.api else None
        return name is not None and _GEMINI_IMAGE_MODEL.search(name) is not None
    ref = next((a.value for a in node.args if a.keyword is None or a.keyword.value in {"ref", "model", "model_version"}), None)
    name = _string_start(ref) if ref is not None else None
    return name is not None and _MEDIA_MODEL.search(name.partition(":")[0]) is not None


def _asks_nothing(node: cst.Call) -> bool:
    """``json={"model": …, "messages": []}``: a request to a model's endpoint whose every question field
    is written empty asks the model nothing. It probes the endpoint (an API-key check reading only the
    status): there is no answer to act on, so it is no model call."""
    body = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "json"), None)
    if not isinstance(body, cst.Dict):
        return False
    asked = [
        e.value for e in body.elements
        if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
        and e.key.evaluated_value in _QUESTIONS
    ]
    return bool(asked) and all(isinstance(v, cst.List | cst.Tuple) and not v.elements for v in asked)


_BODIES = frozenset({"json", "data", "params", "content", "body"})


def _sends_body(node: cst.Call, url: cst.BaseExpression) -> bool:
    """A request carries a question besides its address (``json=``, ``data=``, a second argument,
    ``**kwargs``); ``@app.post("/v1/chat/completions")`` declares a route of the code's own server."""
    for arg in node.args:
        if arg.star == "**" or (arg.keyword is not None and arg.keyword.value in _BODIES):
            return True
    return any(arg.keyword is None and not arg.star and arg.value is not url for arg in node.args[1:])


def _last_word_is(class_name: str, wanted: str) -> bool:
    """``BaseLLM`` ends with the word ``llm``; ``Smallm`` does not (the ending starts no CamelCase word)."""
    start = len(class_name) - len(wanted)
    return start > 0 and class_name.lower().endswith(wanted) and class_name[start].isupper()


def _declared_by(class_name: str, method: str) -> str:
    """The class whose wrapper method ``class_name.method`` is: a base class of another module it inherits
    it from (``AsyncInterpreter.chat`` is ``OpenInterpreter.chat``), or the class itself."""
    return apis.INHERITED_WRAPPERS.get().get((class_name, method), class_name)


def _imported_package(call: cst.Call) -> str | None:
    """The package whose modules ``importlib.import_module(f".{kind}", "pkg.sub")`` (or ``(f"pkg.sub.{kind}")``)
    loads one of: ``pkg.sub``; None when it is not written."""
    args = [a.value for a in call.args if a.keyword is None]
    if not args:
        return None
    first = args[0]
    text: str | None = None
    if isinstance(first, cst.FormattedString):
        lead = first.parts[0] if first.parts else None
        text = lead.value if isinstance(lead, cst.FormattedStringText) else ""
    if text is None:
        return None
    if text.startswith("."):
        package = _string_start(args[1]) if len(args) > 1 else None
        return package if text == "." and package else None
    return text[:-1] if text.endswith(".") else None
