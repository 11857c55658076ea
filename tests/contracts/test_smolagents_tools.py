"""apply on a required smolagents run whose risky tool is a project ``Tool`` class: smolagents has no
approval hook, so the class's ``forward`` (what smolagents runs for each call) is guarded with
guard_tool, and scan then counts the run covered. The end-to-end runs are in
tests/integration/test_apply_smolagents.py."""

from __future__ import annotations

from click.testing import CliRunner

from escalated.cli import main
from tests.contracts.langchain_shop import apply_and_reapply

APP = '''\
import smtplib

from smolagents import InferenceClientModel, ToolCallingAgent
from {tool_module} import Tool


class MailTool(Tool):
    name = "mail_customer"
    description = "Mail a customer."
    inputs = {{"to": {{"type": "string", "description": "address"}}, "body": {{"type": "string", "description": "text"}}}}
    output_type = "string"

    def forward(self, to: str, body: str) -> str:
        with smtplib.SMTP("localhost") as smtp:
            smtp.sendmail("shop@example.com", [to], body)
        return "sent"


mailer = ToolCallingAgent(tools=[MailTool()], model=InferenceClientModel())


def answer(task: str) -> str:
    return str(mailer.run(task))
'''


def test_a_tool_class_is_guarded_at_its_forward(tmp_path):
    (tmp_path / "shop.py").write_text(APP.format(tool_module="smolagents"))
    assert CliRunner().invoke(main, ["contracts", "init", str(tmp_path), "--accept-all"]).exit_code == 0
    apply_and_reapply(tmp_path)
    source = (tmp_path / "shop.py").read_text()
    assert '    @guard_tool("shop.answer")\n    def forward(self, to: str, body: str) -> str:' in source
    assert 'return str(guard("shop.answer", lambda: mailer.run(task)))' in source


def test_a_class_that_is_not_a_smolagents_tool_is_left_to_be_guarded_by_hand(tmp_path):
    (tmp_path / "shop.py").write_text(APP.format(tool_module="shop_tools"))
    assert CliRunner().invoke(main, ["contracts", "init", str(tmp_path), "--accept-all"]).exit_code == 0
    applied = CliRunner().invoke(main, ["contracts", "apply", str(tmp_path), "--yes"])
    assert "tool mail_customer is not a function of the project: guard it at the tool by hand" in applied.output
    assert "guard_tool" not in (tmp_path / "shop.py").read_text()
    assert CliRunner().invoke(main, ["contracts", "scan", str(tmp_path)]).exit_code == 1  # still uncovered
