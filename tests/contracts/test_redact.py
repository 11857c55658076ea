"""Redaction: comments, docstrings, string data and secrets never survive; names do."""

from __future__ import annotations

import pytest

from escalated.contracts.edit.redact import is_high_entropy, placeholder_kind, redact_code, scrub

# Fake values in each provider's real format.
SECRETS = {
    "openai": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z",
    "anthropic": "sk-ant-api03-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7Aa",
    "aws-key-id": "AKIAIOSFODNN7EXAMPLE",
    "aws-secret": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "github": "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R",
    "github-pat": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "jwt": "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "url-credentials": "postgres://admin:hunter2pass@db.internal.example:5432/prod",
    "email": "jane.doe@customer-corp.example",
    "high-entropy": "Zx8kP2qLm9Vt4Rb7Nw3Yc6Hd1Jf5Gs0A",
    "escalated": "ain_live_4f9Qx2LmZ8rT1vKp7YcB3nHs6WdE0aJu",
}
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_every_secret_format_is_scrubbed_from_text(name):
    text = f"before {SECRETS[name]} after"
    assert SECRETS[name] not in scrub(text)
    assert scrub(text).startswith("before ") and scrub(text).endswith(" after")


def test_a_private_key_block_is_scrubbed_whole():
    out = scrub(f"key = '''{PRIVATE_KEY}'''")
    assert "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun" not in out
    assert "PRIVATE KEY" not in out


@pytest.mark.parametrize(
    "value", ["gpt-4o-mini-2024-07-18", "claude-3-5-sonnet-20241022", "handle_order_2024_refund_request", "ChatGoogleGenerativeAI"]
)
def test_long_names_are_not_mistaken_for_secrets(value):
    assert not is_high_entropy(value)
    assert scrub(value) == value


@pytest.mark.parametrize(
    "value, kind",
    [
        ("gpt-4o", None),
        ("user", None),
        ("refund_order", None),
        ("", None),
        ("You are a refund agent. Be careful.", "text"),
        ("https://api.example.com/v1/refunds", "url"),
        ("/etc/app/config.yaml", "path"),
        ("12,500.00", "number"),
        ("jane.doe@customer-corp.example", "secret"),
        ("sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z", "secret"),
    ],
)
def test_string_literals_become_typed_placeholders_unless_identifier_like(value, kind):
    assert placeholder_kind(value) == kind


def test_code_loses_comments_docstrings_and_data_but_keeps_its_shape():
    source = f'''#!/usr/bin/env python
# Copyright jane.doe@customer-corp.example
"""Module docstring mentioning {SECRETS["openai"]}."""
import openai  # token {SECRETS["github"]}

API_KEY = "{SECRETS["anthropic"]}"


class Agent:
    """Class docstring."""

    def decide(self, order, dsn="{SECRETS["url-credentials"]}"):
        """Decide for {SECRETS["email"]}."""
        # the prompt is secret sauce
        prompt = f"Refund order {{order}} for {SECRETS["email"]}"
        "a bare string used as a comment"
        return openai.chat.completions.create(model="gpt-4o", messages=[{{"role": "user", "content": prompt}}], k=b"raw")
'''
    out = redact_code(source)
    for secret in SECRETS.values():
        assert secret not in out
    assert "#" not in out and "docstring" not in out and "secret sauce" not in out and "bare string" not in out
    assert 'model="gpt-4o"' in out and '"role": "user"' in out
    assert 'prompt = "<fstring>"' in out and 'k="<bytes>"' in out and 'API_KEY = "<secret>"' in out
    assert "def decide(self, order, dsn=\"<secret>\"):" in out
    assert "class Agent:\n    pass" not in out  # the class still has its method
    compile(out, "redacted.py", "exec")


def test_a_body_that_was_only_a_docstring_stays_valid_python():
    out = redact_code('def f():\n    """Only a docstring."""\n')
    assert out == "def f():\n    pass\n"


def test_secrets_hiding_outside_string_literals_are_scrubbed_too():
    hex_key = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    out = redact_code(f"ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R = 1\nx = 0x{hex_key}\n")
    assert "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R" not in out
    assert hex_key not in out
