"""scan -> apply -> scan: the guards apply writes are the guards scan recognises."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from escalated.cli import main

SOURCE = """\
from openai import AsyncOpenAI, OpenAI

client = OpenAI()
aclient = AsyncOpenAI()


def reply(text):
    return client.chat.completions.create(model="m", messages=[])


async def areply(text):
    r = await aclient.chat.completions.create(model="m", messages=[])
    return r
"""


def contract(cid: str, function: str) -> str:
    return (
        f'[contracts."{cid}"]\npath = "agent/support.py"\nfunction = "{function}"\nindex = 0\n'
        'provider = "openai"\napi = "chat.completions.create"\nmode = "reviewed"\n'
        'policy = "agents.support"\nquestion = "OK?"\nchoices = [{ id = "ok", label = "OK" }]\napprove_choices = ["ok"]\n'
    )


def test_applied_guards_make_scan_pass(tmp_path: Path) -> None:
    (tmp_path / "agent").mkdir()
    (tmp_path / "agent" / "support.py").write_text(SOURCE)
    (tmp_path / "escalated.contracts.toml").write_text("version = 1\n" + contract("support.reply", "reply") + contract("support.areply", "areply"))
    runner = CliRunner()
    assert runner.invoke(main, ["contracts", "scan", str(tmp_path)]).exit_code == 1
    applied = runner.invoke(main, ["contracts", "apply", str(tmp_path), "--yes"])
    assert applied.exit_code == 0, applied.output
    after = runner.invoke(main, ["contracts", "scan", str(tmp_path), "--format", "json"])
    assert after.exit_code == 0, after.output
    assert '"guardId": "support.areply"' in after.output and '"async": true' in after.output
