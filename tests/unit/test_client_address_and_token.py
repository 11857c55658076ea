"""The server's address and the token are checked when a client is made: a typo
or a token read with a carriage return is one sentence at the CLI (exit 2) or
one exception in a library, never an aiohttp traceback (the TUI's dumped its
locals, the user's token among them)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from aiohttp import web

from escalated.agent.client import EscalatedClient, InvalidServerUrl, InvalidToken, server_url
from escalated.agent.receiver import start_receiver
from escalated.cli import main

TOKEN = "ain_user_" + "T0k3n" * 8


@pytest.mark.parametrize(
    ("given", "base"),
    [("http://127.0.0.1:8470", "http://127.0.0.1:8470"), ("https://escalated.example.com/", "https://escalated.example.com"),
     (" http://[::1]:8470/base/ ", "http://[::1]:8470/base")],
)  # fmt: skip
def test_an_http_or_https_address_with_a_host_is_the_base_url(given, base):
    assert server_url(given) == base
    assert EscalatedClient(given, TOKEN).base_url == base


@pytest.mark.parametrize(
    "given", ["not a url", "localhost:8470", "127.0.0.1:8470", "ftp://x", "http://", "http://x:99999", "http://x:port", "", "http://user:pw1234@:8470"]
)
def test_anything_else_is_refused_without_repeating_it(given):
    with pytest.raises(InvalidServerUrl) as raised:
        EscalatedClient(given, TOKEN)
    assert isinstance(raised.value, ValueError)  # a bad argument, as a library user expects
    assert "http://127.0.0.1:8470" in str(raised.value) and "pw1234" not in str(raised.value)


@pytest.mark.parametrize("command", [["review"], ["escalations", "list"]])
def test_the_cli_refuses_a_bad_url_before_anything_starts(command):
    result = CliRunner().invoke(main, [*command, "--url", "localhost:8470", "--token", TOKEN])
    assert result.exit_code == 2, result.output
    assert "Invalid value for --url / ESCALATED_URL" in result.output and "http://127.0.0.1:8470" in result.output
    assert TOKEN not in result.output and isinstance(result.exception, SystemExit)  # click's usage error, no traceback


def test_the_mcp_server_refuses_a_bad_url_in_words(monkeypatch):
    pytest.importorskip("mcp")
    monkeypatch.setenv("ESCALATED_URL", "not a url")
    monkeypatch.setenv("ESCALATED_API_KEY", "ain_live_" + "k" * 38)
    result = CliRunner().invoke(main, ["mcp"])
    assert result.exit_code == 1 and "must be an http:// or https:// URL" in result.output, result.output


async def test_whitespace_around_a_token_is_dropped_and_the_rest_is_sent():
    # A token file saved on Windows, or `echo` into a .env file; the header a real server receives.
    seen: list[str] = []

    async def me(request: web.Request) -> web.Response:
        seen.append(request.headers["Authorization"])
        return web.json_response({"kind": "user", "name": "alice", "workspace": "default", "scopes": []})

    app = web.Application()
    app.router.add_get("/me", me)
    async with await start_receiver(app) as server, EscalatedClient(server.url, f" {TOKEN}\r\n") as client:
        await client.me()
    assert seen == [f"Bearer {TOKEN}"]


@pytest.mark.parametrize("given", ["", "  ", f"{TOKEN}\nX-Injected: 1", f"ain_user_ {TOKEN}", f"{TOKEN}\x00"])
def test_a_token_with_whitespace_or_control_characters_inside_is_refused_without_repeating_it(given):
    with pytest.raises(InvalidToken) as raised:
        EscalatedClient("http://127.0.0.1:8470", given)
    assert isinstance(raised.value, ValueError) and TOKEN not in str(raised.value)


@pytest.mark.parametrize("command", [["review"], ["escalations", "list"]])
def test_the_cli_refuses_a_token_with_a_newline_inside_before_anything_starts(command):
    result = CliRunner().invoke(main, [*command, "--url", "http://127.0.0.1:8470", "--token", f"{TOKEN}\nX-Injected: 1"])
    assert result.exit_code == 2, result.output
    assert "Invalid value for --token / ESCALATED_TOKEN" in result.output
    assert TOKEN not in result.output and isinstance(result.exception, SystemExit)
