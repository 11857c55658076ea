"""An agent project that ``escalated contracts apply`` rewrote, run for real in a subprocess
against a real ``escalated serve`` (the end-to-end tests of apply, one per framework)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.cli import main
from escalated.guard.contracts import load_contracts
from tests.conftest import fresh_db
from tests.support.server import ServerProcess

# A stand-in for the Stripe SDK (a third-party part, not ours): same import path and call shape,
# a ledger line instead of a network call. Each test writes it beside its project's shop.py.
FAKE_STRIPE = '''
import os


class Refund:
    @staticmethod
    def create(*, charge, amount):
        with open(os.environ["REFUND_LEDGER"], "a", encoding="utf-8") as ledger:
            ledger.write(f"{charge} {amount}\\n")
'''


def apply_server_fixture(label: str):
    """A module's ``apply_server``: one real serve per backend, each test deciding every escalation it files."""

    @pytest.fixture(scope="module")
    def apply_server(request, backend, tmp_path_factory):
        with fresh_db(request, backend, tmp_path_factory.mktemp(label)) as db:
            proc = ServerProcess(db=db).start()
            try:
                yield proc
            finally:
                proc.stop()

    return apply_server


def launch(project: Path, server: ServerProcess, **extra_env: str) -> subprocess.Popen:
    """``python shop.py`` in ``project``, filing with the server's bootstrap key; refunds go to refunds.log."""
    env = {
        **os.environ,
        "ESCALATED_URL": server.url,
        "ESCALATED_API_KEY": server.bootstrap_key,
        "REFUND_LEDGER": str(project / "refunds.log"),
        "PYTHONPATH": os.pathsep.join([str(project), str(Path.cwd())]),
        **extra_env,
    }
    env.pop("ESCALATED_CONTRACTS", None)  # the project's own contracts file, found above shop.py
    return subprocess.Popen(
        [sys.executable, "shop.py"], cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def finish(run: subprocess.Popen) -> tuple[str, str]:
    """The run's output once it ends (60 s at most); killed if it has not."""
    try:
        return run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()


def applied_shop(tmp_path: Path, shop: str, *, scan_first: bool = True) -> tuple[Path, str, str]:
    """A project of ``shop.py`` (``shop.handle`` runs an agent with a refund tool) and the
    Stripe stand-in, taken through the commands a user runs: ``scan`` (the run is
    ``required``, exit 1), ``init --accept-all``, ``apply``. Returns the project, the
    contract's policy and ``shop.py`` as apply left it, for the test to read what it wrote."""
    project = tmp_path / "project"
    (project / "stripe").mkdir(parents=True)
    (project / "stripe" / "__init__.py").write_text(FAKE_STRIPE)
    (project / "shop.py").write_text(shop)
    if scan_first:
        scanned = CliRunner().invoke(main, ["contracts", "scan", str(project), "--format", "json"])
        assert '"mode": "required"' in scanned.output and scanned.exit_code == 1
    assert CliRunner().invoke(main, ["contracts", "init", str(project), "--accept-all"]).exit_code == 0
    contract = load_contracts(project).contracts["shop.handle"]
    assert contract.mode == "required"
    applied = CliRunner().invoke(main, ["contracts", "apply", str(project), "--yes"])
    assert applied.exit_code == 0, applied.output
    return project, contract.policy, (project / "shop.py").read_text()


def assert_applied_once_and_covered(project: Path) -> None:
    """A second ``apply`` changes nothing, and ``scan`` now finds the run covered (exit 0)."""
    again = CliRunner().invoke(main, ["contracts", "apply", str(project), "--yes"])
    assert again.exit_code == 0 and "Nothing to apply" in again.output, again.output
    covered = CliRunner().invoke(main, ["contracts", "scan", str(project)])
    assert covered.exit_code == 0, covered.output
