"""Clients and models built in one module and used in another.

``from .llm import client`` or ``from app.models import writer``: a first
pass over the project collects what each module binds at its top level (and
what its module-level functions return); the second pass resolves imports
against that table. Relative imports become absolute from the file's path.
A name that several modules could supply (two ``llm.py`` files) is dropped
rather than guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar

import attrs

import libcst as cst

from escalated.contracts import rules

from escalated.contracts.scan import apis

from escalated.contracts.scan.crews import agents_of, crew_methods
from escalated.contracts.scan.index import MODULE_SCOPE, Imports, ModuleIndex, Scope, dotted_name
from escalated.contracts.scan.syntax import McpServers, annotated_class, literal, tools_in_args
from escalated.contracts.calls import Finding, ToolSite
from escalated.contracts.scan.kinds import BY_NAME, PROJECT_CLASS, PROJECT_INTERFACE, REGISTERED, Kind, registered_kind, runs_callback_kind
from escalated.contracts.scan.resolve import Resolver
from escalated.contracts.scan.surface import SurfaceAnalyzer
from escalated.contracts.scan.tools import AGENT_TOOLS_SUFFIX, UNGATED_SUFFIX, ToolRef, ToolResolver

_T = TypeVar("_T")
# Agents whose tools another module's run reaches through the agent's name.
_AGENT_KINDS = frozenset({
    "agents-agent", "adk-agent", "autogen-agent", "pydantic-agent", "strands-agent", "crew-agent", "swarm-agent", "agno-agent",
})  # fmt: skip


def module_name(rel: str) -> str:
    """``pkg/sub/llm.py`` -> ``pkg.sub.llm``; ``pkg/__init__.py`` -> ``pkg``.

    Scanning a package folder itself (``src/minisweagent``, which has an
    ``__init__.py``), its own name comes first (``minisweagent.models.x``), so
    the project's absolute imports of its own modules resolve (PACKAGE).
    """
    parts = rel[: -len(".py")].split("/") if rel.endswith(".py") else rel.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    package = PACKAGE.get()
    return ".".join([package, *parts] if package else parts)


# The dotted name of the scanned folder when it is a package (set by the scan of a tree).
PACKAGE: ContextVar[str] = ContextVar("escalated_scanned_package", default="")


def package_of(folder: Path) -> str:
    """``src/minisweagent`` (with ``__init__.py``) -> ``minisweagent``; ``a/b`` packages both -> ``a.b``."""
    names: list[str] = []
    current = folder.resolve()
    while (current / "__init__.py").is_file() and current.name.isidentifier():
        names.insert(0, current.name)
        current = current.parent
    return ".".join(names)


@attrs.frozen
class ScriptFolders:
    """The scanned tree's modules (every dotted prefix of every ``.py`` file's module name) and
    its packages (folders with ``__init__.py``), for ``absolutise``'s script imports."""

    modules: frozenset[str] = frozenset()
    packages: frozenset[str] = frozenset()

    @classmethod
    def of(cls, rels: Iterable[str]) -> ScriptFolders:
        modules: set[str] = set()
        packages: set[str] = set()
        for rel in rels:
            name = module_name(rel)
            parts = name.split(".")
            modules.update(".".join(parts[:end]) for end in range(1, len(parts) + 1))
            if rel == "__init__.py" or rel.endswith("/__init__.py"):
                packages.add(name)
        return cls(frozenset(modules), frozenset(packages))


_NO_FOLDERS = ScriptFolders()
# The scanned tree's modules and packages (set by the scan of a tree; none for one source).
SCRIPT_FOLDERS: ContextVar[ScriptFolders] = ContextVar("escalated_script_folders", default=_NO_FOLDERS)


def absolutise(index: Imports, rel: str) -> None:
    """Turn the module's relative imports into absolute names in ``index.imports``.

    A script's absolute imports of its own folder's modules are named from the scan root too:
    Python puts a script's folder first on ``sys.path``, so ``from utils.call_llm import call_llm``
    in ``app/nodes.py`` (``app`` no package) is ``app/utils/call_llm.py``, not another app's
    ``utils`` in a collection of examples each with its own.
    """
    _script_imports(index, rel)
    package = module_name(rel).split(".")
    if not rel.endswith("__init__.py"):
        package = package[:-1]
    for local, (level, target) in index.relative_imports.items():
        base = package[: len(package) - (level - 1)] if level > 1 else package
        if level - 1 > len(package):
            continue
        index.imports.setdefault(local, ".".join([*base, target]) if base else target)


