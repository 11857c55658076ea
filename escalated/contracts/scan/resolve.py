"""What an expression is: an LLM client, a LangChain model, an agent — or unknown.

Resolution follows import aliases, assignments (local, module-level and
``self.x`` set in any method of the class), parameter and return annotations,
what the module's own call sites pass and its own helpers return. It is
deliberately flow-insensitive: a name that is ever bound to a client is
treated as that client, because missing a call costs more than a false hit.
Which model API a call is, given what its receiver is: ``call_match.py``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import attrs
import libcst as cst

from escalated.contracts.scan import apis
from escalated.contracts.scan.call_match import CallMatcher
from escalated.contracts.scan.crews import crew_built
from escalated.contracts.scan.index import ModuleIndex, Scope, dotted_name, target_key
from escalated.contracts.scan.kinds import PROJECT_CLASS, PROJECT_INTERFACE, Kind, Match, weaker
from escalated.contracts.scan.syntax import dotted_tail, literal


# Agents that name their model (model= / llm=): the provider is the model's.
_MODEL_NAMED = frozenset({
    "pydantic-agent", "llamaindex-agent", "smol-code-agent", "smol-agent", "crew-agent", "strands-agent", "agno-agent", "agno-team",
    "maf-agent",
})  # fmt: skip
# Where an agent names its model: model= / llm=, and the Microsoft Agent Framework's client= (chat_client= before 1.0).
_MODEL_KEYWORDS = frozenset({"model", "llm", "client", "chat_client"})


class Resolver(CallMatcher):
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
        # A project helper function's node -> the post it makes of what it is given (see _helper_post).
        self._helper_posts: dict[int, tuple[str | None, str | None, str | None] | None] = {}
        # (scope, name) -> where each call bound to it starts, in source order (see _rebound).
        self._rebinds: dict[tuple[str, str], list[tuple[int, cst.Call]]] | None = None
        # (owner, name) -> every (scope, value) bound to it (see other_kinds), once asked.
        self._assigned: dict[tuple[str, str], list[tuple[Scope, cst.BaseExpression]]] | None = None
        # Two passes reach names bound after their first use (a module-level
        # client defined below the functions that use it).
        for _ in range(2):
            self._returns = {}
            for scope, key, value in index.assignments:
                self._record(scope, key, value)
            for scope, key, value, path in index.unpacked:
                self._record_unpacked(scope, key, value, path)
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
                if kind is None:
                    continue
                # agent: AssistantAgent, and the call site passes the AssistantAgent(tools=...) it built.
                self._bind(target.qualname, name, attrs.evolve(kind, confidence=weaker(kind.confidence, "medium")))

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
        if kind is None and isinstance(value, cst.Attribute) and self._depth <= 3:
            # completion = client.chat.completions.create (or litellm.completion): the model call
            # kept under a name, called later as completion(...).
            self._depth += 1
            try:
                found = self._match_callee(value, cst.Call(func=value), scope)
            finally:
                self._depth -= 1
            if found is not None and (found.receiver is not None or self.qualified(value) is not None):
                kind = Kind(found.provider, f"callable:{found.api}", found.confidence, origin=value, base=found.receiver)
        if kind is None:
            return
        owner = scope.class_name if key.startswith("self.") else scope.qualname
        if owner is None:
            return
        self._bind(owner, key, kind)

    def _bind(self, owner: str, key: str, kind: Kind) -> None:
        """The first binding found counts, except that an object known by its type alone (an annotation)
        gives way to the same kind of object with what built it, found in a later pass."""
        known = self.bindings.setdefault((owner, key), kind)
        if known is not kind and not isinstance(known.origin, cst.Call) and isinstance(kind.origin, cst.Call) and kind.kind == known.kind:
            self.bindings[(owner, key)] = attrs.evolve(kind, confidence=known.confidence)

    def _record_unpacked(self, scope: Scope, key: str, value: cst.BaseExpression, path: tuple[int, ...]) -> None:
        """``(agent, wallet), config = build(config)``: ``agent`` is what ``build``, a function of the
        module, puts at that place of the tuple it returns (``return (create_react_agent(...), w), c``)."""
        if isinstance(value, cst.Await):
            value = value.expression
        found: Kind | None = None
        if isinstance(value, cst.Tuple | cst.List):
            element = _element(value, path)
            found = self.kind_of(element, scope) if element is not None else None
        elif isinstance(value, cst.Call) and self._depth <= 3:
            helper = self._callee_function(value, scope)
            if helper is not None and isinstance(helper.node, cst.FunctionDef):
                self._depth += 1
                try:
                    for node in self.index.subtree(helper.node):
                        if isinstance(node, cst.Return) and node.value is not None:
                            element = _element(node.value, path)
                            found = self.kind_of(element, helper) if element is not None else None
                            if found is not None:
                                break
                finally:
                    self._depth -= 1
        owner = scope.class_name if key.startswith("self.") else scope.qualname
        if found is not None and owner is not None:
            self._bind(owner, key, found)

    def bound_wrappers(self, node: cst.BaseExpression, scope: Scope) -> set[str]:
        """The project wrapper classes the name is bound to an instance of, in any of its bindings in the
        scope that binds it (or, for ``self.x``, in the class): ``self.engine = LMMEngineOpenAI(...)`` in one
        branch and ``LMMEngineAnthropic(...)`` in another."""
        out: set[str] = set()
        if self._depth > 3:
            return out
        self._depth += 1
        try:
            for where, value in self._assignments_of(node, scope)[:16]:
                if isinstance(value, cst.Call):
                    kind = self.kind_of(value, where)
                    if kind is not None and kind.kind.startswith("wrapper:"):
                        out.add(kind.kind.partition(":")[2])
                    qualified = self.qualified(value.func)
                    handed = self.externals.get(f"{qualified}()") if qualified is not None else None
                    if handed is not None and handed.kind.startswith("instances:"):
                        # model = make_model(backend): whichever class the factory built.
                        built = self._classes_handed(handed, qualified or "", value)
                        out.update(c for c in built if self.wrappers.get(c) and "" not in self.wrappers[c])
        finally:
            self._depth -= 1
        return out

    def _assignments_of(self, node: cst.BaseExpression, scope: Scope) -> list[tuple[Scope, cst.BaseExpression]]:
        """The name's bindings in the scope that binds it (for ``self.x``, in the class)."""
        key = target_key(node) if isinstance(node, cst.Name | cst.Attribute) else None
        if key is None:
            return []
        if self._assigned is None:
            self._assigned = {}
            for where, name, value in self.index.assignments:
                owner = where.class_name if name.startswith("self.") else where.qualname
                if owner is not None:
                    self._assigned.setdefault((owner, name), []).append((where, value))
        if key.startswith("self."):
            return self._assigned.get((scope.class_name, key), []) if scope.class_name else []
        current: Scope | None = scope
        while current is not None:
            found = self._assigned.get((current.qualname, key), [])
            if found or key in current.params:
                return found
            current = current.parent
        return []

    def other_kinds(self, node: cst.BaseExpression, scope: Scope, known: Kind) -> list[Kind]:
        """What else the name may hold: its other bindings in the scope that binds it (or, for
        ``self.x``, in the class), each an SDK object of another kind than ``known``."""
        if self._depth > 3:
            return []
        found = self._assignments_of(node, scope)
        out: list[Kind] = []
        self._depth += 1
        try:
            for where, value in found[:8]:
                if value is known.origin or not isinstance(value, cst.Call):
                    continue
                kind = self.kind_of(value, where)
                if kind is not None and kind.provider not in {known.provider, "project", "mock"} and kind not in out:
                    out.append(kind)
        finally:
            self._depth -= 1
        return out

    # -- names -----------------------------------------------------------
    def qualified(self, node: cst.BaseExpression) -> str | None:
        return self.index.qualified(node)

    def lookup(self, key: str, scope: Scope) -> Kind | None:
        if key.startswith("self."):
            if scope.class_name is None:
                return None
            return self._inherited(scope.class_name, key, depth=0)
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
            if (dotted_name(node.value) or "").rpartition(".")[2] in {"Type", "type"}:
                return None  # coder: Type[LMM]: the class itself; calling it builds one, it asks nothing
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
        if isinstance(node, cst.Name) and node.value in self.index.class_nodes:
            sdk_base = self._sdk_base(node.value, None)
            if sdk_base is not None and sdk_base.kind in apis.RUNNER_KINDS:
                # society: OwlRolePlaying, a class of the module deriving from CAMEL's RolePlaying: still a society.
                return attrs.evolve(sdk_base, origin=node)
        qualified = self.qualified(node)
        if qualified is not None and qualified in self.wrappers and "" not in self.wrappers[qualified]:
            # caller: AICaller, a class of another module whose methods return a model's output.
            provider = next(iter(sorted(self.wrappers[qualified].values())))[0]
            return Kind(provider, f"wrapper:{qualified}", "medium", origin=node)
        if qualified is not None and self.externals.get(qualified) == PROJECT_INTERFACE:
            # model: Model (a Protocol or an ABC of the project): whichever class is given at run time.
            return Kind("project", f"interface:{qualified}", "medium", origin=node)
        if qualified is not None and self.externals.get(qualified) == PROJECT_CLASS:
            return Kind("project", f"object:{qualified}", origin=node)  # runner: Runner, a project class
        built = self.externals.get(f"{qualified}()") if qualified is not None else None
        if built is not None and qualified is not None and built.provider != "project" and qualified not in self.externals:
            # model: WrappedChatOpenAI, a class of another module deriving from the SDK's ChatOpenAI.
            return attrs.evolve(built, origin=node)
        annotated = apis.annotation_kind(qualified) if qualified else None
        return Kind(annotated[0], annotated[1], origin=node) if annotated else None

    # -- expressions -----------------------------------------------------
    def kind_of(self, node: cst.BaseExpression, scope: Scope) -> Kind | None:
        # libcst's node classes are leaves: type() spares ABCMeta's isinstance (asked of every expression resolved).
        if isinstance(node, cst.Annotation):  # not an expression's class: mypy would take type() for never
            return self._annotation(node.annotation)
        if type(node) is cst.Await:
            return self.kind_of(node.expression, scope)
        if type(node) is cst.Call:
            return self._call_kind(node, scope)
        if type(node) is cst.BinaryOperation and isinstance(node.operator, cst.BitOr):
            # prompt | llm | parser: the chain calls the model.
            inner = self.kind_of(node.left, scope) or self.kind_of(node.right, scope)
            if inner is not None and inner.provider == "langchain":
                return Kind("langchain", "runnable", weaker(inner.confidence, "medium"), origin=node, base=inner)
            return None
        if type(node) is cst.IfExp:
            return self.kind_of(node.body, scope) or self.kind_of(node.orelse, scope)
        if type(node) is cst.BooleanOperation and isinstance(node.operator, cst.Or):
            # self.llm = llm or get_default_context().llm, ocr_llm or OpenAIMultiModal(...): the client given,
            # else the default built on the spot; which one is known only when both are.
            given, default = self.kind_of(node.left, scope), self.kind_of(node.right, scope)
            if given is not None and default is not None:
                return given
            either = given or default
            return attrs.evolve(either, confidence=weaker(either.confidence, "medium")) if either is not None else None
        key = target_key(node) if type(node) is cst.Name or type(node) is cst.Attribute else None
        if type(node) is cst.Name:
            rebound = self._rebound(node, scope)
            if rebound is not None:
                return rebound
        if key is not None:
            found = self.lookup(key, scope)
            if found is not None:
                return found
        if key is not None and key.startswith("self.") and key.count(".") == 1 and scope.class_name and self._depth < 3:
            lazy = self._property_kind(scope.class_name, key[5:])
            if lazy is not None:
                return attrs.evolve(lazy, confidence=weaker(lazy.confidence, "medium"), origin=node)
        if type(node) is cst.Attribute:
            inner = self.kind_of(node.value, scope)
            if inner is not None and inner.provider == "google-genai" and node.attr.value == "aio":
                return inner
            resource = f"{inner.resource}.{node.attr.value}".lstrip(".") if inner is not None else ""
            if inner is not None and inner.kind in {"client", "module"} and any(
                api.startswith(f"{resource}.") for api in apis.apis_for(inner.provider, inner.kind)
            ):
                # OpenAI(...).chat.completions, Anthropic(...).messages: a resource of the client, whose
                # methods (create) are the client's calls under that path.
                return attrs.evolve(inner, resource=resource)
            if inner is not None and inner.kind.startswith("object:"):
                # self.agents = Agents() (a class of another module): self.agents.writer is
                # what Agents binds to self.writer; ctx.conversation, what its class annotates it as.
                owned = self.externals.get(f"{inner.kind.partition(':')[2]}.{node.attr.value}")
                if owned is not None and owned.kind.startswith(_HELD):
                    return self._held(owned, node)
                if owned is not None and owned.provider != "project":
                    return owned
        qualified = self.qualified(node)
        if isinstance(node, cst.Name) and node.value in self.index.class_nodes:
            # self.client = MyGeneration (a class of the module deriving from dashscope's Generation, not
            # an instance): its classmethods ask the model (self.client.call(...)).
            base = self._sdk_base(node.value, scope)
            if base is not None and base.kind in apis.CLASS_CALLED_KINDS:
                return attrs.evolve(base, origin=node)
        built = apis.constructor(qualified) if qualified is not None else None
        if built is not None and built[1] in apis.CLASS_CALLED_KINDS:
            return Kind(built[0], built[1], origin=node)  # Generation.call(...): the class itself asks
        clients = apis.module_clients()
        if qualified is not None and qualified in clients:
            return Kind(clients[qualified], "module", origin=node)
        if qualified is not None and qualified in self.externals:
            found = self.externals[qualified]
            if found.kind.startswith(_HELD):
                # conversation: Conversation (another module's annotated name): an object of that class.
                return self._held(found, node)
            name = qualified.rpartition(".")[2]
            if found.provider == "project" and name in clients:
                # from aider.llm import litellm: a lazy proxy named like the SDK is used like the SDK.
                return Kind(clients[name], "module", "medium", origin=node)
            return found
        return None

    def _rebound(self, name: cst.Name, scope: Scope) -> Kind | None:
        """``agent = ToolCallingAgent(...)``, ``agent.run(...)``, then ``agent = CodeAgent(...)``,
        ``agent.run(...)``: a name bound more than once in its scope is, where it is used there,
        what the last binding before that use made it (otherwise the first binding found counts)."""
        if self._rebinds is None:
            self._rebinds = {}
            for where, key, value in self.index.assignments:
                if "." not in key and isinstance(value, cst.Call):
                    try:
                        self._rebinds.setdefault((where.qualname, key), []).append((self.index.order_of(value), value))
                    except KeyError:
                        continue
        bound = self._rebinds.get((scope.qualname, name.value))
        if bound is None or len(bound) < 2 or self._depth > 3:
            return None
        try:
            at = self.index.order_of(name)
        except KeyError:
            return None
        before = [value for position, value in bound if position < at]
        if not before or not self._dominates(before[-1], name):
            return None
        self._depth += 1
        try:
            return self.kind_of(before[-1], scope)
        finally:
            self._depth -= 1

    def _dominates(self, value: cst.Call, use: cst.Name) -> bool:
        """The statement binding ``value`` sits in a block the use is inside (after it): no branch
        between them chooses another binding (``if …: agent = A() elif …: agent = B()`` does)."""
        parents = self.index.parents
        statement = parents.get(id(parents.get(id(value))))  # value -> Assign -> its statement line
        block = parents.get(id(statement)) if statement is not None else None
        if block is None:
            return False
        node = parents.get(id(use))
        while node is not None:
            if node is block:
                return True
            node = parents.get(id(node))
        return False

    def _call_kind(self, node: cst.Call, scope: Scope) -> Kind | None:
        # Agent[Ctx](...): the documented generic form (Agents SDK, Pydantic AI) builds the same agent.
        qualified = self.qualified(node.func.value if isinstance(node.func, cst.Subscript) else node.func)
        if qualified in apis.MOCKS or (qualified is None and (dotted_name(node.func) or "") in apis.MOCKS):
            return Kind("mock", "mock", origin=node)  # MagicMock(): a test double, not a client
        fetched = self._fetched_callable(node, qualified, scope)
        if fetched is not None:
            return fetched
        if isinstance(node.func, cst.Name) and node.func.value == "super" and not node.args and scope.class_name:
            # super().ainvoke(input) in DeepSeekR1ChatOllama(ChatOllama).ainvoke: the SDK class's own request.
            base = self._sdk_base(scope.class_name.split(".")[0], scope)
            if base is not None:
                return attrs.evolve(base, confidence=weaker(base.confidence, "medium"), origin=node)
        if isinstance(node.func, cst.Name) and node.func.value in self.index.class_nodes:
            sdk_base = self._sdk_base(node.func.value, scope)
            if sdk_base is not None:
                return attrs.evolve(sdk_base, origin=node)  # class Client(OpenAI): still the client
            return Kind("project", f"object:{node.func.value}", origin=node)
        if (
            qualified is not None and qualified in self.wrappers and "" not in self.wrappers[qualified]
            and "" not in self.wrappers.get(f"{qualified}()", {})
        ):  # fmt: skip
            # An instance of another module's class with wrapper methods; not a function of it handing out the
            # wrapper it defines (create_trader(llm) returning its nested trader_node: see _handed_out), whose
            # nested functions the table keeps under the function's name as well.
            provider = next(iter(sorted(self.wrappers[qualified].values())))[0]
            return Kind(provider, f"wrapper:{qualified}", "medium", origin=node)
        if qualified is not None and f"{qualified}()" in self.externals:
            handed = self.externals[f"{qualified}()"]  # a helper in another module returns a client
            if handed.kind.startswith("class:"):
                return self._class_of(handed.kind.partition(":")[2], qualified, node)
            if handed.kind.startswith("instances:"):
                # model = make_model(backend) (a factory of another module returning one of its classes'
                # instances): an instance of the first such class with wrapper methods (bound_wrappers has them all).
                return self._built_instance(self._classes_handed(handed, qualified, node), node)
            if handed.kind.startswith("returns:"):
                # BaseService.get_service(name) -> "BaseService": an instance of that interface, whichever.
                interface = self._class_of(handed.kind.partition(":")[2], qualified, node).kind.partition(":")[2]
                return Kind("project", f"interface:{interface}", "medium", origin=node)
            if handed.kind.startswith("annotated:"):
                # APIBackend() (a factory of another module, "-> BaseAPIBackend"): what the annotation names.
                return self._held(handed, node)
            return handed
        if isinstance(node.func, cst.Name) and self._depth < 3:
            # llm_client = client_class(config) with client_class = BaseLLMClient.for_provider(p): an instance.
            held = self.lookup(node.func.value, scope)
            if held is not None and held.kind.startswith("class:"):
                return self._instance_of(held.kind.partition(":")[2], node)
        if qualified in apis.SMOL_UIS:
            # GradioUI(agent): serving the agent runs it (and its tools) for each visitor.
            agent = next((a.value for a in node.args if a.keyword is None or a.keyword.value == "agent"), None)
            inner = self.kind_of(agent, scope) if agent is not None else None
            return Kind(inner.provider if inner else "litellm", "smol-ui", inner.confidence if inner else "medium", origin=node, base=inner)
        bedrock = self._boto_client(node, qualified)
        if bedrock is not None:
            return bedrock
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
                        return Kind("langchain", "runnable", weaker(inner.confidence, "medium"), origin=node, base=inner)
        if isinstance(node.func, cst.Name) and self._depth < 3:
            # client = get_client(): read what the module's own helper returns.
            helper = next((s for s in self.index.functions_by_name.get(node.func.value, []) if s.class_name is None), None)
            if helper is not None:
                return self.returned_kind(helper)
        held = self.externals.get(f"{qualified.removesuffix('.get')}") if qualified is not None and qualified.endswith(".get") else None
        if held is not None and held.kind.startswith("contextvar:") and not node.args:
            # ctx = SESSION_CONTEXT.get() with SESSION_CONTEXT: ContextVar[SessionContext] in another module.
            return self._held(attrs.evolve(held, kind="annotated:" + held.kind.partition(":")[2]), node)
        owner = _own_class(node.func, scope, self.index.class_nodes)
        if owner is not None and isinstance(node.func, cst.Attribute):
            # model = self.select_model() with "def select_model(self) -> Model": what the annotation names;
            # executor = ExecutorFactory.get_executor(kind) (a classmethod of a class of this module,
            # "-> ToolExecutor"): likewise, an abstract class's whichever subclass the table picks.
            own = self.index.scopes.get(f"{owner}.{node.func.attr.value}")
            returns = getattr(own.node, "returns", None) if own is not None else None
            annotated = self._annotation(returns.annotation) if returns is not None else None
            if own is not None and isinstance(own.node, cst.FunctionDef) and self._depth < 3:
                # self.agent_executor = self._agent_executor() with the method returning
                # AgentExecutor(agent=..., tools=self.tools): the executor it builds, tools and all; with
                # "-> AgentExecutor", the same kind of object built there. Only an agent, or what the
                # annotation names: any model object a method returns was tried, and SalesGPT's chain
                # methods then read as wrappers (three false reports).
                built = self.returned_kind(own)
                if (
                    built is not None and isinstance(built.origin, cst.Call)
                    and (built.kind == "agent" or (annotated is not None and built.kind == annotated.kind))
                ):  # fmt: skip
                    return built
            if annotated is not None:
                return annotated
            if own is None and self._depth < 3:
                # self.client = self.create_client() in a base class whose subclasses here define it
                # (OpenAI(...).chat.completions in one, Anthropic(...).messages in another): what the first returns.
                overriding = self._overriding(owner, node.func.attr.value)
                if overriding is not None:
                    return overriding
        asks = self._handed_out(node, qualified, scope)
        if asks is not None:
            return asks
        if isinstance(node.func, cst.Attribute):
            method = node.func.attr.value
            inner = self.kind_of(node.func.value, scope)
            if inner is None and method in {"bind_tools", "with_structured_output"}:
                # Only LangChain models have these: whatever the receiver is, it is a model.
                return Kind("langchain", "runnable", "low", origin=node)
            if inner is None and method in apis.LLAMAINDEX_ENGINE_BUILDERS and self.index.imports_from("llama_index"):
                # index.as_query_engine(llm=llm), whatever the index: the engine's answer is the given model's
                # (LlamaIndex's default model, OpenAI's, without one).
                given = next((a.value for a in node.args if a.keyword is not None and a.keyword.value == "llm"), None)
                model = self.kind_of(given, scope) if given is not None else None
                return Kind(model.provider if model else "openai", "llamaindex-engine", "medium", origin=node)
            if inner is None:
                return None
            if inner.kind.startswith("object:"):
                factory = self.externals.get(f"{inner.kind.partition(':')[2]}.{method}()")
                if factory is not None and factory.kind.startswith("annotated:"):
                    # ai = config.create_issue_investigator() with "-> 'IssueInvestigator'" on Config, a class of
                    # another module: an instance of the class the annotation names.
                    return self._held(factory, node)
                return self._crew_of(inner.kind.partition(":")[2], method, node)
            gives = self.wrappers.get(inner.kind.partition(":")[2], {}).get(f"{method}()") if inner.kind.startswith("wrapper:") else None
            if gives is not None:
                # llm = agent.get_llm() with agent an instance of another module's class handing out a wrapper.
                owner = inner.kind.partition(":")[2].rpartition(".")[2]
                return Kind(gives[0], f"callable:{owner}.{method}()", "medium", origin=node)
            if inner.kind == "client" and method in apis.CLIENT_COPIES:
                return inner
            maf = _maf_derived(inner, method, node)
            if maf is not None:
                return maf
            if inner.provider == "langchain" and method in apis.RUNNABLE_DERIVERS:
                return Kind("langchain", "runnable", inner.confidence, origin=node, base=inner)
            if inner.provider == "google-genai" and method in {"start_chat"}:
                return Kind("google-genai", "genai-chat", inner.confidence, origin=node, base=inner)
            if inner.provider == "google-genai" and dotted_tail(node.func) in {"chats.create", "aio.chats.create"}:
                return Kind("google-genai", "genai-chat", inner.confidence, origin=node, base=inner)
        return None

    def _handed_out(self, node: cst.Call, qualified: str | None, scope: Scope) -> Kind | None:
        """``self.get_llm(name)`` (a base class's method in another module) or ``make_llm()``: a function
        handing out a wrapper it defines (``get_llm()`` among the wrappers, see module._handed_out). What it
        returns asks the model when called. (On another object, ``agent.get_llm()``: see _call_kind.)"""
        found: Match | None = None
        func = node.func
        if qualified is not None:
            wrapped = self.wrappers.get(f"{qualified}()", {}).get("")
            if wrapped is not None:
                found = Match(wrapped[0], f"{qualified.rpartition('.')[2]}()", "medium", None)
            owner, _, method = qualified.rpartition(".")
            # LLMAPIHandlerFactory.get_llm_api_handler(key): a static or class method of another module's
            # class, called on the class, handing out a handler it defines.
            wrapped = self.wrappers.get(owner, {}).get(f"{method}()") if found is None and owner else None
            if wrapped is not None:
                found = Match(wrapped[0], f"{owner.rpartition('.')[2]}.{method}()", "medium", None)
        if found is None and isinstance(func, cst.Attribute) and _is_self(func.value):
            found = self._inherited_wrapper(func, scope, method=f"{func.attr.value}()")
        if found is None:
            return None
        return Kind(found.provider, f"callable:{found.api}", "medium", origin=node)

    def _held(self, annotated: Kind, node: cst.CSTNode) -> Kind | None:
        """An object of the project class another module annotates a name or a field with (``annotated:``):
        whichever subclass when it is an interface; nothing known when the class is no project class."""
        held = annotated.kind.partition(":")[2]
        if not annotated.kind.startswith("annotated:"):
            return None
        if held in self.wrappers and "" not in self.wrappers[held]:
            provider = next(iter(sorted(self.wrappers[held].values())))[0]  # as a parameter annotated so is
            return Kind(provider, f"wrapper:{held}", "medium", origin=node)
        if self.externals.get(held) == PROJECT_CLASS:
            return Kind("project", f"object:{held}", "medium", origin=node)
        if self.externals.get(held) == PROJECT_INTERFACE:
            return Kind("project", f"interface:{held}", "medium", origin=node)
        return None

    def _class_of(self, name: str, helper: str, node: cst.Call) -> Kind:
        """The class ``name`` that ``helper`` (a function or method of another module, ``-> type[name]``)
        hands out, named as the other modules' tables name it: ``pkg.llm.BaseLLMClient``."""
        parts = helper.split(".")
        for end in range(len(parts) - 1, 0, -1):
            candidate = ".".join([*parts[:end], name])
            if candidate in self.wrappers or candidate in self.externals:
                return Kind("project", f"class:{candidate}", "medium", origin=node)
        return Kind("project", f"class:{name}", "medium", origin=node)

    def _classes_handed(self, handed: Kind, helper: str, node: cst.Call) -> list[str]:
        """The classes an ``instances:`` factory of another module builds, named as the tables name them."""
        names = handed.kind.partition(":")[2].split(",")
        return [self._class_of(name, helper, node).kind.partition(":")[2] for name in names if name]

    def _built_instance(self, classes: list[str], node: cst.Call) -> Kind | None:
        with_wrappers = [c for c in classes if self.wrappers.get(c) and "" not in self.wrappers[c]]
        if with_wrappers:
            return self._instance_of(with_wrappers[0], node)
        return Kind("project", f"object:{classes[0]}", "medium", origin=node) if classes else None

    def _instance_of(self, qualified: str, node: cst.Call) -> Kind:
        """An instance of the class a name holds: another module's class with wrapper methods (its
        ``__call__`` too), or a project object."""
        methods = self.wrappers.get(qualified, {})
        if methods and "" not in methods:
            provider = next(iter(sorted(methods.values())))[0]
            return Kind(provider, f"wrapper:{qualified}", "medium", origin=node)
        return Kind("project", f"object:{qualified}", "medium", origin=node)

    def _boto_client(self, node: cst.Call, qualified: str | None) -> Kind | None:
        """boto3.client("bedrock-runtime") or session.client(service_name="bedrock-runtime") in a boto3 module."""
        if qualified != "boto3.client" and not (
            isinstance(node.func, cst.Attribute) and node.func.attr.value == "client"
            and self.index.imports_from("boto3")
        ):
            return None
        named = [a.value for a in node.args if a.keyword is None or a.keyword.value == "service_name"][:1]
        service = literal(named[0]) if named else None
        found = apis.BOTO_SERVICES.get(service or "")
        return Kind(found[0], found[1], origin=node) if found is not None else None

    def _crew_of(self, owner: str, method: str, node: cst.Call) -> Kind | None:
        """``LatestAiDevelopmentCrew().crew()``: the Crew a @CrewBase class's @crew method builds."""
        built = crew_built(self.index, owner, method)
        if built is not None:
            return Kind("litellm", "crew", origin=built)
        key = f"{owner}.{method}()"
        exported = self.externals.get(key)
        if exported is not None and exported.kind == "crew":
            return attrs.evolve(exported, origin=None, tools_key=key)
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

    def _inherited(self, class_name: str, key: str, *, depth: int) -> Kind | None:
        """``self.user_agent`` in a class of the module, or as a base class of the module bound it
        (``class GAIASociety(Society)``, ``Society._init_agents`` setting ``self.user_agent = ChatAgent(...)``)."""
        found = self.bindings.get((class_name, key))
        if found is not None or depth > 3:
            return found
        for base in self._own_bases(class_name):
            inherited = self._inherited(base, key, depth=depth + 1)
            if inherited is not None:
                return inherited
        return self._subclass_client(class_name, key)

    def _subclass_client(self, class_name: str, key: str) -> Kind | None:
        """``self.client`` in ``BaseOpenAI``'s methods, bound only by the classes of other modules deriving from it
        (``OpenAI(BaseOpenAI).__init__``: ``self.client = openai.OpenAI(...).chat.completions``): that client."""
        if key.count(".") != 1 or "." in class_name:
            return None
        found = apis.SUBCLASS_CLIENTS.get().get(class_name, {}).get(key[len("self.") :])
        return attrs.evolve(found, confidence=weaker(found.confidence, "medium")) if isinstance(found, Kind) else None

    def _own_bases(self, class_name: str) -> Iterator[str]:
        """The base classes of ``class_name`` that the module itself defines, by name."""
        for base in self.index.class_bases.get(class_name, ()):
            if isinstance(base.value, cst.Name) and base.value.value in self.index.class_nodes and base.value.value != class_name:
                yield base.value.value

    def _property_kind(self, class_name: str, name: str, *, depth: int = 0) -> Kind | None:
        """``self.litellm`` with ``litellm`` a property of the class (or of a base class of the module)
        that imports the SDK on first use and returns it (``import litellm; self._litellm = litellm;
        return self._litellm``), or builds the client lazily (``@cached_property def client(self):
        return OpenAI()``): what the property returns."""
        method = self.index.scopes.get(f"{class_name}.{name}")
        if method is not None and isinstance(method.node, cst.FunctionDef):
            if not any((dotted_name(d.decorator) or "").rpartition(".")[2] in _PROPERTIES for d in method.node.decorators):
                return None
            found = self.returned_kind(method)
            return found if found is not None and found.provider not in {"project", "mock"} else None
        if depth > 3:
            return None
        for base in self._own_bases(class_name):
            inherited = self._property_kind(base, name, depth=depth + 1)
            if inherited is not None:
                return inherited
        return None

    def _sdk_base(self, class_name: str, scope: Scope | None, *, depth: int = 0) -> Kind | None:
        """The SDK class ``class_name`` derives from, through the module's own classes
        (``class GAIASociety(Society)`` with ``class Society(RolePlaying)``)."""
        for base in self.index.class_bases.get(class_name, ()):
            qualified = self.qualified(base.value)
            found = apis.constructor(qualified) if qualified else None
            if found is not None:
                return Kind(found[0], found[1], "medium")
            if isinstance(base.value, cst.Name) and base.value.value in self.index.class_nodes and base.value.value != class_name and depth < 4:
                inherited = self._sdk_base(base.value.value, scope, depth=depth + 1)
                if inherited is not None:
                    return inherited
        return None

    def _provider_of(self, node: cst.Call, scope: Scope, *, default: str, kind: str) -> str:
        """Agents name their model: Agent("anthropic:claude-…"), ReActAgent(llm=Anthropic())."""
        if kind not in _MODEL_NAMED:
            return default
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value not in _MODEL_KEYWORDS:
                continue
            value = arg.value
            if isinstance(value, cst.SimpleString):
                prefix = (literal(value) or "").partition(":")[0]
                return apis.MODEL_PREFIXES.get(prefix, default)
            inner = self.kind_of(value, scope) if isinstance(value, cst.Call | cst.Name | cst.Attribute) else None
            if inner is not None:
                return inner.provider
        return default

    def _built_by_name(self, helper: Scope) -> Kind | None:
        """``def get_model(args): if args.model_name.startswith("gpt"): return OpenAIModel(args) … elif …:
        return OllamaModel(args)``: a factory building one of several classes of the module, picked by a name
        or a setting. What it returns is whichever was built: an instance of that family, as a parameter typed
        with a protocol is (``interface:``, named after the base of the module
        most of them derive from)."""
        built: list[str] = []
        for node in self.index.subtree(helper.node):
            if isinstance(node, cst.Return) and isinstance(node.value, cst.Call) and isinstance(node.value.func, cst.Name):
                name = node.value.func.value
                if name in self.index.class_nodes and name not in built:
                    built.append(name)
        if len(built) < 2:
            return None
        bases = [b.value.value for name in built for b in self.index.class_bases.get(name, ()) if isinstance(b.value, cst.Name)]
        bases = [b for b in bases if b in self.index.class_nodes]
        named = max(sorted(set(bases)), key=bases.count) if bases else built[0]  # the base most of them derive from
        return Kind("project", f"interface:{named}", "medium")

    def _overriding(self, owner: str, method: str) -> Kind | None:
        """What the first subclass of ``owner`` in this module that defines ``method`` returns from it, when
        that is a model object: the base class calls a method only its subclasses define (a template method)."""
        for name, bases in self.index.class_bases.items():
            if not any(isinstance(b.value, cst.Name) and b.value.value == owner for b in bases):
                continue
            scope = self.index.scopes.get(f"{name}.{method}")
            found = self.returned_kind(scope) if scope is not None else None
            if found is not None:
                return found
        return None

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
        annotated = self._annotation(returns.annotation) if returns is not None else None
        self._depth += 1
        try:
            if annotated is None:
                built = self._built_by_name(helper)
                if built is not None:
                    return built
            for node in self.index.subtree(helper.node):
                if isinstance(node, cst.Return) and node.value is not None:
                    found = self.kind_of(node.value, helper)
                    if found is not None and annotated is None:
                        return found
                    if found is not None and annotated is not None and found.kind == annotated.kind and isinstance(found.origin, cst.Call):
                        # -> AssistantAgent, returning the AssistantAgent(tools=...) it built: what built it counts.
                        return attrs.evolve(found, confidence=annotated.confidence)
            return annotated
        finally:
            self._depth -= 1


