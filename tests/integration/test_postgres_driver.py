"""``--db postgresql://…`` on an install without the PostgreSQL extra (CONTRACT §16).

The driver is made impossible to import in the child process the way a
missing package is: ``sys.modules[name] = None`` makes ``import name``
raise ModuleNotFoundError, as on an install without
``escalated[postgres]`` (psycopg and psycopg_pool both come with it).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.postgres

_RUN_WITHOUT = (
    "import runpy, sys\n"
    "for name in sys.argv[1].split(','):\n"
    "    sys.modules[name] = None\n"
    "sys.argv = ['escalated', *sys.argv[2:]]\n"
    "runpy.run_module('escalated', run_name='__main__')\n"
)


def _escalated_without(hidden: str, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ESCALATED_DB"}
    return subprocess.run(
        [sys.executable, "-c", _RUN_WITHOUT, hidden, *args], env=env, capture_output=True, text=True, timeout=60
    )


@pytest.mark.parametrize("hidden", ["psycopg,psycopg_pool", "psycopg_pool"])
@pytest.mark.parametrize("command", [("serve", "--port", "0"), ("keys", "create")], ids=" ".join)
def test_a_postgresql_url_without_the_driver_is_one_line_naming_the_extra(postgres_url, hidden, command):
    done = _escalated_without(hidden, *command, "--db", postgres_url)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install 'escalated[postgres]'" in lines[0], done.stderr
    assert done.stdout == ""  # no bootstrap key, no "Listening on"
