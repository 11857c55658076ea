"""Remote drafting against a real local HTTP server that records what it receives."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest
from aiohttp import web
from click.testing import CliRunner

from escalated.contracts.edit.cli import init
from escalated.guard.contracts import load_contracts
from tests.contracts.test_redact import PRIVATE_KEY, SECRETS


class RecordingAnalyser:
    """A remote analyser on port 0, in its own thread (init is synchronous)."""

    def __init__(self, *, status: int = 200):
        self.bodies: list[bytes] = []
        self.authorizations: list[str | None] = []
        self.status = status
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self.url = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(10)

    async def _start(self) -> str:
        app = web.Application()
        app.router.add_post("/draft", self._draft)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/draft"

    async def _draft(self, request: web.Request) -> web.Response:
        body = await request.read()
        self.bodies.append(body)
        self.authorizations.append(request.headers.get("Authorization"))
        if self.status != 200:
            return web.json_response({"error": "overloaded"}, status=self.status)
        payload = json.loads(body)
        drafts = [
            {
                "ref": call["ref"],
                "question": f"Remote draft {payload['attempt']}: may {call['function']} go ahead?",
                "choices": [{"id": "go", "label": "Go ahead"}, {"id": "stop", "label": "Stop"}],
                "approveChoices": ["go"],
                "rationale": "test",
            }
            for call in payload["calls"]
        ]
        return web.json_response({"drafts": drafts})

    def payloads(self) -> list[dict]:
        return [json.loads(b) for b in self.bodies]

    def close(self) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


@pytest.fixture
def analyser():
    server = RecordingAnalyser()
    yield server
    server.close()


AGENT = f'''"""Billing agent. Contact {SECRETS["email"]} with questions; key {SECRETS["openai"]}."""
import os

import stripe
from openai import OpenAI

# Old key, rotated: {SECRETS["anthropic"]}
OPENAI_KEY = "{SECRETS["openai"]}"
AWS = {{"id": "{SECRETS["aws-key-id"]}", "secret": "{SECRETS["aws-secret"]}"}}
SIGNING_KEY = """{PRIVATE_KEY}"""
client = OpenAI(api_key=OPENAI_KEY)


class BillingAgent:
    def decide_refund(self, ticket: str, token: str = "{SECRETS["github"]}") -> None:
        """Uses the JWT {SECRETS["jwt"]} for the ledger."""
        db = "{SECRETS["url-credentials"]}"  # and {SECRETS["github-pat"]}
        session = "{SECRETS["high-entropy"]}"
        service = "{SECRETS["escalated"]}"
        response = client.chat.completions.create(
            model="gpt-4o",
            messages=[
                {{"role": "system", "content": "Refund policy: up to 100 EUR, ask {SECRETS["email"]} above that."}},
                {{"role": "user", "content": f"{{ticket}} from {SECRETS["email"]}"}},
            ],
        )
        stripe.Refund.create(charge=response.choices[0].message.content)
'''


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "billing.py").write_text(AGENT)
    return tmp_path


def run_init(project: Path, *args: str, answers: str = ""):
    result = CliRunner().invoke(init, [str(project), *args], input=answers)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def test_with_consent_only_redacted_context_is_sent_and_no_secret_appears(project, analyser):
    result = run_init(project, "--remote", analyser.url, "--consent", answers="a\n")
    assert result.exit_code == 0, result.output
    assert len(analyser.bodies) == 1
    received = analyser.bodies[0].decode()
    for name, secret in SECRETS.items():
        assert secret not in received, name
    assert "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun" not in received
    assert "PRIVATE KEY" not in received
    for data in ("Refund policy", "Billing agent", "rotated", "ledger", "Contact"):
        assert data not in received, data  # prose from strings, comments, docstrings
    call = analyser.payloads()[0]["calls"][0]
    assert call["function"] == "BillingAgent.decide_refund" and call["api"] == "chat.completions.create"
    assert 'model="gpt-4o"' in call["context"] and "stripe.Refund.create" in call["context"]
    assert call["mode"] == "required" and call["rules"] == ["R2"]
    # The remote's wording is used; mode and policy stay the local, deterministic ones.
    contract = load_contracts(project).contracts["billing.decide_refund"]
    assert contract.question == "Remote draft 0: may BillingAgent.decide_refund go ahead?"
    assert contract.approve_choices == ("go",) and contract.mode == "required"


def test_without_consent_at_the_prompt_nothing_is_sent(project, analyser):
    result = run_init(project, "--remote", analyser.url, answers="n\na\n")
    assert "Send it?" in result.output and "Nothing was sent; drafting locally." in result.output
    assert analyser.bodies == []
    contract = load_contracts(project).contracts["billing.decide_refund"]
    assert contract.question.startswith("Approve the payment or refund")


def test_non_interactive_without_consent_sends_nothing(project, analyser):
    result = run_init(project, "--remote", analyser.url)
    assert result.exit_code == 0
    assert analyser.bodies == []


def test_enter_at_the_consent_prompt_is_a_no(project, analyser):
    """Consent is an explicit yes (CONTRACT §9): the prompt's default sends nothing."""
    result = run_init(project, "--remote", analyser.url, answers="\ns\n")
    assert "Nothing was sent; drafting locally." in result.output
    assert analyser.bodies == []


