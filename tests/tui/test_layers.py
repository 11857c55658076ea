"""The TUI is a client: it must never reach for the database, and its
pure helpers stay importable without Textual."""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from escalated.tui.command import review

HEADLESS = ["format", "views", "validation", "detail_text", "samples"]


def modules_after_import(*modules: str) -> set[str]:
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules) + "print('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_the_app_never_imports_the_store_or_sqlite():
    loaded = modules_after_import("escalated.tui.app", "escalated.tui.command")
    assert not {m for m in loaded if m.startswith("escalated.store") or m in ("sqlite3", "aiosqlite")}


def test_headless_helpers_do_not_import_textual():
    loaded = modules_after_import(*(f"escalated.tui.{name}" for name in HEADLESS))
    assert not {m for m in loaded if m == "textual" or m.startswith("textual.")}


def test_review_requires_a_token():
    result = CliRunner().invoke(review, [], env={"ESCALATED_TOKEN": ""})
    assert result.exit_code == 2 and "--token" in result.output
