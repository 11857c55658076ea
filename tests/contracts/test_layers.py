"""The headless contract modules import without the server, the TUI or click."""

from __future__ import annotations

import subprocess
import sys

HEADLESS = (
    "escalated.contracts.calls", "escalated.contracts.modes", "escalated.contracts.rules",
    "escalated.contracts.scan.discovery", "escalated.contracts.report.formats", "escalated.contracts.report.sarif",
    "escalated.contracts.report.coverage",
)  # fmt: skip


def test_headless_modules_import_without_web_tui_or_click() -> None:
    probe = (
        f"import sys; import {', '.join(HEADLESS)}; "
        "print([m for m in ('aiohttp.web', 'textual', 'click') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