def test_an_explicit_yes_at_the_prompt_sends(project, analyser):
    run_init(project, "--remote", analyser.url, answers="y\ns\n")
    assert len(analyser.bodies) == 1


def test_show_payload_prints_exactly_what_is_then_sent(project, analyser):
    result = run_init(project, "--remote", analyser.url, "--show-payload", answers="y\nq\n")
    printed = result.output.split("Payload (exactly what would be sent):\n", 1)[1]
    printed_json = json.JSONDecoder().raw_decode(printed)[0]
    assert printed_json == analyser.payloads()[0]


def test_show_payload_without_remote_sends_nothing_anywhere(project, analyser):
    result = run_init(project, "--show-payload", answers="q\n")
    assert '"protocol": "escalated.contracts.edit.remote/1"' in result.output
    assert analyser.bodies == []


def test_regenerate_asks_the_remote_again_with_the_next_attempt(project, analyser):
    run_init(project, "--remote", analyser.url, "--consent", answers="r\na\n")
    assert [p["attempt"] for p in analyser.payloads()] == [0, 1]
    contract = load_contracts(project).contracts["billing.decide_refund"]
    assert contract.question.startswith("Remote draft 1:")


def test_a_failing_remote_falls_back_to_local_drafts(project):
    failing = RecordingAnalyser(status=503)
    try:
        result = run_init(project, "--remote", failing.url, "--consent", answers="a\n")
    finally:
        failing.close()
    assert len(failing.bodies) == 1
    assert "drafting locally" in result.output
    assert load_contracts(project).contracts["billing.decide_refund"].question.startswith("Approve the payment")


def test_credentials_in_the_remote_url_are_sent_as_auth_and_never_printed(project, analyser):
    url = analyser.url.replace("http://", "http://drafter:pw-7Hq2xZ@")
    result = run_init(project, "--remote", url, answers="y\nq\n")
    assert len(analyser.bodies) == 1
    assert analyser.authorizations == ["Basic ZHJhZnRlcjpwdy03SHEyeFo="]  # drafter:pw-7Hq2xZ
    assert "pw-7Hq2xZ" not in result.output and "drafter" not in result.output


def test_a_remote_token_from_the_environment_is_sent_as_bearer(project, analyser, monkeypatch):
    monkeypatch.setenv("ESCALATED_REMOTE_TOKEN", "remote-token-123")
    run_init(project, "--remote", analyser.url, "--consent", answers="q\n")
    assert analyser.authorizations == ["Bearer remote-token-123"]


def test_consent_without_a_remote_is_a_usage_error(project):
    result = CliRunner().invoke(init, [str(project), "--consent"])
    assert result.exit_code == 2 and "--consent only applies with --remote" in result.output
