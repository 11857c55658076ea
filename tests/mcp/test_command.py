"""``escalated mcp`` and ``serve --mcp`` refuse to start, in one line saying why, without what they need."""

from __future__ import annotations

import sys

from click.testing import CliRunner

from escalated.cli import main


def test_escalated_mcp_without_a_token_names_the_variables_and_exits_1(monkeypatch):
    monkeypatch.delenv("ESCALATED_API_KEY", raising=False)
    monkeypatch.delenv("ESCALATED_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["mcp"])
    assert result.exit_code == 1
    assert "ESCALATED_API_KEY" in result.output and "ESCALATED_TOKEN" in result.output


def test_escalated_mcp_with_a_bad_address_says_so_before_loading_the_sdk(monkeypatch):
    monkeypatch.setenv("ESCALATED_URL", "localhost:8470")
    monkeypatch.setenv("ESCALATED_API_KEY", "ain_live_" + "k" * 38)
    monkeypatch.setitem(sys.modules, "mcp", None)  # the address is checked first: no SDK needed to hear of it
    result = CliRunner().invoke(main, ["mcp"])
    assert result.exit_code == 1
    assert "must be an http:// or https:// URL with a host" in result.output and "pip install" not in result.output


def test_serve_mcp_without_the_sdk_names_the_extra_before_starting(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "mcp", None)  # import mcp fails, as without escalated[mcp]
    # An address no machine has: were the check skipped, serve would fail to bind instead of hanging here.
    result = CliRunner().invoke(main, ["serve", "--mcp", "--db", str(tmp_path / "e.db"), "--host", "256.0.0.1", "--port", "0"])
    assert result.exit_code == 1
    assert "pip install 'escalated[mcp]'" in result.output
    assert not (tmp_path / "e.db").exists()  # nothing started
