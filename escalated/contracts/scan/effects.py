"""What a call or a function body does, as rule findings.

A call is judged by its callee (``rules.classify_callee``: ``subprocess.run``,
``stripe.Refund.create``), by the body of a function of this module it calls,
by what another project module found its function does, and by the SQL text it
is given. A tool is judged by its name and its body. The decision surface
(``surface.py``) asks this of the tools a call offers and of the calls its
output reaches (``output_flow.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs
import libcst as cst

from escalated.contracts import rules
from escalated.contracts.calls import Finding
from escalated.contracts.scan import apis
from escalated.contracts.scan.index import ModuleIndex, Scope, dotted_name
from escalated.contracts.scan.resolve import Resolver
from escalated.contracts.scan.toolkits import toolkit_called
from escalated.contracts.scan.syntax import McpServers, dotted_tail, is_formatted, short_name, string_text, tools_in_args
from escalated.contracts.scan.tools import ToolRef, ToolResolver, declared_description

_PURE_CALLS = frozenset({
    "str", "int", "float", "bool", "len", "abs", "round", "min", "max", "sum", "sorted", "range", "pow",
    "divmod", "format", "list", "dict", "tuple", "set", "enumerate", "zip", "isinstance", "ValueError",
})  # fmt: skip
# What a stand-in tool body may call: formatting, the clock, random numbers, logging.
_STAND_IN_MODULES = frozenset({"math", "json", "datetime", "zoneinfo", "random", "uuid", "time"})
_STRING_METHODS = frozenset({
    "format", "join", "strftime", "isoformat", "lower", "upper", "strip", "split", "replace", "get", "items",
    "keys", "values", "append", "copy", "title", "capitalize", "dumps", "now", "today",
})  # fmt: skip
# A LlamaIndex workflow Context's own events and state (ctx.set, ctx.store.get, ctx.write_event_to_stream, ...).
_WORKFLOW_CONTEXT_METHODS = frozenset({
    "get", "set", "write_event_to_stream", "send_event", "wait_for_event", "collect_events", "edit_state",
})  # fmt: skip
# A Microsoft Agent Framework WorkflowContext's own messages, outputs and state.
_MAF_CONTEXT_METHODS = frozenset({
    "send_message", "yield_output", "request_info", "add_event", "get_state", "set_state", "get_shared_state", "set_shared_state",
})  # fmt: skip
_SQL_CALLS = frozenset({"execute", "executemany", "executescript", "raw", "read_sql", "read_sql_query", "exec_driver_sql"})
# nbformat's code cell made from the output, in a module that runs its notebook (nbclient, jupyter_client).
_NOTEBOOK_CELLS = frozenset({"nbformat.v4.new_code_cell", "nbformat.v4.nbbase.new_code_cell", "nbformat.new_code_cell"})
# An HTTP GET that carries no credentials reads what anyone can read (a public page or API).
_HTTP_GETS = frozenset({"httpx.get", "requests.get", "httpx.Client.get", "httpx.AsyncClient.get", "requests.Session.get"})
_CREDENTIAL_KEYWORDS = frozenset({"headers", "auth", "cookies", "cert", "params"})
# Reading the clock and formatting the time it read.
_CLOCK_READS = frozenset({"now", "today", "utcnow", "time", "monotonic", "gmtime", "localtime", "strftime"})
_CLOCK_FORMATS = frozenset({"strftime", "isoformat", "date", "timestamp", "ctime"})
# The function a tool object wraps (Agno Function.entrypoint, LangChain StructuredTool.func).
_TOOL_FUNCTIONS = frozenset({"entrypoint", "func"})
# Calls that start a process or thread running the function given as target= ...
_SPAWNS = frozenset({"Process", "Thread"})
# ... and those handed the function to run as a positional argument (at this index).
_HANDS_FIRST = {"submit": 0, "apply_async": 0, "apply": 0, "to_thread": 0, "run_in_executor": 1}
# What may be done with a response besides reading it as text.
_RESPONSE_METHODS = frozenset({"json", "raise_for_status", "pop"})


# String literals' node types, compared by identity (leaf classes) in the walk over a body.
_STRINGS = frozenset({cst.SimpleString, cst.FormattedString, cst.ConcatenatedString})

class CallEffects:
    def __init__(
        self,
        index: ModuleIndex,
        resolver: Resolver,
        tools: ToolResolver,
        *,
        line_of: Callable[[cst.CSTNode], int],
        llm_calls: set[int],
    ) -> None:
        self.index = index
        self.resolver = resolver
        self.tools = tools
        self.line_of = line_of
        # The model calls themselves: reached by the output, they are not its effects.
        self.llm_calls = llm_calls
        self._open_bodies: set[int] = set()
        self._constructed: dict[str, str] | None = None
        self._instances: dict[str, str] | None = None
        self._call_scopes: dict[int, Scope] | None = None

    def classify_tool(self, tool: ToolRef) -> list[Finding]:
        if tool.known is not None:
            return list(tool.known)  # a tool or tool function of another module, classified there
        if isinstance(tool.body, cst.ClassDef) and _is_toolkit(tool.body):
            # An Agno Toolkit subclass: each public method is a tool the model calls.
            return [
                found
                for method in tool.body.body.body
                if isinstance(method, cst.FunctionDef) and not method.name.value.startswith("_")
                for found in self.classify_tool(ToolRef(method.name.value, method, self.line_of(method)))
            ]
        named = rules.classify_name(tool.name, line=tool.line, subject="tool")
        if tool.body is None:
            return named or [rules.fact("tool-body-unseen", f"tool {tool.name} (read-only as far as its name tells; {tool.where})", tool.line)]
        body = self.body_findings(tool.body, via=f"tool {tool.name}")
        if any(f.basis == "code" and f.rule not in rules.NOT_SIDE_EFFECTS for f in body):
            # What the body does confirms what the name says: refund_order calling stripe.
            named = [attrs.evolve(f, basis="code") for f in named]
        elif isinstance(tool.body, cst.FunctionDef) and self._workflow_state_only(tool.body):
            # await ctx.set("state", state): a LlamaIndex workflow's own state, nothing read or written outside;
            # what the name says it records (record_notes, write_report) is that state
            return []
        elif isinstance(tool.body, cst.FunctionDef) and self._is_stand_in(tool.body) and _writes_session_state(tool.body, self.index.walk(tool.body)):
            return []  # run_context.session_state["watchlist"] = ...: the agent's own session (store_findings stores there)
        elif isinstance(tool.body, cst.FunctionDef) and self._is_stand_in(tool.body):
            # A placeholder body (return f"Email sent to {to}"): what the tool says it does decides.
            description = declared_description(tool.body)
            body = body + rules.classify_description(tool.name, description, line=tool.line)
            if not body and not description:
                # No description either (def initiate_refund(): return "Refund initiated"): the model is
                # offered the tool by its name, and the stand-in stands for what the name says.
                named = [_stands_for(f, tool.name) if rules.RULES_BY_ID[f.rule].mode == "required" else f for f in named]
        elif isinstance(tool.body, cst.FunctionDef) and self._in_memory_only(tool.body):
            # A mock (context.context.state.seat = ..., the module's demo itineraries, progress events to
            # the chat): it changes only the run's in-memory state, so it stands for what the model is told
            # it does. A declared irreversible action ("Book a new or replacement flight") decides; a
            # write it declares is what the body does, in the run's state.
            declared = rules.classify_description(
                tool.name, declared_description(tool.body), line=tool.line, body="its body only changes the run's in-memory state"
            )
            body = body + [f for f in declared if rules.RULES_BY_ID[f.rule].mode == "required"]
        elif isinstance(tool.body, cst.ClassDef) and _is_schema(tool.body):
            # A schema the model fills in (bind_tools([SendCalendarInvite])): nothing runs in it, the code acts on
            # its fields elsewhere, and its docstring is what the model is told calling it does.
            declared = rules.classify_description(
                tool.name, tool.body.get_docstring() or "", line=tool.line, body="a schema the model fills in: the code acts on it"
            )
            body = body + [f for f in declared if rules.RULES_BY_ID[f.rule].mode == "required"]
        out = named + body + (self._added_tools(tool.body) if isinstance(tool.body, cst.FunctionDef) else [])
        if any(rules.RULES_BY_ID[f.rule].mode != "sampled" for f in out):
            return out
        if isinstance(tool.body, cst.FunctionDef) and self._is_pure(tool.body):
            return out  # add(a, b): computes from its arguments, reads no data
        if isinstance(tool.body, cst.FunctionDef) and self._is_stand_in(tool.body) and not self._looks_up(tool.body):
            return out  # f"The weather in {location} is {random.choice(conditions)}": made up, nothing read
        if isinstance(tool.body, cst.FunctionDef) and self._reads_public_web(tool.body):
            return out  # httpx.get("https://hacker-news.firebaseio.com/..."): what anyone can read
        out.append(rules.fact("tool-reads-only", f"tool {tool.name} (no side effect found in its body)", tool.line))
        return out

    def body_findings(self, body: cst.CSTNode, *, via: str) -> list[Finding]:
        """What a function body does: its calls (project functions followed) and its SQL text."""
        if id(body) in self._open_bodies or len(self._open_bodies) > 2:
            return []
        self._open_bodies.add(id(body))
        try:
            out: list[Finding] = []
            for node in self.index.walk(body):
                if type(node) is cst.Call:  # libcst's node classes are leaves: type() spares ABCMeta's isinstance
                    ran = self._agent_run(node, via=via)
                    out.extend(ran if ran is not None else self.classify_call(node, tainted=False, via=via))
                elif type(node) in _STRINGS and not _is_prose(node, self.index):
                    out.extend(attrs.evolve(f, detail=f"{via} -> {f.detail}") for f in rules.classify_sql(string_text(node), line=self.line_of(node)))
            return out
        finally:
            self._open_bodies.discard(id(body))

    def _workflow_context(self, func: cst.BaseExpression) -> bool:
        """``ctx.write_event_to_stream(...)``, ``await ctx.set("state", state)`` in a LlamaIndex workflow: the
        workflow's own events and state (kept with the run, like an agent's memory), not a system of record."""
        if isinstance(func, cst.Attribute) and func.attr.value in _MAF_CONTEXT_METHODS and _names_context(func.value):
            # await ctx.send_message(response) in a Microsoft Agent Framework executor: the workflow's own plumbing
            return any(target.startswith("agent_framework") for target in self.index.imports.values())
        if not (isinstance(func, cst.Attribute) and func.attr.value in _WORKFLOW_CONTEXT_METHODS):
            return False
        receiver = func.value.value if isinstance(func.value, cst.Attribute) and func.value.attr.value == "store" else func.value
        if isinstance(receiver, cst.Attribute) and receiver.attr.value == "ctx":  # handler.ctx.send_event(...)
            receiver = cst.Name("ctx")
        if not (isinstance(receiver, cst.Name) and receiver.value in {"ctx", "context"}):
            return False
        return any(target.startswith(("llama_index.core.workflow", "workflows")) for target in self.index.imports.values())

    def _workflow_state_only(self, function: cst.FunctionDef) -> bool:
        """A tool whose calls reach nothing but its workflow's own context (and formatting): set_name
        storing the user's name in the run's state, a tool asking the human through the workflow."""
        calls = [node for node in self.index.walk(function.body) if isinstance(node, cst.Call)]
        return any(self._workflow_context(c.func) for c in calls) and all(
            self._workflow_context(c.func) or (dotted_name(c.func) or "") in _PURE_CALLS or _formatting(c.func)
            or (self.resolver.qualified(c.func) or "").startswith("llama_index.core.workflow")  # InputRequiredEvent(...)
            for c in calls
        )

    def _agent_run(self, call: cst.Call, *, via: str) -> list[Finding] | None:
        """``response = agent(query)`` in a tool's body (a Strands ``@tool`` that runs another agent, a
        function tool calling ``Runner.run``): the tool does what that agent's tools do."""
        if self._call_scopes is None:
            self._call_scopes = {id(c): scope for c, scope in self.index.calls}
        scope = self._call_scopes.get(id(call))
        found = self.resolver.match_call(call, scope) if scope is not None else None
        kind = found.receiver if found is not None else None
        if scope is None or kind is None or kind.kind not in apis.RUNNER_KINDS or not isinstance(kind.origin, cst.Call):
            return None
        label = f"{via} -> {dotted_name(call.func) or 'agent'}()"
        out: list[Finding] = []
        for expr in tools_in_args(kind.origin.args):
            if isinstance(expr, McpServers):
                out.extend(self.tools.mcp_findings(expr, scope))
                continue
            tools, findings = self.tools.resolve(expr, scope)
            out.extend(findings)
            for tool in tools:
                out.extend(self.classify_tool(tool))
        return [attrs.evolve(f, detail=f"{label} -> {f.detail}") for f in out]

    def _built_by(self, func: cst.BaseExpression) -> str | None:
        """smtp.send_message with smtp = smtplib.SMTP(...): ``smtplib.SMTP.send_message``.

        Flow-insensitive: the first binding of the receiver's name in the module to a call
        of an imported name. What built the receiver is evidence; its name is not.
        """
        if self._constructed is None:
            self._constructed = {}
            for _scope, key, value in self.index.assignments:
                if isinstance(value, cst.Call) and key not in self._constructed:
                    built = self.index.qualified(value.func)
                    if built is None and isinstance(value.func, cst.Attribute):
                        # api = toolkit.get_api() with toolkit = Toolkit(...): Toolkit.get_api
                        head, _, rest = (dotted_name(value.func) or "").partition(".")
                        built = f"{self._constructed[head]}.{rest}" if head in self._constructed and rest else None
                    if built is not None:
                        self._constructed[key] = built
        dotted = dotted_name(func)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        built = self._constructed.get(head)
        return f"{built}.{rest}" if built is not None and rest else None

    def _project_function(self, call: cst.Call) -> cst.FunctionDef | None:
        """f(...) or self.f(...) on a function of this module: its body is the evidence, not its name."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _TOOL_FUNCTIONS and isinstance(func.value, cst.Name):
            func = func.value  # get_weather.entrypoint(**args): the decorated function itself
        elif isinstance(func, cst.Attribute) and not (isinstance(func.value, cst.Name) and func.value.value in {"self", "cls"}):
            return None
        if not isinstance(func, cst.Name | cst.Attribute):
            return None
        target = self.tools.function(short_name(func), self.index.module_scope)
        return target.node if target is not None and isinstance(target.node, cst.FunctionDef) else None

    def _spawned(self, call: cst.Call) -> tuple[str, cst.FunctionDef] | None:
        """The function of this module a call hands to another process or thread to run:
        ``Process(target=f)``, ``Thread(target=f)``, ``executor.submit(f, ...)``, ``pool.apply_async(f, ...)``,
        ``asyncio.to_thread(f, ...)``, ``loop.run_in_executor(executor, f, ...)``."""
        func = call.func
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else None
        handed: cst.BaseExpression | None = None
        if name in _SPAWNS:
            handed = next((arg.value for arg in call.args if arg.keyword is not None and arg.keyword.value == "target"), None)
        else:
            at = _HANDS_FIRST.get(name) if name is not None else None
            positional = [arg.value for arg in call.args if arg.keyword is None and not arg.star]
            handed = positional[at] if at is not None and len(positional) > at else None
        if not isinstance(handed, cst.Name | cst.Attribute):
            return None
        if isinstance(handed, cst.Attribute) and not (isinstance(handed.value, cst.Name) and handed.value.value in {"self", "cls"}):
            return None
        target = self.tools.function(short_name(handed), self.index.module_scope)
        if target is None or not isinstance(target.node, cst.FunctionDef):
            return None
        return short_name(handed), target.node

    def _instance_method(self, call: cst.Call) -> cst.FunctionDef | None:
        """``crawler.click(id)`` with ``crawler = Crawler()`` and ``class Crawler`` in this module: the
        method's body is the evidence (flow-insensitive: the name's first binding to a call)."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)) or func.value.value in {"self", "cls"}:
            return None
        if self._instances is None:
            self._instances = {}
            for _scope, key, value in self.index.assignments:
                if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in self.index.class_nodes:
                    self._instances.setdefault(key, value.func.value)
        built = self._instances.get(func.value.value)
        if built is None and func.value.value in self.index.class_nodes:
            built = func.value.value  # LocalProcess.start(cmd): a static or class method called by its class's name
        scope = self.index.scopes.get(f"{built}.{func.attr.value}") if built is not None else None
        return scope.node if scope is not None and isinstance(scope.node, cst.FunctionDef) else None

    def _is_stand_in(self, function: cst.FunctionDef) -> bool:
        """A body that only builds its answer (and logs): no call reaches anything outside it."""
        invocation = _invocation_contexts(function)
        return all(self._stand_in_call(node, invocation) for node in self.index.walk(function.body) if isinstance(node, cst.Call))

    def _stand_in_call(self, node: cst.Call, invocation: set[str]) -> bool:
        """A call a stand-in may make: formatting, the clock, random numbers, logging."""
        callee = dotted_name(node.func) or ""
        last = callee.rpartition(".")[2] if callee else (node.func.attr.value if isinstance(node.func, cst.Attribute) else "")
        root = callee.partition(".")[0]
        if callee in _PURE_CALLS or root in _STAND_IN_MODULES or root in {"print", "logger", "logging", "log"}:
            return True
        if (self.resolver.qualified(node.func) or "").partition(".")[0] in _STAND_IN_MODULES:
            return True  # from random import randrange; randrange(0, 5)
        if root in invocation:
            return True  # ctx.kwargs.get("user_id"), ctx.add_tools([...]): the framework's own invocation context
        # f"{day}".strip(), preferred_day.strftime(...): not requests.get(...)
        return isinstance(node.func, cst.Attribute) and last in _STRING_METHODS and root not in self.index.imports

    def _in_memory_only(self, function: cst.FunctionDef, *, depth: int = 0) -> bool:
        """A mock body: besides what a stand-in may call, its calls reach only the run's own context object
        (``context.context.stream(ProgressUpdateEvent(...))`` on a ``RunContextWrapper`` parameter, and
        what is built for it), copies, and project functions doing no more (``apply_itinerary_defaults(state)``;
        another module's as classified there: no side effect the code shows). Writes to the context's state
        or the module's tables are the process's memory, not a system of record."""
        invocation = _invocation_contexts(function)
        contexts = _run_contexts(function)
        calls = [node for node in self.index.walk(function.body) if isinstance(node, cst.Call)]
        handed = {
            id(inner)
            for call in calls if _context_method(call.func, contexts)
            for arg in call.args for inner in self.index.walk(arg.value) if isinstance(inner, cst.Call)
        }  # fmt: skip
        for call in calls:
            if id(call) in handed or _context_method(call.func, contexts) or self._stand_in_call(call, invocation):
                continue
            if (dotted_name(call.func) or "") in _MOCK_BUILTINS or (self.resolver.qualified(call.func) or "").partition(".")[0] == "copy":
                continue
            if isinstance(call.func, cst.Attribute) and call.func.attr.value in _VALUE_METHODS and not self._imported_root(call.func):
                continue  # seg.get("origin", "").startswith("New York"), options.setdefault(...)
            local = self._project_function(call) or self._instance_method(call)
            if local is not None:
                if depth < 2 and self._in_memory_only(local, depth=depth + 1):
                    continue
                return False
            if not self._project_import(call.func):
                return False
            qualified = self.resolver.qualified(call.func)
            imported = self.tools.imported.get(qualified) if qualified is not None else None
            if imported is not None and any(f.basis in rules.EVIDENCE and f.rule not in rules.NOT_SIDE_EFFECTS for f in imported):
                return False
        return True

    def _imported_root(self, func: cst.Attribute) -> bool:
        root = (dotted_name(func) or "").partition(".")[0]
        return bool(root) and root in self.index.imports

    def _project_import(self, func: cst.BaseExpression) -> bool:
        """``apply_itinerary_defaults`` after ``from .demo_data import apply_itinerary_defaults``: a function
        of another module of the project (a relative import says so), not a library's."""
        return isinstance(func, cst.Name) and func.value in self.index.relative_imports

    def _reads_public_web(self, function: cst.FunctionDef) -> bool:
        """A body whose only reach outside is an HTTP GET without credentials of an address whose
        host is written in the code (``https://host/...``), the rest a stand-in's. A URL the model
        chooses can name any host, the network's own included: still a read of private data."""
        gets = 0
        for node in self.index.walk(function.body):
            if not isinstance(node, cst.Call):
                continue
            callee = dotted_name(node.func) or ""
            qualified = self.resolver.qualified(node.func) or self._built_by(node.func)
            if qualified in _HTTP_GETS:
                if not _public_get(node):
                    return False
                gets += 1
                continue
            root = callee.partition(".")[0]
            last = node.func.attr.value if isinstance(node.func, cst.Attribute) else callee
            if callee in _PURE_CALLS or root in _STAND_IN_MODULES or root in {"print", "logger", "logging", "log"}:
                continue
            if isinstance(node.func, cst.Attribute) and root not in self.index.imports and (last in _STRING_METHODS or last in _RESPONSE_METHODS):
                continue  # response.json(), story.pop("text"), stories.append(story)
            return False
        return gets > 0

    def _added_tools(self, function: cst.FunctionDef) -> list[Finding]:
        """``ctx.add_tools([factorial, fibonacci])`` on a Microsoft Agent Framework
        ``FunctionInvocationContext``: the run offers those tools from then on, and they do what they do."""
        invocation = _invocation_contexts(function)
        out: list[Finding] = []
        for node in self.index.walk(function.body):
            if (
                isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "add_tools"
                and isinstance(node.func.value, cst.Name) and node.func.value.value in invocation and node.args
            ):
                tools, found = self.tools.resolve(node.args[0].value, self.index.module_scope)
                out.extend(found)
                for added in tools:
                    out.extend(self.classify_tool(added))
        return out

    def _looks_up(self, function: cst.FunctionDef) -> bool:
        """``ORDERS.get(order_id)``, ``ACCOUNTS[user]``: a stand-in reading a table of the module by
        what the model passed (a stand-in for a database); ``conditions[randrange(5)]`` picks at random."""
        params = {param.name.value for param in (*function.params.params, *function.params.kwonly_params)}

        def by_argument(node: cst.CSTNode) -> bool:
            return any(isinstance(n, cst.Name) and n.value in params for n in self.index.walk(node))

        for node in self.index.walk(function.body):
            if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value not in params:
                if any(by_argument(element.slice) for element in node.slice):
                    return True
            if (
                isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get"
                and isinstance(node.func.value, cst.Name) and node.func.value.value not in params and node.args
                and by_argument(node.args[0].value)
            ):
                return True
        return False

    def _is_pure(self, function: cst.FunctionDef) -> bool:
        """A tool body that only computes: no calls beyond pure builtins, math and the clock."""
        for node in self.index.walk(function.body):
            if isinstance(node, cst.Call):
                callee = dotted_name(node.func) or ""
                if callee not in _PURE_CALLS and not callee.startswith("math.") and not self._reads_clock(node.func):
                    return False
        return True

    def _reads_clock(self, func: cst.BaseExpression) -> bool:
        """``datetime.now()``, ``datetime.now().strftime(...)``, ``time.time()``: the time, nobody's data."""
        if isinstance(func, cst.Attribute) and func.attr.value in _CLOCK_FORMATS and isinstance(func.value, cst.Call):
            return self._reads_clock(func.value.func)
        qualified = self.resolver.qualified(func) or ""
        return qualified.partition(".")[0] in {"datetime", "time"} and _func_name(func) in _CLOCK_READS

    def toolkit_effect(self, call: cst.Call) -> Finding | None:
        """``toolkit.handle_tool_call(block)`` on a library's toolkit (even one whose source is in the
        scanned tree): its tools run, and the toolkit table says what they do."""
        qualified = self.resolver.qualified(call.func) or self._built_by(call.func)
        return toolkit_called(call, qualified, line=self.line_of(call)) if qualified is not None else None

    def classify_call(self, call: cst.Call, *, tainted: bool, via: str = "") -> list[Finding]:
        if id(call) in self.llm_calls:
            return []
        if self._workflow_context(call.func):
            # await ctx.set("active_speaker", choice): later steps read the workflow's state to decide what runs.
            # Reached with no ``via``: the output itself flows into this call (not a call in a body followed).
            stored = not via and isinstance(call.func, cst.Attribute) and call.func.attr.value == "set"
            why = f"the output is kept in the workflow's state ({dotted_name(call.func)}()), which its later steps read"
            return [rules.fact("output-drives-branch", why, self.line_of(call))] if stored else []
        google = _google_api(call) if self.index.imports_from("googleapiclient") else None
        if google is not None:
            # service.users().messages().send(...): a Google API resource method, what it does named by the API
            kind, what = google
            return [rules.fact(kind, f"{via} -> {what}" if via else what, self.line_of(call))]
        dotted = dotted_name(call.func) or dotted_tail(call.func)
        if not dotted:
            return []
        line = self.line_of(call)
        label = f"{via} -> {dotted}()" if via else f"{dotted}()"
        local = self._project_function(call) or self._instance_method(call)
        if local is not None:
            return rules.own_record_writes(dotted, self.body_findings(local, via=label))
        spawned = self._spawned(call)
        if spawned is not None:
            # multiprocessing.Process(target=worker_run_code, args=(code, q)), pool.submit(run, code): the
            # function handed over runs in another process or thread; its body is the evidence.
            target, node = spawned
            return rules.own_record_writes(target, self.body_findings(node, via=f"{label} -> {target}()"))
        kit = self.toolkit_effect(call)
        if kit is not None:  # a library's toolkit runs its tools: what the table says they do
            return [attrs.evolve(kit, detail=f"{via} -> {kit.detail}")] if via else [kit]
        qualified = self.resolver.qualified(call.func) or self._built_by(call.func)
        imported = self.tools.imported.get(qualified) if qualified is not None else None
        if imported is not None:  # a project function of another module, classified there
            # What it does, not what a tool would: reading private data is no side effect of a call.
            kept = rules.own_record_writes(qualified, [f for f in imported if f.kind != "read-only-tool"])
            return [attrs.evolve(f, detail=f"{label} -> {_as_called(f.detail)}", line=line) for f in kept]
        browser = rules.browser_input(dotted, line=line)  # the callee first: the imports' scan is the dearer test
        if browser is not None and self.index.imports_from("playwright"):
            # page.mouse.click, page.keyboard.type in a module driving Playwright
            return [attrs.evolve(browser, detail=f"{via} -> {browser.detail}")] if via else [browser]
        sdk = _machine_sdk(self.index)
        machine = rules.machine_input(dotted, sdk=sdk, line=line) if sdk is not None else None
        if machine is not None:
            # await self.interface.left_click(x, y) on cua's Computer, sandbox.write(text) on E2B Desktop
            return [attrs.evolve(machine, detail=f"{via} -> {machine.detail}")] if via else [machine]
        if _sandbox_run(dotted) and (
            self.index.imports_from("e2b_code_interpreter") or self.index.imports_from("e2b") or _on_a_sandbox(dotted)
        ):
            # await sandbox.run_code(code) in a module using E2B: code run in a cloud sandbox, network on by default
            why = f"{dotted}(): code run in an E2B sandbox"
            return [rules.fact("runs-model-code", f"{via} -> {why}" if via else why, line)]
        if dotted.rpartition(".")[2] in {"run", "arun"} and self.index.imports_from("codeboxapi") and _built_from(self.index, dotted, "codeboxapi"):
            # self.codebox.run(code) with self.codebox = CodeBox(...): a Jupyter kernel on this machine (LocalBox)
            # unless an API key sends it to the hosted sandbox
            why = f"{dotted}(): code run in a CodeBox"
            return [rules.fact("runs-model-code", f"{via} -> {why}" if via else why, line)]
        if dotted.endswith(".exec") and self.index.imports_from("agents.sandbox"):
            # await session.exec("codex exec --full-auto …", shell=[…]) on an OpenAI Agents SDK sandbox session
            why = f"{dotted}(): a shell command run in an Agents SDK sandbox"
            return [rules.fact("runs-model-code", f"{via} -> {why}" if via else why, line)]
        if tainted and _kernel_execute(dotted) and self.index.imports_from("jupyter_client"):
            # kc.execute(code=code) on a jupyter_client KernelClient: the code runs in the kernel it is connected to
            why = f"{dotted}(): code run in a Jupyter kernel"
            return [rules.fact("runs-model-code", f"{via} -> {why}" if via else why, line)]
        if tainted and qualified in _NOTEBOOK_CELLS and (self.index.imports_from("nbclient") or self.index.imports_from("jupyter_client")):
            # self.nb.cells.append(new_code_cell(source=code)) in a module running its notebook in a Jupyter kernel
            why = f"{dotted}(): the output becomes a notebook code cell the module executes in a Jupyter kernel"
            return [rules.fact("runs-model-code", f"{via} -> {why}" if via else why, line)]
        found = rules.classify_callee(dotted, line=line, tainted=tainted, qualified=qualified)
        if not tainted and dotted.rpartition(".")[2] in _SQL_CALLS and call.args and is_formatted(call.args[0].value):
            found.append(rules.fact("sql-from-output", f"SQL built from model-chosen values: {dotted}()", line))
        for arg in call.args:
            if isinstance(arg.value, cst.SimpleString | cst.ConcatenatedString | cst.FormattedString):
                found.extend(rules.classify_sql(string_text(arg.value), line=line))
            if arg.keyword and arg.keyword.value == "unsafe_allow_html" and tainted:
                found.append(rules.fact("html-from-output", f"HTML: {dotted}(unsafe_allow_html=True)", line))
        if via:
            found = [attrs.evolve(f, detail=f"{via} -> {f.detail}") for f in found]
        return found


