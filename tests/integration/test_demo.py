"""``escalated demo --no-tui``: the newcomer's first command, run headless.

The real CLI in a subprocess: it starts its own server on a scratch
database, posts the samples, an automatic reviewer decides over HTTP, and
the built-in receiver verifies every signed callback, the timeout included.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest


def run_demo(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESCALATED_")}
    return subprocess.run(
        [sys.executable, "-m", "escalated", "demo", "--no-tui", *args],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="module")
def demo_run() -> subprocess.CompletedProcess:
    """One headless run (a 2 s SLA so the timeout path is seen), shared by the checks below."""
    return run_demo("--breach-sla", "2s")


def test_demo_exits_cleanly(demo_run):
    assert demo_run.returncode == 0, demo_run.stdout + demo_run.stderr


def test_demo_runs_the_whole_loop_and_the_signed_callbacks_arrive(demo_run):
    out = demo_run.stdout
    assert len(re.findall(r"agent received escalation\.decided \(signature verified", out)) == 3
    assert len(re.findall(r"agent received escalation\.breached \(signature verified", out)) == 1
    assert '"resolvedBy": "timeout"' in out and '"answeredBy": "system"' in out
    assert '"response": {\n    "amount": 1200' in out
    assert "done: every callback arrived and verified." in out


def test_demo_prints_a_web_sign_in_link_beside_the_reviewer(demo_run):
    assert re.search(r"web app   http://127\.0\.0\.1:\d+/app/login/[A-Za-z0-9_-]{40,}\n", demo_run.stdout), demo_run.stdout


def test_demo_cleans_up_its_scratch_database(demo_run):
    db = re.search(r"scratch database (\S+)", demo_run.stdout).group(1)
    assert not os.path.exists(db)


def test_headless_demo_counts_down_to_the_breach_while_it_waits():
    run = run_demo("--breach-sla", "9s")
    assert run.returncode == 0, run.stdout + run.stderr
    out = run.stdout
    ticks = [int(n) for n in re.findall(r"the default choice applies in (\d+)s", out)]
    assert ticks and ticks == sorted(ticks, reverse=True) and all(0 < n <= 9 for n in ticks), out
    assert out.index("applies in") < out.index("SLA passed") < out.index("agent received escalation.breached")
