"""The fixture corpus: every call style and every rule, against hand-checked expectations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from escalated.contracts.scan.discovery import scan_tree

CORPUS = Path(__file__).parent / "corpus"
EXPECTED = json.loads((CORPUS / "expected.json").read_text())


def _summary(call) -> dict:
    return {
        "path": call.location.path,
        "line": call.location.line,
        "provider": call.provider,
        "api": call.api,
        "function": call.function,
        "index": call.index,
        "async": call.is_async,
        "confidence": call.confidence,
        "guardId": call.guard_id,
        "existingGate": call.existing_gate,
        "mode": call.recommendation.mode,
        "rules": list(call.recommendation.rules),
    }


@pytest.mark.parametrize("folder", ["styles", "rules", "real", "heldout"])
def test_corpus_findings_match_expectations(folder: str) -> None:
    result = scan_tree(CORPUS / folder)
    assert [_summary(c) for c in result.calls] == EXPECTED[folder]
    assert result.errors == ()


def test_every_provider_and_call_style_is_in_the_corpus() -> None:
    styles = EXPECTED["styles"]
    assert {c["provider"] for c in styles} == {"openai", "anthropic", "litellm", "google-genai", "langchain"}
    assert any(c["async"] for c in styles) and any(not c["async"] for c in styles)
    assert any(c["function"] == "<module>" or "." in c["function"] for c in styles)
    assert {"messages.stream", "astream", "beta.chat.completions.parse", "responses.create"} <= {c["api"] for c in styles}


def test_every_rule_has_a_fixture_that_triggers_it() -> None:
    fired = {rule for call in EXPECTED["rules"] for rule in call["rules"]}
    assert fired == {f"R{n}" for n in range(1, 12)}


def test_notebooks_are_skipped_and_reported() -> None:
    result = scan_tree(CORPUS / "styles")
    assert result.notebooks_skipped == ("notebook.ipynb",)
    assert all(not c.location.path.endswith(".ipynb") for c in result.calls)


def test_look_alike_calls_are_not_reported() -> None:
    result = scan_tree(CORPUS / "styles")
    assert not [c for c in result.calls if c.location.path == "not_llm.py"]
