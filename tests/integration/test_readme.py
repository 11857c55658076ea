"""The README, followed as a newcomer would (issue 12, point 14).

The walkthrough's shell blocks run in order, in one bash, against the real
``escalated serve`` they start, with only the port swapped for a free one.
The one interactive command (the TUI) is checked to exist with ``--help``.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
# The step-by-step walkthrough and the agents' page the README links to.
GUIDE = ROOT / "docs" / "guide.md"
AGENTS = ROOT / "docs" / "agents.md"
WALKTHROUGH = "# Run it yourself, step by step"
INTERACTIVE = "escalated review"


def section(title: str, *, page: Path = README) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start : end if end != -1 else None]


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, re.S)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def walkthrough_script(port: int) -> str:
    blocks = shell_blocks(section(WALKTHROUGH, page=GUIDE))
    script = "\n".join(blocks).replace("8470", str(port))
    script = script.replace("escalated serve &", f"escalated serve --port {port} &")
    # The TUI takes over the terminal until q: check only that it exists.
    script = re.sub(rf"{INTERACTIVE}$", f"{INTERACTIVE} --help >/dev/null", script, flags=re.M)
    return "set -euo pipefail\n" + script


@pytest.fixture
def walked(tmp_path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ESCALATED_")}
    env.update(
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path / "xdg"), PYTHONUNBUFFERED="1",
    )  # fmt: skip
    proc = subprocess.Popen(
        ["bash", "-c", walkthrough_script(free_port())], cwd=tmp_path, env=env, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=120)
    finally:
        try:  # whatever the script left running (the server, if a step failed)
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, "")


def test_the_walkthrough_runs_top_to_bottom_against_a_real_server(walked):
    assert walked.returncode == 0, walked.stdout
    assert "Bootstrap API key" in walked.stdout
    assert re.search(r'"status":\s*"resolved"', walked.stdout), walked.stdout
    assert re.search(r'"choice":\s*"approve"', walked.stdout) and '"answeredBy":"alice"' in walked.stdout.replace(" ", "")


def test_the_walkthrough_mints_the_agent_key_narrow():
    script = walkthrough_script(8470)
    assert "keys create --name billing-agent --scope escalations:write --scope escalations:read" in script


def test_the_walkthrough_adds_the_reviewer_before_any_policy_routes_to_her():
    script = walkthrough_script(8470)
    assert script.index("users add alice") < script.index("--reviewer alice")


def test_the_readme_test_command_is_the_one_ci_runs():
    top = shell_blocks(README.read_text(encoding="utf-8"))[0]
    test_command = top.strip().splitlines()[-1]
    assert "pytest" in test_command
    assert " -rs" in test_command  # a newcomer sees why the browser or PostgreSQL tests skipped
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_the_readme_sections_every_contracts_command_and_guard_variable():
    text = section("## Guarding an agent's LLM calls", page=AGENTS)
    for command in ("contracts scan", "contracts explain", "contracts init", "contracts apply"):
        assert f"escalated {command}" in text
    guard_source = (ROOT / "escalated" / "guard" / "runtime.py").read_text(encoding="utf-8")
    for variable in set(re.findall(r"ESCALATED_[A-Z_]+", guard_source)):
        assert variable in text, f"{variable} is read by the guard but not in the README"


def test_a_licence_file_matches_pyproject():
    assert 'license = "MIT"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_every_local_link_in_the_readme_and_docs_exists():
    pages = [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        prose = re.sub(r"```.*?```|`[^`\n]*`", "", page.read_text(encoding="utf-8"), flags=re.S)  # code is not a link
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", prose):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to {target}, which is not there"