# Google API client resources (``googleapiclient.discovery.build``: Gmail, Calendar, Drive): the
# resource and its method say what the request does. Reads (get, list) are none of these.
_GOOGLE_METHODS: dict[tuple[str, str], str] = {
    **{(resource, "send"): "api-sends" for resource in ("messages", "drafts")},
    **{(resource, method): "api-deletes" for resource in ("messages", "threads", "drafts", "events", "files", "labels")
       for method in ("delete", "batchDelete", "trash", "emptyTrash")},
    **{(resource, method): "api-writes" for resource in ("messages", "threads", "drafts", "events", "files", "labels", "calendars")
       for method in ("create", "insert", "update", "patch", "modify", "batchModify", "import_", "move", "copy", "untrash")},
}


def _google_api(call: cst.Call) -> tuple[str, str] | None:
    """``….users().drafts().create(...)``: (the fact, what it does) for a method of a resource that is
    itself called off the service, as the Google API client's resources are."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Attribute)):
        return None
    resource, method = func.value.func.attr.value, func.attr.value
    kind = _GOOGLE_METHODS.get((resource, method))
    return (kind, f"Google API {resource}().{method}()") if kind is not None else None


def _func_name(func: cst.BaseExpression) -> str:
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def _writes_session_state(function: cst.FunctionDef, body_nodes: Iterable[cst.CSTNode]) -> bool:
    """``run_context.session_state["watchlist"] = watchlist`` on the tool's own parameter: the
    framework's per-session state (Agno's ``RunContext``), kept with the agent's session; the
    Microsoft Agent Framework's ``ctx.session.state[...]`` of a ``FunctionInvocationContext``."""
    params = {p.name.value for p in (*function.params.params, *function.params.kwonly_params)}
    invocation = _invocation_contexts(function)
    for node in body_nodes:
        if isinstance(node, cst.AssignTarget):
            target: cst.BaseExpression = node.target
            while isinstance(target, cst.Subscript):
                target = target.value
            if (
                isinstance(target, cst.Attribute) and target.attr.value == "session_state"
                and isinstance(target.value, cst.Name) and target.value.value in params
            ):
                return True
            if (dotted_name(target) or "").partition(".")[::2] in {(name, "session.state") for name in invocation}:
                return True
    return False