def _script_imports(index: Imports, rel: str) -> None:
    folder = module_name(rel).rpartition(".")[0] if not rel.endswith("__init__.py") else None
    known = SCRIPT_FOLDERS.get()
    if not folder or folder in known.packages or index.script_folder is not None:
        return
    index.script_folder = folder
    for local, target in list(index.imports.items()):
        if f"{folder}.{target.partition('.')[0]}" in known.modules:
            index.imports[local] = f"{folder}.{target}"
            index.forget_packages()


def exports(index: ModuleIndex, rel: str = "") -> dict[str, Kind]:
    """Name -> kind for every model object the module binds at top level
    (``client``) or its module-level functions return (``get_client()``), and the project class a
    top-level name or a top-level class's field is annotated with (``conversation: Conversation``)."""
    resolver = Resolver(index)
    found: dict[str, Kind] = {}
    for (owner, name), kind in resolver.bindings.items():
        if owner == MODULE_SCOPE and "." not in name:
            found[name] = kind
        elif owner in index.class_nodes and "." not in owner and name.count(".") == 1 and name.startswith("self."):
            # self.writer = prompt | llm in Agents.__init__: Agents().writer is the model elsewhere too.
            found[f"{owner}.{name[5:]}"] = kind
    for name, scopes in index.functions_by_name.items():
        helper = next((s for s in scopes if s.class_name is None and s.parent is index.module_scope), None)
        returned = resolver.returned_kind(helper) if helper is not None else None
        built = _classes_built(index, helper) if returned is not None and returned.kind.startswith("object:") else None
        if built:
            # def make_model(backend): return OpenAIDecoder(...) / AnthropicDecoder(...): in another module the
            # name of a class of this one means nothing; which classes it builds does (resolved there).
            returned = Kind("project", "instances:" + ",".join(built))
        if returned is not None:
            found[f"{name}()"] = returned
        runs = index.runs_callback(helper) if helper is not None and returned is None else None
        if runs is not None:
            # retry_with_fallback_models(f): returns await f(model), so handed a wrapper it asks the model.
            found[f"{name}()"] = runs_callback_kind(*runs)
    for owner, method, _built in crew_methods(index):
        found[f"{owner}.{method}()"] = Kind("litellm", "crew")  # SomeCrew().crew() in another module
    for qualname, scope in index.scopes.items():
        # def for_provider(provider) -> type["BaseLLMClient"]: it hands out a class of the module (or a
        # subclass), so BaseLLMClient.for_provider(p)(config) elsewhere builds a BaseLLMClient.
        handed = _class_returned(index, scope)
        top = scope.parent is index.module_scope or (
            scope.class_name is not None and "." not in scope.class_name and qualname.count(".") == 1 and qualname.startswith(f"{scope.class_name}.")
        )
        if handed is not None and top:
            found.setdefault(f"{qualname}()", Kind("project", f"class:{handed}"))
        interface = _interface_returned(resolver, index, scope) if handed is None and top else None
        if interface is not None:
            # def get_service(name) -> "BaseService" (an ABC of the module): whichever subclass it builds,
            # BaseService.get_service(...) elsewhere is an instance of that interface.
            found.setdefault(f"{qualname}()", Kind("project", f"returns:{interface}"))
        returns = getattr(scope.node, "returns", None) if top and handed is None and interface is None else None
        held = _held_class(index, returns.annotation, module_name(rel) if rel else "") if returns is not None else None
        if held is not None and held.startswith("annotated:"):
            # def create_issue_investigator(self) -> "IssueInvestigator" (imported under TYPE_CHECKING, or
            # in the body): whether it is a project class is known only with every module's table (Resolver).
            found.setdefault(f"{qualname}()", Kind("project", held))
    for scope, name, value in index.assignments:
        # APIBackend = get_api_backend (an alias of a factory of the module): APIBackend() is get_api_backend().
        if scope is index.module_scope and "." not in name and isinstance(value, cst.Name) and f"{value.value}()" in found:
            found.setdefault(f"{name}()", found[f"{value.value}()"])
    for qualname in index.class_nodes:
        sdk_base = resolver._sdk_base(qualname, index.module_scope) if "." not in qualname else None
        if sdk_base is not None and not _own_methods(index, qualname):
            # class WrappedChatOpenAI(ChatOpenAI): built or annotated in another module, it is the SDK's object
            # (a subclass with methods of its own, MetaGPT's ZhiPuModelAPI.acreate, stays a project class
            # there: its methods are the project's wrappers).
            found.setdefault(f"{qualname}()", sdk_base)
        if "." not in qualname and qualname not in found and sdk_base is None:
            # Store(): a project object, whatever its attributes are called; Model(Protocol): any object.
            found[qualname] = PROJECT_INTERFACE if _declares_only(resolver, index, qualname) else PROJECT_CLASS
            if f"{qualname}.__getattr__" in index.scopes:
                # func = Functionz(); func.gpt_call(...) elsewhere: attributes looked up by name at run time.
                found[f"{qualname}.__getattr__"] = BY_NAME
        registrar = _registrar(index, qualname, module_name(rel) if rel else "") if "." not in qualname else None
        if registrar is not None:
            # @register_agent(models=r"claude-.*") class AnthropicLoop: one of the classes a registry of the
            # project holds, which a runner picks at run time (see call_match.registered_families).
            found[f"{qualname}.{REGISTERED}"] = registered_kind(registrar)
    for name, held in _annotated(index, module_name(rel) if rel else ""):
        found.setdefault(name, Kind("project", held))
    # Syntax nodes belong to the defining module: keep only what the kind is.
    return {name: attrs.evolve(kind, origin=None, base=None) for name, kind in found.items()}


