"""The guard runtime against a real ``escalated serve``: each mode, blocking, failing closed."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import os
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

import escalated.guard
from escalated.agent.client import EscalatedClient
from escalated.domain.limits import MAX_TEXT_CHARS
from escalated.guard.contracts import Choice, Contract, ContractSet, save_contracts
from escalated.guard import EscalationRejected, GuardFailedClosed, guard, guard_async, run_context
from tests.conftest import fresh_db
from tests.support.server import ServerProcess
from tests.support.wait import eventually

POLICY = "agents.billing.decide-refund"


def _contract(cid: str, mode: str, **extra) -> Contract:
    return Contract(
        id=cid,
        path="agent/billing.py",
        function=f"decide_{cid.replace('.', '_')}",
        index=0,
        provider="openai",
        api="chat.completions.create",
        mode=mode,
        rules=("R2",),
        policy=POLICY,
        question="Approve the model's refund decision?",
        choices=(Choice("approve", "Approve"), Choice("reject", "Reject")),
        approve_choices=("approve",),
        **extra,
    )


CONTRACTS = ContractSet(
    {
        c.id: c
        for c in (
            _contract("billing.autonomous", "autonomous"),
            _contract("billing.sampled", "sampled", sample_rate=0.5),
            _contract("billing.reviewed", "reviewed"),
            _contract("billing.required", "required"),
        )
    }
)


@pytest.fixture(scope="module")
def guard_server(request, backend, tmp_path_factory):
    """One server per module and backend: each test files under a run id of its own."""
    with fresh_db(request, backend, tmp_path_factory.mktemp("guard")) as db:
        proc = ServerProcess(db=db).start()
        proc.cli("policy", "set", POLICY)
        yield proc
        proc.stop()


def _point_the_guard_at(server: ServerProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A project with the four contracts, and the guard pointed at ``server`` under a new run id."""
    save_contracts(tmp_path, CONTRACTS)
    monkeypatch.setenv("ESCALATED_CONTRACTS", str(tmp_path / "escalated.contracts.toml"))
    monkeypatch.setenv("ESCALATED_URL", server.url)
    monkeypatch.setenv("ESCALATED_API_KEY", server.bootstrap_key)
    monkeypatch.setenv("ESCALATED_RUN_ID", f"run-{uuid.uuid4().hex}")


@pytest.fixture
def env(tmp_path, guard_server, monkeypatch):
    """The guard pointed at the module's real server."""
    _point_the_guard_at(guard_server, tmp_path, monkeypatch)
    yield guard_server
    escalated.guard.shutdown()


@pytest.fixture
def own_env(tmp_path, fresh_server, monkeypatch):
    """The guard pointed at a real server of its own, for tests that stop it."""
    fresh_server.cli("policy", "set", POLICY)
    _point_the_guard_at(fresh_server, tmp_path, monkeypatch)
    yield fresh_server
    escalated.guard.shutdown()


async def _filed(server, run_id: str) -> list[dict]:
    async with EscalatedClient(server.url, server.bootstrap_key) as client:
        page = await client.list_escalations(run_id=run_id, limit=100)
    return page["data"]


async def _wait_for_escalation(server, run_id: str, *, timeout_s: float = 10.0) -> dict:
    filed = await eventually(lambda: _filed(server, run_id), timeout_s=timeout_s, what="the escalation to be filed")
    return filed[0]


async def _decide(server, escalation_id: str, choice: str) -> None:
    async with EscalatedClient(server.url, server.bootstrap_key) as client:
        await client.decide(escalation_id, choice=choice, reason="checked by a test")


async def test_autonomous_calls_through_and_files_nothing(env):
    result = object()
    assert guard("billing.autonomous", lambda: result) is result
    assert escalated.guard.flush(timeout_s=5)
    assert await _filed(env, os.environ["ESCALATED_RUN_ID"]) == []