def _invocation_contexts(function: cst.FunctionDef) -> set[str]:
    """Parameters annotated ``FunctionInvocationContext``: what the Microsoft Agent Framework injects
    into a tool (the run's kwargs and session, ``add_tools``), never something the tool reads or writes."""
    return {
        param.name.value
        for param in (*function.params.params, *function.params.kwonly_params)
        if param.annotation is not None
        and isinstance(param.annotation.annotation, cst.Name | cst.Attribute)
        and short_name(param.annotation.annotation) == "FunctionInvocationContext"
    }


# The run context a framework hands a tool: the Agents SDK's RunContextWrapper, Pydantic AI's and
# Agno's RunContext, Google ADK's ToolContext.
_RUN_CONTEXTS = frozenset({"RunContextWrapper", "RunContext", "ToolContext"})
# Builtins that only compute, beyond what a stand-in may call.
_MOCK_BUILTINS = frozenset({
    "next", "any", "all", "getattr", "hasattr", "iter", "reversed", "filter", "map", "repr", "frozenset", "deepcopy",
})  # fmt: skip


# Methods of strings, lists and dicts a mock calls on its values, beyond a stand-in's.
_VALUE_METHODS = frozenset({
    "startswith", "endswith", "count", "find", "rfind", "splitlines", "partition", "rpartition", "casefold",
    "isdigit", "isalpha", "isalnum", "zfill", "extend", "setdefault", "pop", "sort",
})  # fmt: skip


