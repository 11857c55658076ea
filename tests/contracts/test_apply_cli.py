"""``contracts apply`` on small projects: paths, warnings, skipped calls, end-to-end with scan."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from escalated.contracts.cli import contracts as contracts_group
from escalated.contracts.edit.cli import apply, init
from escalated.guard.contracts import ContractSet, load_contracts, save_contracts

AGENT = '''\
from openai import OpenAI

client = OpenAI()


def summarise(text):
    return client.chat.completions.create(model="gpt-4o", messages=[])


class Prompts:
    answer = client.chat.completions.create(model="gpt-4o", messages=[])
'''


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "agent.py").write_text(AGENT)
    result = CliRunner().invoke(init, [str(tmp_path)], input="a\na\n")
    assert result.exit_code == 0, result.output
    return tmp_path


def test_apply_without_contracts_says_what_to_do(tmp_path):
    (tmp_path / "agent.py").write_text(AGENT)
    result = CliRunner().invoke(apply, [str(tmp_path), "--yes"])
    assert result.exit_code == 0 and "run `escalated contracts init` first" in result.output
    assert (tmp_path / "agent.py").read_text() == AGENT


def test_a_call_a_lambda_cannot_hold_is_skipped_with_the_reason_and_the_rest_applied(project):
    result = CliRunner().invoke(apply, [str(project), "--yes"])
    assert result.exit_code == 0, result.output
    assert "skipped pkg/agent.py:11:13 (agent.module): call in a class body" in result.output
    text = (project / "pkg" / "agent.py").read_text()
    assert 'return guard("agent.summarise", lambda: client.chat.completions.create(' in text
    assert "    answer = client.chat.completions.create(" in text
    assert "each must exist on the server" not in result.output  # summarise is autonomous: files nothing


def test_apply_to_a_single_file_or_subfolder_uses_the_project_contracts(project):
    result = CliRunner().invoke(apply, [str(project / "pkg" / "agent.py"), "--yes"])
    assert result.exit_code == 0, result.output
    assert 'guard("agent.summarise"' in (project / "pkg" / "agent.py").read_text()
    assert not (project / "pkg" / "escalated.contracts.toml").exists()


def test_a_contract_whose_call_is_gone_is_reported(project):
    source = project / "pkg" / "agent.py"
    source.write_text(source.read_text().replace("def summarise(text):", "def summary(text):"))
    result = CliRunner().invoke(apply, [str(project), "--yes"])
    assert "warning: contract agent.summarise locates no call (summarise in pkg/agent.py)" in result.output


def test_after_apply_scan_reports_the_guarded_call_as_covered(project):
    runner = CliRunner()
    assert runner.invoke(contracts_group, ["apply", str(project), "--yes"]).exit_code == 0
    report = runner.invoke(contracts_group, ["scan", str(project), "--format", "json"])
    assert '"covered": true' in report.output


def _change(project: Path, new: bytes):
    from escalated.contracts.edit.apply import ChangeSet, FileChange
    from escalated.contracts.calls import Location
    from escalated.contracts.edit.rewrite import Target

    original = (project / "pkg" / "agent.py").read_bytes()
    target = Target(Location("pkg/agent.py", 7, 11, 7, 70), "agent.summarise")
    return ChangeSet((FileChange("pkg/agent.py", original, new, "utf-8", (target,)),), (), 0)


@pytest.mark.parametrize(
    "new, problem",
    [
        (b"def broken(:\n", "does not compile"),
        (AGENT.encode(), "a second apply would change the file again"),
        (AGENT.encode(), "the call wrapped for 'agent.summarise' does not scan as guarded"),
    ],
)
def test_validation_refuses_a_change_set_that_would_not_hold(project, new, problem):
    from escalated.contracts.scan.discovery import scan_source
    from escalated.contracts.edit.apply import ApplyError, validate

    with pytest.raises(ApplyError, match=problem):
        validate(_change(project, new), contracts=load_contracts(project), scan_source=scan_source)


def test_apply_names_the_policies_the_guards_file_under(project):
    contracts = load_contracts(project)
    reviewed = attrs.evolve(contracts.contracts["agent.summarise"], mode="reviewed")
    save_contracts(project, ContractSet({**contracts.contracts, "agent.summarise": reviewed}))
    result = CliRunner().invoke(apply, [str(project), "--yes"])
    assert "(escalated policy set KEY --reviewer NAME): agents.agent.summarise" in result.output


ASYNC_COMPREHENSION = '''\
from openai import AsyncOpenAI

client = AsyncOpenAI()


async def summarise(pages):
    return await client.chat.completions.create(model="gpt-4o", messages=[p async for p in pages])


async def title(text):
    return await client.chat.completions.create(model="gpt-4o", messages=[text])
'''


def test_a_call_whose_wrapped_form_would_not_compile_is_skipped_and_the_rest_applied(tmp_path):
    # lambda: <call with an async comprehension> is a SyntaxError: that call alone is skipped.
    (tmp_path / "agent.py").write_text(ASYNC_COMPREHENSION)
    assert CliRunner().invoke(init, [str(tmp_path)], input="a\na\n").exit_code == 0
    result = CliRunner().invoke(apply, [str(tmp_path), "--yes"])
    assert result.exit_code == 0, result.output
    assert "skipped agent.py:7:17 (agent.summarise): not wrapped: agent.py: the rewritten file does not compile" in result.output
    text = (tmp_path / "agent.py").read_text()
    assert 'return await guard("agent.title", lambda: client.chat.completions.create(' in text
    assert "return await client.chat.completions.create(model=\"gpt-4o\", messages=[p async for p in pages])" in text