def test_autonomous_needs_no_server_at_all(tmp_path, monkeypatch):
    save_contracts(tmp_path, CONTRACTS)
    monkeypatch.setenv("ESCALATED_CONTRACTS", str(tmp_path / "escalated.contracts.toml"))
    monkeypatch.delenv("ESCALATED_API_KEY", raising=False)
    assert guard("billing.autonomous", lambda: 42) == 42


async def test_reviewed_returns_at_once_and_files_every_call_with_the_output(env):
    run_id = os.environ["ESCALATED_RUN_ID"]
    assert guard("billing.reviewed", lambda: "refund 120 EUR") == "refund 120 EUR"
    assert guard("billing.reviewed", lambda: {"refund": 80}) == {"refund": 80}
    assert escalated.guard.flush(timeout_s=10)
    filed = await _filed(env, run_id)
    assert len(filed) == 2
    evidence = sorted(e["evidence"][0] for e in filed)
    assert evidence == ["Model output:\nrefund 120 EUR", 'Model output:\n{"refund": 80}']
    assert {e["status"] for e in filed} == {"open"}
    assert {e["policy"] for e in filed} == {POLICY}
    assert {e["agentId"] for e in filed} == {"billing"}


async def test_sampled_files_the_deterministic_share_given_by_the_hash(env):
    run_id = os.environ["ESCALATED_RUN_ID"]
    for i in range(20):
        assert guard("billing.sampled", lambda i=i: f"answer {i}") == f"answer {i}"
    assert escalated.guard.flush(timeout_s=10)
    expected = {
        f"Model output:\nanswer {i}"
        for i in range(20)
        if int.from_bytes(hashlib.sha256(f"{run_id}\0billing.sampled\0{i}".encode()).digest()[:8], "big") / 2**64
        < 0.5
    }
    assert 0 < len(expected) < 20
    assert {e["evidence"][0] for e in await _filed(env, run_id)} == expected


async def test_required_blocks_until_a_reviewer_approves_over_http(env):
    run_id = os.environ["ESCALATED_RUN_ID"]
    result = asyncio.create_task(asyncio.to_thread(guard, "billing.required", lambda: "refund 1200 EUR"))
    escalation = await _wait_for_escalation(env, run_id)
    assert escalation["evidence"][0] == "Model output:\nrefund 1200 EUR"
    assert escalation["question"] == "Approve the model's refund decision?"
    assert not result.done()  # still waiting for the human
    await _decide(env, escalation["id"], "approve")
    assert await asyncio.wait_for(result, 15) == "refund 1200 EUR"


async def test_required_raises_when_the_reviewer_rejects(env):
    run_id = os.environ["ESCALATED_RUN_ID"]
    result = asyncio.create_task(asyncio.to_thread(guard, "billing.required", lambda: "delete everything"))
    escalation = await _wait_for_escalation(env, run_id)
    await _decide(env, escalation["id"], "reject")
    with pytest.raises(EscalationRejected, match="chose 'reject': checked by a test") as caught:
        await asyncio.wait_for(result, 15)
    assert caught.value.escalation_id == escalation["id"] and caught.value.choice == "reject"


async def test_the_awaited_form_guards_an_async_call(env):
    async def create() -> str:
        return "async answer"

    with run_context("run-async-" + uuid.uuid4().hex):
        pending = asyncio.ensure_future(guard("billing.required", lambda: create()))
        escalation = await _wait_for_escalation(env, escalated.guard.current_run_id())
    await _decide(env, escalation["id"], "approve")
    assert await asyncio.wait_for(pending, 15) == "async answer"


async def test_guard_async_is_the_explicit_twin(env):
    async def create() -> str:
        return "twin"

    assert await guard_async("billing.reviewed", create) == "twin"
    assert await guard_async("billing.autonomous", lambda: "sync thunk") == "sync thunk"
    assert escalated.guard.flush(timeout_s=10)
    assert len(await _filed(env, os.environ["ESCALATED_RUN_ID"])) == 1