def _registrar(index: ModuleIndex, qualname: str, module: str) -> str | None:
    """The project decorator registering the class (``@register_agent(models=...)``, ``@registry.register``):
    a function of this module or one imported from the project's own package (its first name one of this
    module's path), called or not. The first such decorator, by its qualified name."""
    packages = set(module.split(".")[:-1])
    for decorator in index.class_nodes[qualname].decorators:
        func = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        name = dotted_name(func)
        if name is None:
            continue
        if "." not in name and any(s.class_name is None and s.parent is index.module_scope for s in index.functions_by_name.get(name, ())):
            return f"{module}.{name}" if module else name
        head, _, rest = name.partition(".")
        relative = index.relative_imports.get(head)
        if relative is not None and module:
            # from ..decorators import register_agent: the project's, named absolutely (as absolutise does)
            level, target = relative
            base = module.split(".")[:-1]
            base = base[: len(base) - (level - 1)] if level > 1 else base
            return ".".join([*base, target, *([rest] if rest else [])])
        qualified = index.qualified(func)
        if qualified is not None and qualified.split(".")[0] in packages:
            return qualified
    return None


_CONTEXT_VARS = frozenset({"contextvars.ContextVar"})


def _annotated(index: ModuleIndex, module: str) -> Iterable[tuple[str, str]]:
    """``SESSION_CONTEXT: ContextVar[SessionContext]`` at top level, ``conversation: Conversation`` in a
    top-level class's body: (name, ``annotated:<class>`` or ``contextvar:<class>``) for a class another
    module may turn out to be the project's (an import, or a class of this module). Whether it is one is
    known only once every module's table is (``Resolver``): nothing is a model object for it."""
    bodies: list[tuple[str, Sequence[cst.CSTNode]]] = []
    if isinstance(index.module_scope.node, cst.Module):
        bodies.append(("", index.module_scope.node.body))
    for qualname, node in index.class_nodes.items():
        if "." not in qualname and isinstance(node.body, cst.IndentedBlock):
            bodies.append((f"{qualname}.", node.body.body))
    for prefix, body in bodies:
        for statement in body:
            small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
            if not (isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name)):
                continue
            held = _held_class(index, small.annotation.annotation, module)
            if held is not None:
                yield prefix + small.target.value, held


