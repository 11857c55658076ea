"""``pyindex.PyIndex`` (``ModuleIndex``'s tables read off Python's tree) equals the libcst index."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from escalated.contracts.scan import crossref, discovery
from escalated.contracts.scan.flows import Lookups
from escalated.contracts.scan.index import ModuleIndex, WorkMeter, parse_module
from escalated.contracts.scan.pyindex import (
    Annotation, PyIndex, annotated, class_returned, differences, export_differences, own_methods, registrar, tool_site_exports,
)  # fmt: skip

CORPUS = Path(__file__).parent / "corpus"

# Where libcst's fields come in another order than Python's (a class's body before its bases, a
# function's body before its decorators, positional-only parameters last, a dict's keys and values in
# turn, a call's keywords as written, a case's guard after its body): a name bound twice, or a table's
# keys, end in libcst's order only if the walk follows it.
ORDERS = """
import os, google.genai as genai
from .llm import client as llm_client, helper
from ..pkg import *
from agents import *

class Base(first := make(), metaclass=Meta):
    first = 1
    model: OpenAI
    runner: Runner = Field(default_factory=Runner)
    runner: Runner = Field(default_factory=Runner)

@register(deco := 1)
def build(a, /, b=(b_default := 2), *args, c=(c_default := 3), **kw) -> (ret := 4):
    deco = 5
    ret = 6
    a_dict = {(k1 := 1): (v1 := 2), **extra, (k1 := 3): (v1 := 4)}
    call(x := 1, y=(x := 2), *rest, z=(x := 3))
    with open(p) as handle, lock() as (one, two):
        handle = 7
    (agent, (tools, _)), config = pair()
    first, *rest, last = items
    self.items += [more]
    match command:
        case {"go": where} if (guard := where):
            guard = 8

class Agent:
    name: str = "x"
    def __init__(self):
        self.client: OpenAI = factory()
        self.client = OpenAI()
        self.tools += [t]
        def inner(q):
            self.x = q
    class Inner:
        y = Inner2()
        async def run(self, *, k):
            async with session() as s:
                return s
"""


def _differences(source: str) -> list[str]:
    module = parse_module(source)
    return differences(ModuleIndex().build(module), module, PyIndex().build(ast.parse(source), source))


def test_tables_follow_libcsts_order() -> None:
    assert _differences(ORDERS) == []
    index = PyIndex().build(ast.parse(ORDERS), ORDERS)
    # The walk's order shows in what a name bound twice ends as, and in the order of the keys.
    assert ast.unparse(index.values[("build", "x")]) == "3"
    assert ast.unparse(index.values[("build", "k1")]) == "3"
    assert [k for (owner, k) in index.class_attrs if owner == "Base"] == ["self.first", "self.model", "self.runner"]
    assert isinstance(index.class_attrs[("Base", "self.runner")], Annotation)
    assert ast.unparse(index.values[("Base", "self.first")]) == "make()"  # the base's walrus comes after the body's
    assert list(index.scopes) == ["<module>", "build", "Agent.__init__", "Agent.__init__.inner", "Agent.Inner.run"]
    assert index.scopes["Agent.__init__.inner"].class_name == "Agent"
    assert index.relative_imports == {"llm_client": (1, "llm.client"), "helper": (1, "llm.helper"), "*pkg": (2, "pkg")}


def test_the_check_sees_a_difference() -> None:
    module = parse_module(ORDERS)
    py_index = PyIndex().build(ast.parse(ORDERS), ORDERS)
    py_index.values[("build", "x")] = py_index.values[("build", "deco")]
    found = differences(ModuleIndex().build(module), module, py_index)
    assert len(found) == 1 and found[0].startswith("values:")


@pytest.mark.parametrize("path", sorted(CORPUS.rglob("*.py")), ids=lambda p: str(p.relative_to(CORPUS)))
def test_corpus(path: Path) -> None:
    assert _differences(path.read_text(encoding="utf-8")) == []


TOOLS = """
from agents import function_tool
from escalated.guard import guard_tool
from escalated.adapters.langgraph import interrupt_for_approval
from escalated.adapters import crewai as gates
from .mine import guard_tool as local_guard

@function_tool(name_override="refund_order", needs_approval=True)
def refund(order_id: str) -> str: ...

@tool("send" "_mail", name="sender")
def mail(to): ...

@tool(b"wipe")
@guard_tool("billing.wipe")
def wipe(): ...

@tool(*names)
@local_guard(id="ops.run")
def run(cmd): ...

@function_tool(needs_approval=False)
def read(path): ...

@function_tool(requires_confirmation=None, approval_mode="always_require")
def deploy(): ...

@interrupt_for_approval
def delete(path): ...

@gates.approval_required(policy="always")
def transfer(amount): ...

@tool(name="")
def shadowed(): ...

def shadowed(): ...

class Toolbox:
    @tool("method")
    def method(self): ...
