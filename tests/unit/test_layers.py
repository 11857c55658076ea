"""STYLE rule 1: the domain, store and contracts discovery import without aiohttp.web, textual or click.

Each module is imported in a fresh interpreter and ``sys.modules`` is read
afterwards, so what an earlier test imported cannot hide a violation.
"""

from __future__ import annotations

import importlib.util
import pkgutil
import subprocess
import sys

import pytest

import escalated.domain
import escalated.store

FORBIDDEN = ("aiohttp.web", "textual", "click")


def modules_of(package) -> list[str]:
    return [package.__name__] + [f"{package.__name__}.{m.name}" for m in pkgutil.iter_modules(package.__path__)]


LAYERED = modules_of(escalated.domain) + modules_of(escalated.store)
if importlib.util.find_spec("escalated.contracts.scan.discovery") is not None:
    LAYERED.append("escalated.contracts.scan.discovery")


def _spawn(module: str) -> subprocess.Popen:
    code = f"import sys\nimport {module}\nprint('\\n'.join(sys.modules))"
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _collect(proc: subprocess.Popen) -> set[str]:
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return set(out.split())


def loaded_after_import(module: str) -> set[str]:
    return _collect(_spawn(module))


@pytest.fixture(scope="module")
def imports() -> dict[str, set[str]]:
    """Every layered module imported in its own fresh interpreter, all at once."""
    procs = {module: _spawn(module) for module in LAYERED}
    return {module: _collect(proc) for module, proc in procs.items()}


def forbidden_in(loaded: set[str]) -> set[str]:
    return {m for m in loaded for f in FORBIDDEN if m == f or m.startswith(f + ".")}


def test_the_module_list_covers_domain_store_and_discovery():
    assert {"escalated.domain.validation", "escalated.store.db", "escalated.store.admin"} <= set(LAYERED)


def test_the_check_sees_a_forbidden_import():
    """A test that cannot fail is a defect: the HTTP layer does pull in aiohttp.web."""
    assert "aiohttp.web" in forbidden_in(loaded_after_import("escalated.http.app"))


@pytest.mark.parametrize("module", LAYERED)
def test_layer_imports_without_aiohttp_web_textual_or_click(imports, module):
    assert not forbidden_in(imports[module]), module