# The bases of a schema class offered as a tool (Pydantic models, TypedDicts).
_SCHEMA_BASES = frozenset({"BaseModel", "TypedDict"})


def _is_schema(node: cst.ClassDef) -> bool:
    """``class SendCalendarInvite(BaseModel)`` with fields and a docstring, no methods: a tool's arguments only."""
    return any((dotted_name(base.value) or "").rpartition(".")[2] in _SCHEMA_BASES for base in node.bases) and not any(
        isinstance(statement, cst.FunctionDef) for statement in node.body.body
    )


def _run_contexts(function: cst.FunctionDef) -> set[str]:
    """Parameters annotated with the framework's run context (``context: RunContextWrapper[AppContext]``)."""
    out = set()
    for param in (*function.params.params, *function.params.kwonly_params):
        annotation = param.annotation.annotation if param.annotation is not None else None
        if isinstance(annotation, cst.Subscript):
            annotation = annotation.value
        if isinstance(annotation, cst.Name | cst.Attribute) and short_name(annotation) in _RUN_CONTEXTS:
            out.add(param.name.value)
    return out


def _context_method(func: cst.BaseExpression, contexts: set[str]) -> bool:
    """``context.stream(...)``, ``context.context.stream(...)``: a method of the run's context object
    itself, not of something it holds (``ctx.deps.http.post``, ``context.context.db.execute``)."""
    if not (isinstance(func, cst.Attribute) and contexts):
        return False
    receiver = func.value
    if isinstance(receiver, cst.Attribute) and receiver.attr.value == "context":
        receiver = receiver.value
    return isinstance(receiver, cst.Name) and receiver.value in contexts


