"""Scan reports: text for people, JSON for tools (SARIF lives in sarif.py).

Both are pure functions of the scan result, with everything sorted and no
timestamps or absolute paths, so the same tree gives byte-identical output.
The JSON schema is documented in docs/contracts-scan.md.
"""

from __future__ import annotations

import json
from typing import Any

import attrs

from escalated.contracts.report.coverage import CallStatus, Coverage
from escalated.contracts.calls import ScanResult
from escalated.contracts.rules import MAX_REASONS
from escalated.guard.modes import MODE_NAMES

JSON_SCHEMA_VERSION = 1


@attrs.frozen
class Report:
    result: ScanResult
    coverage: Coverage
    contracts_file: str | None
    # Calls in test folders are reported apart and fail the scan only when asked.
    fail_on_tests: bool = False

    def summary(self) -> dict[str, Any]:
        by_mode = dict.fromkeys(MODE_NAMES, 0)
        for status in self.coverage.statuses:
            by_mode[status.call.recommendation.mode] += 1
        covered = sum(1 for s in self.coverage.statuses if s.covered)
        return {
            "filesScanned": self.result.files_scanned,
            "linesScanned": self.result.lines_scanned,
            "filesWithCalls": len({s.call.location.path for s in self.coverage.statuses}),
            "calls": len(self.coverage.statuses),
            "covered": covered,
            "uncovered": len(self.coverage.statuses) - covered,
            "stale": len(self.coverage.stale),
            "parseErrors": len(self.result.errors),
            "notebooksSkipped": len(self.result.notebooks_skipped),
            "filesSkipped": len(self.result.skipped),
            "inTests": sum(1 for s in self.coverage.statuses if s.call.in_tests),
            "byMode": by_mode,
        }

    @property
    def exit_code(self) -> int:
        if self.result.errors:
            return 2
        counted = [s for s in self.coverage.statuses if self.fail_on_tests or not s.call.in_tests]
        return 0 if all(s.covered for s in counted) and not self.coverage.stale else 1


def call_json(status: CallStatus) -> dict[str, Any]:
    call = status.call
    rec = call.recommendation
    return {
        "path": call.location.path,
        "line": call.location.line,
        "column": call.location.column,
        "endLine": call.location.end_line,
        "endColumn": call.location.end_column,
        "provider": call.provider,
        "api": call.api,
        "function": call.function,
        "index": call.index,
        "async": call.is_async,
        # As in SARIF: the recommendation's confidence (never above the call's own).
        "confidence": rec.confidence,
        "callConfidence": call.confidence,
        "guarded": call.guarded,
        "guardId": call.guard_id,
        "existingGate": call.existing_gate,
        "covered": status.covered,
        "coveredBy": status.covered_by,
        "contract": status.contract_id,
        "contractMode": status.contract_mode,
        "problem": status.problem,
        "inTests": call.in_tests,
        "mode": rec.mode,
        "rules": list(rec.rules),
        "reasons": list(rec.reasons),
        "findings": [
            {"rule": f.rule, "kind": f.kind, "detail": f.detail, "line": f.line, "basis": f.basis} for f in call.findings
        ],
        "source": call.source,
        # Agent runners run their tools inside the call: the risky ones, and what guards each.
        "runner": call.runner,
        "riskyTools": [
            {"tool": t.name, "path": t.path, "line": t.line, "function": t.function, "guardId": t.guard_id, "needsApproval": t.approval}
            for t in call.risky_tools
        ],
    }


def render_json(report: Report) -> str:
    document = {
        "schemaVersion": JSON_SCHEMA_VERSION,
        "tool": "escalated contracts scan",
        "contractsFile": report.contracts_file,
        "summary": report.summary(),
        "calls": [call_json(s) for s in report.coverage.statuses],
        "staleContracts": [
            {"contract": s.id, "path": s.path, "function": s.function, "index": s.index} for s in report.coverage.stale
        ],
        "parseErrors": [{"path": e.path, "message": e.message} for e in report.result.errors],
        "notebooksSkipped": list(report.result.notebooks_skipped),
        "filesSkipped": [{"path": e.path, "reason": e.message} for e in report.result.skipped],
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_text(report: Report) -> str:
    lines: list[str] = []
    _file_blocks(lines, [s for s in report.coverage.statuses if not s.call.in_tests])
    in_tests = [s for s in report.coverage.statuses if s.call.in_tests]
    if in_tests:
        fails = "they fail the scan (fail-on-tests = true)" if report.fail_on_tests else "they never fail the scan"
        lines += ["", f"Calls in tests ({len(in_tests)}): reported apart; {fails}."]
        _file_blocks(lines, in_tests)
    if report.coverage.stale:
        lines += ["", "Stale contracts (they locate no call any more):"]
        lines += [f"  {s.id}: {s.path} {s.function} #{s.index}" for s in report.coverage.stale]
    if report.result.errors:
        lines += ["", "Files that could not be parsed:"]
        lines += [f"  {e.path}: {e.message}" for e in report.result.errors]
    if report.result.skipped:
        lines += ["", "Files skipped (generated or over the size limit):"]
        lines += [f"  {e.path}: {e.message}" for e in report.result.skipped]
    if report.result.notebooks_skipped:
        lines += ["", f"Notebooks not analysed ({len(report.result.notebooks_skipped)}): export them to .py to scan them."]
        lines += [f"  {p}" for p in report.result.notebooks_skipped]
    lines += ["", _summary_line(report)]
    return "\n".join(lines).lstrip("\n") + "\n"


def _file_blocks(lines: list[str], statuses: list[CallStatus]) -> None:
    current = None
    for status in statuses:
        call = status.call
        if call.location.path != current:
            current = call.location.path
            lines.append("")
            lines.append(current)
        lines.extend(_call_lines(status))


def _call_lines(status: CallStatus) -> list[str]:
    call = status.call
    rec = call.recommendation
    flags = [f"call confidence {call.confidence}"]
    if call.is_async:
        flags.append("awaited")
    out = [
        f"  {call.location.line}:{call.location.column}  {call.provider} {call.api}  in {call.function} #{call.index}  ({', '.join(flags)})",
        f"    recommended: {rec.mode} ({', '.join(rec.rules)}; confidence {rec.confidence})"
        f"  contract: {status.contract_mode or 'none'}" + (f" ({status.contract_id})" if status.contract_id else ""),
    ]
    out += [f"      - {reason}" for reason in rec.reasons]
    if len(call.findings) > len(rec.reasons) == MAX_REASONS:
        out.append(f"      ({len(call.findings)} findings in all: --format json lists them)")
    if status.covered:
        how = f"guard {status.contract_id!r}" if status.covered_by == "guard" else f"existing gate {call.existing_gate}"
        out.append(f"    covered: yes, by {how}")
    else:
        out.append(f"    covered: no ({status.problem})")
    return out


def _summary_line(report: Report) -> str:
    s = report.summary()
    modes = ", ".join(f"{name} {count}" for name, count in s["byMode"].items())
    text = (
        f"{s['calls']} LLM call(s) in {s['filesWithCalls']} file(s); {s['filesScanned']} files, "
        f"{s['linesScanned']} lines scanned. Covered {s['covered']}, uncovered {s['uncovered']}, "
        f"stale contracts {s['stale']}, parse errors {s['parseErrors']}. Recommended: {modes}."
    )
    return text