def _held_class(index: ModuleIndex, node: cst.BaseExpression, module: str) -> str | None:
    """``annotated:<class>`` for the project class an annotation may name (``syntax.annotated_class``),
    ``contextvar:<class>`` for ``ContextVar[<class>]`` (whose ``get()`` is one)."""
    var: cst.BaseExpression | None = None  # SESSION_CONTEXT: ContextVar[SessionContext]: SessionContext
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        var = node.slice[0].slice.value if index.qualified(node.value) in _CONTEXT_VARS else None
    named = annotated_class(node if var is None else var, index.qualified, depth=0 if var is None else 1)
    if isinstance(named, cst.Name) and named.value in index.class_nodes and module:
        held: str | None = f"{module}.{named.value}"
    else:
        held = index.qualified(named) if named is not None else None
    if held is None or "." not in held:
        return None
    return ("annotated:" if var is None else "contextvar:") + held


_INTERFACE_BASES = frozenset({"typing.Protocol", "typing_extensions.Protocol", "abc.ABC"})
_TYPE_OF = frozenset({"type", "Type", "typing.Type", "typing_extensions.Type"})


def _class_returned(index: ModuleIndex, scope: Scope) -> str | None:
    """``-> type[Model]``, ``-> Type["Model"]``: the module's top-level class a function returns, not an instance."""
    returns = getattr(scope.node, "returns", None)
    annotation = returns.annotation if returns is not None else None
    if not isinstance(annotation, cst.Subscript) or len(annotation.slice) != 1:
        return None
    outer = annotation.value
    if not (isinstance(outer, cst.Name) and outer.value == "type") and index.qualified(outer) not in _TYPE_OF:
        return None
    element = annotation.slice[0].slice
    inner = element.value if isinstance(element, cst.Index) else None
    name = inner.value if isinstance(inner, cst.Name) else (literal(inner) if isinstance(inner, cst.SimpleString) else None)
    return name if name is not None and name in index.class_nodes else None


def _classes_built(index: ModuleIndex, helper: Scope | None) -> list[str]:
    """``return OpenAIDecoder(...)`` in one branch, ``return AnthropicDecoder(...)`` in another: the module's
    top-level classes a function returns a new instance of, when every value it returns is one (a factory)."""
    if helper is None:
        return []
    built: list[str] = []
    for node in index.subtree(helper.node):
        if isinstance(node, cst.FunctionDef | cst.Lambda) and node is not helper.node:
            return []  # a nested function's returns are not the factory's (subtree does not stop there)
        if not isinstance(node, cst.Return) or node.value is None:
            continue
        value = node.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in index.class_nodes):
            return []
        if value.func.value not in built:
            built.append(value.func.value)
    return built


def _own_methods(index: ModuleIndex, qualname: str) -> bool:
    """Whether the class defines a method other than ``__init__``."""
    prefix = f"{qualname}."
    return any(
        name.startswith(prefix) and "." not in name[len(prefix):] and name != f"{qualname}.__init__"
        for name in index.scopes
    )


def _interface_returned(resolver: Resolver, index: ModuleIndex, scope: Scope) -> str | None:
    """``-> "BaseService"``, ``-> BaseService``: a function or method annotated to return an instance of
    one of the module's top-level interfaces (a Protocol or an ABC)."""
    returns = getattr(scope.node, "returns", None)
    annotation = returns.annotation if returns is not None else None
    name = annotation.value if isinstance(annotation, cst.Name) else (literal(annotation) if isinstance(annotation, cst.SimpleString) else None)
    if name is None or name not in index.class_nodes or "." in name:
        return None
    return name if _declares_only(resolver, index, name) else None


def _declares_only(resolver: Resolver, index: ModuleIndex, qualname: str) -> bool:
    """``class Model(Protocol)``, ``class Caller(ABC)``, ``metaclass=ABCMeta``: an interface; and a class of
    no base that marks a method ``@abstractmethod`` (``class LLM:`` whose ``completion`` the subclasses
    write): Python enforces nothing there, but the author says which methods others implement. Not one
    deriving from another class (``class BaseMemory(BaseModel)``, a pydantic model whose fields default to
    a concrete memory): that marker is as loose, and the class is as likely used as it is."""
    node = index.class_nodes[qualname]
    bases = [resolver.qualified(arg.value) for arg in node.bases]
    if any(base in _INTERFACE_BASES for base in bases):
        return True
    if any(resolver.qualified(arg.value) == "abc.ABCMeta" for arg in node.keywords):
        return True
    return not node.bases and any(
        isinstance(statement, cst.FunctionDef)
        and any(resolver.qualified(d.decorator) == _ABSTRACT for d in statement.decorators if isinstance(d.decorator, cst.Name | cst.Attribute))
        for statement in node.body.body
    )


