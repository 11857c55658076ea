"""Held out, the code-execution round: calls whose answer becomes code or commands that run,
reached through shapes the flow had lost.

Written from what real coding and computer-use agents do (an agent base class handing out a
closure around its provider client, whose callers run the reply as shell commands); the
repositories themselves stay out of this repository, only their hand labels are kept
(tests/contracts/heldout/).
"""

from __future__ import annotations

from pathlib import Path

from tests.contracts.projects import scan_modes
from tests.contracts.test_handed_out import AGENTS, CLIENTS


def test_what_is_handed_out_gives_its_callers_evidence_back_to_the_calls_inside(tmp_path: Path) -> None:
    calls = scan_modes(tmp_path, {**CLIENTS, **AGENTS})
    # Executor runs what llm = self.get_llm(); await llm([task]) returns as a shell command: the closure's
    # call of llm_client, BaseLLMClient.__call__'s call of _make_request and each provider's request are
    # where a guard can sit, and are required like the executor's call.
    assert calls[("core/agents/executor.py", 9)] == ("BaseAgent.get_llm()", "required")
    assert calls[("core/agents/base.py", 13)] == ("BaseLLMClient.__call__", "required")
    assert calls[("core/llm/base.py", 9)] == ("BaseLLMClient._make_request", "required")
    assert calls[("core/llm/openai_client.py", 9)] == ("chat.completions.create", "required")
    assert calls[("core/llm/anthropic_client.py", 9)] == ("messages.create", "required")
    # api_check's own call of the client is checked and dropped: nothing runs.
    assert calls[("core/llm/base.py", 15)] == ("BaseLLMClient.__call__", "autonomous")
