"""tests/support/prefork.py's ``python()``: a program forked from a zygote runs as ``python <argv>`` would.

The apply end-to-end tests and the durable pairs run their agent programs this way; what those
programs rely on of a fresh interpreter is checked here against one, on a zygote that imported a
small third-party module (attrs) instead of a framework.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import prefork

PROGRAM = """\
import json, os, sys
import helper
from escalated.guard import current_run_id
print(json.dumps({"name": __name__, "argv": sys.argv, "path": sys.path, "helper": helper.__file__,
                  "cwd": os.getcwd(), "run_id": current_run_id(), "env": os.environ.get("MARK")}))
print("to stderr", file=sys.stderr)
if sys.argv[1:] == ["raise"]:
    raise LookupError("raised on purpose")
sys.exit(int(sys.argv[1]) if sys.argv[1:] else 0)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "prog.py").write_text(PROGRAM)
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "helper.py").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "main.py").write_text(PROGRAM)
    return tmp_path


def _env(project: Path, mark: str) -> dict[str, str]:
    return {**os.environ, "MARK": mark, "PYTHONPATH": os.pathsep.join([str(project / "lib"), str(Path.cwd())])}


def _both(project: Path, argv: list[str], mark: str) -> list[tuple[int, str, str]]:
    """(status, stdout, stderr) forked and from a fresh interpreter."""
    forked = prefork.python(argv, cwd=project, env=_env(project, mark), preload=("attrs",))
    assert isinstance(forked, prefork.ForkedPython)
    pipes = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    fresh = subprocess.Popen([sys.executable, *argv], cwd=project, env=_env(project, mark), text=True, **pipes)
    runs = []
    for proc in (forked, fresh):
        out, err = proc.communicate(timeout=60)
        runs.append((proc.returncode, out, err))
    return runs


@pytest.mark.parametrize(
    "argv",
    [["prog.py"], ["prog.py", "3"], ["-m", "pkg.main", "3"]],
    ids=["script", "exit-status", "module"],
)
def test_a_forked_program_sees_what_a_fresh_interpreter_shows_it(project, argv):
    import json

    (status, out, err), (fresh_status, fresh_out, fresh_err) = _both(project, argv, "one")
    assert (status, err) == (fresh_status, fresh_err) == (int(argv[-1]) if argv[-1].isdigit() else 0, "to stderr\n")
    seen, fresh_seen = json.loads(out), json.loads(fresh_out)
    assert seen["run_id"] != fresh_seen["run_id"]  # each process its own
    seen.pop("run_id"), fresh_seen.pop("run_id")
    assert seen == fresh_seen
    assert seen["name"] == "__main__" and seen["env"] == "one"


def test_an_uncaught_exception_is_a_traceback_and_status_1(project):
    for status, _out, err in _both(project, ["prog.py", "raise"], "one"):
        assert status == 1 and err.rstrip().endswith("LookupError: raised on purpose")


def test_each_forked_program_makes_its_own_run_id_from_the_same_zygote(project):
    import json

    ids = set()
    for _ in range(2):
        proc = prefork.python(["prog.py"], cwd=project, env=_env(project, "one"), preload=("attrs",))
        out, _err = proc.communicate(timeout=60)
        ids.add(json.loads(out)["run_id"])
    assert len(ids) == 2


def test_a_zygote_that_would_import_escalated_does_not_start(project):
    with pytest.raises(AssertionError, match=r"did not start.*of the project"):
        prefork.python(["prog.py"], cwd=project, env=_env(project, "one"), preload=("escalated.guard",))