_ABSTRACT = "abc.abstractmethod"


def tool_exports(
    rel: str, module: cst.Module, index: ModuleIndex, *, wanted: Callable[[str], bool] = lambda _name: True
) -> dict[str, tuple[Finding, ...]]:
    """Name -> findings for the tool lists and functions the module defines at top level.

    ``from .tools import TOOLS`` then ``bind_tools(TOOLS)``: the tools are
    classified where they are written, and the finding says which file.
    Lines are 0 there: a line number would point into the wrong file.
    Classes and functions are classified only when ``wanted`` (their name) says
    another module may look them up: classifying every test function of a
    real tree was a quarter of its scan.
    """
    surface = SurfaceAnalyzer(index, Resolver(index), line_of=lambda _node: 0, code_of=module.code_for_node, llm_calls=set())
    found: dict[str, list[Finding]] = {}
    for (owner, name), value in index.values.items():
        if owner == MODULE_SCOPE and isinstance(value, cst.List | cst.Tuple):
            tools, findings = surface.tools.resolve(value, index.module_scope)
            found[name] = findings + [f for tool in tools for f in surface.classify_tool(tool)]
    for owner, method, built in crew_methods(index):
        # The crew's agents' tools, classified here for SomeCrew().crew().kickoff() in another module.
        crew: list[Finding] = []
        for agent in agents_of(index, built):
            for expr in tools_in_args(agent.args):
                if not isinstance(expr, McpServers):
                    tools, findings = surface.tools.resolve(expr, index.module_scope)
                    crew += findings + [f for tool in tools for f in surface.classify_tool(tool)]
        found[f"{owner}.{method}()"] = crew
    for name, node in index.class_nodes.items():
        if "." not in name and name not in found and wanted(name):  # a BaseTool class another module offers: SendEmailTool()
            found[name] = surface.classify_tool(ToolRef(name, node, 0))
    for name, scopes in index.functions_by_name.items():
        for scope in scopes:
            if scope.parent is index.module_scope and scope.class_name is None and wanted(name):
                tool = ToolRef(surface.tools.tool_name(scope) or name, scope.node, 0)
                found[name] = surface.classify_tool(tool)
                returned = _returned_tools(surface, scope)
                if returned is not None:
                    found[f"{name}()"] = returned
    return {name: tuple(sorted({attrs.evolve(f, detail=f"{f.detail} (in {rel})") for f in findings})) for name, findings in found.items()}


def imports_tools_for_others(exported: Mapping[str, Kind], tools: Mapping[str, tuple[Finding, ...]]) -> bool:
    """Does the module bind an agent at top level, or have a helper returning tools (what the first pass found)?"""
    return any(kind.kind in _AGENT_KINDS for kind in exported.values()) or any(name.endswith("()") for name in tools)