async def test_a_streamed_result_is_buffered_for_review_and_replayed(env):
    run_id = os.environ["ESCALATED_RUN_ID"]

    def stream():
        yield from ("Refund ", "approved ", "for #981")

    result = asyncio.create_task(asyncio.to_thread(guard, "billing.required", stream))
    escalation = await _wait_for_escalation(env, run_id)
    assert escalation["evidence"][0] == "Model output:\nRefund approved for #981"
    await _decide(env, escalation["id"], "approve")
    replay = await asyncio.wait_for(result, 15)
    assert list(replay) == ["Refund ", "approved ", "for #981"]


async def test_required_fails_closed_when_the_server_is_down(own_env):
    own_env.stop()
    used = []
    with pytest.raises(GuardFailedClosed, match="result is not used"):
        await asyncio.to_thread(guard, "billing.required", lambda: used.append(1) or "answer")
    assert used == [1]  # the call ran; its result was withheld


def test_reviewed_logs_a_review_it_could_not_file(own_env, caplog):
    own_env.stop()
    assert guard("billing.reviewed", lambda: "answer") == "answer"
    assert escalated.guard.flush(timeout_s=10)
    assert "could not file the review for contract 'billing.reviewed'" in caplog.text
    assert own_env.bootstrap_key not in caplog.text


async def test_a_rerun_of_the_same_run_does_not_file_twice(env, tmp_path):
    script = tmp_path / "agent.py"
    script.write_text(
        textwrap.dedent(
            """
            from escalated.guard import flush, guard
            guard("billing.reviewed", lambda: "same output")
            assert flush(timeout_s=10)
            """
        )
    )
    for _ in range(2):
        subprocess.run([sys.executable, str(script)], check=True, env=os.environ.copy(), timeout=60)
    assert len(await _filed(env, os.environ["ESCALATED_RUN_ID"])) == 1


def test_an_unknown_contract_is_a_clear_error(env):
    with pytest.raises(escalated.guard.ContractNotFound, match=r"'billing\.nope' is not in"):
        guard("billing.nope", lambda: "x")


def test_the_contracts_file_is_found_above_the_callers_file(tmp_path, monkeypatch):
    monkeypatch.delenv("ESCALATED_CONTRACTS", raising=False)
    save_contracts(tmp_path, CONTRACTS)
    agent = tmp_path / "agent" / "billing.py"
    agent.parent.mkdir()
    agent.write_text("from escalated.guard import guard\nRESULT = guard('billing.autonomous', lambda: 'found')\n")
    namespace: dict = {}
    exec(compile(agent.read_text(), str(agent), "exec"), namespace)
    assert namespace["RESULT"] == "found"
    assert Path(tmp_path / "escalated.contracts.toml").exists()


class _Event:
    """An Anthropic-shaped stream event: ``event.delta.text``."""

    def __init__(self, text: str):
        self.delta = type("Delta", (), {"text": text})()


class _MessageStreamManager:
    """Shaped like Anthropic's ``client.messages.stream(...)``: a context manager yielding a stream."""

    def __init__(self, texts: list[str]):
        self._events = iter([_Event(t) for t in texts])
        self.exited = False

    def __enter__(self):
        stream = self

        class MessageStream:
            def __iter__(self):
                return self

            def __next__(self):
                return next(stream._events)

            @property
            def text_stream(self):
                return (event.delta.text for event in self)

        return MessageStream()

    def __exit__(self, *exc_info):
        self.exited = True


async def test_a_stream_context_manager_is_buffered_and_its_text_stream_replayed(env):
    manager = _MessageStreamManager(["Hello ", "reviewer"])
    with guard("billing.reviewed", lambda: manager) as stream:
        assert list(stream.text_stream) == ["Hello ", "reviewer"]
    assert manager.exited
    assert escalated.guard.flush(timeout_s=10)
    filed = await _filed(env, os.environ["ESCALATED_RUN_ID"])
    assert [e["evidence"][0] for e in filed] == ["Model output:\nHello reviewer"]


