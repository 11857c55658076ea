"""The scan's pipeline: imports read off Python's tree, modules parsed by libcst only while needed."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import libcst as cst
import pytest
from click.testing import CliRunner

from escalated.cli import main
from escalated.contracts.deep import deep_stack
from escalated.contracts.scan.index import MODULE_SCOPE, Imports, ModuleIndex, Signature, functions_of, parse_module

CORPUS = Path(__file__).parent / "corpus"

TRICKY = """\
import a.b.c
import a.b as ab, d
from . import sibling
from .. import parent as p
from ...deep.er import x as y, z
from .pkg import (one,
    two as deux)
from __future__ import annotations
from star import *
import os.path

try:
    import ujson as json
except ImportError:
    import json
else:
    from json import dumps
finally:
    import atexit

class K:
    from inside.klass import thing
    def f(self):
        import late as thing
        if True:
            from nested.deeper import thing
        match thing:
            case 1:
                from cases import thing as case_thing
            case _:
                import json
        with open("x") as fh:
            from within import thing

def g():
    import a.b.c as abc
    from os import path as thing
"""


def _both(source: str) -> tuple[tuple[list, list], tuple[list, list]]:
    def work() -> tuple[tuple[list, list], tuple[list, list]]:
        index = ModuleIndex().build(parse_module(source))
        python = Imports.of(ast.parse(source))
        return (
            (list(index.imports.items()), list(index.relative_imports.items())),
            (list(python.imports.items()), list(python.relative_imports.items())),
        )

    return deep_stack(work)


@pytest.mark.parametrize("path", sorted(CORPUS.rglob("*.py")), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_imports_read_off_pythons_tree_are_the_indexs_in_the_same_order(path: Path) -> None:
    index, python = _both(path.read_text())
    assert python == index


def test_imports_in_every_kind_of_block_and_a_name_imported_twice_end_as_in_the_index() -> None:
    index, python = _both(TRICKY)
    assert python == index
    imports = dict(python[0])
    assert imports["thing"] == "os.path" and imports["json"] == "ujson" and imports["abc"] == "a.b.c"
    assert dict(python[1])["y"] == (3, "deep.er.x")


FUNCTIONS = """
def run(a, /, b, *args, c, **kw): ...
class Runner:
    def run(self, plan): ...
    async def stream(cls, x, *, y=1):
        def inner(z): ...
        class Local:
            def method(self, w): ...
    class Inner:
        def deep(self): ...
if flag:
    def run(other): ...  # defined twice: the later one
else:
    try:
        def fallback(q): ...
    except ImportError:
        pass
def outer():
    class Made:
        def go(self, v): ...
    def helper(u): ...
match command:
    case "x":
        def matched(m): ...
"""


def _signatures(source: str) -> tuple[dict[str, Signature], dict[str, Signature]]:
    index = ModuleIndex().build(parse_module(source))
    return functions_of(ast.parse(source)), {name: Signature.of(s) for name, s in index.scopes.items() if name != MODULE_SCOPE}


def test_functions_read_off_pythons_tree_are_the_indexs_scopes() -> None:
    python, index = _signatures(FUNCTIONS)
    assert python == index
    assert python["run"] == Signature(None, ("other",), frozenset({"other"}))
    assert python["Runner.stream"] == Signature("Runner", ("cls", "x"), frozenset({"cls", "x", "y"}))
    assert python["Runner.stream.inner"].class_name == "Runner"
    assert python["Runner.stream.Local.method"].class_name == "Runner.stream.Local"
    assert python["Runner.Inner.deep"].class_name == "Runner.Inner"
    assert python["outer.Made.go"].class_name == "outer.Made" and python["outer.helper"].class_name is None
    assert {"fallback", "matched"} <= python.keys()


@pytest.mark.parametrize("path", sorted(CORPUS.rglob("*.py")), ids=lambda p: p.relative_to(CORPUS).as_posix())
def test_functions_read_off_pythons_tree_are_the_indexs_on_the_corpus(path: Path) -> None:
    python, index = deep_stack(lambda: _signatures(path.read_text()))
    assert python == index


def test_parsing_without_libcsts_checks_leaves_them_on_for_every_other_node() -> None:
    parse_module("x = 1\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")


def test_a_module_only_the_wrapper_rounds_caller_imports_is_followed_into(tmp_path: Path) -> None:
    # tools.py is parsed (SDK name, call shape) but no parsed module imports it, so it is analysed
    # and released; main.py is parsed only in the wrapper round (it calls ask), and follows the
    # answer into tools.run_shell: the scan parses tools.py again and follows it as before.
    app = tmp_path / "app"
    app.mkdir()
    (app / "__init__.py").write_text("")
    (app / "llm.py").write_text(
        "from openai import OpenAI\n\nclient = OpenAI()\n\n\n"
        "def ask(question):\n    return client.responses.create(model='m', input=question).output_text\n"
    )
    (app / "tools.py").write_text(
        "import subprocess\n\nimport openai  # its types\n\n\ndef run_shell(command):\n    subprocess.run(command, shell=True)\n"
    )
    (app / "main.py").write_text("from app.llm import ask\nfrom app.tools import run_shell\n\n\ndef fix(problem):\n    run_shell(ask(problem))\n")
    result = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path), "--format", "json"])
    assert result.exit_code == 1, result.output
    calls = {(c["path"], c["function"]): c for c in json.loads(result.output)["calls"]}
    site = calls[("app/main.py", "fix")]
    assert site["mode"] == "required"
    assert [f["detail"] for f in site["findings"]] == ["run_shell() -> subprocess.run() (in app/tools.py)"]