def agent_tool_exports(
    rel: str,
    module: cst.Module,
    index: ModuleIndex,
    *,
    imported: Mapping[str, tuple[Finding, ...]],
    externals: Mapping[str, Kind],
    sites: Mapping[str, ToolSite] | None = None,
    wanted: Callable[[str], bool] = lambda _name: True,
) -> dict[str, tuple[Finding, ...]]:
    """``agent@tools`` -> findings for every agent the module binds at top level (``agent = Agent(tools=[...])``,
    ``root_agent = coordinator``): ``Runner.run(agent)`` or ``AdkApp(agent=root_agent)`` in another module
    runs those tools, its sub-agents' and hand-offs' included. Computed once the other modules' tools
    are classified (``imported``), since an agent's tools are usually imported from a tools module."""
    resolver = Resolver(index, externals=externals)
    surface = SurfaceAnalyzer(
        index, resolver, line_of=lambda _node: 0, code_of=module.code_for_node, llm_calls=set(), imported_tools=imported,
        tool_sites=sites,
    )
    found: dict[str, list[Finding]] = {}
    for name, scopes in index.functions_by_name.items():
        # make_tools() returning tools this module imports: classified again, now that those are known.
        for scope in scopes:
            if scope.parent is index.module_scope and scope.class_name is None and wanted(f"{name}()"):
                returned = _returned_tools(surface, scope)
                if returned is not None:
                    found[f"{name}()"] = returned
    for (owner, name), value in index.values.items():
        if owner != MODULE_SCOPE or not isinstance(value, cst.Call | cst.Name) or not wanted(name):
            continue
        agent = resolver.kind_of(value, index.module_scope)
        if agent is not None and agent.kind in _AGENT_KINDS and agent.origin is not None:
            tools, findings = surface.tools.resolve_agent(value, index.module_scope)
            classified = [(tool, surface.classify_tool(tool)) for tool in tools]
            found[f"{name}{AGENT_TOOLS_SUFFIX}"] = findings + [f for _tool, fs in classified for f in fs]
            # Risky tools the run reaches that nothing here shows gated (a guard_tool, the framework's approval).
            ungated = [f for f in findings if _risky(f)] + [
                f for tool, fs in classified for f in fs
                if _risky(f) and not (tool.gated or surface._site(tool).guard_id or surface._site(tool).approval)
            ]  # fmt: skip
            if ungated:
                why = f"not analysed: whether the risky tools of the agent {name!r} (another module) ask a human first"
                found[f"{name}{UNGATED_SUFFIX}"] = [rules.fact("tools-unresolved", why, 0)]
    return {name: tuple(sorted({_in(f, rel) for f in findings})) for name, findings in found.items()}


def _risky(found: Finding) -> bool:
    return rules.effective_mode(found) in {"required", "reviewed"} and found.kind != "unresolved-tools"


def _in(found: Finding, rel: str) -> Finding:
    return found if found.detail.endswith(")") and " (in " in found.detail else attrs.evolve(found, detail=f"{found.detail} (in {rel})")


def tool_site_exports(rel: str, module: cst.Module, index: ModuleIndex) -> dict[str, ToolSite]:
    """Name -> where each top-level function is, should another module offer it as a tool.

    The line is 0 here (positions cost a pass over the file); the scan fills in
    the lines of the few sites it reports.
    """
    tools = ToolResolver(index, lambda _node: 0, module.code_for_node)
    found: dict[str, ToolSite] = {}
    for name, scopes in index.functions_by_name.items():
        for scope in scopes:
            if scope.parent is index.module_scope and scope.class_name is None:
                site = ToolSite(tools.tool_name(scope) or name, rel, scope.qualname, 0, tools.guard_id(scope), tools.needs_approval(scope))
                found[name] = site
    return found


def imported_by(targets: set[str], rel: str) -> Callable[[str], bool]:
    """Whether another module can look up ``rel``'s top-level ``name`` in a table.

    Tables are read at an import's target or below it (``tools.send`` after
    ``import tools``, ``make_tools()`` after ``from .tools import make_tools``):
    a name is wanted when one of its keys (``table``'s, every suffix of the module
    path) has an import target as a dotted prefix. A key nobody can read is not
    worth computing; the keys that can be read get every module's value, so
    ``table`` drops the same ambiguous ones.
    """
    parts = module_name(rel).split(".")
    prefixes = [".".join(parts[start:]) for start in range(len(parts))]

    def wanted(name: str) -> bool:
        for prefix in prefixes:
            pieces = f"{prefix}.{name.removesuffix('()')}".split(".")
            if any(".".join(pieces[:end]) in targets for end in range(1, len(pieces) + 1)):
                return True
        return False

    return wanted


def wrapper_exports(returns_output: Mapping[str, tuple[str, str]]) -> dict[str, dict[str, tuple[str, str]]]:
    """``LLM.completion`` returns the output -> ``{"LLM": {"completion": ...}}``; ``ask`` -> ``{"ask": {"": ...}}``.

    Only top-level functions and methods of top-level classes: what another module can call, or a
    subclass in another module (``self._aask(…)`` of ``Action._aask``: private methods too). Of the
    dunder methods only ``__call__``: ``client(convo)`` on an instance built elsewhere runs it.
    """
    out: dict[str, dict[str, tuple[str, str]]] = {}
    for qualname, found in sorted(returns_output.items()):
        parts = qualname.split(".")
        if len(parts) == 1:
            out.setdefault(parts[0], {})[""] = found
        elif len(parts) == 2 and (not parts[1].startswith("__") or parts[1] == "__call__"):
            out.setdefault(parts[0], {})[parts[1]] = found
    return out


