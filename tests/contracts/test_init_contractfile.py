"""The contracts file: round trip, matching by location, and loud failures."""

from __future__ import annotations

import pytest

from escalated.guard.contracts import (
    Choice,
    Contract,
    ContractFileError,
    ContractSet,
    dump_contracts,
    find_contracts_file,
    load_contracts,
    save_contracts,
)
from escalated.contracts.calls import Location, LlmCall, Recommendation


def _contract(**overrides) -> Contract:
    fields = dict(
        id="billing.decide_refund",
        path="agent/billing.py",
        function="BillingAgent.decide_refund",
        index=0,
        provider="openai",
        api="chat.completions.create",
        mode="required",
        rules=("R2",),
        policy="agents.billing.decide-refund",
        question='Approve the model\'s "refund" decision?\nLine two \\ tab\t.',
        choices=(Choice("approve", "Approve"), Choice("reject", "Reject")),
        approve_choices=("approve",),
    )
    return Contract(**{**fields, **overrides})


def _call(*, path="agent/billing.py", function="BillingAgent.decide_refund", index=0, api="chat.completions.create"):
    return LlmCall(
        location=Location(path, 40, 8, 44, 9),
        provider="openai",
        api=api,
        function=function,
        index=index,
        is_async=False,
        confidence="high",
        guarded=False,
        guard_id=None,
        existing_gate=None,
        findings=(),
        recommendation=Recommendation("required", ("R2",), ("money",), "high"),
        source="client.chat.completions.create()",
    )


def test_contracts_round_trip_through_the_file(tmp_path):
    contracts = ContractSet(
        {
            "billing.decide_refund": _contract(),
            "billing.summarise": _contract(
                id="billing.summarise", function="summarise", mode="sampled", sample_rate=0.1, rules=()
            ),
        }
    )
    save_contracts(tmp_path, contracts)
    assert load_contracts(tmp_path) == contracts
    # Stable output: saving what was loaded gives the same bytes.
    assert dump_contracts(load_contracts(tmp_path)) == (tmp_path / "escalated.contracts.toml").read_text()


def test_a_project_without_a_file_has_no_contracts(tmp_path):
    assert len(load_contracts(tmp_path)) == 0


def test_match_uses_path_function_and_index_not_lines():
    contracts = ContractSet({"billing.decide_refund": _contract()})
    assert contracts.match(_call()) == _contract()
    assert contracts.match(_call(index=1)) is None
    assert contracts.match(_call(function="other")) is None
    assert contracts.match(_call(api="responses.create")) is None


def test_with_contract_replaces_the_contract_at_the_same_location():
    contracts = ContractSet({"billing.decide_refund": _contract()}).with_contract(_contract(id="renamed"))
    assert list(contracts.contracts) == ["renamed"]


_WHOLE = (
    '[contracts.a]\npath = "a.py"\nfunction = "f"\nindex = 0\nprovider = "openai"\napi = "x"\nmode = "required"\n'
    'policy = "p"\nquestion = "q"\nchoices = [{ id = "ok", label = "OK" }]\napprove_choices = ["ok"]\n'
)


@pytest.mark.parametrize(
    "body, message",
    [
        ('version = 2\n', "unsupported version"),
        ('version = 1\nextra = 1\n', "unknown top-level keys"),
        ('[contracts.a]\npath = "a.py"\n', "missing keys"),
        ('[contracts.a]\npath = "a.py"\nfunction = "f"\nindex = 0\nprovider = "openai"\napi = "x"\nmode = "sometimes"\n'
         'policy = "p"\nquestion = "q"\nchoices = [{ id = "ok", label = "OK" }]\napprove_choices = ["ok"]\n', "mode"),
        ('[contracts.a]\npath = "a.py"\nfunction = "f"\nindex = 0\nprovider = "openai"\napi = "x"\nmode = "sampled"\n'
         'policy = "p"\nquestion = "q"\nchoices = [{ id = "ok", label = "OK" }]\napprove_choices = ["ok"]\n', "sample_rate"),
        ('[contracts.a]\npath = "a.py"\nfunction = "f"\nindex = 0\nprovider = "openai"\napi = "x"\nmode = "required"\n'
         'policy = "p"\nquestion = "q"\nchoices = [{ id = "ok", label = "OK" }]\napprove_choices = ["yes"]\n', "approve choice"),
        ('[contracts.a]\npath = "a.py"\nfunction = "f"\nindex = 0\nprovider = "openai"\napi = "x"\nmode = "required"\n'
         'policy = "p"\nquestion = "q"\nchoices = [{ id = "ok", label = "OK" }]\napprove_choices = ["ok"]\ntypo = 1\n', "unknown keys"),
        ('not toml at all [', "Expected"),
        # A value of the wrong TOML type is named with its key, not as the Python error of using it
        # ("'int' object is not iterable"), and a bare string is not read as a list of its letters.
        (_WHOLE.replace('mode = "required"', "mode = 5"), r"mode must be a string, got 5"),
        (_WHOLE.replace("index = 0", 'index = "0"'), r"index must be an integer, got '0'"),
        (_WHOLE.replace('approve_choices = ["ok"]', 'approve_choices = "ok"'), r"approve_choices must be a list of strings, got 'ok'"),
        (_WHOLE + 'rules = "R2"\n', r"rules must be a list of strings, got 'R2'"),
        (_WHOLE.replace('choices = [{ id = "ok", label = "OK" }]', "choices = 5"), r"choices must be a list of \{ id"),
        (_WHOLE.replace('choices = [{ id = "ok", label = "OK" }]', "choices = [5]"), r"choices must be a list of \{ id"),
        (_WHOLE.replace('{ id = "ok", label = "OK" }', '{ id = 5, label = "OK" }'), r"choices must be a list of \{ id"),
    ],
)
def test_an_invalid_file_is_refused_with_the_reason(tmp_path, body, message):
    (tmp_path / "escalated.contracts.toml").write_text(body)
    with pytest.raises(ContractFileError, match=message):
        load_contracts(tmp_path)


def test_the_contracts_file_is_found_from_a_nested_file(tmp_path):
    save_contracts(tmp_path, ContractSet({"a": _contract()}))
    nested = tmp_path / "agent" / "deep"
    nested.mkdir(parents=True)
    (nested / "mod.py").write_text("")
    assert find_contracts_file(nested / "mod.py") == tmp_path / "escalated.contracts.toml"
