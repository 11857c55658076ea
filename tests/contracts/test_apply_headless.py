"""The init/apply/guard modules keep to their layer.

The engine modules import without the server, the TUI or click (only
``edit.cli`` may use click), and the guard, which runs inside agents, pulls
in neither libcst nor aiohttp until it has to talk to the server.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

ENGINE = (
    "escalated.guard.contracts", "escalated.contracts.edit.rewrite", "escalated.contracts.edit.redact",
    "escalated.contracts.edit.remote", "escalated.contracts.edit.drafts", "escalated.contracts.edit.apply",
    "escalated.contracts.edit.initialise", "escalated.guard.render",
)  # fmt: skip


def _loaded_after(module: str) -> set[str]:
    code = f"import sys, {module}; print(' '.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    return set(out.stdout.split())


def _present(loaded: set[str], names: tuple[str, ...]) -> set[str]:
    return {m for m in loaded for n in names if m == n or m.startswith(n + ".")}


@pytest.mark.parametrize("module", ENGINE)
def test_engine_modules_import_without_web_tui_or_click(module):
    assert not _present(_loaded_after(module), ("aiohttp.web", "textual", "click")), module


def test_the_guard_imports_without_libcst_aiohttp_or_click():
    assert not _present(_loaded_after("escalated.guard"), ("libcst", "aiohttp", "click", "textual"))


def test_the_check_sees_a_forbidden_import():
    assert "click" in _present(_loaded_after("escalated.contracts.edit.cli"), ("click",))
