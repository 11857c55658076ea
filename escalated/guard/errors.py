"""The guard's errors: what an agent sees when a result may not be used."""

from __future__ import annotations

from escalated.errors import EscalatedError


class GuardError(EscalatedError):
    code, title = "guard_error", "Guard error"


class ContractNotFound(GuardError):
    code, title = "contract_not_found", "Contract not found"


class GuardFailedClosed(GuardError):
    """No decision could be obtained, so the held-back result is not used."""

    code, title = "guard_failed_closed", "Guard failed closed"


class EscalationRejected(GuardError):
    """A reviewer (or the SLA default) did not approve, or the escalation was cancelled."""

    code, title = "escalation_rejected", "Escalation rejected"

    def __init__(self, detail: str, *, escalation: dict):
        super().__init__(detail)
        self.escalation = escalation
        self.escalation_id = escalation.get("id")
        self.choice = (escalation.get("resolution") or {}).get("choice")
