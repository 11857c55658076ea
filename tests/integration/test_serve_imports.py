"""What a real ``escalated serve`` on SQLite has imported once it listens.

Its start-up is mostly imports (docs/performance.md): the reviewer TUI
(Textual, Rich), the contracts scanner and rewriter (libcst), the MCP SDK
and the PostgreSQL driver are for other commands, flags or backends, and
are imported where those run. A module-level import of any of them on the
serve path would make every start pay for it; this names which one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

NOT_FOR_SERVE_ON_SQLITE = {"textual", "rich", "libcst", "mcp", "psycopg", "psycopg_pool", "pydantic"}

_SERVE_THEN_LIST_MODULES = (
    "import atexit, runpy, sys\n"
    "atexit.register(lambda: print('MODULES', *sorted({m.split('.')[0] for m in sys.modules}), flush=True))\n"
    "sys.argv = ['escalated', 'serve', '--db', sys.argv[1], '--port', '0']\n"
    "runpy.run_module('escalated', run_name='__main__')\n"
)


def test_serve_on_sqlite_imports_no_tui_rewriter_mcp_or_postgres_driver(tmp_path: Path):
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVE_THEN_LIST_MODULES, str(tmp_path / "e.db")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("Listening on"):
            break
    assert lines and lines[-1].startswith("Listening on"), "".join(lines)
    # SIGINT: KeyboardInterrupt when it comes before the server's own handler, a clean stop after;
    # the interpreter's exit runs the atexit hook either way.
    proc.send_signal(signal.SIGINT)
    rest, _ = proc.communicate(timeout=60)
    listed = [line for line in rest.splitlines() if line.startswith("MODULES ")]
    assert listed, rest
    imported = set(listed[0].split()[1:])
    assert {"escalated", "aiohttp", "aiosqlite"} <= imported  # the listing is a real server's
    assert imported.isdisjoint(NOT_FOR_SERVE_ON_SQLITE), sorted(imported & NOT_FOR_SERVE_ON_SQLITE)

