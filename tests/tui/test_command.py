"""``escalated review``: the command's own checks, before any screen opens."""

from __future__ import annotations

from click.testing import CliRunner

from escalated.tui.command import review


def test_review_requires_a_token():
    result = CliRunner().invoke(review, [], env={"ESCALATED_TOKEN": ""})
    assert result.exit_code == 2 and "--token" in result.output
