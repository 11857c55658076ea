"""``contracts init`` never replaces a contract whose call a new call site pushed to another index.

Contracts are located by (path, function, index). A wrapper call added above a
contracted call takes its index; accepting the wrapper's draft used to replace
the user's reviewed contract (and the id its guard names) with a fresh draft.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from escalated.contracts.edit.cli import apply, init

AGENT = '''\
import stripe
from openai import OpenAI

client = OpenAI()


def ask(text: str) -> str:
    return client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": text}]).choices[0].message.content


class BillingAgent:
    def decide_refund(self, ticket: str) -> None:
        response = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": ticket}])
        stripe.Refund.create(charge=response.choices[0].message.content)
'''

REVIEWED_QUESTION = 'question = "Refund this ticket? (checked by finance)"'


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "billing.py").write_text(AGENT)
    result = CliRunner().invoke(init, [str(tmp_path), "--accept-all"], input="")
    assert result.exit_code == 0, result.output
    # The user reviews the draft: their own words replace the drafted question.
    contracts = tmp_path / "escalated.contracts.toml"
    drafted = 'question = "Approve the payment or refund the model decided in BillingAgent.decide_refund?"'
    assert drafted in contracts.read_text()
    contracts.write_text(contracts.read_text().replace(drafted, REVIEWED_QUESTION))
    return tmp_path


def _add_wrapper_call_above(project: Path) -> None:
    source = project / "agent" / "billing.py"
    text = source.read_text()
    anchor = "        response = "
    assert text.count(anchor) == 1
    source.write_text(text.replace(anchor, "        note = ask(ticket)\n" + anchor))


def _init(project: Path, *args: str, answers: str = ""):
    result = CliRunner().invoke(init, [str(project), *args], input=answers)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_accept_all_keeps_a_guarded_reviewed_contract_whose_index_a_wrapper_call_took(project):
    applied = CliRunner().invoke(apply, [str(project), "--yes"])
    assert applied.exit_code == 0, applied.output
    assert 'guard("billing.decide_refund", lambda:' in (project / "agent" / "billing.py").read_text()
    before = (project / "escalated.contracts.toml").read_bytes()
    _add_wrapper_call_above(project)

    result = _init(project, "--accept-all")

    assert (project / "escalated.contracts.toml").read_bytes() == before
    assert result.exit_code == 1, result.output
    assert "0 accepted, 2 skipped." in result.output
    assert "error: 2 call(s) left without a contract; nothing was overwritten:" in result.stderr
    assert (
        "contract 'billing.decide_refund' (openai chat.completions.create) is at index 0 of "
        "BillingAgent.decide_refund in agent/billing.py, where the call is now openai ask" in result.stderr
    )
    assert "Set its index to 1 in escalated.contracts.toml" in result.stderr


def test_accept_all_keeps_an_unguarded_reviewed_contract_and_drafts_no_twin_for_its_moved_call(project):
    before = (project / "escalated.contracts.toml").read_bytes()
    _add_wrapper_call_above(project)

    result = _init(project, "--accept-all")

    assert (project / "escalated.contracts.toml").read_bytes() == before
    assert result.exit_code == 1, result.output
    assert (
        "contract 'billing.decide_refund' (openai chat.completions.create, index 0 of BillingAgent.decide_refund "
        "in agent/billing.py) locates no call any more and may be this call's, now at index 1" in result.stderr
    )


def test_interactive_accept_at_a_contracted_index_is_refused_and_the_contract_kept(project):
    before = (project / "escalated.contracts.toml").read_bytes()
    _add_wrapper_call_above(project)

    result = _init(project, answers="a\ns\na\ns\n")

    assert (project / "escalated.contracts.toml").read_bytes() == before
    assert result.output.count("Cannot accept: contract 'billing.decide_refund'") == 2
    assert result.exit_code == 1


def test_after_the_index_is_moved_by_hand_init_drafts_the_wrapper_call_and_keeps_the_review(project):
    _add_wrapper_call_above(project)
    contracts = project / "escalated.contracts.toml"
    text = contracts.read_text()
    table = text.index('[contracts."billing.decide_refund"]')
    at = text.index("index = 0", table)
    contracts.write_text(text[:at] + "index = 1" + text[at + len("index = 0") :])

    result = _init(project, "--accept-all")

    assert result.exit_code == 0, result.output
    assert "1 accepted, 0 skipped." in result.output
    assert contracts.read_text().count(REVIEWED_QUESTION) == 1
