"""``escalated workspaces create``: a name that cannot be used later is refused."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from escalated.cli import main


def _run(db, *args: str):
    return CliRunner().invoke(main, [*args, "--db", str(db)])


@pytest.mark.parametrize("name", ["", "   ", "team\tb", "team\nb"])
def test_an_empty_or_unprintable_workspace_name_is_refused(tmp_path, name):
    db = tmp_path / "escalated.db"
    refused = _run(db, "workspaces", "create", name)
    assert refused.exit_code == 1 and "a workspace needs a name without control characters" in refused.stderr
    assert _run(db, "workspaces", "list").stdout.splitlines() == ["default"]


def test_a_workspace_name_is_kept_without_surrounding_spaces(tmp_path):
    db = tmp_path / "escalated.db"
    assert _run(db, "workspaces", "create", " team-b ").stdout == "team-b\n"
    assert _run(db, "-w", "team-b", "keys", "list").exit_code == 0