"""


def test_tool_sites_as_crossref_reads_them() -> None:
    module = parse_module(TOOLS)
    libcst_index, py_index = ModuleIndex().build(module), PyIndex().build(ast.parse(TOOLS), TOOLS)
    for index in (libcst_index, py_index):
        crossref.absolutise(index, "app/tools.py")
    sites = tool_site_exports("app/tools.py", py_index)
    assert list(sites.items()) == list(crossref.tool_site_exports("app/tools.py", module, libcst_index).items())
    by_name = {name: (site.name, site.guard_id, site.approval) for name, site in sites.items()}
    assert by_name == {
        "refund": ("refund_order", None, True),
        "mail": ("sender", None, False),  # two literals side by side are no name (libcst's ConcatenatedString)
        "wipe": ("wipe", "billing.wipe", False),
        "run": ("run", None, False),  # a project's own guard_tool (app.mine) is not escalated's
        "read": ("read", None, False),
        "deploy": ("deploy", None, True),
        "delete": ("delete", None, True),
        "transfer": ("transfer", None, True),
        "shadowed": ("shadowed", None, False),
    }


LOOKUPS = """
from ..pkg import *
from .llm import Base as LocalBase
import app.models as models

class Plain(LocalBase, models.Model, *mixins, metaclass=Meta, **options):
    class Inner(Plain, make()):
        pass

def helper():
    class Local(Plain):
        pass

picked = 1
"""


@pytest.mark.parametrize(("rel", "source"), [
    ("app/agents/plain.py", LOOKUPS),
    *((str(p.relative_to(CORPUS)), p.read_text(encoding="utf-8")) for p in sorted(CORPUS.rglob("*.py"))),
])  # fmt: skip
def test_lookups_as_the_loaded_index_has_them(rel: str, source: str) -> None:
    # Taint by parameter follows a method into its class's bases and a name into a package's re-export
    # by these alone: read off Python's tree, they are what libcst's index has once the module is loaded.
    entry = discovery._Module(rel, source, discovery.Imports())
    entry.star_names = {"picked": "app.pkg.picked", "helper_tool": "app.pkg.helper_tool"}
    loaded = entry.parsed_apart(WorkMeter())
    assert loaded is not None
    assert entry.lookups() == Lookups.of(loaded[2])


def test_lookups_of_a_class_and_a_star_import() -> None:
    entry = discovery._Module("app/agents/plain.py", LOOKUPS, discovery.Imports())
    entry.star_names = {"picked": "app.pkg.picked", "helper_tool": "app.pkg.helper_tool"}
    found = entry.lookups()
    assert found is not None
    assert found.bases == {
        "Plain": ("LocalBase", "models.Model", "mixins"), "Plain.Inner": ("Plain", None), "helper.Local": ("Plain",),
    }
    assert found.imports["LocalBase"] == "app.agents.llm.Base" and found.imports["helper_tool"] == "app.pkg.helper_tool"
    assert "picked" not in found.imports  # the module binds it itself


EXPORTS = '''
from contextvars import ContextVar
from typing import Optional, Type
from ..registry import register_agent
from app.registry import registry
from app.models import Conversation as Conv
import app.models as models

SESSION: ContextVar["Session"] = ContextVar("session")
current: Optional[Conv] = None
maybe: "Conv | None" = None
a: Conv; b: Conv
plain: int = 3

def register(cls):
    return cls

@register_agent(models=r"claude-.*")
class Session:
    conversation: Conv
    other: models.Other | None = None
    def run(self) -> type["Session"]: ...
    def __init__(self): ...

@registry.register
class Loop: conversation: Conv

@register
class Builder:
    def __init__(self): ...
    def make(self) -> Type[Session]: ...
    def build(self) -> type[Session, Loop]: ...

def factory() -> type[Loop]: ...
def bytes_named() -> type[b"Loop"]: ...
'''


@pytest.mark.parametrize(("rel", "source"), [
    ("app/agents/loop.py", EXPORTS),
    *((str(p.relative_to(CORPUS)), p.read_text(encoding="utf-8")) for p in sorted(CORPUS.rglob("*.py"))),
])  # fmt: skip
def test_exports_helpers_as_crossref_reads_them(rel: str, source: str) -> None:
    module = parse_module(source)
    libcst_index, py_index = ModuleIndex().build(module), PyIndex().build(ast.parse(source), source)
    for index in (libcst_index, py_index):
        crossref.absolutise(index, rel)
    assert export_differences(libcst_index, py_index, crossref.module_name(rel)) == []


def test_exports_helpers_read_what_they_should() -> None:
    py_index = PyIndex().build(ast.parse(EXPORTS), EXPORTS)
    crossref.absolutise(py_index, "app/agents/loop.py")
    module = "app.agents.loop"
    assert annotated(py_index, module) == [
        ("SESSION", "contextvar:app.agents.loop.Session"), ("current", "annotated:app.models.Conversation"),
        ("maybe", "annotated:app.models.Conversation"), ("Session.conversation", "annotated:app.models.Conversation"),
        ("Session.other", "annotated:app.models.Other"),
    ]  # not a and b (one line), nor Loop's one-line body
    assert registrar(py_index, "Session", module) == "app.registry.register_agent"
    assert registrar(py_index, "Loop", module) == "app.registry.registry.register"
    assert registrar(py_index, "Builder", module) == "app.agents.loop.register"
    returned = {q: class_returned(py_index, s) for q, s in py_index.scopes.items()}
    assert returned == {
        "<module>": None, "register": None, "Session.run": "Session", "Session.__init__": None,
        "Builder.__init__": None, "Builder.make": "Session", "Builder.build": None, "factory": "Loop", "bytes_named": "Loop",
    }
    assert own_methods(py_index, "Session") and not own_methods(py_index, "Loop")