def _element(value: cst.BaseExpression, path: tuple[int, ...]) -> cst.BaseExpression | None:
    """The element of a literal (nested) tuple or list at ``path``; None when it is not written there."""
    for position in path:
        if not isinstance(value, cst.Tuple | cst.List) or position >= len(value.elements):
            return None
        if any(isinstance(e, cst.StarredElement) for e in value.elements[: position + 1]):
            return None
        value = value.elements[position].value
    return value


def _maf_derived(inner: Kind, method: str, node: cst.Call) -> Kind | None:
    """Microsoft Agent Framework objects built from others: a builder's build() is a workflow (its other
    methods return the builder), a chat client's as_agent(tools=...) and a workflow's as_agent() are agents."""
    if inner.kind == "maf-builder":
        return Kind(inner.provider, "maf-workflow" if method == "build" else "maf-builder", inner.confidence, origin=node, base=inner)
    if inner.kind in {"maf-client", "maf-workflow"} and method in {"as_agent", "create_agent"}:
        return Kind(inner.provider, "maf-agent", inner.confidence, origin=node, base=inner)
    return None


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in {"self", "cls"}


# What another module annotates a name or a field with (crossref.exports): not an object of its own.
_HELD = ("annotated:", "contextvar:")
# A method read as an attribute: @property, @functools.cached_property.
_PROPERTIES = frozenset({"property", "cached_property"})


def _own_class(func: cst.BaseExpression, scope: Scope, classes: Mapping[str, cst.ClassDef]) -> str | None:
    """The class of this module whose method ``func`` calls: ``self.m``/``cls.m`` in one of its methods,
    or ``Factory.m`` on the class itself (a classmethod or staticmethod)."""
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
        return None
    if _is_self(func.value):
        return scope.class_name
    return func.value.value if func.value.value in classes else None
