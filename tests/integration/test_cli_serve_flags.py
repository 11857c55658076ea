"""``escalated serve``: bad flags are refused before anything starts, with a clear message."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from escalated.cli import main


@pytest.mark.parametrize(
    ("args", "word"),
    [
        (["--retry-schedule", "soon,later"], "soon"),
        (["--retry-schedule", ","], "retry-schedule"),
        (["--retry-for", "forever"], "forever"),
        (["--delivery-timeout", "0s"], "0s"),
        (["--rate-limit", "lots"], "rate-limit"),
        (["--rate-limit", "5/fortnight"], "rate-limit"),
        (["--durability", "maybe"], "durability"),
        (["--port", "http"], "port"),
        (["--link-ttl", "73h"], "at most 72h"),
        (["--link-ttl", "0s"], "link-ttl"),
        (["--link-ttl", "soon"], "link-ttl"),
        (["--port", "70000"], "0<=x<=65535"),  # was socket's OverflowError, with a traceback
        (["--public-url", "escalated.example.com"], "https://escalated.example.com"),  # links would go out broken
        (["--public-url", "ftp://files.example.com"], "public-url"),
        (["--public-url", "https://x.example.com:99999"], "public-url"),
        (["--max-body", "0"], "x>=1024"),  # every POST would be 413
        (["--max-body", "-1"], "x>=1024"),
        (["--host", ""], "0.0.0.0"),  # printed http://:PORT as the address to use
        (["--host", "  "], "give an interface"),
    ],
)
def test_bad_serve_flag_exits_non_zero_with_a_message_and_no_traceback(tmp_path, args, word):
    result = CliRunner().invoke(main, ["serve", "--db", str(tmp_path / "s.db"), "--port", "0", *args])
    assert result.exit_code != 0
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    assert word in result.stderr, result.stderr
    assert "Listening on" not in result.output
