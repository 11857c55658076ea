"""Redaction: what may leave the machine for remote drafting, and nothing more.

Code is reduced structurally first (libcst): comments and docstrings are
dropped and every string literal becomes a typed placeholder, except short
identifier-like names (``"gpt-4o"``, ``"user"``) that carry meaning and no
data. Then a textual pass removes anything that still looks like a secret —
provider key formats, JWTs, private keys, URLs with credentials, e-mail
addresses, high-entropy tokens — wherever it sits (an identifier, a number,
a name). Both layers run on everything sent; the second is the backstop.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter

import libcst as cst

# Named so a test can plant one of each and the docs can list them.
SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("private-key", r"-----BEGIN[A-Z ]*PRIVATE KEY-----(?:[\s\S]*?-----END[A-Z ]*PRIVATE KEY-----)?"),
        ("url-credentials", r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/:@'\"]+:[^\s/@'\"]*@[^\s'\"]+"),
        ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_-]{16,}"),
        ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}"),
        ("aws-access-key", r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b"),
        ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})"),
        ("jwt", r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
        ("google-api-key", r"\bAIza[0-9A-Za-z_-]{30,}"),
        ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
        ("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
        ("escalated-token", r"\bain_(?:live|user)_[A-Za-z0-9]{16,}"),
        ("email", r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"),
    )
)
_TOKEN = re.compile(r"[A-Za-z0-9+/=_\-]{20,}")
_HEX = re.compile(r"^(?:0x)?[0-9a-fA-F]{32,}$")
_IDENTIFIER_LIKE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]{0,47}$")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://\S+$")
_NUMBER = re.compile(r"^[+-]?\d[\d_,.]*$")
_PATH = re.compile(r"^(?:[A-Za-z]:)?[~.]?[/\\]?[\w.-]+(?:[/\\][\w.-]+)+[/\\]?$")
REDACTED = "<redacted>"


def shannon_bits(text: str) -> float:
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _char_class(ch: str) -> int:
    return 0 if ch.islower() else 1 if ch.isupper() else 2 if ch.isdigit() else 3


def is_high_entropy(token: str) -> bool:
    """Random-looking rather than a long name.

    Names (``handle_order_2024_refund``, ``gpt-4o-mini-2024-07-18``) keep to
    runs of one kind of character; random keys switch between lower, upper
    and digits all the time, or use a wide alphabet evenly.
    """
    if len(token) < 20:
        return False
    if _HEX.match(token):
        return True
    bits = shannon_bits(token)
    if bits >= 4.2:
        return True
    classes = {_char_class(c) for c in token}
    switches = sum(_char_class(a) != _char_class(b) for a, b in itertools.pairwise(token)) / (len(token) - 1)
    return {0, 1, 2} <= classes and bits >= 3.5 and switches >= 0.45


def looks_secret(text: str) -> bool:
    return any(p.search(text) for _, p in SECRET_PATTERNS) or any(
        is_high_entropy(t) for t in _TOKEN.findall(text)
    )


def scrub(text: str) -> str:
    """Replace every secret-looking part of ``text`` with ``<redacted>``."""
    for _, pattern in SECRET_PATTERNS:
        text = pattern.sub(REDACTED, text)
    return _TOKEN.sub(lambda m: REDACTED if is_high_entropy(m.group(0)) else m.group(0), text)


def placeholder_kind(value: str) -> str | None:
    """None when the literal may be kept as it is, else its placeholder type."""
    if value == "":
        return None
    if looks_secret(value):
        return "secret"
    if _IDENTIFIER_LIKE.match(value):
        return None
    if _URL.match(value):
        return "url"
    if _NUMBER.match(value):
        return "number"
    if _PATH.match(value):
        return "path"
    return "text"


def redact_code(source: str) -> str:
    """``source`` (a module or a fragment of statements) without comments, docstrings or data."""
    module = cst.parse_module(source)
    return scrub(module.visit(_Redactor()).code)


class _Redactor(cst.CSTTransformer):
    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine):
        return cst.RemoveFromParent() if updated_node.comment is not None else updated_node

    def leave_TrailingWhitespace(self, original_node: cst.TrailingWhitespace, updated_node: cst.TrailingWhitespace):
        if updated_node.comment is None:
            return updated_node
        return updated_node.with_changes(comment=None, whitespace=cst.SimpleWhitespace(""))

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        # The header holds the leading comments (licence, shebang, coding line).
        return updated_node.with_changes(header=[], body=_without_bare_strings(updated_node.body))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock):
        body = _without_bare_strings(updated_node.body)
        return updated_node.with_changes(body=body or [cst.SimpleStatementLine([cst.Pass()])])

    def leave_SimpleString(self, original_node: cst.SimpleString, updated_node: cst.SimpleString):
        value = _evaluated(updated_node)
        if isinstance(value, bytes):
            return _placeholder("bytes")
        kind = "text" if value is None else placeholder_kind(value)
        return updated_node if kind is None else _placeholder(kind)

    def leave_ConcatenatedString(self, original_node, updated_node):
        return _placeholder("text")

    def leave_FormattedString(self, original_node, updated_node):
        return _placeholder("fstring")


def _evaluated(node: cst.SimpleString) -> str | bytes | None:
    try:
        return node.evaluated_value
    except (ValueError, SyntaxError):  # a literal we cannot evaluate is treated as data
        return None


def _placeholder(kind: str) -> cst.SimpleString:
    return cst.SimpleString(f'"<{kind}>"')


def _is_bare_string(stmt: cst.BaseStatement) -> bool:
    """Docstrings, and string statements used as comments, anywhere."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
    )


def _without_bare_strings(body):
    return [stmt for stmt in body if not _is_bare_string(stmt)]


def is_safe_name(text: str) -> bool:
    """A dotted identifier with nothing secret in it: safe to send as it is."""
    return bool(re.fullmatch(r"[A-Za-z_<][A-Za-z0-9_.:<>()-]{0,127}", text)) and not looks_secret(text)
