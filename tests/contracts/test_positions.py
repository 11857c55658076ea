"""Spans on demand (scan/positions.py) are the spans libcst computes for the whole module."""

from __future__ import annotations

import ast
import gc
import weakref
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from escalated.contracts.deep import deep_stack
from escalated.contracts.scan.index import ModuleIndex
from escalated.contracts.scan.module import analyse_module
from escalated.contracts.scan.positions import Positions, outline

CORPUS = Path(__file__).parent / "corpus"
TRICKY = '''#!/usr/bin/env python
# a header comment

"""Docstring
over lines."""
import os; import sys


# comments before a decorator
@decorator(
    x=1,
)
# between decorators
@other
def f(a,
      b):
    return call(a, """
    text""", b)  # trailing


class C(Base):

    def m(self):
        if self.x:
            return g(1)
        elif h(2):
            pass
x = [
    y(i) for i in range(3)
]; z = w()


class Outer:
    """Doc."""
    # a comment in the class

    class Inner:
        @staticmethod
        def s(): return k(1)
# a comment at column 0 inside the class
        async def a(self):
            await q(2); r(3)



def tabbed():
\tif x:
\t\treturn v(1)
'''


def _compare(source: str, *, deepest_first: bool = False, kept_outline: bool = False) -> int:
    """``kept_outline``: the lines come from the outline the scan keeps of Python's tree, not the source."""
    module = cst.parse_module(source)
    index = ModuleIndex().build(module)
    index.source = source
    if kept_outline:
        index.outline = outline(ast.parse(source))
    full = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    positions = Positions(module, index, source=None if kept_outline else source)
    checked = 0
    # Deepest first: a method's statements are generated alone before its class is.
    for node in reversed(index.order) if deepest_first else index.order:
        if isinstance(node, cst.Call | cst.Name | cst.FunctionDef | cst.Decorator | cst.SimpleString):
            assert positions.span(node) == full[node], (type(node).__name__, module.code_for_node(node)[:40])
            checked += 1
    return checked


@pytest.mark.parametrize("kept_outline", [False, True], ids=["from-source", "kept-outline"])
def test_tricky_layouts(kept_outline: bool) -> None:
    for deepest_first in (False, True):
        assert _compare(TRICKY, deepest_first=deepest_first, kept_outline=kept_outline) > 30
        assert _compare(TRICKY.replace("\n", "\r\n"), deepest_first=deepest_first, kept_outline=kept_outline) > 30


@pytest.mark.parametrize("path", sorted(p for p in CORPUS.rglob("*.py")), ids=lambda p: str(p.relative_to(CORPUS)))
def test_every_corpus_module(path: Path) -> None:
    # The 500-term expression needs the scan's deep stack.
    deep_stack(lambda: _compare(path.read_text()) + _compare(path.read_text(), deepest_first=True))
    deep_stack(lambda: _compare(path.read_text(), kept_outline=True) + _compare(path.read_text(), deepest_first=True, kept_outline=True))


def test_a_module_python_cannot_parse_falls_back_to_the_whole_module() -> None:
    source = "def f[T](x: T) -> T:\n    return g(x)\n"  # PEP 695: libcst parses it, Python 3.11 does not
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError:
        pytest.skip("this libcst does not parse PEP 695")
    index = ModuleIndex().build(module)
    positions = Positions(module, index, source=source)
    call = next(n for n in index.order if isinstance(n, cst.Call))
    assert positions.line(call) == 2


def test_a_released_module_is_freed_without_the_garbage_collector() -> None:
    """A scan runs the collector rarely: a module whose spans were asked must not be kept alive by a
    cycle between its index and its spans (the tree would wait for a full collection)."""
    source = "from openai import OpenAI\n\nclient = OpenAI()\n\ndef ask(q):\n    return client.chat.completions.create(model='m', messages=[q])\n"
    module = cst.parse_module(source)
    index = ModuleIndex().build(module)
    index.source = source
    assert analyse_module(module, index, path="app.py", externals=None).calls  # spans were computed
    assert index.positions is not None
    freed = weakref.ref(index)  # it holds the tree (libcst's nodes take no weak references)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del module, index
        assert freed() is None
    finally:
        if enabled:
            gc.enable()
