"""The analysis reads a module's registry stores and a helper's post once, not once per call reaching them.

Every look-up in a registry the answer reaches (``TOOLS[name](...)``) asked for the module's
``registry[key] = value`` stores, and each time walked the whole module; swarms' 5,500-line
``structs/agent.py`` spent its file budget (file-time-s, counted in steps) that way, and its later
calls were reported "not analysed" (R7) instead of what they do.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from escalated.cli import main

ASKS = 12
FILLERS = 120
STEPS_REASON = "not analysed: the file's analysis time limit ran out (file-time-s, counted in analysis steps)"


def registry_agent() -> str:
    """Many model calls, each dispatching a tool by the name the answer gives, in a module made long by
    functions the answer never reaches (each store walk read all of them)."""
    lines = ["import subprocess", "from openai import OpenAI", "", "client = OpenAI()", "TOOLS = {}", ""]
    lines += ["", "def shell(command):", "    return subprocess.run(command, shell=True)", "", "", "TOOLS['shell'] = shell", ""]
    for i in range(ASKS):
        lines += [
            "",
            f"def ask_{i}(question):",
            "    reply = client.chat.completions.create(model='m', messages=[{'role': 'user', 'content': question}])",
            "    name = reply.choices[0].message.content",
            "    return TOOLS[name](question)",
            "",
        ]
    for i in range(FILLERS):
        body = [f"    a{j} = [x + {j}, x * {j}, (x, {j}), {{'k': x, 'v': {j}}}]" for j in range(12)]
        lines += ["", f"def filler_{i}(x):", *body, "    return a0", ""]
    return "\n".join(lines)


def test_each_call_dispatching_through_a_registry_is_analysed_within_a_small_budget(tmp_path: Path) -> None:
    # 300,000 steps: enough to read the module's stores once and follow each call (about 240,000), not to
    # walk the module again for each (1,770,000).
    (tmp_path / "pyproject.toml").write_text("[tool.escalated.contracts]\nfile-time-s = 3\n")
    (tmp_path / "agent.py").write_text(registry_agent())
    result = CliRunner().invoke(main, ["contracts", "scan", str(tmp_path), "--format", "json", "--exit-zero"])
    calls = json.loads(result.output)["calls"]
    assert len(calls) == ASKS
    assert not [c["line"] for c in calls if any(STEPS_REASON in reason for reason in c["reasons"])]
    assert all(c["mode"] == "required" and "R1" in c["rules"] for c in calls)
