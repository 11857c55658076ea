"""``contracts init`` driven through its real prompts: accept, edit, regenerate, skip, quit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.contracts.edit.cli import init
from escalated.guard.contracts import Choice, load_contracts
from escalated.contracts.scan.discovery import scan_tree

AGENT = '''\
import stripe
from openai import OpenAI

client = OpenAI()


class BillingAgent:
    def decide_refund(self, ticket: str) -> None:
        response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": ticket}])
        stripe.Refund.create(charge=response.choices[0].message.content)


def summarise(text: str) -> str:
    return client.chat.completions.create(model="gpt-4o", messages=[]).choices[0].message.content


def route(text: str) -> str:
    answer = client.chat.completions.create(model="gpt-4o", messages=[]).choices[0].message.content
    if answer == "billing":
        return "billing"
    return "other"
'''


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "billing.py").write_text(AGENT)
    return tmp_path


def run_init(project: Path, answers: list[str], *args: str, env: dict | None = None):
    result = CliRunner().invoke(init, [str(project), *args], input="".join(a + "\n" for a in answers), env=env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_each_call_is_shown_with_location_evidence_recommendation_and_draft(project):
    result = run_init(project, ["s", "s", "s"])
    out = result.output
    assert "[1/3] agent/billing.py:9:19  BillingAgent.decide_refund  (openai chat.completions.create)" in out
    assert "R2 money: stripe.Refund.create()" in out
    assert "Recommended mode: required (rules R2" in out
    assert '[contracts."billing.decide_refund"]' in out
    assert 'policy = "agents.billing.decide-refund"' in out
    assert "sample_rate = 0.1" in out  # the sampled call's draft (route)


def test_accept_writes_the_draft_keyed_by_id_and_located_by_function(project):
    result = run_init(project, ["a", "s", "a"])
    assert "2 accepted, 1 skipped." in result.output
    contracts = load_contracts(project)
    assert sorted(contracts.contracts) == ["billing.decide_refund", "billing.route"]
    refund = contracts.contracts["billing.decide_refund"]
    assert (refund.path, refund.function, refund.index) == ("agent/billing.py", "BillingAgent.decide_refund", 0)
    assert (refund.provider, refund.api, refund.mode, refund.rules) == ("openai", "chat.completions.create", "required", ("R2",))
    assert refund.approve_choices == ("approve",) and refund.sample_rate is None
    route = contracts.contracts["billing.route"]
    assert route.mode == "sampled" and route.sample_rate == 0.1


def test_skip_is_the_default_and_writes_nothing(project):
    result = run_init(project, ["", "", ""])
    assert "0 accepted, 3 skipped." in result.output
    assert not (project / "escalated.contracts.toml").exists()


def test_quit_stops_and_keeps_what_was_accepted(project):
    result = run_init(project, ["a", "q"])
    assert "Stopped at call 2 of 3." in result.output
    assert list(load_contracts(project).contracts) == ["billing.decide_refund"]


def test_end_of_input_is_a_quit_not_a_crash(project):
    result = run_init(project, ["a"])
    assert result.exit_code == 0
    assert list(load_contracts(project).contracts) == ["billing.decide_refund"]


def test_regenerate_shows_another_draft_and_accept_takes_the_shown_one(project):
    result = run_init(project, ["r", "a", "q"])
    assert result.output.count('[contracts."billing.decide_refund"]') == 2
    refund = load_contracts(project).contracts["billing.decide_refund"]
    assert refund.question == "Let the payment or refund the model decided in BillingAgent.decide_refund go ahead?"
    assert [c.id for c in refund.choices] == ["approve", "reject", "escalate"]


def test_edit_inline_changes_every_field(project):
    answers = [
        "e",
        "reviewed",  # mode
        "billing.refunds",  # id
        "finance.refunds",  # policy
        "Was this refund right?",  # question
        "ok:Fine, undo:Undo it",  # choices
        "ok",  # approving
        "a",
        "q",
    ]
    run_init(project, answers)
    contract = load_contracts(project).contracts["billing.refunds"]
    assert contract.mode == "reviewed" and contract.policy == "finance.refunds"
    assert contract.question == "Was this refund right?"
    assert contract.choices == (Choice("ok", "Fine"), Choice("undo", "Undo it"))
    assert contract.approve_choices == ("ok",)
    assert contract.function == "BillingAgent.decide_refund"  # location is not editable


def test_an_invalid_edit_is_refused_and_the_previous_draft_kept(project):
    answers = ["e", "required", "billing.decide_refund", "Not A Key!", "Q?", "yes:Yes", "no", "a", "q"]
    result = run_init(project, answers)
    assert "Edit not used:" in result.output
    assert "policy 'Not A Key!' is not a dotted lower-case key" in result.output
    assert "approve choice 'no' is not among the choices" in result.output
    assert load_contracts(project).contracts["billing.decide_refund"].policy == "agents.billing.decide-refund"


def test_edit_in_the_editor(project, tmp_path):
    editor = tmp_path / "editor.py"
    editor.write_text(
        textwrap.dedent(
            """
            import sys
            path = sys.argv[1]
            text = open(path).read()
            text = text.replace('mode = "required"', 'mode = "sampled"\\nsample_rate = 0.25')
            text = text.replace('id = "billing.decide_refund"', 'id = "billing.edited"')
            open(path, "w").write(text)
            """
        )
    )
    env = {"EDITOR": f'"{sys.executable}" "{editor}"'}
    result = run_init(project, ["e", "a", "q"], env=env)
    assert result.exit_code == 0, result.output
    contract = load_contracts(project).contracts["billing.edited"]
    assert contract.mode == "sampled" and contract.sample_rate == 0.25


def test_accepted_contracts_still_locate_their_calls_after_lines_move(project):
    run_init(project, ["a", "a", "a"])
    source = project / "agent" / "billing.py"
    source.write_text("# a new header\nimport os\n\n\n" + source.read_text())
    contracts = load_contracts(project)
    matched = {contracts.match(call).id for call in scan_tree(project).calls}
    assert matched == {"billing.decide_refund", "billing.summarise", "billing.route"}


def test_calls_with_a_contract_are_not_offered_again(project):
    run_init(project, ["a", "s", "s"])
    result = run_init(project, ["s", "s"])
    assert "[1/2]" in result.output and "billing.decide_refund" not in result.output
    run_init(project, ["a", "a"])
    out = run_init(project, []).output
    assert "Every LLM call already has a contract (3 found)." in out
    assert "3 of them are not wrapped in their guard yet: run `escalated contracts apply`." in out


def test_init_of_a_subfolder_uses_the_project_contracts_file(project):
    run_init(project, ["a", "q"])
    result = run_init(project / "agent", ["a", "q"])
    assert "[1/2]" in result.output
    contracts = load_contracts(project)
    assert {c.path for c in contracts.contracts.values()} == {"agent/billing.py"}
    assert not (project / "agent" / "escalated.contracts.toml").exists()


def test_init_runs_through_the_escalated_command(project):
    env = {k: v for k, v in os.environ.items() if k not in ("EDITOR", "VISUAL")}
    proc = subprocess.run(
        [sys.executable, "-m", "escalated", "contracts", "init", str(project)],
        input="a\ns\nq\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert list(load_contracts(project).contracts) == ["billing.decide_refund"]


def test_the_contracts_file_reads_as_documented(project):
    run_init(project, ["s", "s", "a"])
    assert (project / "escalated.contracts.toml").read_text() == (
        "version = 1\n"
        "\n"
        '[contracts."billing.route"]\n'
        'path = "agent/billing.py"\n'
        'function = "route"\n'
        "index = 0\n"
        'provider = "openai"\n'
        'api = "chat.completions.create"\n'
        'mode = "sampled"\n'
        'rules = ["R10"]\n'
        'policy = "agents.billing.route"\n'
        'question = "Review the choice that steers the workflow in route: was it right?"\n'
        'choices = [{ id = "ok", label = "Looks right" }, { id = "flag", label = "Needs correction" }]\n'
        'approve_choices = ["ok"]\n'
        "sample_rate = 0.1\n"
    )


def test_a_call_apply_cannot_wrap_is_flagged_while_drafting(project):
    source = project / "agent" / "billing.py"
    source.write_text(source.read_text() + '\n\nclass Prompts:\n    text = client.chat.completions.create(model="gpt-4o", messages=[])\n')
    out = run_init(project, ["s", "s", "s", "s"]).output
    assert out.count("Note: apply will not wrap this call (call in a class body") == 1


def test_an_editor_leaving_broken_toml_keeps_the_draft(project, tmp_path):
    editor = tmp_path / "breaker.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'w').write('mode = [unclosed\\n')\n")
    result = run_init(project, ["e", "a", "q"], env={"EDITOR": f'"{sys.executable}" "{editor}"'})
    assert "Edit not used: the edited draft is not valid TOML" in result.output
    assert load_contracts(project).contracts["billing.decide_refund"].mode == "required"


def test_an_id_taken_by_another_call_cannot_be_accepted(project):
    run_init(project, ["a", "q"])
    answers = ["e", "autonomous", "billing.decide_refund", "", "", "", "", "a", "e", "", "billing.other", "", "", "", "", "a"]
    result = run_init(project, answers)
    assert "Cannot accept: id 'billing.decide_refund' is already used by the contract for BillingAgent.decide_refund" in (
        result.output
    )
    assert sorted(load_contracts(project).contracts) == ["billing.decide_refund", "billing.other"]


def test_after_editing_the_choices_enter_at_the_approving_prompt_keeps_the_edit(project):
    # The first draft is required with approve/reject; new choices replace them.
    answers = ["e", "", "", "", "", "go:Go ahead, stop:Stop", "", "a", "q"]
    result = run_init(project, answers)
    assert "Approving choices (id, …) [go]" in result.output
    contract = load_contracts(project).contracts["billing.decide_refund"]
    assert contract.choices == (Choice("go", "Go ahead"), Choice("stop", "Stop"))
    assert contract.approve_choices == ("go",)


def test_accept_all_writes_every_draft_without_prompting(project):
    result = CliRunner().invoke(init, [str(project), "--accept-all"], input="")
    assert result.exit_code == 0, result.output
    assert "3 accepted, 0 skipped." in result.output
    assert len(load_contracts(project).contracts) == 3
