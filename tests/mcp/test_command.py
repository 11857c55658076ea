"""``escalated mcp`` refuses to start without a token, in one line naming the variables."""

from __future__ import annotations

from click.testing import CliRunner

from escalated.cli import main


def test_escalated_mcp_without_a_token_names_the_variables_and_exits_1(monkeypatch):
    monkeypatch.delenv("ESCALATED_API_KEY", raising=False)
    monkeypatch.delenv("ESCALATED_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["mcp"])
    assert result.exit_code == 1
    assert "ESCALATED_API_KEY" in result.output and "ESCALATED_TOKEN" in result.output
