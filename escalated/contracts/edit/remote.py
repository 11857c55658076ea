"""Opt-in remote drafting: build the redacted payload, send it, read the drafts.

Nothing here runs without consent; ``init`` decides that. The payload holds
only what ``redact`` lets through plus structural facts the scanner found
(provider, API, rule ids). The protocol is documented in
docs/remote-protocol.md; the stdlib HTTP client keeps this module free of the
server's stack.
"""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from escalated.guard.contracts import Choice, Contract, validate_contract
from escalated.contracts.edit.drafts import module_stem
from escalated.contracts.calls import LlmCall
from escalated.contracts.edit.redact import is_safe_name, redact_code
from escalated.errors import ConfigError

PROTOCOL = "escalated.contracts.edit.remote/1"
CONTEXT_MAX_CHARS = 8_000
RESPONSE_MAX_BYTES = 1 << 20


class RemoteError(ConfigError):
    code, title = "remote_failed", "Remote analysis failed"


@attrs.frozen
class RemoteDraft:
    ref: str
    question: str
    choices: tuple[Choice, ...]
    approve_choices: tuple[str, ...]
    rationale: str = ""


def call_context(source: str, call: LlmCall) -> str:
    """The redacted code around ``call``: the module's imports and the enclosing function."""
    module = cst.parse_module(source)
    imports = [s for s in module.body if _is_import(s)]
    scope = _enclosing_function(module, call.location.line) or call.source
    code = "".join(module.code_for_node(s) for s in imports) + "\n" + (
        scope if isinstance(scope, str) else module.code_for_node(scope)
    )
    try:
        redacted = redact_code(code)
    except cst.ParserSyntaxError:
        # The call's own text, when its function cannot stand alone, still redacted.
        redacted = redact_code("".join(module.code_for_node(s) for s in imports))
    if len(redacted) > CONTEXT_MAX_CHARS:
        redacted = redacted[:CONTEXT_MAX_CHARS].rsplit("\n", 1)[0] + "\n# … (truncated)\n"
    return redacted


def _is_import(stmt: cst.BaseStatement) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def _enclosing_function(module: cst.Module, line: int) -> cst.FunctionDef | None:
    """The innermost function whose lines hold ``line`` (module-level calls have none)."""
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    best: tuple[int, cst.FunctionDef] | None = None
    for node, rng in wrapper.resolve(PositionProvider).items():
        if isinstance(node, cst.FunctionDef) and rng.start.line <= line <= rng.end.line:
            size = rng.end.line - rng.start.line
            if best is None or size < best[0]:
                best = (size, node)
    return best[1] if best else None


def build_payload(items: Sequence[tuple[str, LlmCall, str]], *, attempt: int = 0) -> dict[str, Any]:
    """The exact JSON sent: ``items`` are (ref, call, redacted context)."""
    return {
        "protocol": PROTOCOL,
        "attempt": attempt,
        "calls": [_call_entry(ref, call, context) for ref, call, context in items],
    }


def _call_entry(ref: str, call: LlmCall, context: str) -> dict[str, Any]:
    return {
        "ref": ref,
        "module": _name(module_stem(call.location.path)),
        "function": _name(call.function),
        "provider": call.provider,
        "api": _name(call.api),
        "isAsync": call.is_async,
        "mode": call.recommendation.mode,
        "rules": list(call.recommendation.rules),
        "findings": [
            {"rule": f.rule, "kind": f.kind, "detail": _name(f.detail)} for f in call.findings
        ],
        "context": context,
    }


def _name(text: str) -> str:
    return text if is_safe_name(text) else "<redacted>"


def shown_url(url: str) -> str:
    """The URL without user info, query or fragment, which may carry credentials: safe to print."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def send(
    url: str, payload: Mapping[str, Any], *, token: str | None = None, timeout_s: float = 30.0
) -> list[RemoteDraft]:
    """POST the payload and parse the drafts; any failure is a ``RemoteError``.

    ``token`` (from ``ESCALATED_REMOTE_TOKEN``) goes in ``Authorization: Bearer``.
    """
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    url, basic = _split_credentials(url)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    elif basic:
        headers["Authorization"] = f"Basic {basic}"
    request = urllib.request.Request(url, data=body, method="POST", headers=headers)
    where = shown_url(url)
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            raw = response.read(RESPONSE_MAX_BYTES + 1)
    except (urllib.error.URLError, TimeoutError, OSError, ValueError) as exc:
        raise RemoteError(f"{where}: {type(exc).__name__}: {getattr(exc, 'reason', None) or exc}") from exc
    if len(raw) > RESPONSE_MAX_BYTES:
        raise RemoteError(f"{where}: answer larger than {RESPONSE_MAX_BYTES} bytes")
    try:
        return parse_response(json.loads(raw))
    except (ValueError, TypeError, KeyError) as exc:
        raise RemoteError(f"{where}: malformed answer: {exc}") from exc


def _split_credentials(url: str) -> tuple[str, str | None]:
    """``http://user:pw@host/x`` -> (``http://host/x``, base64 basic credentials).

    urllib would otherwise choke on the user info and echo it in its error.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return url, None
    netloc = parts.netloc.rsplit("@", 1)[1]
    userinfo = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
    clean = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, base64.b64encode(userinfo.encode()).decode()


def parse_response(data: Any) -> list[RemoteDraft]:
    if not isinstance(data, dict) or not isinstance(data.get("drafts"), list):
        raise ValueError('expected {"drafts": [...]}')
    drafts = []
    for item in data["drafts"]:
        choices = tuple(Choice(id=str(c["id"]), label=str(c["label"])) for c in item["choices"])
        drafts.append(
            RemoteDraft(
                ref=str(item["ref"]),
                question=str(item["question"]),
                choices=choices,
                approve_choices=tuple(str(a) for a in item.get("approveChoices", ())),
                rationale=str(item.get("rationale", "")),
            )
        )
    return drafts


def merge(local: Contract, draft: RemoteDraft) -> tuple[Contract, list[str]]:
    """The local draft with the remote's wording; unchanged (with the problems) if that is invalid.

    Mode, rules, policy and id stay local: the recommendation is deterministic
    and never depends on the network.
    """
    remote_ids = {c.id for c in draft.choices}
    approve = draft.approve_choices or tuple(a for a in local.approve_choices if a in remote_ids)
    merged = attrs.evolve(local, question=draft.question, choices=draft.choices, approve_choices=approve)
    problems = validate_contract(merged)
    return (local, problems) if problems else (merged, [])
