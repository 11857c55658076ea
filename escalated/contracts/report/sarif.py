"""SARIF 2.1.0 output for GitHub code scanning.

Rule ids are stable: ``R1`` … ``R11`` (the rule that set a call's mode),
``stale-contract`` and ``parse-error``. ``partialFingerprints`` hash the
call's identity (path, function, index, provider, api), not its line, so an
alert survives edits above it. Covered calls are reported as suppressed,
which keeps them visible without raising alerts.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from escalated import __version__
from escalated.contracts.report.coverage import CallStatus, StaleContract
from escalated.contracts.report.formats import Report
from escalated.contracts.rules import RULES, deciding_rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_EXTRA_RULES = (
    ("stale-contract", "A contract locates a call that no longer exists", "error"),
    ("parse-error", "A Python file could not be parsed, so its calls are unknown", "error"),
)
_LEVEL = {"required": "error", "reviewed": "warning", "sampled": "note", "autonomous": "note"}


def _rules() -> list[dict[str, Any]]:
    out = []
    for rule in RULES:
        out.append(
            {
                "id": rule.id,
                "name": rule.kind.title().replace("-", ""),
                "shortDescription": {"text": f"LLM {rule.title}"},
                "fullDescription": {
                    "text": f"The call's {rule.title}; recommended mode: {rule.mode}. "
                    "Cover it with a contract and a guard (escalated contracts init / apply)."
                },
                "defaultConfiguration": {"level": _LEVEL[rule.mode]},
                "help": {"text": f"Run `escalated contracts explain {rule.mode}` for what the mode means at run time."},
                "properties": {"mode": rule.mode, "tags": ["llm", "human-in-the-loop"]},
            }
        )
    for rule_id, text, level in _EXTRA_RULES:
        out.append(
            {
                "id": rule_id,
                "name": rule_id.title().replace("-", ""),
                "shortDescription": {"text": text},
                "fullDescription": {"text": text + "."},
                "defaultConfiguration": {"level": level},
                "properties": {"tags": ["llm"]},
            }
        )
    return out


def _fingerprint(*parts: object) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:32]


def _location(path: str, *, line: int, column: int = 0, end_line: int | None = None, end_column: int | None = None) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": max(line, 1), "startColumn": column + 1}
    if end_line is not None and end_column is not None:
        region.update(endLine=end_line, endColumn=end_column + 1)
    return {"physicalLocation": {"artifactLocation": {"uri": path, "uriBaseId": "%SRCROOT%"}, "region": region}}


def _call_result(status: CallStatus, rule_index: dict[str, int]) -> dict[str, Any]:
    call = status.call
    rec = call.recommendation
    rule_id = deciding_rule(rec)
    state = "covered" if status.covered else f"not covered: {status.problem}"
    result: dict[str, Any] = {
        "ruleId": rule_id,
        "ruleIndex": rule_index[rule_id],
        "level": _LEVEL[rec.mode],
        "message": {
            "text": f"{call.provider} {call.api} in {call.function}: recommended mode {rec.mode} "
            f"({', '.join(rec.rules)}); {state}. " + " ".join(rec.reasons)
        },
        "locations": [
            _location(call.location.path, line=call.location.line, column=call.location.column,
                      end_line=call.location.end_line, end_column=call.location.end_column)
        ],
        "partialFingerprints": {
            "escalatedCall/v1": _fingerprint(call.location.path, call.function, call.index, call.provider, call.api)
        },
        "properties": {
            "mode": rec.mode,
            "rules": list(rec.rules),
            "confidence": rec.confidence,
            "callConfidence": call.confidence,
            "covered": status.covered,
            "contract": status.contract_id,
            "function": call.function,
            "index": call.index,
            "provider": call.provider,
            "api": call.api,
        },
    }
    if status.covered:
        how = f"guard {status.contract_id}" if status.covered_by == "guard" else f"existing gate {call.existing_gate}"
        result["suppressions"] = [{"kind": "inSource", "justification": f"covered by {how}"}]
    return result


def _stale_result(stale: StaleContract, rule_index: dict[str, int]) -> dict[str, Any]:
    return {
        "ruleId": "stale-contract",
        "ruleIndex": rule_index["stale-contract"],
        "level": "error",
        "message": {"text": f"Contract {stale.id!r} locates {stale.function} #{stale.index} in {stale.path}, which no longer exists."},
        "locations": [_location(stale.scan_path, line=1)],
        "partialFingerprints": {"escalatedContract/v1": _fingerprint(stale.id, stale.path, stale.function, stale.index)},
        "properties": {"covered": False, "contract": stale.id},
    }


def render_sarif(report: Report) -> str:
    rules = _rules()
    rule_index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = [_call_result(s, rule_index) for s in report.coverage.statuses]
    results += [_stale_result(s, rule_index) for s in report.coverage.stale]
    for error in report.result.errors:
        results.append(
            {
                "ruleId": "parse-error",
                "ruleIndex": rule_index["parse-error"],
                "level": "error",
                "message": {"text": f"{error.path}: {error.message}"},
                "locations": [_location(error.path, line=1)],
                "partialFingerprints": {"escalatedParse/v1": _fingerprint(error.path)},
                "properties": {"covered": False},
            }
        )
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "escalated-contracts",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The scanned folder."}}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