def _public_get(call: cst.Call) -> bool:
    """``httpx.get("https://host/path")`` or ``httpx.get(f"https://host/{id}.json")``, no credentials."""
    if not call.args or any(a.keyword is not None and a.keyword.value in _CREDENTIAL_KEYWORDS for a in call.args):
        return False
    if any(a.star for a in call.args):
        return False
    url = call.args[0].value
    if isinstance(url, cst.SimpleString):
        text = url.evaluated_value if isinstance(url.evaluated_value, str) else ""
    elif isinstance(url, cst.FormattedString):
        head = url.parts[0] if url.parts else None
        text = head.value if isinstance(head, cst.FormattedStringText) else ""
    else:
        return False
    scheme, sep, rest = text.partition("://")
    host = rest.partition("/")[0]
    return bool(sep) and scheme in {"http", "https"} and "." in host and "@" not in host and "{" not in host


def _as_called(detail: str) -> str:
    """``tool save_file -> os.remove()`` (classified as a possible tool) said of a helper the code calls."""
    if not detail.startswith("tool "):
        return detail
    head, arrow, rest = detail.partition(" -> ")
    return rest if arrow else head[len("tool ") :]


def _is_toolkit(node: cst.ClassDef) -> bool:
    """class EmailTools(Toolkit): a tool set whose methods are the tools (Agno)."""
    return any((dotted_name(base.value) or "").rpartition(".")[2] == "Toolkit" for base in node.bases)


