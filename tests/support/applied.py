"""An agent project that ``escalated contracts apply`` rewrote, run for real in a subprocess
against a real ``escalated serve`` (the end-to-end tests of apply, one per framework)."""

from __future__ import annotations

import json
import os
import subprocess
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.cli import main
from escalated.guard.contracts import load_contracts
from tests.conftest import fresh_db
from tests.support import prefork
from tests.support.prefork import ForkedPython
from tests.support.server import ServerProcess
from tests.support.wait import eventually

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


def launch(project: Path, server: ServerProcess, *, preload: tuple[str, ...], **extra_env: str) -> ForkedPython | subprocess.Popen:
    """``python shop.py`` in ``project``, filing with the server's bootstrap key; refunds go to refunds.log.

    Forked from a zygote that imported ``preload`` (the agent framework ``shop.py`` imports: tests/support/prefork.py),
    not from anything of escalated's, which the run imports itself as a fresh interpreter would."""
    env = {
        **os.environ,
        "ESCALATED_URL": server.url,
        "ESCALATED_API_KEY": server.bootstrap_key,
        "REFUND_LEDGER": str(project / "refunds.log"),
        "PYTHONPATH": os.pathsep.join([str(project), str(Path.cwd())]),
        **extra_env,
    }
    env.pop("ESCALATED_CONTRACTS", None)  # the project's own contracts file, found above shop.py
    return prefork.python(["shop.py"], cwd=project, env=env, preload=preload)


def finish(run: ForkedPython | subprocess.Popen) -> tuple[str, str]:
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


def wait_for_open_escalation(server: ServerProcess, *, timeout_s: float = 90.0) -> dict:
    """The server's oldest open escalation, once there is one.

    The bound covers a fresh interpreter importing a whole agent framework (the Agents SDK,
    Pydantic AI) before it files anything: 30 s ran out on a 2-core machine at load ~14.
    A passing run waits only as long as that takes."""
    request = urllib.request.Request(
        f"{server.url}/escalations?status=open", headers={"Authorization": f"Bearer {server.bootstrap_key}"}
    )

    def open_escalations() -> list[dict]:
        with urllib.request.urlopen(request, timeout=5) as response:
            return json.loads(response.read())["data"]

    return eventually(open_escalations, timeout_s=timeout_s, what="the guarded agent to file an escalation")[0]


def decide(server: ServerProcess, escalation_id: str, choice: str) -> None:
    """A reviewer's decision over HTTP, with the reason ``looks right``."""
    request = urllib.request.Request(
        f"{server.url}/escalations/{escalation_id}/decide",
        data=json.dumps({"choice": choice, "reason": "looks right"}).encode(),
        headers={"Authorization": f"Bearer {server.bootstrap_key}", "Content-Type": "application/json"},
        method="POST",
    )
    urllib.request.urlopen(request, timeout=5).close()


@dataclass(frozen=True)
class Decided:
    """What an applied shop's run did around the reviewer's decision on its tool call."""

    asked: dict  # the tool call's escalation, as the reviewer saw it
    final: dict | None  # the guard's escalation on the run's final answer (approved), if the run filed one
    ledger_at_final: str | None  # refunds.log when the final answer was filed (None: no refund yet)
    out: str
    err: str
    returncode: int


def run_and_decide(project: Path, run: ForkedPython | subprocess.Popen, server: ServerProcess, choice: str, *, final_answer: bool = True) -> Decided:
    """Waits for the run's first escalation (its tool call), checks that the run is still waiting
    with nothing refunded, and decides it with ``choice``. Then, unless ``final_answer`` is False
    (the run ends without one), approves the guard's escalation on the run's final answer; returns
    what the run did once it ended."""
    ledger = project / "refunds.log"
    final = refunded = None
    try:
        asked = wait_for_open_escalation(server)
        assert run.poll() is None and not ledger.exists()  # waiting on the reviewer: nothing refunded yet
        decide(server, asked["id"], choice)
        if final_answer:
            final = wait_for_open_escalation(server)
            assert final["id"] != asked["id"]
            refunded = ledger.read_text() if ledger.exists() else None
            decide(server, final["id"], "approve")
        out, err = finish(run)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    return Decided(asked=asked, final=final, ledger_at_final=refunded, out=out, err=err, returncode=run.returncode)


def assert_refunded_once(project: Path, decided: Decided) -> None:
    """Approved: the refund ran before the run's final answer, the run ended well and quoted it, once in all."""
    assert decided.ledger_at_final == "o-981 1250\n"  # refunded before the run's final answer
    assert decided.returncode == 0, decided.err
    assert decided.out.strip() == "done: refunded 12.50 EUR for order o-981"
    assert (project / "refunds.log").read_text() == "o-981 1250\n"  # once


def assert_never_refunded(project: Path, decided: Decided) -> None:
    """Rejected: the run went on and ended well, and nothing was refunded, before its answer or after."""
    assert decided.returncode == 0, decided.err
    assert decided.ledger_at_final is None and not (project / "refunds.log").exists()


def assert_asked_about_the_refund(asked: dict) -> None:
    """The reviewer sees the tool call: its name and arguments, never the run's context."""
    assert asked["subject"]["type"] == "tool_call" and asked["subject"]["label"] == "issue_refund"
    assert asked["evidence"][:2] == ["Tool: issue_refund", 'Arguments (JSON): {"order_id": "o-981", "amount_eur": 12.5}']
    assert "private notes" not in str(asked)  # the run's context is not the evidence
