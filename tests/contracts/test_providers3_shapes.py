"""Held out, the providers 3 round: provider client layers and model APIs the scan did not know.

Written from what real research and chat apps do (a script driving aider's Python API, a table of
provider functions picked by the configured name); the repositories themselves stay out of this
repository, only their hand labels are kept (tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes

# aider's Python API: the coder built once under __main__, handed to the stages that run it.
AIDER_SCRIPT = {
    "writeup.py": """\
import subprocess


def fix_latex(coder, folder):
    out = subprocess.run(["chktex", f"{folder}/template.tex"], capture_output=True, text=True)
    if out.stdout:
        coder.run(f"Fix these LaTeX errors: {out.stdout}")


def perform_writeup(idea, folder, coder):
    coder_out = coder.run(f"Write the abstract of {idea['Title']}")
    fix_latex(coder, folder)
    return coder_out


if __name__ == "__main__":
    from aider.coders import Coder
    from aider.io import InputOutput
    from aider.models import Model

    io = InputOutput(yes=True, chat_history_file="run/aider.txt")
    coder = Coder.create(main_model=Model("gpt-4o"), fnames=["run/template.tex"], io=io, edit_format="diff")
    perform_writeup({"Title": "x"}, "run", coder)
""",
    "asked.py": """\
from aider.coders import Coder
from aider.io import InputOutput
from aider.models import Model

coder = Coder.create(main_model=Model("gpt-4o"), fnames=["notes.md"], io=InputOutput())
coder.run("Tidy the notes")
""",
}


def test_aiders_coder_run_is_a_model_call_that_edits_files_and_runs_shell_commands_when_told_yes(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, AIDER_SCRIPT)
    # Coder.run asks the model and applies its edits; with InputOutput(yes=True) the shell commands the
    # model suggests run unasked: required, through the parameter the module's own call sites fill.
    assert calls[("writeup.py", 7)] == ("run", "required")
    assert calls[("writeup.py", 11)] == ("run", "required")
    # An InputOutput() that asks on the terminal: the edits alone, a write to review.
    assert calls[("asked.py", 6)] == ("run", "reviewed")
