"""A file's analysis limit (file-time-s) is counted in analysis steps, not on the clock.

The same file must be cut at the same call however fast or loaded the machine is:
a scan is reproducible, so a contract never turns stale because CI was busy.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.cli import main

CALLS = 12
STEPS_REASON = "not analysed: the file's analysis time limit ran out (file-time-s, counted in analysis steps)"


def deep_agent(calls: int) -> str:
    """One function with many model calls: each one's analysis walks the whole function."""
    lines = ["import litellm", "import subprocess", "", "", "def run(task):"]
    for i in range(calls):
        lines += [
            f"    r{i} = litellm.completion(model='m', messages=[{{'role': 'user', 'content': task}}])",
            f"    if r{i}.choices[0].message.content == 'yes':",
            f"        subprocess.run(['echo', str(r{i})])",
            f"    task = helper(r{i}, task)",
        ]
    lines += ["", "", "def helper(reply, task):", "    for item in [reply, task]:"]
    lines += ["        if item:", "            return item", "    return task", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deep")
    # 10,000 steps: the first calls are analysed, the rest are past the budget.
    (root / "pyproject.toml").write_text("[tool.escalated.contracts]\nfile-time-s = 0.1\n")
    (root / "agent.py").write_text(deep_agent(CALLS))
    return root


def scan(root: Path) -> dict:
    result = CliRunner().invoke(main, ["contracts", "scan", str(root), "--format", "json"])
    return json.loads(result.output)


def cut_at(document: dict) -> int:
    """How many calls were analysed before the budget ran out."""
    return sum(1 for c in document["calls"] if not any(STEPS_REASON in reason for reason in c["reasons"]))


def test_a_file_past_its_step_budget_reports_the_rest_of_its_calls_as_not_analysed(project: Path) -> None:
    document = scan(project)
    assert len(document["calls"]) == CALLS
    assert 0 < cut_at(document) < CALLS
    assert all(c["rules"] == ["R7"] and c["mode"] == "reviewed" for c in document["calls"][cut_at(document) :])


def test_the_same_file_is_cut_at_the_same_call_on_every_run(project: Path) -> None:
    runs = [scan(project) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_a_slower_machine_cuts_the_file_at_the_same_call(project: Path) -> None:
    fast = scan(project)
    # A profile hook on every Python call and return makes the scan about three times
    # slower, as a loaded machine would (the scan runs in a thread with a deep stack,
    # hence threading's hook too): a clock would cut it sooner; steps do not.
    hook = lambda _frame, _event, _arg: None  # noqa: E731
    sys.setprofile(hook)
    threading.setprofile(hook)
    try:
        slow = scan(project)
    finally:
        threading.setprofile(None)  # type: ignore[arg-type]
        sys.setprofile(None)
    assert slow == fast and 0 < cut_at(slow) < CALLS


def test_the_clock_behind_the_steps_is_the_threads_cpu_not_the_wall() -> None:
    """The clock that stops work the steps do not count reads this thread's CPU time, so a
    scan on a machine busy with other work (wall time running far ahead) is cut nowhere."""
    from escalated.contracts.scan.index import WorkMeter
    from escalated.contracts.scan.module import BUDGET_CLOCK, FileBudget

    meter = WorkMeter()
    budget = FileBudget(meter, until_steps=meter.steps + 10**9, until_s=BUDGET_CLOCK() + 0.05)
    time.sleep(0.2)  # four times the budget's clock passes on the wall, none on this thread's CPU
    assert budget.ran_out() is None
    spin_until = time.thread_time() + 0.1
    while time.thread_time() < spin_until:
        pass
    assert budget.ran_out() == "not analysed: the file's analysis time limit ran out (on the CPU clock, for work the steps do not count)"
