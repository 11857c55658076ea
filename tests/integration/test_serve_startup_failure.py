"""A start-up step that raises ends ``serve`` with exit 1; it never hangs.

The store opens first and runs connection threads; before the fix, a later
start-up step raising (a bug in a component's constructor) left them
running, so the process printed its traceback and then hung until killed.
The failure is injected into a real ``escalated serve`` process: the step
named is swapped for one that raises, nothing else is changed.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

INJECT = """
import sys
import {module} as target

def broken(*args, **kwargs):
    raise RuntimeError("injected start-up failure")

target.{name} = broken
from escalated.cli import main
sys.argv = ["escalated", "serve", "--db", sys.argv[1], "--port", "0"]
main()
"""


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("escalated.server", "DecisionLinks"),  # after the store opened, in the same start-up step
        # In a later start-up step (the engine). This one already exited before
        # the fix; it stays so the engine's step is held to the same promise.
        ("escalated.http.lifecycle", "SlaClock"),
    ],
)
def test_a_failing_start_up_step_exits_1_instead_of_hanging(tmp_path, module, name):
    proc = subprocess.run(
        [sys.executable, "-c", INJECT.format(module=module, name=name), str(tmp_path / "escalated.db")],
        capture_output=True, text=True, timeout=60, env={**os.environ, "ESCALATED_DB": ""},
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "injected start-up failure" in proc.stderr
    assert "Listening on" not in proc.stdout