def _formatting(func: cst.BaseExpression) -> bool:
    """``response.response.strip().lower()``: a string method on a value, not a call outward."""
    return isinstance(func, cst.Attribute) and func.attr.value in _STRING_METHODS and not isinstance(func.value, cst.Name)


def _names_context(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in {"ctx", "context"}


def _stands_for(found: Finding, tool: str) -> Finding:
    return attrs.evolve(found, basis="declared", detail=f"tool {tool} (its body is a stand-in: it stands for what its name says)")


def _is_prose(node: cst.CSTNode, index: ModuleIndex) -> bool:
    """A string standing alone as a statement, a docstring ("Truncate the result string to max_tokens
    tokens."), is read by people, never run: no SQL, whatever its first word."""
    return isinstance(index.parents.get(id(node)), cst.Expr)


def _kernel_execute(dotted: str) -> bool:
    """``kc.execute(code)``, ``client.execute_interactive(code)``: a Jupyter kernel client running code
    (checked with the module's imports of jupyter_client by the caller)."""
    parts = dotted.split(".")
    return len(parts) >= 2 and parts[-1] in {"execute", "execute_interactive"}


# Computer-use SDKs whose object is a whole machine (its desktop and its shell), by what a module imports.
_MACHINE_SDKS = (("computer.Computer", "cua's computer SDK"), ("e2b_desktop", "E2B Desktop"))


def _machine_sdk(index: ModuleIndex) -> str | None:
    """The computer-use SDK the module imports (``from computer import Computer``: cua's), if any."""
    return next((name for package, name in _MACHINE_SDKS if index.imports_from(package)), None)


def _built_from(index: ModuleIndex, dotted: str, package: str) -> bool:
    """``self.codebox.run``: the receiver (``self.codebox``, a name, or a class's attribute) is bound somewhere in the
    module to a call of a class ``package`` exports (``CodeBox(...)``, ``CodeBox.from_id(...)``)."""
    receiver = dotted.rpartition(".")[0]
    for _scope, key, value in index.assignments:
        if key != receiver or not isinstance(value, cst.Call):
            continue
        func = value.func.value if isinstance(value.func, cst.Attribute) and isinstance(value.func.value, cst.Name) else value.func
        built = index.qualified(func) or ""
        if built == package or built.startswith(f"{package}."):
            return True
    return False


def _on_a_sandbox(dotted: str) -> bool:
    """``self.sandbox.commands.run(command)``: E2B's call on an object named a sandbox, in a module that only
    receives it (open-computer-use's agent is handed the E2B Desktop sandbox its entry point built)."""
    parts = dotted.split(".")
    owner = parts[-3] if parts[-2:] == ["commands", "run"] and len(parts) >= 3 else (parts[-2] if len(parts) >= 2 else "")
    return owner.lower().endswith("sandbox")


def _sandbox_run(dotted: str) -> bool:
    """``sandbox.run_code(code)``, ``sandbox.commands.run(cmd)``, ``sandbox.notebook.exec_cell(code)``: what
    an E2B sandbox runs (checked with the module's imports by the caller)."""
    parts = dotted.split(".")
    return len(parts) >= 2 and (parts[-1] in {"run_code", "exec_cell"} or parts[-2:] == ["commands", "run"])