async def test_an_async_stream_is_buffered_for_review_and_replayed(env):
    async def astream():
        for chunk in ("one ", "two"):
            yield chunk

    chunks = [chunk async for chunk in guard("billing.reviewed", lambda: astream())]
    assert chunks == ["one ", "two"]
    assert escalated.guard.flush(timeout_s=10)
    filed = await _filed(env, os.environ["ESCALATED_RUN_ID"])
    assert [e["evidence"][0] for e in filed] == ["Model output:\none two"]


def _run_agent(tmp_path: Path, output: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    script = tmp_path / "required_agent.py"
    script.write_text(
        "import sys\nfrom escalated.guard import guard\n"
        "print(guard('billing.required', lambda: sys.argv[1]))\n"
    )
    return subprocess.run(
        [sys.executable, str(script), output], env=env, capture_output=True, text=True, timeout=60
    )


def test_required_fails_closed_when_the_wait_cap_passes_and_a_changed_rerun_is_refused(env, tmp_path):
    agent_env = {**os.environ, "ESCALATED_GUARD_WAIT_S": "0.5"}
    first = _run_agent(tmp_path, "refund 10 EUR", agent_env)
    assert first.returncode != 0 and "GuardFailedClosed" in first.stderr
    assert "no decision before the guard's wait ran out" in first.stderr
    # The same run, the same call, a different output: never silently a second escalation.
    second = _run_agent(tmp_path, "refund 9000 EUR", agent_env)
    assert second.returncode != 0 and "start a new run id" in second.stderr


class _StreamedRun:
    """The shape of ``Runner.run_streamed(...)``: returned at once, the run happens in stream_events()."""

    def __init__(self) -> None:
        self.final_output = None

    async def stream_events(self):
        for event in ("tool: issue_refund", "message: refunded"):
            await asyncio.sleep(0)
            yield event
        self.final_output = "Refunded 1200 EUR on #981"


async def test_a_streamed_agent_run_is_decided_while_the_event_loop_keeps_running(env):
    run_id = os.environ["ESCALATED_RUN_ID"]
    streamed = guard("billing.required", _StreamedRun)  # returns at once: nothing blocks here
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    async def consume() -> list[str]:
        return [event async for event in streamed.stream_events()]

    ticking = asyncio.create_task(ticker())
    events = asyncio.create_task(consume())
    escalation = await _wait_for_escalation(env, run_id)
    assert escalation["evidence"][0] == "Model output:\nRefunded 1200 EUR on #981"
    seen = ticks
    await asyncio.sleep(0.2)
    assert ticks > seen and not events.done()  # the loop runs while the human decides
    await _decide(env, escalation["id"], "approve")
    assert await asyncio.wait_for(events, 15) == ["tool: issue_refund", "message: refunded"]
    ticking.cancel()


async def test_a_long_output_is_cut_to_what_the_server_accepts_and_still_filed(env):
    # The guard cut outputs at 16,000 characters; the server takes 10,000 per text, so long ones were refused.
    run_id = os.environ["ESCALATED_RUN_ID"]
    assert guard("billing.reviewed", lambda: "x" * 50_000) == "x" * 50_000
    assert escalated.guard.flush(timeout_s=10)
    [filed] = await _filed(env, run_id)
    assert len(filed["evidence"][0]) <= MAX_TEXT_CHARS and filed["evidence"][0].endswith("more characters)")


async def test_an_awaited_required_guard_honours_the_wait_cap(env, monkeypatch):
    monkeypatch.setenv("ESCALATED_GUARD_WAIT_S", "0.5")

    async def create() -> str:
        return "refund 10 EUR"

    started = time.monotonic()
    with pytest.raises(GuardFailedClosed, match="no decision before the guard's wait ran out"):
        await guard("billing.required", create)
    assert time.monotonic() - started < 10


async def test_a_required_sync_call_inside_a_running_loop_fails_closed_instead_of_blocking_it(env):
    started = time.monotonic()
    with pytest.raises(GuardFailedClosed, match="would block the running event loop"):
        guard("billing.required", lambda: "refund 10 EUR")
    assert time.monotonic() - started < 5


async def test_a_guarded_tool_runs_only_after_the_reviewer_approves_the_call_the_model_chose(env):
    from escalated.guard import guard_tool

    ran: list[str] = []

    @guard_tool("billing.required")
    def issue_refund(charge_id: str, amount: int) -> str:
        """Refund a charge."""
        ran.append(charge_id)
        return f"refunded {amount} on {charge_id}"

    assert issue_refund.__name__ == "issue_refund" and issue_refund.__doc__ == "Refund a charge."
    result = asyncio.create_task(asyncio.to_thread(issue_refund, "ch_1", amount=120))
    escalation = await _wait_for_escalation(env, os.environ["ESCALATED_RUN_ID"])
    assert escalation["subject"] == {"type": "tool_call", "id": "billing.required:0", "label": "issue_refund"}
    assert escalation["evidence"][:3] == [
        "Tool: issue_refund",
        'Arguments (JSON): {"charge_id": "ch_1", "amount": 120}',
        "What it does: Refund a charge.",
    ]
    assert ran == []  # nothing happened before the human decided
    await _decide(env, escalation["id"], "approve")
    assert await asyncio.wait_for(result, 15) == "refunded 120 on ch_1" and ran == ["ch_1"]


async def test_a_rejected_async_tool_call_never_runs(env):
    from escalated.guard import guard_tool

    ran: list[str] = []

    @guard_tool("billing.required")
    async def delete_account(user_id: str) -> str:
        ran.append(user_id)
        return "deleted"

    pending = asyncio.ensure_future(delete_account("u-7"))
    escalation = await _wait_for_escalation(env, os.environ["ESCALATED_RUN_ID"])
    await _decide(env, escalation["id"], "reject")
    with pytest.raises(EscalationRejected):
        await asyncio.wait_for(pending, 15)
    assert ran == []


async def test_an_awaitable_guard_on_a_sync_tool_waits_for_the_reviewer_without_blocking_the_loop(env):
    from escalated.guard import guard_tool

    ran: list[str] = []

    @guard_tool("billing.required", awaitable=True)
    def issue_refund(charge_id: str) -> str:
        ran.append(charge_id)
        return f"refunded {charge_id}"

    # What the OpenAI Agents SDK does: await a coroutine tool inside its own running loop.
    assert inspect.iscoroutinefunction(issue_refund)
    pending = asyncio.ensure_future(issue_refund("ch_2"))
    escalation = await _wait_for_escalation(env, os.environ["ESCALATED_RUN_ID"])
    assert escalation["evidence"][:2] == ["Tool: issue_refund", 'Arguments (JSON): {"charge_id": "ch_2"}']
    assert ran == [] and not pending.done()
    await _decide(env, escalation["id"], "approve")
    assert await asyncio.wait_for(pending, 15) == "refunded ch_2" and ran == ["ch_2"]


async def test_what_langchain_passes_a_tool_itself_is_not_the_evidence(env):
    from langchain_core.runnables import RunnableConfig

    from escalated.guard import guard_tool

    @guard_tool("billing.required")
    async def issue_refund(charge_id: str, config: RunnableConfig) -> str:
        return "refunded"

    # LangChain passes a tool's config (a plain dict at run time) when its parameter is annotated so.
    pending = asyncio.ensure_future(issue_refund("ch_3", config={"configurable": {"crm_notes": "private"}}))
    escalation = await _wait_for_escalation(env, os.environ["ESCALATED_RUN_ID"])
    assert escalation["evidence"][1] == 'Arguments (JSON): {"charge_id": "ch_3"}'
    await _decide(env, escalation["id"], "reject")
    with pytest.raises(EscalationRejected):
        await asyncio.wait_for(pending, 15)