def _returned_tools(surface: SurfaceAnalyzer, scope: Scope) -> list[Finding] | None:
    """make_tools() returning [wipe_workspace, ...]: the tools of that list, for ``bind_tools(make_tools())``."""
    values = [n.value for n in surface.index.subtree(scope.node) if isinstance(n, cst.Return) and n.value is not None]
    if not values or not all(isinstance(v, cst.List | cst.Tuple | cst.ListComp | cst.Call) for v in values):
        return None
    out: list[Finding] = []
    for value in values:
        tools, findings = surface.tools.resolve(value, scope)
        if not isinstance(value, cst.List | cst.Tuple) and (not (tools or findings) or any(f.kind == "unresolved-tools" for f in findings)):
            return None  # list(table.values()), [table[n] for n in names]: only when that is a table of tools
        out += findings + [f for tool in tools for f in surface.classify_tool(tool)]
    return out


def table(modules: Iterable[tuple[str, Mapping[str, _T]]]) -> dict[str, _T]:
    """Qualified name -> what one of ``exports``/``tool_exports`` found for it.

    Each name is registered under every suffix of its module path, so both
    ``src.app.llm.client`` and ``app.llm.client`` find it (src layouts).
    """
    out: dict[str, _T | None] = {}
    for rel, found in modules:
        parts = module_name(rel).split(".")
        for start in range(len(parts)):
            prefix = ".".join(parts[start:])
            for name, value in found.items():
                key = f"{prefix}.{name}"
                if start and _names_sdk(key):
                    continue
                out[key] = None if key in out and out[key] != value else value
    return {key: value for key, value in out.items() if value is not None}


# The top-level packages of the SDKs whose names apis knows.
_SDK_ROOTS = frozenset(name.partition(".")[0] for name in [*apis.CONSTRUCTORS, *apis.MODULE_FUNCTIONS, *apis.MODULE_CLIENTS])


def _names_sdk(key: str) -> bool:
    """``openai.OpenAI`` as the short name of ``pandasai_openai/openai.py``'s class ``OpenAI``: a module
    inside a package is imported by its package's path, so ``from openai import OpenAI`` elsewhere is the
    SDK's client, never that class. A shortened name that an SDK's client or module function has (or one
    of its members: ``openai.OpenAI.client``) is not the project's."""
    parts = key.removesuffix("()").split(".")
    if parts[0] not in _SDK_ROOTS and not parts[0].startswith(("langchain", "llama_index")):
        return False
    for end in range(2, len(parts) + 1):
        head = ".".join(parts[:end])
        if apis.constructor(head) is not None or head in apis.MODULE_FUNCTIONS:
            return True
    return False


def with_reexports(found: Sequence[tuple[str, Mapping[str, _T]]], modules: Sequence[tuple[str, Imports]]) -> dict[str, _T]:
    """``table(found)``, plus what modules import from each other.

    ``from .core.models import client`` in ``app/__init__.py`` makes
    ``app.client`` that client too, so ``from app import client`` resolves.
    Re-exports of re-exports are followed a few levels.
    """
    merged = table(found)
    for _ in range(3):
        # A class's own entries (ClassifierResult.selected_agent: what its field is annotated with), by class.
        members: dict[str, list[str]] = {}
        for key in merged:
            owner, _, member = key.rpartition(".")
            if owner and member and not member.endswith("()"):
                members.setdefault(owner, []).append(member)
        imported = [
            (rel, {
                **{
                    local + suffix: merged[target + suffix]
                    for local, target in index.imports.items() for suffix in ("", "()") if target + suffix in merged
                },
                **{
                    f"{local}.{member}": merged[f"{target}.{member}"]
                    for local, target in index.imports.items() if target in merged for member in members.get(target, ())
                },
            })
            for rel, index in modules
        ]  # fmt: skip
        merged = table([*found, *imported])
    return merged
