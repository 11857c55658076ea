"""After the crash loop: drain, then compare promises, database and receiver."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict

import attrs

from tests.faults.receiver import OK, FlakyReceiver, Receipt
from tests.faults.workload import QUORUM_POLICY, Api, Ledger

RESOLUTION_EVENTS = {"decided", "breached"}
EVENT_OF = {"human": "escalation.decided", "timeout": "escalation.breached"}


@attrs.define
class Figures:
    name: str
    kills: int = 0
    creates_acknowledged: int = 0
    creates_found: int = 0
    escalations_in_db: int = 0
    callbacks_owed: int = 0
    callbacks_delivered: int = 0
    double_resolutions: int = 0
    divergent_bodies: int = 0
    invalid_signatures: int = 0
    callbacks_for_unresolved: int = 0
    duplicate_deliveries: int = 0
    callback_requests: int = 0
    failed_attempts_injected: int = 0
    refused_windows: int = 0
    resolved_by_human: int = 0
    resolved_by_timeout: int = 0
    cancelled: int = 0
    open: int = 0
    decide_conflicts: int = 0
    quorum_resolved_by_approvals: int = 0
    quorum_breached: int = 0
    client_reconnects: int = 0
    seconds: float = 0.0

    @property
    def duplicate_rate(self) -> float:
        return self.duplicate_deliveries / self.callbacks_delivered if self.callbacks_delivered else 0.0

    def lines(self) -> list[str]:
        return [
            f"[{self.name}] {self.seconds:.1f} s, {self.kills} SIGKILLs + restarts",
            f"  creates acknowledged (201) {self.creates_acknowledged}, found {self.creates_found}, "
            f"escalations in db {self.escalations_in_db}",
            f"  resolved {self.resolved_by_human} by a human, {self.resolved_by_timeout} by timeout; "
            f"cancelled {self.cancelled}; open {self.open}; 409s seen {self.decide_conflicts}",
            f"  callbacks owed {self.callbacks_owed}, delivered {self.callbacks_delivered}; "
            f"double resolutions {self.double_resolutions}; divergent bodies {self.divergent_bodies}; "
            f"invalid signatures {self.invalid_signatures}; callbacks for unresolved {self.callbacks_for_unresolved}",
            f"  quorum escalations resolved by approvals {self.quorum_resolved_by_approvals}, breached "
            f"{self.quorum_breached}",
            f"  callback requests {self.callback_requests} ({self.failed_attempts_injected} failed on purpose, "
            f"{self.refused_windows} refused windows); duplicate deliveries {self.duplicate_deliveries} "
            f"({self.duplicate_rate:.1%} of delivered callbacks)",
        ]


def acked_by_escalation(receipts: list[Receipt]) -> dict[str, list[Receipt]]:
    out: dict[str, list[Receipt]] = defaultdict(list)
    for r in receipts:
        if r.answer == OK:
            out[r.payload["escalationId"]].append(r)
    return out


async def drain(api: Api, receiver: FlakyReceiver, *, deadline: float) -> list[dict]:
    """Poll until nothing with a deadline is still live and every resolved
    escalation's callback is delivered (receiver said 2xx, server recorded it).
    Each resolved escalation comes back with its callback delivery under ``"_callback"``."""
    while True:
        call_deadline = time.monotonic() + 30  # the server is up by now; this only bounds one poll
        escalations = await api.all_escalations(deadline=call_deadline)
        pending = [e for e in escalations if e["status"] in ("open", "acknowledged") and e["deadlineAt"]]
        acked = acked_by_escalation(receiver.receipts)
        undelivered = [e for e in escalations if e["status"] == "resolved" and e["id"] not in acked]
        if not pending and not undelivered:
            unrecorded = []
            for e in escalations:
                if e["status"] == "resolved":
                    status, deliveries = await api.call("GET", f"/escalations/{e['id']}/deliveries", deadline=call_deadline)
                    assert status == 200, deliveries
                    e["_callback"] = deliveries["data"][0]
                    if e["_callback"]["status"] != "delivered":
                        unrecorded.append(e)
            if not unrecorded:
                return escalations
            pending = unrecorded
        if time.monotonic() > deadline:
            raise AssertionError(
                f"not drained by the deadline: {len(pending)} live past deadline or unrecorded, "
                f"{len(undelivered)} resolved without a delivered callback, e.g. {[e['id'] for e in pending + undelivered][:5]}"
            )
        await asyncio.sleep(0.25)


def check(figures: Figures, ledger: Ledger, escalations: list[dict], receiver: FlakyReceiver) -> list[str]:
    """Fill in the figures; return every broken invariant, one line each."""
    problems: list[str] = list(ledger.errors)
    by_id = {e["id"]: e for e in escalations}
    figures.creates_acknowledged = len(ledger.created)
    figures.creates_found = sum(1 for i in ledger.created if i in by_id)
    figures.escalations_in_db = len(escalations)
    for esc_id in ledger.created:
        if esc_id not in by_id:
            problems.append(f"create of {esc_id} got 201 but it is gone")
    if len(escalations) != len(ledger.created):
        extra = sorted(set(by_id) - set(ledger.created))[:5]
        problems.append(f"{len(escalations)} escalations in the db for {len(ledger.created)} acknowledged creates: {extra}")

    receipts_by_esc: dict[str, list[Receipt]] = defaultdict(list)
    for r in receiver.receipts:
        receipts_by_esc[r.payload["escalationId"]].append(r)
        if not r.signature_valid:
            figures.invalid_signatures += 1
            problems.append(f"invalid signature on delivery {r.delivery_id}")
    acked = acked_by_escalation(receiver.receipts)

    for esc in escalations:
        esc_id, status = esc["id"], esc["status"]
        resolutions = [h for h in esc["history"] if h["event"] in RESOLUTION_EVENTS]
        if len(resolutions) > 1 or (status == "resolved" and not resolutions):
            figures.double_resolutions += len(resolutions) > 1
            problems.append(f"{esc_id} has {len(resolutions)} resolution events: {esc['history']}")
        if esc_id in ledger.decided and ledger.decide_200s[esc_id] > 1:
            figures.double_resolutions += 1
            problems.append(f"{esc_id}: decide answered 200 {ledger.decide_200s[esc_id]} times")
        if status == "cancelled":
            figures.cancelled += 1
        if status in ("open", "acknowledged"):
            figures.open += 1
        if status != "resolved":
            if receipts_by_esc.get(esc_id):
                figures.callbacks_for_unresolved += 1
                problems.append(f"{esc_id} is {status} but a callback arrived")
            if esc_id in ledger.decided:
                problems.append(f"{esc_id}: decide answered 200 but the escalation is {status}")
            continue
        res = esc["resolution"]
        figures.callbacks_owed += 1
        if res["resolvedBy"] == "human":
            figures.resolved_by_human += 1
        else:
            figures.resolved_by_timeout += 1
        if esc_id in ledger.decided and (res["resolvedBy"], res["choice"]) != ("human", ledger.decided[esc_id]):
            problems.append(f"{esc_id}: decide answered 200 with {ledger.decided[esc_id]} but resolution is {res}")
        if esc_id in ledger.cancelled:
            problems.append(f"{esc_id}: cancel answered 200 but it resolved")
        problems.extend(_check_quorum(esc, ledger, figures))
        problems.extend(_check_callbacks(esc, receipts_by_esc.get(esc_id, []), figures))
        problems.extend(_check_attempt_log(esc, receipts_by_esc.get(esc_id, [])))
        if acked.get(esc_id):
            figures.callbacks_delivered += 1
            by_delivery: dict[str, int] = defaultdict(int)
            for r in acked[esc_id]:
                by_delivery[r.delivery_id] += 1
            figures.duplicate_deliveries += sum(n - 1 for n in by_delivery.values())

    figures.callback_requests = len(receiver.receipts)
    figures.failed_attempts_injected = sum(1 for r in receiver.receipts if r.answer != OK)
    figures.refused_windows = receiver.refused_windows
    figures.decide_conflicts = ledger.conflicts
    if figures.callbacks_delivered != figures.callbacks_owed:
        problems.append(f"callbacks owed {figures.callbacks_owed}, delivered {figures.callbacks_delivered}")
    return problems


def _check_callbacks(esc: dict, receipts: list[Receipt], figures: Figures) -> list[str]:
    """Every request for one escalation: one delivery id, one body, matching the resolution."""
    problems = []
    if not receipts:
        return [f"{esc['id']} resolved but no callback request ever arrived"]
    if len({r.delivery_id for r in receipts}) > 1 or len({r.body for r in receipts}) > 1:
        figures.divergent_bodies += 1
        problems.append(f"{esc['id']}: {len({r.delivery_id for r in receipts})} delivery ids, "
                        f"{len({r.body for r in receipts})} bodies")
    res = esc["resolution"]
    payload = receipts[0].payload
    expected = {
        "escalationId": esc["id"],
        "runId": esc["runId"],
        "agentId": esc["agentId"],
        "policy": esc["policy"],
        "choice": res["choice"],
        "resolvedBy": res["resolvedBy"],
        "answeredBy": res["answeredBy"],
        "answeredAt": res["answeredAt"],
    }
    if payload != expected:
        problems.append(f"{esc['id']}: callback body {payload} does not match the resolution {expected}")
    if any(r.event != EVENT_OF[res["resolvedBy"]] for r in receipts):
        problems.append(f"{esc['id']}: event header {receipts[0].event} for resolvedBy {res['resolvedBy']}")
    return problems


QUORUM = 2


def _check_quorum(esc: dict, ledger: Ledger, figures: Figures) -> list[str]:
    """A resolved quorum escalation: approved by the quorum of distinct users,
    the last of whom answered it; every vote answered 200 is recorded."""
    if esc["policy"] != QUORUM_POLICY:
        return []
    voters = [a["by"] for a in esc["approvals"]]
    problems = [f"{esc['id']}: a user approved twice: {voters}"] if len(set(voters)) != len(voters) else []
    missing = ledger.votes.get(esc["id"], set()) - set(voters)
    if missing:
        problems.append(f"{esc['id']}: votes answered 200 but not recorded: {sorted(missing)}")
    res = esc["resolution"]
    if res["resolvedBy"] == "timeout":
        figures.quorum_breached += 1
    elif len(voters) != QUORUM or res["answeredBy"] != voters[-1] or res["choice"] != "approve":
        problems.append(f"{esc['id']}: resolved {res} with approvals {esc['approvals']}")
    else:
        figures.quorum_resolved_by_approvals += 1
    return problems


ANSWER_STATUS = {OK: 200, "http500": 500, "http503": 503}


def _check_attempt_log(esc: dict, receipts: list[Receipt]) -> list[str]:
    """The server's attempt log against what the receiver saw: success is
    terminal (one recorded 2xx, the last attempt), and every recorded HTTP
    status was really answered (a kill may lose records, never invent them)."""
    callback = esc["_callback"]
    codes = [a["statusCode"] for a in callback["attempts"]]
    problems = []
    if callback["status"] != "delivered" or sum(1 for c in codes if c is not None and 200 <= c < 300) != 1 or not codes or codes[-1] != 200:
        problems.append(f"{esc['id']}: callback {callback['status']} with attempts {codes}")
    answered: dict[int, int] = defaultdict(int)
    for r in receipts:
        if r.answer in ANSWER_STATUS:
            answered[ANSWER_STATUS[r.answer]] += 1
    for code in set(codes) - {None}:
        if codes.count(code) > answered[code]:
            problems.append(f"{esc['id']}: {codes.count(code)} attempts recorded as {code}, the receiver answered {answered[code]}")
    return problems
