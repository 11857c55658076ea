"""The Python in README.md and docs/ is the API as it is.

Every ```python block parses; every name it imports from escalated exists;
and every call of such a name, or of a method of an escalated client the
page bound earlier (`async with EscalatedClient.from_env() as client:`),
passes arguments its signature accepts. A block runs on from the page's
earlier ones, as a reader reads them. A call whose only argument is `...`
("as above") is checked for existence only. The pages' other names
(frameworks' classes, the reader's own functions) are not ours to check.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
_CLIENTS = {"EscalatedClient", "SyncClient"}


def _blocks(page: Path) -> list[str]:
    return _BLOCK.findall(page.read_text(encoding="utf-8"))


class _Page:
    """What a page's blocks have bound so far: escalated's names, and names bound to its clients."""

    def __init__(self, page: Path) -> None:
        self.page = page
        self.names: dict[str, Any] = {}
        self.checked: list[str] = []
        self.unavailable: set[str] = set()  # imported from an adapter whose framework is not installed here

    def read(self, number: int, source: str) -> None:
        tree = ast.parse(source, filename=f"{self.page.name} block {number}")
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("escalated"):
                self._import(node)
        for node in ast.walk(tree):
            if isinstance(node, ast.withitem) and isinstance(node.optional_vars, ast.Name):
                if (cls := self._client_class(node.context_expr)) is not None:
                    self.names[node.optional_vars.id] = cls
            elif isinstance(node, ast.Call):
                self._check_call(number, node)

    def _import(self, node: ast.ImportFrom) -> None:
        assert node.module is not None
        try:
            module = importlib.import_module(node.module)
        except ImportError as exc:  # an adapter names its missing framework: `pip install 'escalated[crewai]'`
            missing = exc if isinstance(exc, ModuleNotFoundError) else exc.__cause__
            if not isinstance(missing, ModuleNotFoundError) or (missing.name or "escalated").startswith("escalated"):
                raise
            self.unavailable |= {alias.asname or alias.name for alias in node.names}
            return
        for alias in node.names:
            assert hasattr(module, alias.name), f"{self.page.name}: {node.module} has no {alias.name}"
            self.names[alias.asname or alias.name] = getattr(module, alias.name)

    def _client_class(self, expr: ast.expr) -> type | None:
        """The client class of ``EscalatedClient.from_env()`` / ``SyncClient(url, key)``."""
        call = expr.func if isinstance(expr, ast.Call) else None
        while isinstance(call, ast.Attribute):
            call = call.value
        if isinstance(call, ast.Name) and call.id in _CLIENTS and call.id in self.names:
            # SyncClient has EscalatedClient's methods, blocking (it forwards them by name).
            return self.names.get("EscalatedClient") or importlib.import_module("escalated.agent.client").EscalatedClient
        return None

    def _target(self, func: ast.expr) -> tuple[str, Any, bool] | None:
        """(name, callable, bound to an instance) for a call of ours, else None."""
        if isinstance(func, ast.Name) and func.id in self.names:
            return func.id, self.names[func.id], False
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in self.names:
            owner = self.names[func.value.id]
            name = f"{func.value.id}.{func.attr}"
            assert hasattr(owner, func.attr), f"{self.page.name}: {name} does not exist"
            instance = inspect.isclass(owner) and func.value.id not in _CLIENTS  # a client bound by `as`
            return name, getattr(owner, func.attr), instance
        return None

    def _check_call(self, number: int, call: ast.Call) -> None:
        target = self._target(call.func)
        if target is None:
            return
        name, fn, instance = target
        self.checked.append(name)
        if [ast.dump(a) for a in call.args] == [ast.dump(ast.Constant(...))] and not call.keywords:
            return  # "as above"
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return
        args = [object()] * (len(call.args) + int(instance))
        kwargs = {k.arg: object() for k in call.keywords if k.arg is not None}
        try:
            inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            pytest.fail(f"{self.page.name} block {number}: {name}({ast.unparse(call)[len(ast.unparse(call.func)) + 1:-1]}): {exc}")


@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p)], ids=lambda p: p.name)
def test_every_python_block_calls_the_api_as_it_is(page):
    reader = _Page(page)
    for number, source in enumerate(_blocks(page), 1):
        reader.read(number, source)
    assert reader.checked, f"{page.name}: no call of escalated's API was checked"
