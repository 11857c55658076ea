"""The web app is a client of the core like the TUI: it never reaches for the store."""

from __future__ import annotations

import ast
from pathlib import Path

import escalated.web

WEB = Path(escalated.web.__file__).parent


def imported_modules(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_web_modules_never_import_the_store():
    offenders = {
        f"{path.name}: {name}"
        for path in WEB.rglob("*.py")
        for name in imported_modules(path)
        if name == "escalated.store" or name.startswith("escalated.store.")
    }
    assert not offenders


def test_templates_and_assets_ship_in_the_package():
    assert (WEB / "templates" / "base.html").is_file() and (WEB / "static" / "app.js").is_file()
