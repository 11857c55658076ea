"""What an expression is: an LLM client, a LangChain model, an agent — or unknown.

Resolution follows import aliases, assignments (local, module-level and
``self.x`` set in any method of the class), parameter and return annotations,
what the module's own call sites pass and its own helpers return. It is
deliberately flow-insensitive: a name that is ever bound to a client is
treated as that client, because missing a call costs more than a false hit.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs
import libcst as cst

from escalated.contracts.scan import apis
from escalated.contracts.scan.index import ModuleIndex, Scope, dotted_name, target_key
from escalated.contracts.scan.syntax import literal


@attrs.frozen
class Kind:
    provider: str
    kind: str  # client | module | chat | runnable | agent | model | genai-chat | router | ...: see apis.apis_for
    confidence: str = "high"
    # The expression that built it, so the surface analysis can read tools= etc.
    origin: cst.CSTNode | None = attrs.field(default=None, eq=False)
    base: Kind | None = attrs.field(default=None, eq=False)


@attrs.frozen
class Match:
    provider: str
    api: str
    confidence: str
    receiver: Kind | None


# What crossref exports for a class defined at the top of a project module.
PROJECT_CLASS = Kind("project", "class")

_LLM_WORDS = re.compile(r"(?:^|_)(?:llm|llms|chat_?model|model|chat|lm|chain|agent|agent_executor)(?:$|_)", re.I)


class Resolver:
    def __init__(
        self,
        index: ModuleIndex,
        *,
        externals: Mapping[str, Kind] | None = None,
        wrappers: Mapping[str, Mapping[str, tuple[str, str]]] | None = None,
    ) -> None:
        self.index = index
        self.externals = externals or {}
        # Project functions and classes of other modules that return a model's output:
        # qualified name -> {method ("" for a function) -> (provider, api of the inner call)}.
        self.wrappers = wrappers or {}
        self.bindings: dict[tuple[str, str], Kind] = {}
        self._depth = 0
        self._returns: dict[str, Kind | None] = {}
        # Two passes reach names bound after their first use (a module-level
        # client defined below the functions that use it).
        for _ in range(2):
            self._returns = {}
            for scope, key, value in index.assignments:
                self._record(scope, key, value)
            for (class_name, key), value in index.class_attrs.items():
                kind = self.kind_of(value, index.module_scope)
                if kind is not None:
                    self.bindings.setdefault((class_name, key), kind)
            self._bind_call_sites()
        self._returns = {}

    def _bind_call_sites(self) -> None:
        """Agent(llm) / cls(llm) / run(model): a parameter holds what its call sites pass.

        Only for the module's own functions and classes; a parameter that is
        not a model at one call site may be one at another, hence "medium".
        """
        for call, scope in self.index.calls:
            target = self._callee_function(call, scope)
            if target is None or not isinstance(target.node, cst.FunctionDef):
                continue
            params = [p.name.value for p in (*target.node.params.posonly_params, *target.node.params.params)]
            if params and params[0] in {"self", "cls"}:
                params = params[1:]
            positional = 0
            for arg in call.args:
                if arg.star:
                    break
                name = arg.keyword.value if arg.keyword else (params[positional] if positional < len(params) else None)
                positional += arg.keyword is None
                if name is None or name not in target.params:
                    continue
                kind = self.kind_of(arg.value, scope)
                if kind is not None:
                    self.bindings.setdefault((target.qualname, name), attrs.evolve(kind, confidence=_weaker(kind.confidence, "medium")))

    def _callee_function(self, call: cst.Call, scope: Scope) -> Scope | None:
        func = call.func
        if isinstance(func, cst.Name):
            if func.value == "cls" and scope.class_name:
                return self.index.scopes.get(f"{scope.class_name}.__init__")
            if func.value in self.index.class_nodes:
                return self.index.scopes.get(f"{func.value}.__init__")
            return next((s for s in self.index.functions_by_name.get(func.value, []) if s.class_name is None), None)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"}:
            if scope.class_name:
                return self.index.scopes.get(f"{scope.class_name}.{func.attr.value}")
        return None

    def _record(self, scope: Scope, key: str, value: cst.BaseExpression) -> None:
        kind = self.kind_of(value, scope)
        if kind is None:
            return
        owner = scope.class_name if key.startswith("self.") else scope.qualname
        if owner is None:
            return
        self.bindings.setdefault((owner, key), kind)

    # -- names -----------------------------------------------------------
    def qualified(self, node: cst.BaseExpression) -> str | None:
        return self.index.qualified(node)

    def lookup(self, key: str, scope: Scope) -> Kind | None:
        if key.startswith("self."):
            if scope.class_name is None:
                return None
            return self.bindings.get((scope.class_name, key))
        current: Scope | None = scope
        while current is not None:
            found = self.bindings.get((current.qualname, key))
            if found is not None:
                return found
            param = current.params.get(key)
            if param is not None and param.annotation is not None:
                return self._annotation(param.annotation.annotation)
            if key in current.params:
                return None  # a plain parameter shadows outer names
            current = current.parent
        return None

    def _annotation(self, node: cst.BaseExpression) -> Kind | None:
        if isinstance(node, cst.Subscript):  # Optional[OpenAI], Union[...]
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    found = self._annotation(element.slice.value)
                    if found is not None:
                        return found
            return None
        if isinstance(node, cst.BinaryOperation):  # OpenAI | None
            return self._annotation(node.left) or self._annotation(node.right)
        if isinstance(node, cst.SimpleString):
            try:
                node = cst.parse_expression(literal(node) or "")
            except (cst.ParserSyntaxError, TypeError):
                return None
        qualified = self.qualified(node)
        found = apis.annotation_kind(qualified) if qualified else None
        return Kind(found[0], found[1], origin=node) if found else None

    # -- expressions -----------------------------------------------------
    def kind_of(self, node: cst.BaseExpression, scope: Scope) -> Kind | None:
        if isinstance(node, cst.Annotation):
            return self._annotation(node.annotation)
        if isinstance(node, cst.Await):
            return self.kind_of(node.expression, scope)
        if isinstance(node, cst.Call):
            return self._call_kind(node, scope)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            # prompt | llm | parser: the chain calls the model.
            inner = self.kind_of(node.left, scope) or self.kind_of(node.right, scope)
            if inner is not None and inner.provider == "langchain":
                return Kind("langchain", "runnable", _weaker(inner.confidence, "medium"), origin=node, base=inner)
            return None
        if isinstance(node, cst.IfExp):
            return self.kind_of(node.body, scope) or self.kind_of(node.orelse, scope)
        key = target_key(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
        if key is not None:
            found = self.lookup(key, scope)
            if found is not None:
                return found
        if isinstance(node, cst.Attribute):
            inner = self.kind_of(node.value, scope)
            if inner is not None and inner.provider == "google-genai" and node.attr.value == "aio":
                return inner
        qualified = self.qualified(node)
        clients = apis.module_clients()
        if qualified in clients:
            return Kind(clients[qualified], "module", origin=node)
        if qualified is not None and qualified in self.externals:
            return self.externals[qualified]
        return None

    def _call_kind(self, node: cst.Call, scope: Scope) -> Kind | None:
        qualified = self.qualified(node.func)
        if qualified in apis.MOCKS or (qualified is None and (dotted_name(node.func) or "") in apis.MOCKS):
            return Kind("mock", "mock", origin=node)  # MagicMock(): a test double, not a client
        fetched = self._fetched_callable(node, qualified, scope)
        if fetched is not None:
            return fetched
        if isinstance(node.func, cst.Name) and node.func.value in self.index.class_nodes:
            sdk_base = self._sdk_base(node.func.value, scope)
            if sdk_base is not None:
                return attrs.evolve(sdk_base, origin=node)  # class Client(OpenAI): still the client
            return Kind("project", f"object:{node.func.value}", origin=node)
        if qualified is not None and qualified in self.wrappers and "" not in self.wrappers[qualified]:
            provider = next(iter(sorted(self.wrappers[qualified].values())))[0]
            return Kind(provider, f"wrapper:{qualified}", "medium", origin=node)
        if qualified is not None and f"{qualified}()" in self.externals:
            return self.externals[f"{qualified}()"]  # a helper in another module returns a client
        if qualified is not None:
            found = apis.constructor(qualified)
            if found is not None:
                return Kind(self._provider_of(node, scope, default=found[0], kind=found[1]), found[1], origin=node)
            if self.externals.get(qualified) == PROJECT_CLASS:
                return Kind("project", f"object:{qualified}", origin=node)  # a class of another project module
            if "langchain" in qualified:
                # RunnableWithMessageHistory(agent, ...), ConversationChain(llm=llm): a
                # LangChain wrapper around a model still calls the model.
                for arg in node.args:
                    inner = self.kind_of(arg.value, scope)
                    if inner is not None and inner.provider == "langchain":
                        return Kind("langchain", "runnable", _weaker(inner.confidence, "medium"), origin=node, base=inner)
        if isinstance(node.func, cst.Name) and self._depth < 3:
            # client = get_client(): read what the module's own helper returns.
            helper = next((s for s in self.index.functions_by_name.get(node.func.value, []) if s.class_name is None), None)
            if helper is not None:
                return self.returned_kind(helper)
        if isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            inner = self.kind_of(node.func.value, scope)
            if inner is None and method in {"bind_tools", "with_structured_output"}:
                # Only LangChain models have these: whatever the receiver is, it is a model.
                return Kind("langchain", "runnable", "low", origin=node)
            if inner is None:
                return None
            if inner.kind == "client" and method in apis.CLIENT_COPIES:
                return inner
            if inner.provider == "langchain" and method in apis.RUNNABLE_DERIVERS:
                return Kind("langchain", "runnable", inner.confidence, origin=node, base=inner)
            if inner.provider == "google-genai" and method in {"start_chat"}:
                return Kind("google-genai", "genai-chat", inner.confidence, origin=node, base=inner)
            if inner.provider == "google-genai" and dotted_tail(node.func) in {"chats.create", "aio.chats.create"}:
                return Kind("google-genai", "genai-chat", inner.confidence, origin=node, base=inner)
        return None

    def _fetched_callable(self, node: cst.Call, qualified: str | None, scope: Scope) -> Kind | None:
        """partial(litellm.completion, ...) / getattr(client.responses, "create"): a model call kept for later."""
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        target: cst.BaseExpression | None = None
        if qualified in apis.PARTIALS and positional:
            target = positional[0]
        elif isinstance(node.func, cst.Name) and node.func.value == "getattr" and len(positional) >= 2:
            name = literal(positional[1])
            if name is not None and name.isidentifier():
                target = cst.Attribute(value=positional[0], attr=cst.Name(name))
        if target is None or not isinstance(target, cst.Name | cst.Attribute) or self._depth > 3:
            return None
        self._depth += 1
        try:
            found = self._match_callee(target, node, scope)
        finally:
            self._depth -= 1
        if found is None:
            return None
        return Kind(found.provider, f"callable:{found.api}", found.confidence, origin=node, base=found.receiver)

    def _sdk_base(self, class_name: str, scope: Scope) -> Kind | None:
        for base in self.index.class_bases.get(class_name, ()):
            qualified = self.qualified(base.value)
            found = apis.constructor(qualified) if qualified else None
            if found is not None:
                return Kind(found[0], found[1], "medium")
        return None

    def _provider_of(self, node: cst.Call, scope: Scope, *, default: str, kind: str) -> str:
        """Agents name their model: Agent("anthropic:claude-…"), ReActAgent(llm=Anthropic())."""
        if kind not in {"pydantic-agent", "llamaindex-agent", "smol-code-agent", "smol-agent", "crew-agent"}:
            return default
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value not in {"model", "llm"}:
                continue
            value = arg.value
            if isinstance(value, cst.SimpleString):
                prefix = (literal(value) or "").partition(":")[0]
                return apis.MODEL_PREFIXES.get(prefix, default)
            inner = self.kind_of(value, scope) if isinstance(value, cst.Call | cst.Name | cst.Attribute) else None
            if inner is not None and inner is not node:
                return inner.provider
        return default

    def returned_kind(self, helper: Scope) -> Kind | None:
        """What a module-level function returns, when that is a model object."""
        if helper.qualname in self._returns:
            return self._returns[helper.qualname]
        self._returns[helper.qualname] = None  # recursion stops here
        found = self._compute_returned_kind(helper)
        self._returns[helper.qualname] = found
        return found

    def _compute_returned_kind(self, helper: Scope) -> Kind | None:
        returns = getattr(helper.node, "returns", None)
        if returns is not None:
            annotated = self._annotation(returns.annotation)
            if annotated is not None:
                return annotated
        self._depth += 1
        try:
            for node in self.index.subtree(helper.node):
                if isinstance(node, cst.Return) and node.value is not None:
                    found = self.kind_of(node.value, helper)
                    if found is not None:
                        return found
            return None
        finally:
            self._depth -= 1

    # -- calls -----------------------------------------------------------
    def match_call(self, node: cst.Call, scope: Scope) -> Match | None:
        found = self._match_callee(node.func, node, scope)
        if found is not None:
            return found
        # asyncio.to_thread(client.models.generate_content, ...), asyncio.to_thread(completion, ...) and
        # loop.run_in_executor(None, fn, ...) run the model call: the deferring call is the one to guard.
        deferrer = (dotted_name(node.func) or "").rpartition(".")[2]
        position = {"to_thread": 0, "run_in_executor": 1}.get(deferrer)
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if position is None or len(positional) <= position or not isinstance(positional[position], cst.Attribute | cst.Name):
            return None
        inner = self._match_callee(positional[position], node, scope)
        return attrs.evolve(inner, confidence=_weaker(inner.confidence, "medium")) if inner is not None else None

    def _match_callee(self, callee: cst.BaseExpression, node: cst.Call, scope: Scope) -> Match | None:
        qualified = self.qualified(callee)
        if qualified is not None:
            found = self._qualified_match(qualified)
            if found is not None:
                return found
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
            if kind is not None and kind.kind.startswith("wrapper:"):
                # self.llm.completion(...) with self.llm = LLM() from another module of the project.
                owner = kind.kind.partition(":")[2]
                method = ".".join(chain)
                if method not in self.wrappers.get(owner, {}):
                    return None
                return Match(kind.provider, f"{owner.rpartition('.')[2]}.{method}", "medium", kind)
            if kind is not None:
                api = ".".join(part for part in chain if part not in apis.TRANSPARENT_SEGMENTS)
                if api in apis.apis_for(kind.provider, kind.kind):
                    return Match(kind.provider, api, kind.confidence, kind)
                return None  # a known object, but not a model call (e.g. llm.bind_tools)
        if isinstance(callee, cst.Name | cst.Attribute):
            kind = self.kind_of(callee, scope)
            if kind is not None and kind.kind.startswith("callable:"):
                return Match(kind.provider, kind.kind.partition(":")[2], kind.confidence, kind)
            # llm("prompt") on a model built here (old LangChain); a typed
            # parameter may be any callable, so annotations do not count.
            if kind is not None and kind.kind == "chat" and isinstance(kind.origin, cst.Call):
                return Match("langchain", "__call__", "medium", kind)
        if self._stands_in(callee, scope):
            return None
        return self._shape_match(callee, node)

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
        module, _, name = qualified.rpartition(".")
        if module == "litellm" and name in apis.LITELLM_FUNCTIONS:
            return Match("litellm", name, "high", None)
        if module == "agents.Runner" and name in apis.AGENTS_RUNNER:
            return Match("openai", f"agents.Runner.{name}", "high", None)
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
        if isinstance(callee, cst.Attribute) and callee.attr.value in {"invoke", "ainvoke", "stream", "astream"}:
            receiver = _last_identifier(callee.value)
            if receiver is not None and _LLM_WORDS.search(receiver):
                return Match("langchain", callee.attr.value, "low", None)
        return None


def dotted_tail(node: cst.BaseExpression) -> str | None:
    """The attribute chain after the receiver: ``self.client.chat.create`` -> ``client.chat.create``."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    return ".".join(reversed(parts)) if parts else None


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


def _weaker(a: str, b: str) -> str:
    order = ("low", "medium", "high")
    return order[min(order.index(a), order.index(b))]
