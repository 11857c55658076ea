"""The guard runtime that runs inside agents: ``guard`` around one LLM call,
``guard_tool`` on a risky tool, and the modes vocabulary they share with the
contract generator.

It imports nothing of the server: an agent process installs escalated for
this and :mod:`escalated.agent` alone.
"""

from escalated.guard.runtime import (
    ContractNotFound,
    EscalationRejected,
    GuardError,
    GuardFailedClosed,
    current_run_id,
    flush,
    guard,
    guard_async,
    run_context,
    shutdown,
)
from escalated.guard.tools import guard_tool

__all__ = [
    "ContractNotFound",
    "EscalationRejected",
    "GuardError",
    "GuardFailedClosed",
    "current_run_id",
    "flush",
    "guard",
    "guard_async",
    "guard_tool",
    "run_context",
    "shutdown",
]
